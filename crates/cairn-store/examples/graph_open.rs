//! Opens a saved vector graph (`<data dir>/hnsw/*.graph`) the two ways USearch offers and
//! reports the time and resident memory of each: `load` (read into memory) or `view`
//! (memory-mapped, read-only). Run each mode in its own process so one does not warm the
//! other's pages in this process:
//! `cargo run --release -p cairn-store --example graph_open -- FILE load|view [QUERIES]`.
use std::time::Instant;

fn rss_mib() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or(0.0, |kb| kb / 1024.0)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let (Some(file), Some(mode)) = (args.get(1), args.get(2)) else {
        return Err("usage: graph_open FILE load|view [QUERIES]".into());
    };
    let queries: usize = args.get(3).map_or(Ok(1000), |q| q.parse())?;
    let before = rss_mib();
    let t = Instant::now();
    let index = match mode.as_str() {
        "load" => usearch::Index::restore(file)?,
        "view" => usearch::Index::restore_view(file)?,
        _ => return Err("mode: load or view".into()),
    };
    index.change_expansion_search(256);
    let open_s = t.elapsed().as_secs_f64();
    let opened = rss_mib();
    // Queries: stored vectors themselves (seeded picks), as the store's searches are.
    let dim = index.dimensions();
    let mut x: u64 = 7;
    let mut v = vec![0f32; dim];
    let mut times = Vec::with_capacity(queries);
    for _ in 0..queries {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let key = x % index.size() as u64;
        if index.get(key, &mut v).unwrap_or(0) == 0 {
            continue;
        }
        let t = Instant::now();
        index.search(&v, 10)?;
        times.push(t.elapsed().as_secs_f64() * 1000.0);
    }
    times.sort_by(f64::total_cmp);
    let pct = |p: f64| {
        times
            .get(((times.len() as f64 - 1.0) * p) as usize)
            .copied()
            .unwrap_or(0.0)
    };
    println!(
        "{mode}: {} points, open {open_s:.2} s, RSS before {before:.0} MiB, after open {opened:.0} MiB, \
         after {} searches {:.0} MiB; search p50 {:.3} ms p99 {:.3} ms",
        index.size(),
        times.len(),
        rss_mib(),
        pct(0.5),
        pct(0.99)
    );
    Ok(())
}
