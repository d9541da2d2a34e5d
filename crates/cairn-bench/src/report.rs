//! Number and path formatting shared by every bench's summary and methodology files, so
//! all runs print figures the same way.
use std::path::Path;

/// A rate or score, three decimals.
pub(crate) fn f3(x: f64) -> String {
    format!("{x:.3}")
}

/// Milliseconds: one decimal below 100, none above.
pub(crate) fn ms(x: f64) -> String {
    if x >= 100.0 {
        format!("{x:.0}")
    } else {
        format!("{x:.1}")
    }
}

/// A data file's path as recorded in a run (absolute when it exists).
pub(crate) fn canonical(p: &Path) -> String {
    std::fs::canonicalize(p)
        .unwrap_or_else(|_| p.to_path_buf())
        .display()
        .to_string()
}
