//! Counts of the steps of loops whose cost must stay linear in a space: the cost
//! regression tests read them to check that a request's work grows with its input,
//! without timing anything (timed tests are noisy and forbidden). Counting is compiled
//! into this crate's own tests only; elsewhere [`step`] is nothing.

/// Names of the counted steps.
pub(crate) mod steps {
    /// Two names compared by the entity graph's alias merging (`graph::starts_name`).
    pub const NAMES_COMPARED: &str = "names compared";
    /// Two fact subjects compared by a chain (`facts::subject_match`).
    pub const SUBJECTS_COMPARED: &str = "subjects compared";
    /// A profile contribution read (`profile::stats_of`).
    pub const CONTRIBUTIONS_READ: &str = "contributions read";
    /// A speaker's first name taken when matching a question's names
    /// (`profile::named_speakers`).
    pub const FIRST_NAMES_TAKEN: &str = "first names taken";
    /// A recall candidate's unit read to check it against the request's view
    /// (`recall::Seen::load`).
    pub const CANDIDATES_CHECKED: &str = "candidates checked";
}

/// One step of `what`.
#[inline(always)]
pub(crate) fn step(what: &'static str) {
    steps(what, 1);
}

/// `n` steps of `what`.
#[inline(always)]
pub(crate) fn steps(what: &'static str, n: usize) {
    #[cfg(test)]
    counting::COUNTS.with(|c| *c.borrow_mut().entry(what).or_default() += n as u64);
    #[cfg(not(test))]
    let _ = (what, n);
}

#[cfg(test)]
pub(crate) mod counting {
    use std::cell::RefCell;
    use std::collections::HashMap;

    thread_local! {
        pub(super) static COUNTS: RefCell<HashMap<&'static str, u64>> =
            RefCell::new(HashMap::new());
    }

    /// What `f` returns, with how many steps of `what` it took on this thread.
    pub fn steps_of<T>(what: &'static str, f: impl FnOnce() -> T) -> (T, u64) {
        let at = |c: &HashMap<&str, u64>| c.get(what).copied().unwrap_or(0);
        let before = COUNTS.with(|c| at(&c.borrow()));
        let out = f();
        let after = COUNTS.with(|c| at(&c.borrow()));
        (out, after - before)
    }
}
