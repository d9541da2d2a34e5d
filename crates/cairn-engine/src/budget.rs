//! A bound on one request's work: a deadline that the engine's loops over a space (the
//! entity graph, profiles, fact chains, filtered listings, recall's stages) check as they
//! go, so that no input, including one nobody has found yet, makes a request run away.
//! The caller sets it around a call ([`within`], e.g. the server per request); without
//! one (the library, the CLI, benchmarks) nothing is ever cut. A request past its
//! deadline stops at the next check with [`OutOfTime`], before it writes anything: the
//! checks sit on read paths only.
//!
//! The deadline lives in a thread-local, so the stages need no extra parameter: a call
//! runs on one thread (the server runs each on a blocking-pool thread; recall's two
//! scoped searches are bounded by the indexes and are not checked).
use std::cell::Cell;
use std::time::{Duration, Instant};

/// A request ran past its deadline.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the request needed more than its {limit_ms} ms of work ({stage}); narrow it (a filter, `as_of`, a smaller page) or ask the operator to raise the limit")]
pub struct OutOfTime {
    pub limit_ms: u64,
    /// Where it was stopped.
    pub stage: &'static str,
}

thread_local! {
    static DEADLINE: Cell<Option<(Instant, u64)>> = const { Cell::new(None) };
}

/// Runs `f` with every check on this thread failing once `limit` has passed (`None`: no
/// limit). Nested calls keep the earlier deadline.
pub fn within<T>(limit: Option<Duration>, f: impl FnOnce() -> T) -> T {
    struct Restore(Option<(Instant, u64)>);
    impl Drop for Restore {
        fn drop(&mut self) {
            DEADLINE.set(self.0);
        }
    }
    let before = DEADLINE.get();
    let mine = limit.map(|l| {
        let at = Instant::now() + l;
        let at = before.map_or(at, |(b, _)| b.min(at));
        (at, l.as_millis() as u64)
    });
    let _restore = Restore(before);
    DEADLINE.set(mine.or(before));
    f()
}

/// `Err` once this thread's deadline has passed.
pub fn check(stage: &'static str) -> Result<(), OutOfTime> {
    match DEADLINE.get() {
        Some((at, limit_ms)) if Instant::now() >= at => Err(OutOfTime { limit_ms, stage }),
        _ => Ok(()),
    }
}

/// A check for the inside of a loop: it reads the clock on the first step and once
/// every 256 after.
#[derive(Debug)]
pub struct Ticker {
    stage: &'static str,
    steps: u32,
}

impl Ticker {
    pub fn new(stage: &'static str) -> Self {
        Self { stage, steps: 0 }
    }

    pub fn tick(&mut self) -> Result<(), OutOfTime> {
        self.steps = self.steps.wrapping_add(1);
        if self.steps % 256 == 1 {
            check(self.stage)
        } else {
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checks_fail_past_the_deadline_only_within_it() {
        assert!(check("x").is_ok());
        within(Some(Duration::ZERO), || {
            let e = check("graph").unwrap_err();
            assert_eq!(e.stage, "graph");
            let mut t = Ticker::new("loop");
            assert!((0..300).try_for_each(|_| t.tick()).is_err());
        });
        assert!(check("x").is_ok());
        within(Some(Duration::from_secs(60)), || {
            assert!(check("x").is_ok());
            // A nested, longer limit does not extend the outer one.
            within(Some(Duration::from_secs(3600)), || {
                let (at, _) = DEADLINE.get().unwrap();
                assert!(at <= Instant::now() + Duration::from_secs(61));
            });
        });
        within(None, || assert!(check("x").is_ok()));
    }
}
