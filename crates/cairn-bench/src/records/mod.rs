//! What a run writes per question (or per measured point): one JSON line of
//! `results.jsonl` each, appended and handed to the OS at once, so an interrupted run
//! keeps every line it acknowledged and can resume. The record types are the benches'
//! own shapes (their fields are the published schema of `results.jsonl`).
//!
//! Records never hold a dataset's question, option or answer text: the question id finds
//! them in the dataset, so committed results never copy the data.

pub mod evermembench;
mod file;
pub mod lme_v2;
pub mod personal;
pub mod retrieval;
pub mod scale;
pub mod trajectories_scale;

pub use file::{read_jsonl, ResultsFile};
pub use retrieval::{read_results, QuestionRecord};

#[cfg(test)]
mod tests {
    use super::retrieval::{done_pairs, minimal};
    use super::*;

    #[test]
    fn appends_and_recovers_from_a_cut_line() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("results.jsonl");
        let mut f = ResultsFile::open(&p).unwrap();
        f.append(&minimal("q1", "t", "defaults")).unwrap();
        f.append(&minimal("q2", "t", "defaults")).unwrap();
        drop(f);
        // Simulate a crash in the middle of a third line.
        let mut raw = std::fs::read(&p).unwrap();
        raw.extend_from_slice(b"{\"dataset\":\"te");
        std::fs::write(&p, &raw).unwrap();
        let (rs, bad) = read_results(&p).unwrap();
        assert_eq!((rs.len(), bad), (2, 1));
        let mut f = ResultsFile::open(&p).unwrap();
        f.append(&minimal("q3", "t", "bench")).unwrap();
        let (rs, bad) = read_results(&p).unwrap();
        assert_eq!((rs.len(), bad), (3, 0));
        let done = done_pairs(&rs);
        assert!(done.contains(&("q3".to_string(), "bench".to_string())));
        assert!(!done.contains(&("q3".to_string(), "defaults".to_string())));
        // Everything round-trips except the dataset's own text, which is never written.
        let mut expected = minimal("q1", "t", "defaults");
        expected.question.clear();
        expected.answer = None;
        assert_eq!(rs[0], expected, "round trip");
        assert!(!std::fs::read_to_string(&p)
            .unwrap()
            .contains("\"question\""));
    }
}
