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
//!
//! The same checks stop a request whose caller has gone ([`Cancel`]): the server's
//! blocking-pool work cannot be aborted from outside, so it must notice by itself.
use std::cell::{Cell, RefCell};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A request ran past its deadline.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the request needed more than its {limit_ms} ms of work ({stage}); narrow it (a filter, `as_of`, a smaller page) or ask the operator to raise the limit")]
pub struct OutOfTime {
    pub limit_ms: u64,
    /// Where it was stopped.
    pub stage: &'static str,
}

/// Set by whoever waits for a request when it stops waiting (the client went away):
/// every check of the request's thread fails from then on.
#[derive(Debug, Clone, Default)]
pub struct Cancel(Arc<AtomicBool>);

impl Cancel {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn cancel(&self) {
        self.0.store(true, Ordering::Relaxed);
    }

    pub fn is_cancelled(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }

    /// Runs `f` with every check on this thread failing once this is cancelled (and as
    /// [`within`] does, once `limit` has passed).
    pub fn run<T>(&self, limit: Option<Duration>, f: impl FnOnce() -> T) -> T {
        struct Restore(Option<Cancel>);
        impl Drop for Restore {
            fn drop(&mut self) {
                CANCEL.with(|c| *c.borrow_mut() = self.0.take());
            }
        }
        let before = CANCEL.with(|c| c.borrow_mut().replace(self.clone()));
        let _restore = Restore(before);
        within(limit, f)
    }
}

thread_local! {
    static DEADLINE: Cell<Option<(Instant, u64)>> = const { Cell::new(None) };
    static CANCEL: RefCell<Option<Cancel>> = const { RefCell::new(None) };
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

/// `Err` once this thread's deadline has passed or its request was cancelled.
pub fn check(stage: &'static str) -> Result<(), OutOfTime> {
    let deadline = DEADLINE.get();
    let cancelled = CANCEL.with(|c| c.borrow().as_ref().is_some_and(Cancel::is_cancelled));
    match deadline {
        _ if cancelled => Err(OutOfTime {
            limit_ms: deadline.map_or(0, |(_, l)| l),
            stage,
        }),
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

    #[test]
    fn a_cancelled_request_fails_its_next_check_and_only_it() {
        let c = Cancel::new();
        c.run(None, || {
            assert!(check("x").is_ok());
            c.cancel();
            assert_eq!(check("regex").unwrap_err().stage, "regex");
        });
        assert!(
            check("x").is_ok(),
            "the flag is the request's, not the thread's"
        );
        let other = Cancel::new();
        other.run(
            Some(Duration::from_secs(60)),
            || assert!(check("x").is_ok()),
        );
    }
}
