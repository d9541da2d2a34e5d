//! The generated trajectories of `cairn bench trajectories-scale`: N web-agent runs of S
//! states each over a shop admin (accessibility trees of ~5 KB that repeat between states
//! and runs, like real pages), and the questions asked of them. Deterministic: a seeded
//! LCG, nothing downloaded.
use cairn::{AgentState, TrajectoryInput};
use std::fmt::Write as _;

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

pub struct Section {
    menu: &'static str,
    name: &'static str,
    path: &'static str,
    columns: &'static str,
    goal: &'static str,
    fields: &'static [&'static str],
    error: &'static str,
    saved: &'static str,
}

pub const SECTIONS: &[Section] = &[
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
    let user = if t.is_multiple_of(3) {
        "Sam Ortiz (Sales Associate)"
    } else {
        "Morgan Lee (Administrator)"
    };
    let fails = t % 4 == 3;
    let run = Run {
        t,
        states,
        sec,
        s,
        base: format!("http://admin.example.test/admin/{}", s.path),
        entity,
        user,
        fails,
        browse: states / 3,
        fill_end: states.saturating_sub(3),
    };
    let mut out = Vec::with_capacity(states);
    for i in 0..states {
        let (url, obs, action, thought) = run.state(i, &mut rng);
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

/// One run being generated: its section, the thing it edits, who is signed in, whether
/// the save fails, and the states where browsing the grid and filling the form end.
struct Run<'a> {
    t: usize,
    states: usize,
    sec: usize,
    s: &'a Section,
    base: String,
    entity: String,
    user: &'a str,
    fails: bool,
    browse: usize,
    fill_end: usize,
}

/// A state's URL, observation, action and thought.
type State = (String, String, String, String);

impl Run<'_> {
    /// State `i`: paging through the grid, then a search, then the form filled field by
    /// field, saved, and the outcome shown.
    fn state(&self, i: usize, rng: &mut Lcg) -> State {
        let Run { s, sec, .. } = *self;
        let (entity, user, base) = (&self.entity, self.user, &self.base);
        if i < self.browse {
            let page = i / 2;
            let sel = (i % 2 == 1).then_some(rng.below(28));
            (
                format!("{base}/index/page/{}", page + 1),
                chrome(s.name, s.menu, user, &grid(sec, page, sel)),
                if i.is_multiple_of(2) {
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
        } else if i == self.browse {
            (
                format!("{base}/index/"),
                chrome(s.name, s.menu, user, &grid(sec, 0, None)),
                format!("type [31] \"{entity}\""),
                "Paging is slow; search by keyword instead.".to_string(),
            )
        } else {
            self.editing(i)
        }
    }

    /// A state after the search: a field filled, the save, or the outcome.
    fn editing(&self, i: usize) -> State {
        let Run { t, s, sec, .. } = *self;
        let (entity, user, base) = (&self.entity, self.user, &self.base);
        if i < self.fill_end {
            let k = i - self.browse - 1;
            let field = s.fields[k % s.fields.len()];
            (
                format!("{base}/edit/id/{}/", 500 + t),
                chrome(
                    entity,
                    s.menu,
                    user,
                    &form(sec, entity, k.min(s.fields.len()), None),
                ),
                format!("type [{}] \"{entity} {field}\"", 60 + k % s.fields.len()),
                format!("Fill in {field}."),
            )
        } else if i == self.fill_end {
            (
                format!("{base}/edit/id/{}/", 500 + t),
                chrome(
                    entity,
                    s.menu,
                    user,
                    &form(sec, entity, s.fields.len(), None),
                ),
                "click [54]".to_string(),
                "Everything is filled in; save.".to_string(),
            )
        } else {
            let alert = if self.fails { s.error } else { s.saved };
            (
                format!("{base}/edit/id/{}/", 500 + t),
                chrome(
                    entity,
                    s.menu,
                    user,
                    &form(sec, entity, s.fields.len(), Some(alert)),
                ),
                if i + 1 == self.states {
                    "stop".to_string()
                } else {
                    "scroll [up]".to_string()
                },
                if self.fails {
                    format!("It failed: {alert}")
                } else {
                    format!("Saved: {alert}")
                },
            )
        }
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
