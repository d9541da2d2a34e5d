//! The cost of trajectory memory at scale (`cairn bench trajectories-scale`): N generated
//! trajectories of S states each (accessibility trees of ~5 KB that repeat between states
//! and runs, like real pages) are inserted one by one into ONE space, then Q queries are
//! recalled. Measured: insert time (total, per trajectory), what was embedded (vectors
//! computed vs from cache, units by pool), disk size of the data directory, query latency.
//!
//! Everything is generated deterministically here (a seeded LCG); nothing is downloaded.
//! By default the embedding cache is a fresh file in the run folder, so every vector is
//! computed (a cold insert).
use crate::env::shell_join;
use crate::metrics::{percentiles, Percentiles};
use crate::protocol::{arm_stop, check_label, open_memory, stopped, utc_stamp, ConfigRow, RunMeta};
use crate::report::ms;
use anyhow::{bail, Context as _};
use cairn::{AgentState, RecallOptions, Timings, TrajectoryInput, UnitKind};
use clap::Args;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// The one space everything is inserted into.
pub const SPACE: &str = "trajectories-scale";

/// `cairn bench trajectories-scale` options.
#[derive(Debug, Clone, Args)]
pub struct ScaleArgs {
    /// Trajectories generated and inserted.
    #[arg(long, default_value_t = 100, value_name = "N")]
    pub trajectories: usize,
    /// States per trajectory.
    #[arg(long, default_value_t = 30, value_name = "N")]
    pub states: usize,
    /// Queries recalled after the insert.
    #[arg(long, default_value_t = 50, value_name = "N")]
    pub queries: usize,
    /// Seed of the generator.
    #[arg(long, default_value_t = 7)]
    pub seed: u64,
    /// Token budget of each recall.
    #[arg(long, default_value_t = 2_000, value_name = "N")]
    pub token_budget: usize,
    /// Hits per recall.
    #[arg(long, default_value_t = 10, value_name = "N")]
    pub top_k: usize,
    /// Name of the run folder [default: trajectories-scale-<UTC timestamp>].
    #[arg(long, value_name = "L")]
    pub run_label: Option<String>,
    /// Folder of run folders.
    #[arg(long, value_name = "DIR", default_value = "bench-out")]
    pub out: PathBuf,
    /// Embedding cache file [default: a fresh `embedding-cache.sqlite3` in the run folder,
    /// so the insert is cold, deleted after the run unless --keep-data].
    #[arg(long, value_name = "FILE")]
    pub cache: Option<PathBuf>,
    /// Keep the run's data directory instead of deleting it.
    #[arg(long)]
    pub keep_data: bool,
    /// Engine settings (a `cairn.toml`) for experiments; recorded in METHODOLOGY.md.
    #[arg(long, value_name = "FILE")]
    pub memory_config: Option<PathBuf>,
}

// ---------------------------------------------------------------------------------------
// The generator

struct Lcg(u64);

impl Lcg {
    fn new(seed: u64) -> Self {
        Self(
            seed.wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407),
        )
    }
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn pick<'a>(&mut self, xs: &[&'a str]) -> &'a str {
        xs[self.below(xs.len())]
    }
}

struct Section {
    menu: &'static str,
    name: &'static str,
    path: &'static str,
    columns: &'static str,
    goal: &'static str,
    fields: &'static [&'static str],
    error: &'static str,
    saved: &'static str,
}

const SECTIONS: &[Section] = &[
    Section { menu: "Sales", name: "Orders", path: "sales/order", columns: "ID | Purchase Date | Bill-to Name | Ship-to Name | Grand Total | Status | Action", goal: "Put order {n} on hold and note the reason", fields: &["Status", "Comment", "Notify Customer by Email"], error: "This order cannot be put on hold: it has already been shipped.", saved: "You put the order on hold." },
    Section { menu: "Catalog", name: "Products", path: "catalog/product", columns: "ID | Name | Type | SKU | Price | Quantity | Visibility | Status | Action", goal: "Update the price of product {n} and set its stock", fields: &["Product Name *", "SKU *", "Price *", "Quantity", "Stock Status", "Weight", "Categories", "Visibility"], error: "The value specified in the SKU field must be unique.", saved: "You saved the product." },
    Section { menu: "Customers", name: "All Customers", path: "customer/index", columns: "ID | Name | Email | Group | Phone | ZIP | Country | State | Customer Since | Action", goal: "Change the customer group of customer {n}", fields: &["Group", "First Name *", "Last Name *", "Email *", "Date of Birth", "Tax/VAT Number", "Gender"], error: "A customer with the same email address already exists in an associated website.", saved: "You saved the customer." },
    Section { menu: "Sales", name: "Invoices", path: "sales/invoice", columns: "Invoice | Invoice Date | Order # | Order Date | Bill-to Name | Status | Amount | Action", goal: "Print the invoice of order {n} and email it", fields: &["Invoice Comments", "Email Copy of Invoice", "Amount"], error: "The invoice cannot be emailed: the customer has no email address on file.", saved: "You sent the message." },
    Section { menu: "Marketing", name: "Cart Price Rules", path: "sales_rule/promo_quote", columns: "ID | Rule | Coupon Code | Priority | Status | Web Site | Start | End", goal: "Create coupon {n} for 15 percent off", fields: &["Rule Name *", "Description", "Active", "Websites *", "Customer Groups *", "Coupon", "Coupon Code", "Uses per Customer", "From", "To"], error: "The coupon code already exists. Coupon codes must be unique.", saved: "You saved the rule." },
    Section { menu: "Marketing", name: "All Reviews", path: "review/product", columns: "ID | Created | Status | Title | Nickname | Review | Visibility | Type | Product | SKU", goal: "Approve the reviews of product {n}", fields: &["Status", "Nickname *", "Summary of Review *", "Review *"], error: "Sorry, you need permissions to view this content.", saved: "A total of 3 record(s) have been updated." },
    Section { menu: "Reports", name: "Sales Report", path: "reports/report_sales/sales", columns: "Interval | Orders | Sales Items | Sales Total | Invoiced | Refunded | Sales Tax | Shipping | Discount | Canceled", goal: "Find the refunded total for period {n}", fields: &["Match Period To", "Period", "From *", "To *", "Order Status", "Empty Rows"], error: "The 'From' date must be earlier than the 'To' date.", saved: "The report was refreshed." },
    Section { menu: "Catalog", name: "Categories", path: "catalog/category", columns: "ID | Category | Products | Include in Menu | Enabled | Position | Action", goal: "Move category {n} under Home and enable it", fields: &["Enable Category", "Include in Menu", "Category Name *", "Description", "Display Mode", "Anchor"], error: "Cannot move the category: a category with the same URL key already exists.", saved: "You saved the category." },
];

const NAMES: &[&str] = &[
    "Priya Raman",
    "Tom Becker",
    "Dana Whitfield",
    "Luis Navarro",
    "Grace Okafor",
    "Ana Costa",
    "Hiro Tanaka",
    "Ben Shapiro",
    "Olivia Hart",
    "Marco Ruiz",
    "Sara Lindqvist",
    "Kwame Mensah",
    "Yuki Mori",
    "Elena Petrova",
    "Noah Fischer",
    "Leila Haddad",
];
const THINGS: &[&str] = &[
    "Walnut Cutting Board",
    "Ceramic Pour-Over",
    "Stoneware Mug Set",
    "Holiday Candle",
    "Wool Throw Blanket",
    "Rattan Basket",
    "Brass Bottle Opener",
    "Tea Towels",
    "Olive Wood Spoon",
    "Linen Napkins",
    "Glass Jar",
    "Dutch Oven",
    "Beeswax Wraps",
    "Jute Doormat",
    "Hand-thrown Vase",
    "Bath Towel",
];
const STATUS: &[&str] = &[
    "Pending",
    "Processing",
    "Complete",
    "Closed",
    "Canceled",
    "On Hold",
];

fn chrome(title: &str, menu: &str, user: &str, body: &str) -> String {
    let mut s = format!("RootWebArea 'Admin - {title}' focused: True\n\t[1] banner ''\n\t\t[2] link 'Admin home'\n\t\t[3] searchbox 'Search the admin'\n\t\t[4] button 'Notifications (5)'\n\t\t[5] button '{user}' hasPopup: menu\n\t[6] region 'System Messages'\n\t\t[7] link 'System Messages: 2'\n\t\tStaticText 'One or more indexers are invalid. Make sure your cron job is running.'\n\t[8] navigation 'Main menu'\n");
    for (i, m) in [
        "Dashboard",
        "Sales",
        "Catalog",
        "Customers",
        "Marketing",
        "Content",
        "Reports",
        "Stores",
        "System",
    ]
    .iter()
    .enumerate()
    {
        let _ = writeln!(
            s,
            "\t\t[{}] link '{m}'{}",
            10 + i,
            if *m == menu { " expanded: True" } else { "" }
        );
    }
    let _ = writeln!(s, "\t[20] main ''\n\t\t[21] navigation 'Breadcrumb'\n\t\t\tStaticText 'Home / {menu} / {title}'\n\t\t[22] combobox 'Scope: All Store Views'\n\t\t[23] heading '{title}'");
    s += body;
    s += "\t[900] contentinfo ''\n\t\tStaticText 'Copyright (c) 2024. All rights reserved.'\n\t\tStaticText 'Admin ver. 2.4.6'\n\t\t[901] link 'Privacy Policy'\n\t\t[902] link 'Account Activity'\n\t\t[903] link 'Report an Issue'\n";
    s
}

/// Rows of a section's grid page: the same (section, page) always gives the same rows.
fn grid(sec: usize, page: usize, selected: Option<usize>) -> String {
    let s = &SECTIONS[sec];
    let mut rng = Lcg::new((sec as u64) << 32 | page as u64);
    let mut b = format!("\t\t[30] button 'Add New'\n\t\t[31] searchbox 'Search by keyword'\n\t\t[32] button 'Filters'\n\t\t[33] combobox 'Actions'\n\t\tStaticText '{} records found'\n\t\t[34] button 'Previous page'\n\t\t[35] spinbutton 'Page' value: '{}'\n\t\t[36] button 'Next page'\n\t\t[40] table '{}'\n\t\t\t[41] row '{}'\n", 200 + sec * 37, page + 1, s.name, s.columns);
    for r in 0..28 {
        let id = 1000 + page * 28 + r;
        let mark = if selected == Some(r) {
            " selected: True"
        } else {
            ""
        };
        let _ = writeln!(
            b,
            "\t\t\t[{}] row '{id} | Mar {}, 2024 | {} | {} | ${}.{:02} | {} | {}'{mark}\n\t\t\t\t[{}] link 'Edit'",
            100 + 2 * r,
            1 + rng.below(28),
            rng.pick(NAMES),
            rng.pick(THINGS),
            5 + rng.below(300),
            rng.below(100),
            rng.pick(STATUS),
            rng.below(90) + 10,
            101 + 2 * r
        );
    }
    b
}

fn form(sec: usize, entity: &str, filled: usize, alert: Option<&str>) -> String {
    let s = &SECTIONS[sec];
    let mut b = String::new();
    if let Some(a) = alert {
        let _ = writeln!(b, "\t\t[50] alert '{a}'");
    }
    b += "\t\t[51] button 'Back'\n\t\t[52] button 'Reset'\n\t\t[53] button 'Save and Continue Edit'\n\t\t[54] button 'Save'\n";
    let _ = writeln!(b, "\t\t[55] heading '{entity}'");
    for (i, f) in s.fields.iter().enumerate() {
        let v = if i < filled {
            format!(" value: '{entity} {f}'")
        } else {
            String::new()
        };
        let _ = writeln!(b, "\t\t[{}] textbox '{f}'{v}", 60 + i);
    }
    for (i, sec_name) in [
        "Content",
        "Images And Videos",
        "Search Engine Optimization",
        "Related Products",
        "Customizable Options",
        "Advanced Settings",
        "Design",
        "Schedule Design Update",
        "Gift Options",
        "Websites",
    ]
    .iter()
    .enumerate()
    {
        let _ = writeln!(b, "\t\t[{}] button '{sec_name}' expanded: False", 80 + i);
    }
    b += "\t\t[95] heading 'Activity'\n";
    let mut rng = Lcg::new(sec as u64 * 977 + entity.len() as u64);
    for i in 0..30 {
        let _ = writeln!(
            b,
            "\t\tStaticText 'Mar {}, 2024 {}:{:02} | {} | {} by {}'",
            1 + i % 28,
            8 + rng.below(10),
            rng.below(60),
            rng.pick(STATUS),
            rng.pick(&["Updated", "Viewed", "Exported", "Commented"]),
            rng.pick(NAMES)
        );
    }
    b
}

/// One generated trajectory: log in at the section's grid, page through it, filter,
/// open an entity, fill its form field by field, save (every fourth run fails with the
/// section's error), check the grid.
pub fn generate(t: usize, states: usize, seed: u64) -> TrajectoryInput {
    let sec = t % SECTIONS.len();
    let s = &SECTIONS[sec];
    let mut rng = Lcg::new(seed.wrapping_mul(1_000_003) + t as u64);
    let entity = format!("{} {}", rng.pick(THINGS), 100 + t);
    let goal = s.goal.replace("{n}", &entity);
    let user = if t % 3 == 0 {
        "Sam Ortiz (Sales Associate)"
    } else {
        "Morgan Lee (Administrator)"
    };
    let fails = t % 4 == 3;
    let base = format!("http://admin.example.test/admin/{}", s.path);
    let mut out = Vec::with_capacity(states);
    let browse = states / 3;
    let fill_end = states.saturating_sub(3);
    for i in 0..states {
        let (url, obs, action, thought) = if i < browse {
            let page = i / 2;
            let sel = (i % 2 == 1).then_some(rng.below(28));
            (
                format!("{base}/index/page/{}", page + 1),
                chrome(s.name, s.menu, user, &grid(sec, page, sel)),
                if i % 2 == 0 {
                    "scroll [down]".to_string()
                } else {
                    "click [36]".to_string()
                },
                format!(
                    "Looking for {entity} in the {} grid, page {}.",
                    s.name,
                    page + 1
                ),
            )
        } else if i == browse {
            (
                format!("{base}/index/"),
                chrome(s.name, s.menu, user, &grid(sec, 0, None)),
                format!("type [31] \"{entity}\""),
                "Paging is slow; search by keyword instead.".to_string(),
            )
        } else if i < fill_end {
            let k = i - browse - 1;
            let field = s.fields[k % s.fields.len()];
            (
                format!("{base}/edit/id/{}/", 500 + t),
                chrome(
                    &entity,
                    s.menu,
                    user,
                    &form(sec, &entity, k.min(s.fields.len()), None),
                ),
                format!("type [{}] \"{entity} {field}\"", 60 + k % s.fields.len()),
                format!("Fill in {field}."),
            )
        } else if i == fill_end {
            (
                format!("{base}/edit/id/{}/", 500 + t),
                chrome(
                    &entity,
                    s.menu,
                    user,
                    &form(sec, &entity, s.fields.len(), None),
                ),
                "click [54]".to_string(),
                "Everything is filled in; save.".to_string(),
            )
        } else {
            let alert = if fails { s.error } else { s.saved };
            (
                format!("{base}/edit/id/{}/", 500 + t),
                chrome(
                    &entity,
                    s.menu,
                    user,
                    &form(sec, &entity, s.fields.len(), Some(alert)),
                ),
                if i + 1 == states {
                    "stop".to_string()
                } else {
                    "scroll [up]".to_string()
                },
                if fails {
                    format!("It failed: {alert}")
                } else {
                    format!("Saved: {alert}")
                },
            )
        };
        out.push(AgentState {
            url: Some(url),
            action: Some(action),
            thought: Some(thought),
            observation: Some(obs),
            screenshot: Some(format!("shots/{t}/{i}.png")),
        });
    }
    TrajectoryInput {
        id: format!("scale-{t:04}"),
        domain: Some("shopping_admin".into()),
        goal,
        start_url: out.first().and_then(|s| s.url.clone()),
        outcome: serde_json::json!(if fails { "failure" } else { "success" }),
        states: out,
        occurred_at: None,
        metadata: serde_json::Value::Null,
    }
}

/// The queries: how-to, error, where-is and what-happens questions about the sections.
pub fn queries(n: usize, seed: u64) -> Vec<String> {
    let mut rng = Lcg::new(seed ^ 0x5eed);
    (0..n)
        .map(|i| {
            let s = &SECTIONS[rng.below(SECTIONS.len())];
            let f = s.fields[rng.below(s.fields.len())];
            match i % 5 {
                0 => format!(
                    "How do I {}?",
                    s.goal.replace("{n}", rng.pick(THINGS)).to_lowercase()
                ),
                1 => format!("What error appears when saving in {}?", s.name),
                2 => format!("Where is the {f} field in {}?", s.name),
                3 => format!("What happens after clicking Save on the {} form?", s.name),
                _ => format!(
                    "Which menu holds {} and what columns does its grid show?",
                    s.name
                ),
            }
        })
        .collect()
}

// ---------------------------------------------------------------------------------------
// The run

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QueryRecord {
    pub query_index: usize,
    pub hits: usize,
    pub hits_by_kind: BTreeMap<String, usize>,
    pub context_tokens: usize,
    pub wall_ms: f64,
    pub timings: Timings,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ScaleInsert {
    pub trajectories: usize,
    pub states: usize,
    /// Bytes of the observations inserted (accessibility-tree text).
    pub observation_bytes: usize,
    pub units: usize,
    pub units_by_pool: BTreeMap<String, usize>,
    pub vectors_computed: usize,
    pub vectors_cached: usize,
    /// Event units that got a vector: all vectors minus one per slice and one per note
    /// (slices and notes are always embedded).
    pub events_embedded: usize,
    /// Per trajectory: one `insert_trajectory` call.
    pub per_trajectory_ms: Percentiles,
    pub flush_ms: f64,
    /// Every insert call plus the flush.
    pub total_seconds: f64,
    /// The data directory after the insert (embedding cache excluded when it is elsewhere).
    pub disk_bytes: u64,
    pub disk_by_entry: BTreeMap<String, u64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScaleSummary {
    pub meta: RunMeta,
    pub complete: bool,
    pub insert: ScaleInsert,
    pub queries: usize,
    pub query_wall_ms: Percentiles,
    pub query_engine_ms: Percentiles,
    pub stage_means_ms: BTreeMap<String, f64>,
    pub mean_context_tokens: f64,
    pub hits_by_kind: BTreeMap<String, usize>,
    /// The targets, and whether this run met them.
    pub target_insert_seconds: f64,
    pub target_query_p95_ms: f64,
    pub insert_target_met: bool,
    pub query_target_met: bool,
}

fn dir_size(p: &Path) -> u64 {
    let Ok(meta) = std::fs::symlink_metadata(p) else {
        return 0;
    };
    if meta.is_dir() {
        std::fs::read_dir(p)
            .map(|rd| rd.filter_map(|e| e.ok()).map(|e| dir_size(&e.path())).sum())
            .unwrap_or(0)
    } else {
        meta.len()
    }
}

pub(crate) fn run(args: &ScaleArgs) -> anyhow::Result<()> {
    if args.trajectories == 0 || args.states < 6 || args.queries == 0 {
        bail!("need at least 1 trajectory, 6 states per trajectory and 1 query");
    }
    let label = match &args.run_label {
        Some(l) => l.clone(),
        None => format!("trajectories-scale-{}", utc_stamp(chrono::Utc::now())),
    };
    check_label(&label)?;
    let dir = args.out.join(&label);
    if dir.join("results.jsonl").exists() {
        bail!(
            "{} already holds results: pass another --run-label",
            dir.display()
        );
    }
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let data_dir = dir.join("data");
    if data_dir.exists() {
        std::fs::remove_dir_all(&data_dir)?;
    }
    let cache_file = match &args.cache {
        Some(c) => c.clone(),
        None => {
            let c = dir.join("embedding-cache.sqlite3");
            for suffix in ["", "-wal", "-shm"] {
                let _ = std::fs::remove_file(format!("{}{suffix}", c.display()));
            }
            c
        }
    };
    let t = Instant::now();
    let trajectories: Vec<TrajectoryInput> = (0..args.trajectories)
        .map(|i| generate(i, args.states, args.seed))
        .collect();
    let qs = queries(args.queries, args.seed);
    let load_seconds = t.elapsed().as_secs_f64();
    let (memory, cache, memory_settings) =
        open_memory(&data_dir, Some(&cache_file), args.memory_config.as_deref())?;
    let row = ConfigRow {
        name: "bench".into(),
        options: RecallOptions {
            top_k: args.top_k,
            token_budget: args.token_budget,
            format: cairn::Format::Raw,
            kinds: Some(vec![UnitKind::Slice, UnitKind::Event, UnitKind::Note]),
            ..RecallOptions::default()
        },
    };
    let observation_bytes: usize = trajectories
        .iter()
        .flat_map(|t| &t.states)
        .map(|s| s.observation.as_ref().map_or(0, String::len))
        .sum();
    let mut meta = RunMeta {
        configs: vec![row.clone()],
        as_of_policy: "none".into(),
        as_of_description: "as_of = none".into(),
        limit: None,
        questions_filter: Vec::new(),
        max_questions_per_conv: None,
        questions_in_file: qs.len(),
        questions_selected: qs.len(),
        keep_data: args.keep_data,
        load_seconds,
        dataset_notes: vec![format!(
            "Generated (seed {}): {} trajectories x {} states, {} sections of a shop admin, {:.1} KB mean observation, {} queries.",
            args.seed,
            args.trajectories,
            args.states,
            SECTIONS.len(),
            observation_bytes as f64 / (args.trajectories * args.states) as f64 / 1024.0,
            qs.len()
        )],
        limitations: vec!["Generated pages: their repetition (shared chrome, grid pages seen by many runs, forms filled field by field) imitates real pages but is not real data.".into()],
        qa: None,
        ..RunMeta::new("trajectories-scale", &dir, &memory, cache.as_deref(), memory_settings)
    };
    std::fs::write(dir.join("run.json"), serde_json::to_string_pretty(&meta)?)?;

    arm_stop();
    let pb = indicatif::ProgressBar::with_draw_target(
        Some((args.trajectories + qs.len()) as u64),
        indicatif::ProgressDrawTarget::stderr(),
    );
    let mut ins = ScaleInsert {
        observation_bytes,
        ..Default::default()
    };
    let mut per = Vec::new();
    let t_all = Instant::now();
    for tr in trajectories {
        if stopped() {
            break;
        }
        ins.trajectories += 1;
        ins.states += tr.states.len();
        let t = Instant::now();
        let r = memory.insert_trajectory(SPACE, tr)?;
        per.push(t.elapsed().as_secs_f64() * 1000.0);
        ins.units += r.units;
        ins.vectors_computed += r.vectors_computed;
        ins.vectors_cached += r.vectors_cached;
        pb.inc(1);
    }
    let t = Instant::now();
    memory.flush()?;
    ins.flush_ms = t.elapsed().as_secs_f64() * 1000.0;
    ins.total_seconds = t_all.elapsed().as_secs_f64();
    ins.per_trajectory_ms = percentiles(&per);
    let stats = memory.stats(SPACE)?;
    ins.units_by_pool = stats.units_by_kind.clone();
    let slices = stats.units_by_kind.get("slice").copied().unwrap_or(0);
    let notes = stats.units_by_kind.get("note").copied().unwrap_or(0);
    ins.events_embedded =
        (ins.vectors_computed + ins.vectors_cached).saturating_sub(slices + notes);
    ins.disk_bytes = dir_size(&data_dir);
    if let Ok(rd) = std::fs::read_dir(&data_dir) {
        for e in rd.filter_map(|e| e.ok()) {
            ins.disk_by_entry.insert(
                e.file_name().to_string_lossy().into_owned(),
                dir_size(&e.path()),
            );
        }
    }

    let mut results = std::fs::File::create(dir.join("results.jsonl"))?;
    let mut records = Vec::new();
    for (i, q) in qs.iter().enumerate() {
        if stopped() {
            break;
        }
        let t = Instant::now();
        let r = memory.recall(SPACE, q, &row.options)?;
        let wall_ms = t.elapsed().as_secs_f64() * 1000.0;
        let mut by = BTreeMap::new();
        for h in &r.hits {
            *by.entry(h.kind.as_str().to_string()).or_default() += 1;
        }
        let rec = QueryRecord {
            query_index: i,
            hits: r.hits.len(),
            hits_by_kind: by,
            context_tokens: r.context_tokens,
            wall_ms,
            timings: r.timings,
        };
        let mut line = serde_json::to_string(&rec)?;
        line.push('\n');
        results.write_all(line.as_bytes())?;
        records.push(rec);
        pb.inc(1);
    }
    pb.finish_and_clear();
    let inspect =
        crate::trajectories_scale_inspect::measure(&memory, SPACE, &qs, args.token_budget)?;
    drop(memory);
    if !args.keep_data && data_dir.exists() {
        std::fs::remove_dir_all(&data_dir)?;
    }
    // The run's own fresh cache is scratch (tens of MB), not a result: it must not end
    // up next to the results that get committed.
    if !args.keep_data && args.cache.is_none() {
        for suffix in ["", "-wal", "-shm"] {
            let _ = std::fs::remove_file(format!("{}{suffix}", cache_file.display()));
        }
    }
    meta.finished_at = Some(chrono::Utc::now());
    let n = records.len().max(1) as f64;
    let mut stage_means_ms = BTreeMap::new();
    for (k, f) in [
        ("embed", (|t: &Timings| t.embed_ms) as fn(&Timings) -> f64),
        ("lexical", |t| t.lexical_ms),
        ("dense", |t| t.dense_ms),
        ("rank", |t| t.rank_ms),
        ("pack", |t| t.pack_ms),
    ] {
        stage_means_ms.insert(
            k.to_string(),
            records.iter().map(|r| f(&r.timings)).sum::<f64>() / n,
        );
    }
    let mut hits_by_kind = BTreeMap::new();
    for r in &records {
        for (k, v) in &r.hits_by_kind {
            *hits_by_kind.entry(k.clone()).or_default() += v;
        }
    }
    let query_wall_ms = percentiles(&records.iter().map(|r| r.wall_ms).collect::<Vec<_>>());
    let s = ScaleSummary {
        complete: !stopped(),
        queries: records.len(),
        query_engine_ms: percentiles(
            &records
                .iter()
                .map(|r| r.timings.total_ms)
                .collect::<Vec<_>>(),
        ),
        stage_means_ms,
        mean_context_tokens: records.iter().map(|r| r.context_tokens as f64).sum::<f64>() / n,
        hits_by_kind,
        target_insert_seconds: 180.0,
        target_query_p95_ms: 100.0,
        insert_target_met: ins.total_seconds < 180.0,
        query_target_met: query_wall_ms.p95 < 100.0,
        query_wall_ms,
        insert: ins,
        meta: meta.clone(),
    };
    std::fs::write(dir.join("summary.json"), serde_json::to_string_pretty(&s)?)?;
    std::fs::write(dir.join("summary.md"), render_summary(&s))?;
    std::fs::write(dir.join("METHODOLOGY.md"), render_methodology(&s))?;
    crate::trajectories_scale_inspect::write(&dir, &inspect)?;
    std::fs::write(dir.join("run.json"), serde_json::to_string_pretty(&meta)?)?;
    eprintln!("{}", short_report(&s));
    eprintln!("wrote {}", dir.display());
    if !s.complete {
        bail!("interrupted");
    }
    Ok(())
}

fn mib(b: u64) -> String {
    format!("{:.1} MiB", b as f64 / (1024.0 * 1024.0))
}

pub fn render_summary(s: &ScaleSummary) -> String {
    let i = &s.insert;
    let m = &s.meta;
    let mut out = String::new();
    let _ = writeln!(out, "# {} — trajectories-scale\n", m.run_label);
    let _ = writeln!(
        out,
        "- {}\n- Cairn {} (git {}, built {}), embedding model `{}`\n- machine: {} logical CPUs (`{}`)\n- command line: `{}`\n",
        m.dataset_notes.join("\n- "),
        m.cairn_version,
        m.git_sha,
        m.build_time,
        m.embedding_model,
        m.machine.nproc,
        m.machine.cpu_model,
        shell_join(&m.command_line)
    );
    let _ = writeln!(out, "## Insert\n\n| measure | value |\n|---|---:|");
    let _ = writeln!(
        out,
        "| trajectories / states | {} / {} |",
        i.trajectories, i.states
    );
    let _ = writeln!(
        out,
        "| observation text inserted | {} |",
        mib(i.observation_bytes as u64)
    );
    let _ =
        writeln!(
        out,
        "| insert total (every `insert_trajectory` + flush) | **{:.1} s** (target < {:.0} s: {}) |",
        i.total_seconds,
        s.target_insert_seconds,
        if s.insert_target_met { "met" } else { "**missed**" }
    );
    let _ = writeln!(
        out,
        "| per trajectory p50 / p95 / max | {} / {} / {} ms |",
        ms(i.per_trajectory_ms.p50),
        ms(i.per_trajectory_ms.p95),
        ms(i.per_trajectory_ms.max)
    );
    let _ = writeln!(out, "| final flush | {} ms |", ms(i.flush_ms));
    let pools = i
        .units_by_pool
        .iter()
        .map(|(k, v)| format!("{k} {v}"))
        .collect::<Vec<_>>()
        .join(", ");
    let _ = writeln!(out, "| units by pool | {pools} |");
    let _ = writeln!(
        out,
        "| vectors computed / from cache | {} / {} |",
        i.vectors_computed, i.vectors_cached
    );
    let _ = writeln!(
        out,
        "| embedded by pool | slice {}, note {}, event {} (derived: all vectors − slices − notes) |",
        i.units_by_pool.get("slice").copied().unwrap_or(0),
        i.units_by_pool.get("note").copied().unwrap_or(0),
        i.events_embedded
    );
    let _ = writeln!(out, "| data directory on disk | {} |", mib(i.disk_bytes));
    for (k, v) in &i.disk_by_entry {
        let _ = writeln!(out, "| &nbsp;&nbsp;`{k}` | {} |", mib(*v));
    }
    let _ = writeln!(
        out,
        "\n## Queries\n\n| latency (ms) | n | mean | p50 | p95 | p99 | max |\n|---|---:|---:|---:|---:|---:|---:|"
    );
    for (name, p) in [
        ("wall", &s.query_wall_ms),
        ("engine `timings.total_ms`", &s.query_engine_ms),
    ] {
        let _ = writeln!(
            out,
            "| {name} | {} | {} | {} | {} | {} | {} |",
            p.n,
            ms(p.mean),
            ms(p.p50),
            ms(p.p95),
            ms(p.p99),
            ms(p.max)
        );
    }
    let stages = s
        .stage_means_ms
        .iter()
        .map(|(k, v)| format!("{k} {}", ms(*v)))
        .collect::<Vec<_>>()
        .join(", ");
    let kinds = s
        .hits_by_kind
        .iter()
        .map(|(k, v)| format!("{k} {v}"))
        .collect::<Vec<_>>()
        .join(", ");
    let _ = writeln!(
        out,
        "\nQuery p95 target < {:.0} ms: {}. Mean engine stages (ms): {stages}. Mean context tokens {:.0}. Hits by pool: {kinds}.",
        s.target_query_p95_ms,
        if s.query_target_met { "met" } else { "**missed**" },
        s.mean_context_tokens
    );
    out
}

pub fn render_methodology(s: &ScaleSummary) -> String {
    let m = &s.meta;
    format!(
        "# Methodology of run `{}`\n\n- Data: generated in Rust (`cairn_bench::trajectories_scale::generate`, seeded LCG): each trajectory works in one of {} admin sections; it pages through the section's grid (28 rows per page, the same rows for the same page in every run), searches, fills a form field by field (the page repeats with one more value each state), saves, and reads the result; every fourth run fails with the section's error. The chrome (banner, menu, footer) is the same on every page.\n- Insert: one `insert_trajectory` call per trajectory into ONE space (`{SPACE}`), then one `flush`; each call's wall time is recorded. The embedding cache is {}; with a fresh cache every vector is computed.\n- What is embedded: reported by the engine's `IngestReport` (vectors computed / from cache) and `stats` (units by pool). Slices and notes always get a vector; events only when the step changed the URL or showed an error; the event count is derived as all vectors − slices − notes.\n- Disk: bytes of every file under the data directory after the flush (the embedding cache is outside it unless --cache points inside).\n- Queries: {} generated questions (how-to, errors, where-is, what-happens), each recalled once with `{}`; wall time and the engine's `timings.total_ms`.\n- Targets (from the issue): insert under {:.0} s, query p95 under {:.0} ms.\n- Machine: {} logical CPUs (`{}`), {}; command line `{}`; started {}, finished {}.\n",
        m.run_label,
        SECTIONS.len(),
        m.embedding_cache.as_deref().map_or("the data directory's own".into(), |c| format!("`{c}`")),
        s.queries,
        m.configs.first().map_or(String::new(), |c| serde_json::to_string(&c.options).unwrap_or_default()),
        s.target_insert_seconds,
        s.target_query_p95_ms,
        m.machine.nproc,
        m.machine.cpu_model,
        m.machine.memory_gib.map_or("unknown memory".into(), |g| format!("{g} GiB")),
        shell_join(&m.command_line),
        m.started_at.to_rfc3339(),
        m.finished_at.map_or("-".into(), |t| t.to_rfc3339()),
    )
}

pub fn short_report(s: &ScaleSummary) -> String {
    format!(
        "{}: inserted {} trajectories ({} states) in {:.1} s ({} ms p50 per trajectory), vectors computed {} / cached {}, disk {}; query p50 {} ms p95 {} ms",
        s.meta.run_label,
        s.insert.trajectories,
        s.insert.states,
        s.insert.total_seconds,
        ms(s.insert.per_trajectory_ms.p50),
        s.insert.vectors_computed,
        s.insert.vectors_cached,
        mib(s.insert.disk_bytes),
        ms(s.query_wall_ms.p50),
        ms(s.query_wall_ms.p95)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generation_is_deterministic_and_sized_like_real_pages() {
        let a = generate(5, 30, 7);
        assert_eq!(a, generate(5, 30, 7));
        assert_eq!(a.states.len(), 30);
        let sizes: Vec<usize> = a
            .states
            .iter()
            .map(|s| s.observation.as_ref().unwrap().len())
            .collect();
        let mean = sizes.iter().sum::<usize>() / sizes.len();
        assert!(
            (3_500..=7_000).contains(&mean),
            "mean observation {mean} bytes"
        );
        assert!(a.clone().validate().is_ok());
        assert_eq!(generate(3, 30, 7).succeeded(), Some(false));
        assert_eq!(queries(50, 7).len(), 50);
    }
}
