//! Datasets as the protocols take them: each benchmark file's questions selected by the
//! command line, their evidence restricted to what gets ingested, and the facts about the
//! data a run records (`dataset_notes`). The files themselves are read by
//! `cairn::formats`; the generated data of the scale benches is made here.
//!
//! - [`longmemeval`], [`locomo`], [`friendsqa`]: questions for the retrieval protocol;
//! - [`off_topic`]: questions a space cannot answer (`--off-topic`), asked of it too;
//! - [`chat_history`]: the seeded chat history with planted needles of `bench scale`;
//! - [`web_trajectories`]: the seeded web-agent trajectories of `bench
//!   trajectories-scale`;
//! - [`personal`]: the personal-memory suite (`fixtures/personal/`).
use anyhow::bail;
use std::collections::HashSet;

pub mod chat_history;
pub mod friendsqa;
pub mod locomo;
pub mod longmemeval;
pub mod off_topic;
pub mod personal;
pub mod web_trajectories;

/// The items whose id is in `ids` (all of them when `ids` is empty), in file order, then
/// at most `limit`. An id naming no item is an error naming `flag`.
pub fn select_by_id<'a, T>(
    items: &'a [T],
    id: impl Fn(&T) -> &str,
    ids: &[String],
    limit: Option<usize>,
    flag: &str,
) -> anyhow::Result<Vec<&'a T>> {
    let wanted: HashSet<&str> = ids
        .iter()
        .map(|s| s.trim())
        .filter(|s| !s.is_empty())
        .collect();
    let known: HashSet<&str> = items.iter().map(&id).collect();
    let mut unknown: Vec<&str> = wanted.difference(&known).copied().collect();
    if !unknown.is_empty() {
        unknown.sort_unstable();
        bail!("{flag}: no question {}", unknown.join(", "));
    }
    Ok(items
        .iter()
        .filter(|q| wanted.is_empty() || wanted.contains(id(q)))
        .take(limit.unwrap_or(usize::MAX))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn selects_by_id_in_file_order_then_limits() {
        let items = ["a", "b", "c", "d"];
        let ids = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let pick = |w: &[&str], limit| select_by_id(&items, |s| s, &ids(w), limit, "--ids");
        assert_eq!(pick(&[], Some(2)).unwrap(), [&"a", &"b"]);
        assert_eq!(pick(&["d", " b "], None).unwrap(), [&"b", &"d"]);
        let e = pick(&["x", "a"], None).unwrap_err().to_string();
        assert_eq!(e, "--ids: no question x");
    }
}
