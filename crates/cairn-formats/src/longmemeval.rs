//! LongMemEval (cleaned release, 2025-09): `longmemeval_s*.json[.gz]`,
//! `longmemeval_oracle.json`. The file is a JSON array of questions:
//!
//! ```text
//! {question_id, question_type, question, answer (string or integer), question_date,
//!  answer_session_ids, haystack_dates, haystack_session_ids,
//!  haystack_sessions: [[{role: user|assistant, content, has_answer?}, ...], ...]}
//! ```
//!
//! Each question has its own, independent history (its haystack), which
//! [`LmeQuestion::sessions`] turns into dated [`SessionInput`]s:
//! - session id = `haystack_session_ids[i]`, `occurred_at` = `haystack_dates[i]`
//!   (`2023/05/30 (Tue) 23:40`, read as UTC);
//! - message id = the turn's index in its session (`"0"`, `"1"`, ...; indices of skipped
//!   turns are not reused), role = the turn's role, text = `content` verbatim;
//! - message metadata = `{"has_answer": true}` on evidence turns, nothing otherwise;
//! - sessions are sorted by date (stable: equal dates keep haystack order), since the
//!   haystack is not always in date order.
//!
//! Real-data quirks handled (see [`LmeHaystack`]):
//! - turns whose content is empty or whitespace are skipped and counted (one in the S dev
//!   split); a session left with no turn is skipped and named;
//! - a session id can appear twice in one haystack (three cases in the S dev split, all the
//!   same turns under two different dates, none an evidence session). Copies with identical
//!   turns are merged: the earliest-dated copy is kept, the others dropped and reported.
//!   Copies with different turns are all kept, the later ones (in haystack order) renamed
//!   `<id>#2`, `<id>#3`, ... and reported; [`LmeQuestion::evidence_turns`] uses the same
//!   names.
//!
//! Beware: some haystack sessions are dated *after* their question (same day or the next,
//! up to ~23.5 hours later), and many of those are evidence sessions (16 in the S dev split,
//! 65 in the oracle file). Nothing here drops them; a caller that filters history by
//! [`LmeQuestion::question_time`] would lose evidence.
use crate::error::FormatError;
use crate::fields;
use crate::io::{for_each_array_element, read_text_file};
use cairn_core::time::parse_timestamp;
use cairn_core::{InputError, Message, Role, SessionInput, Timestamp};
use serde::Serialize;
use serde_json::{json, Value};
use std::collections::{BTreeSet, HashMap};
use std::path::Path;

/// One turn of a LongMemEval session.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LmeTurn {
    pub role: Role,
    pub content: String,
    /// Turn-level evidence label (`has_answer: true`); absent reads as `false`.
    pub has_answer: bool,
}

/// One LongMemEval question with its haystack, as in the file.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LmeQuestion {
    pub question_id: String,
    /// single-session-user, single-session-assistant, single-session-preference,
    /// multi-session, temporal-reasoning, knowledge-update.
    pub question_type: String,
    pub question: String,
    /// The reference answer as text (integer answers are written in decimal).
    pub answer: String,
    /// When the question is asked (`2023/05/30 (Tue) 23:40`); see [`Self::question_time`].
    pub question_date: String,
    /// Session-level evidence.
    pub answer_session_ids: Vec<String>,
    pub haystack_dates: Vec<String>,
    pub haystack_session_ids: Vec<String>,
    pub haystack_sessions: Vec<Vec<LmeTurn>>,
}

/// A question's haystack as Cairn sessions, with what had to be skipped or merged.
#[derive(Debug, Clone, PartialEq)]
pub struct LmeHaystack {
    /// Validated sessions, sorted by date.
    pub sessions: Vec<SessionInput>,
    /// Turns left out because their content is empty or whitespace.
    pub skipped_empty_turns: usize,
    /// Sessions left out because none of their turns has content.
    pub skipped_empty_sessions: Vec<String>,
    /// Repeated session ids and what was done with each extra copy.
    pub duplicates: Vec<DuplicateSession>,
}

/// An extra copy of a session id inside one haystack.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DuplicateSession {
    /// The id as in the file.
    pub session_id: String,
    /// Haystack index and date of this copy.
    pub index: usize,
    pub date: Timestamp,
    /// Haystack index and date of the copy that keeps the id.
    pub kept_index: usize,
    pub kept_date: Timestamp,
    pub resolution: DuplicateResolution,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DuplicateResolution {
    /// Same turns as the kept copy: left out.
    Dropped,
    /// Different turns: kept under this new id.
    Renamed(String),
}

/// Read a LongMemEval file (a JSON array; plain or gzip). Checks every record's shape, its
/// dates and that question ids are unique; errors name the file and the question.
pub fn load_longmemeval(path: impl AsRef<Path>) -> Result<Vec<LmeQuestion>, FormatError> {
    let path = path.as_ref();
    let text = read_text_file(path)?;
    let mut out: Vec<LmeQuestion> = Vec::new();
    let mut seen: HashMap<String, usize> = HashMap::new();
    for_each_array_element(path, &text, "LongMemEval questions", |i, v| {
        let q = LmeQuestion::from_json(&v, i).map_err(|e| FormatError::record(path, e))?;
        if let Some(first) = seen.insert(q.question_id.clone(), i) {
            return Err(FormatError::record(
                path,
                InputError::new(
                    q.record(),
                    format!("question id repeated (records {first} and {i})"),
                ),
            ));
        }
        out.push(q);
        Ok(())
    })?;
    Ok(out)
}

impl LmeQuestion {
    /// Read one question from its JSON record (`index` is its position in the file, used
    /// in errors when the id is missing). Checks shapes, equal haystack lengths and dates.
    pub fn from_json(v: &Value, index: usize) -> Result<Self, InputError> {
        let anon = format!("record {index}");
        let m = fields::object(v, &anon, "a question")?;
        let question_id = fields::string(m, &anon, "question_id")?;
        let rec = format!("question {question_id:?}");
        if question_id.trim().is_empty() {
            return Err(InputError::new(anon, "field `question_id` is empty"));
        }
        let answer = fields::opt_text(m, &rec, "answer")?
            .ok_or_else(|| InputError::new(&rec, "missing field `answer`"))?;
        let haystack_session_ids = fields::string_list(m, &rec, "haystack_session_ids")?;
        let raw_sessions = fields::array(m, &rec, "haystack_sessions")?;
        let mut haystack_sessions = Vec::with_capacity(raw_sessions.len());
        for (i, s) in raw_sessions.iter().enumerate() {
            let srec = match haystack_session_ids.get(i) {
                Some(id) => format!("{rec} session {id:?} (haystack index {i})"),
                None => format!("{rec} haystack index {i}"),
            };
            let turns = s.as_array().ok_or_else(|| {
                fields::expected(&srec, "haystack_sessions", "an array of turns", s)
            })?;
            let turns = turns
                .iter()
                .enumerate()
                .map(|(t, turn)| parse_turn(turn, &format!("{srec} turn {t}")))
                .collect::<Result<Vec<_>, _>>()?;
            haystack_sessions.push(turns);
        }
        let q = LmeQuestion {
            question_type: fields::string(m, &rec, "question_type")?,
            question: fields::string(m, &rec, "question")?,
            answer,
            question_date: fields::string(m, &rec, "question_date")?,
            answer_session_ids: fields::string_list(m, &rec, "answer_session_ids")?,
            haystack_dates: fields::string_list(m, &rec, "haystack_dates")?,
            haystack_session_ids,
            haystack_sessions,
            question_id,
        };
        q.check()?;
        Ok(q)
    }

    /// How errors name this question: `question "<id>"`.
    pub fn record(&self) -> String {
        format!("question {:?}", self.question_id)
    }

    /// Check what [`Self::sessions`] and [`Self::question_time`] rely on: the three
    /// haystack lists have one entry per session, and every date reads.
    pub fn check(&self) -> Result<(), InputError> {
        let (d, i, s) = (
            self.haystack_dates.len(),
            self.haystack_session_ids.len(),
            self.haystack_sessions.len(),
        );
        if d != i || i != s {
            return Err(InputError::new(
                self.record(),
                format!(
                    "haystack lists differ in length: {d} `haystack_dates`, \
                     {i} `haystack_session_ids`, {s} `haystack_sessions`"
                ),
            ));
        }
        self.question_time()?;
        self.session_dates()?;
        Ok(())
    }

    /// When the question is asked.
    pub fn question_time(&self) -> Result<Timestamp, InputError> {
        parse_timestamp(&self.question_date).map_err(|e| {
            InputError::new(
                self.record(),
                format!("field `question_date`: {}", e.problem),
            )
        })
    }

    /// Abstention questions (id ending `_abs`): the answer was never given in the history.
    pub fn is_abstention(&self) -> bool {
        self.question_id.ends_with("_abs")
    }

    /// Turn-level evidence: `(session id, message id)` of every turn with `has_answer`,
    /// named as in [`Self::sessions`].
    pub fn evidence_turns(&self) -> BTreeSet<(String, String)> {
        let ids = self.resolved_ids();
        let mut out = BTreeSet::new();
        for (id, turns) in ids.iter().zip(&self.haystack_sessions) {
            for (t, turn) in turns.iter().enumerate() {
                if turn.has_answer {
                    out.insert((id.clone(), t.to_string()));
                }
            }
        }
        out
    }

    /// Session-level evidence (`answer_session_ids`) as a set.
    pub fn evidence_sessions(&self) -> BTreeSet<String> {
        self.answer_session_ids.iter().cloned().collect()
    }

    fn session_dates(&self) -> Result<Vec<Timestamp>, InputError> {
        self.haystack_dates
            .iter()
            .enumerate()
            .map(|(i, d)| {
                parse_timestamp(d).map_err(|e| {
                    let id = self.haystack_session_ids.get(i).map_or("?", |s| s.as_str());
                    InputError::new(
                        format!("{} session {id:?} (haystack index {i})", self.record()),
                        format!("field `haystack_dates[{i}]`: {}", e.problem),
                    )
                })
            })
            .collect()
    }

    /// The id each haystack session gets: its own, except that a repeated id with turns
    /// different from its first copy becomes `<id>#2`, `<id>#3`, ... in haystack order.
    fn resolved_ids(&self) -> Vec<String> {
        // id -> distinct turn lists seen so far (index into haystack of the first of each).
        let mut variants: HashMap<&str, Vec<usize>> = HashMap::new();
        let mut out = Vec::with_capacity(self.haystack_session_ids.len());
        for (i, id) in self.haystack_session_ids.iter().enumerate() {
            let turns = self.haystack_sessions.get(i);
            let seen = variants.entry(id.as_str()).or_default();
            let k = match seen
                .iter()
                .position(|&j| self.haystack_sessions.get(j) == turns)
            {
                Some(k) => k,
                None => {
                    seen.push(i);
                    seen.len() - 1
                }
            };
            out.push(if k == 0 {
                id.clone()
            } else {
                format!("{id}#{}", k + 1)
            });
        }
        out
    }

    /// The haystack as validated [`SessionInput`]s, sorted by date, with empty turns
    /// skipped and repeated session ids resolved (see the module docs).
    pub fn sessions(&self) -> Result<LmeHaystack, InputError> {
        self.check()?;
        let rec = self.record();
        let dates = self.session_dates()?;
        let ids = self.resolved_ids();
        let (order, duplicates) = self.kept_order(&ids, &dates);

        let mut sessions = Vec::with_capacity(order.len());
        let mut skipped_empty_turns = 0;
        let mut skipped_empty_sessions = Vec::new();
        for i in order {
            let (messages, skipped) = self.session_messages(i);
            skipped_empty_turns += skipped;
            if messages.is_empty() {
                skipped_empty_sessions.push(ids[i].clone());
                continue;
            }
            let session = SessionInput {
                id: ids[i].clone(),
                occurred_at: Some(dates[i]),
                group: None,
                messages,
                metadata: Value::Null,
            };
            sessions.push(session.validate().map_err(|e| e.within(&rec))?);
        }
        Ok(LmeHaystack {
            sessions,
            skipped_empty_turns,
            skipped_empty_sessions,
            duplicates,
        })
    }

    /// The haystack indexes that stay, in date order, and a report of each session dropped
    /// as a duplicate or renamed, in haystack order.
    fn kept_order(
        &self,
        ids: &[String],
        dates: &[Timestamp],
    ) -> (Vec<usize>, Vec<DuplicateSession>) {
        // For each resolved id, the haystack index that stays: the earliest date, ties to
        // the first in haystack order.
        let mut keep: HashMap<&str, usize> = HashMap::new();
        for (i, id) in ids.iter().enumerate() {
            keep.entry(id.as_str())
                .and_modify(|k| {
                    if dates[i] < dates[*k] {
                        *k = i;
                    }
                })
                .or_insert(i);
        }
        // The copy holding each original id, for reports.
        let mut original_holder: HashMap<&str, usize> = HashMap::new();
        for (i, id) in ids.iter().enumerate() {
            if id == &self.haystack_session_ids[i] {
                original_holder.insert(id.as_str(), keep[id.as_str()]);
            }
        }

        let mut duplicates = Vec::new();
        let mut order = Vec::new();
        for (i, id) in ids.iter().enumerate() {
            let orig = &self.haystack_session_ids[i];
            let kept = keep[id.as_str()];
            if kept != i {
                duplicates.push(DuplicateSession {
                    session_id: orig.clone(),
                    index: i,
                    date: dates[i],
                    kept_index: kept,
                    kept_date: dates[kept],
                    resolution: DuplicateResolution::Dropped,
                });
                continue;
            }
            if id != orig {
                let holder = original_holder.get(orig.as_str()).copied().unwrap_or(i);
                duplicates.push(DuplicateSession {
                    session_id: orig.clone(),
                    index: i,
                    date: dates[i],
                    kept_index: holder,
                    kept_date: dates[holder],
                    resolution: DuplicateResolution::Renamed(id.clone()),
                });
            }
            order.push(i);
        }
        duplicates.sort_by_key(|d| d.index);
        order.sort_by_key(|&i| dates[i]); // stable
        (order, duplicates)
    }

    /// The messages of haystack session `i` (its turns of empty content left out), and how
    /// many turns were left out.
    fn session_messages(&self, i: usize) -> (Vec<Message>, usize) {
        let mut skipped_empty_turns = 0;
        let mut messages = Vec::with_capacity(self.haystack_sessions[i].len());
        for (t, turn) in self.haystack_sessions[i].iter().enumerate() {
            if turn.content.trim().is_empty() {
                skipped_empty_turns += 1;
                continue;
            }
            messages.push(Message {
                id: t.to_string(),
                role: Some(turn.role),
                speaker: None,
                text: turn.content.clone(),
                occurred_at: None,
                metadata: if turn.has_answer {
                    json!({"has_answer": true})
                } else {
                    Value::Null
                },
            });
        }
        (messages, skipped_empty_turns)
    }
}

fn parse_turn(v: &Value, rec: &str) -> Result<LmeTurn, InputError> {
    let m = fields::object(v, rec, "a turn")?;
    let role = match fields::string(m, rec, "role")?.as_str() {
        "user" => Role::User,
        "assistant" => Role::Assistant,
        "system" => Role::System,
        other => {
            return Err(InputError::new(
                rec,
                format!("field `role`: expected \"user\" or \"assistant\", found {other:?}"),
            ))
        }
    };
    Ok(LmeTurn {
        role,
        content: fields::string(m, rec, "content")?,
        has_answer: fields::flag(m, rec, "has_answer")?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn question(over: Value) -> Value {
        let mut q = json!({
            "question_id": "q1",
            "question_type": "multi-session",
            "question": "What did I buy?",
            "answer": 3,
            "question_date": "2023/05/30 (Tue) 23:40",
            "answer_session_ids": ["b"],
            "haystack_dates": ["2023/05/21 (Sun) 10:00", "2023/05/20 (Sat) 09:00", "2023/05/22 (Mon) 08:00"],
            "haystack_session_ids": ["a", "b", "c"],
            "haystack_sessions": [
                [{"role": "user", "content": "hello"}, {"role": "assistant", "content": "hi"}],
                [{"role": "user", "content": "", "has_answer": false},
                 {"role": "user", "content": "I bought 3 apples", "has_answer": true},
                 {"role": "assistant", "content": "nice", "has_answer": false}],
                [{"role": "user", "content": "bye"}]
            ]
        });
        if let (Some(q), Some(o)) = (q.as_object_mut(), over.as_object()) {
            for (k, v) in o {
                q.insert(k.clone(), v.clone());
            }
        }
        q
    }

    fn load(records: &[Value]) -> Result<Vec<LmeQuestion>, FormatError> {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("lme.json");
        std::fs::write(&p, serde_json::to_string(records).unwrap()).unwrap();
        load_longmemeval(&p)
    }

    #[test]
    fn converts_a_haystack() {
        let qs = load(&[question(json!({}))]).unwrap();
        let q = &qs[0];
        assert_eq!(q.answer, "3");
        assert!(!q.is_abstention());
        assert_eq!(
            q.question_time().unwrap().to_rfc3339(),
            "2023-05-30T23:40:00+00:00"
        );
        let h = q.sessions().unwrap();
        let ids: Vec<_> = h.sessions.iter().map(|s| s.id.as_str()).collect();
        assert_eq!(ids, ["b", "a", "c"], "sorted by date");
        assert_eq!(h.skipped_empty_turns, 1);
        assert!(h.duplicates.is_empty());
        let b = &h.sessions[0];
        assert_eq!(b.messages.len(), 2);
        assert_eq!(
            b.messages[0].id, "1",
            "turn index kept when a turn is skipped"
        );
        assert_eq!(b.messages[0].role, Some(Role::User));
        assert_eq!(b.messages[0].metadata, json!({"has_answer": true}));
        assert_eq!(b.messages[1].metadata, Value::Null);
        assert_eq!(
            q.evidence_turns().into_iter().collect::<Vec<_>>(),
            [("b".to_string(), "1".to_string())]
        );
    }

    #[test]
    fn merges_identical_duplicates_and_renames_different_ones() {
        let s = |t: &str| json!([{"role": "user", "content": t}]);
        let q = question(json!({
            "haystack_dates": ["2023/05/21 (Sun) 10:00", "2023/05/20 (Sat) 09:00",
                               "2023/05/22 (Mon) 08:00", "2023/05/23 (Tue) 08:00"],
            "haystack_session_ids": ["a", "a", "a", "x"],
            "haystack_sessions": [s("same"), s("same"), s("other"), s("x")],
        }));
        let qs = load(&[q]).unwrap();
        let h = qs[0].sessions().unwrap();
        let ids: Vec<_> = h.sessions.iter().map(|s| s.id.as_str()).collect();
        assert_eq!(ids, ["a", "a#2", "x"]);
        assert_eq!(
            h.sessions[0].occurred_at.unwrap().to_rfc3339(),
            "2023-05-20T09:00:00+00:00",
            "earliest identical copy kept"
        );
        assert_eq!(h.duplicates.len(), 2);
        assert_eq!(h.duplicates[0].index, 0);
        assert_eq!(h.duplicates[0].kept_index, 1);
        assert_eq!(h.duplicates[0].resolution, DuplicateResolution::Dropped);
        assert_eq!(
            h.duplicates[1].resolution,
            DuplicateResolution::Renamed("a#2".into())
        );
    }

    #[test]
    fn skips_sessions_with_no_content() {
        let q = question(json!({
            "haystack_sessions": [
                [{"role": "user", "content": " "}],
                [{"role": "user", "content": "x"}],
                [{"role": "user", "content": "y"}]
            ]
        }));
        let h = load(&[q]).unwrap()[0].sessions().unwrap();
        assert_eq!(h.skipped_empty_sessions, ["a"]);
        assert_eq!(h.skipped_empty_turns, 1);
        assert_eq!(h.sessions.len(), 2);
    }

    #[test]
    fn errors_name_file_and_question() {
        let mut no_date = question(json!({"question_id": "q2"}));
        no_date.as_object_mut().unwrap().remove("question_date");
        let cases = [
            (no_date, "lme.json: question \"q2\": missing field `question_date`"),
            (
                question(json!({"question_id": "q3", "haystack_dates": ["2023/05/21 (Sun) 10:00", "soon", "2023/05/22"]})),
                "question \"q3\" session \"b\" (haystack index 1): field `haystack_dates[1]`: cannot read \"soon\"",
            ),
            (
                question(json!({"question_id": "q4", "question_date": "someday"})),
                "question \"q4\": field `question_date`: cannot read \"someday\"",
            ),
            (
                question(json!({"question_id": "q5", "haystack_session_ids": ["a", 7, "c"]})),
                "question \"q5\": field `haystack_session_ids[1]`: expected a string, found a number (7)",
            ),
            (
                question(json!({"question_id": "q6", "answer": ["x"]})),
                "question \"q6\": field `answer`: expected a string or a number, found an array",
            ),
            (
                question(json!({"question_id": "q7", "haystack_session_ids": ["a", "b"]})),
                "question \"q7\": haystack lists differ in length",
            ),
            (
                question(json!({"question_id": "q8", "haystack_sessions": [[], [{"role": "bot", "content": "x"}], []]})),
                "question \"q8\" session \"b\" (haystack index 1) turn 0: field `role`",
            ),
            (json!({"question": "no id"}), "lme.json: record 1: missing field `question_id`"),
            (json!("just text"), "record 1: expected a question (a JSON object)"),
        ];
        for (bad, want) in cases {
            let e = load(&[question(json!({})), bad]).unwrap_err();
            assert!(e.to_string().contains(want), "{e}\nwanted: {want}");
        }
        let e = load(&[question(json!({})), question(json!({}))]).unwrap_err();
        assert!(
            e.to_string()
                .contains("question \"q1\": question id repeated (records 0 and 1)"),
            "{e}"
        );
    }

    #[test]
    fn truncated_and_non_array_files_fail_naming_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("cut.json");
        let full = serde_json::to_string(&[question(json!({}))]).unwrap();
        std::fs::write(&p, &full[..full.len() / 2]).unwrap();
        let e = load_longmemeval(&p).unwrap_err();
        assert!(
            e.to_string()
                .starts_with(&format!("{}: invalid JSON:", p.display())),
            "{e}"
        );
        std::fs::write(&p, "{}").unwrap();
        let e = load_longmemeval(&p).unwrap_err();
        assert!(
            e.to_string()
                .contains("a JSON array of LongMemEval questions"),
            "{e}"
        );
    }

    #[test]
    fn invalid_session_content_names_the_question() {
        let q = question(json!({"haystack_session_ids": ["a", "b", ""]}));
        let e = load(&[q]).unwrap()[0].sessions().unwrap_err();
        assert!(
            e.to_string().starts_with("question \"q1\", session \"\""),
            "{e}"
        );
    }
}
