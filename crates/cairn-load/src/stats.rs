//! Latency statistics: the one percentile definition every harness reports (benchmarks,
//! `cairn load`, the reliability soak and crash test), so a p99 means the same number
//! everywhere.
//!
//! **Nearest rank.** Of `n` values sorted ascending, `pXX` is the `ceil(XX/100 * n)`-th
//! smallest (counting from 1, at least the first): always a measured value, never an
//! interpolation between two; `p100` is the maximum. With no values every figure is 0.
use serde::{Deserialize, Serialize};

/// The definition in words, for METHODOLOGY.md files and reports.
pub const DEFINITION: &str = "nearest-rank method: pXX = the ceil(XX/100 * n)-th smallest value";

/// The nearest-rank `p`-th percentile (0 < p <= 100) of values sorted ascending; 0 when
/// there are none.
pub fn percentile(sorted: &[f64], p: f64) -> f64 {
    let n = sorted.len();
    if n == 0 {
        return 0.0;
    }
    let rank = (p / 100.0 * n as f64).ceil() as usize;
    sorted[rank.clamp(1, n) - 1]
}

/// Sorts latencies ascending (total order: a NaN sorts last).
pub fn sorted(values: &[f64]) -> Vec<f64> {
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    v
}

/// Distribution of a latency (milliseconds).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Percentiles {
    pub n: usize,
    pub mean: f64,
    pub p50: f64,
    pub p95: f64,
    pub p99: f64,
    pub max: f64,
}

/// Count, mean, nearest-rank p50/p95/p99 and maximum; all zero for no values.
pub fn percentiles(values: &[f64]) -> Percentiles {
    if values.is_empty() {
        return Percentiles::default();
    }
    let v = sorted(values);
    let n = v.len();
    Percentiles {
        n,
        // Summed in sorted order: the same bits on every run of the same values.
        mean: v.iter().sum::<f64>() / n as f64,
        p50: percentile(&v, 50.0),
        p95: percentile(&v, 95.0),
        p99: percentile(&v, 99.0),
        max: v[n - 1],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank() {
        let v: Vec<f64> = (1..=100).rev().map(f64::from).collect();
        let p = percentiles(&v);
        assert_eq!((p.p50, p.p95, p.p99, p.max), (50.0, 95.0, 99.0, 100.0));
        assert!((p.mean - 50.5).abs() < 1e-12);
        let p = percentiles(&[7.0]);
        assert_eq!((p.p50, p.p99), (7.0, 7.0));
        // n = 3: p50 = ceil(1.5) = 2nd, p95 = ceil(2.85) = 3rd.
        let p = percentiles(&[3.0, 1.0, 2.0]);
        assert_eq!((p.p50, p.p95), (2.0, 3.0));
        assert_eq!(percentiles(&[]), Percentiles::default());
        // n = 10: p90 = the 9th value, p99 = the 10th (not an interpolation).
        let s = sorted(&(1..=10).map(f64::from).collect::<Vec<_>>());
        assert_eq!((percentile(&s, 90.0), percentile(&s, 99.0)), (9.0, 10.0));
        assert_eq!(percentile(&s, 100.0), 10.0);
        assert_eq!(percentile(&[], 50.0), 0.0);
    }
}
