//! CPU time of the running process, for the examples that compare backends with
//! `scripts/onnx-minilm.py` (which prints Python's `time.process_time`).

/// User + system CPU seconds of this process, all threads (Linux: `/proc/self/stat`,
/// fields 14 and 15, in ticks of 1/100 s).
pub fn process_cpu_secs() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // Fields after the command name, which is in parentheses and may hold spaces.
    let rest = stat.get(stat.rfind(')')? + 2..)?;
    let fields: Vec<&str> = rest.split(' ').collect();
    let ticks = |i: usize| fields.get(i)?.parse::<f64>().ok();
    Some((ticks(11)? + ticks(12)?) / 100.0)
}
