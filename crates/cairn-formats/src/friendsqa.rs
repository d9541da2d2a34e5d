//! FriendsQA (`friendsqa_dev.json`, v2.0): multi-party dialogue from a TV sitcom, with
//! questions whose answers point at utterances.
//!
//! ```text
//! {"data": [{"title": "s01_e02_c03",
//!            "paragraphs": [{"utterances:": [{uid, speakers: [name, ...], utterance}],
//!                            "qas": [{id, question, answers: [{answer_text, utterance_id,
//!                                     inner_start, inner_end, is_speaker}]}]}]}]}
//! ```
//!
//! The key really is `utterances:` with a colon (`utterances` is accepted too). A title is
//! season, episode and scene. Paragraphs of one scene are concatenated.
//!
//! The transcript has no timestamps. Mapping onto group-chat messages
//! ([`friendsqa_group_days`]), meant for all scenes of a split in one space, ingested a
//! day at a time:
//! - one group conversation per scene: group = the title, so the scene becomes the
//!   session `<title>/<day>` ([`scene_session_id`]);
//! - one day per episode: episodes are numbered 0, 1, 2, ... in (season, episode) order
//!   over the scenes given, and episode `k` happens on [`BASE_DATE`] + `k` days; scene
//!   `cNN` of an episode starts `NN` minutes after midnight and its `i`-th utterance is
//!   said `i` seconds later, so scene order is time order;
//! - message id = `uid`; speaker = the speakers joined with `", "` (the list is also kept
//!   as metadata `{"speakers": [...]}` when there are several); `#NOTE#` (a scene
//!   description) becomes the speaker `narration`;
//! - utterances with empty text are skipped and counted.
//!
//! Evidence of a question is the scene title plus the `utterance_id` of its answers, i.e.
//! (session id, message id) once ingested.
use crate::error::FormatError;
use crate::fields;
use crate::io::read_text_file;
use cairn_core::{GroupMessage, InputError, Timestamp};
use chrono::{Duration, NaiveDate, TimeZone, Utc};
use serde::Serialize;
use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The day of the first episode (episode `k` is `k` days later).
pub const BASE_DATE: (i32, u32, u32) = (2000, 1, 1);
/// The speaker name given to `#NOTE#` utterances (scene descriptions).
pub const NARRATION: &str = "narration";

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FriendsUtterance {
    pub uid: u64,
    /// Verbatim; `#NOTE#` marks a scene description.
    pub speakers: Vec<String>,
    pub utterance: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FriendsAnswer {
    pub answer_text: String,
    pub utterance_id: u64,
    /// Token span inside the utterance; -1 when the answer is the speaker.
    pub inner_start: i64,
    pub inner_end: i64,
    /// The answer is the utterance's speaker, not a span of its text.
    pub is_speaker: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FriendsQuestion {
    pub id: String,
    pub question: String,
    pub answers: Vec<FriendsAnswer>,
}

impl FriendsQuestion {
    /// Ids of the evidence utterances (message ids), without repeats.
    pub fn evidence_utterances(&self) -> BTreeSet<String> {
        self.answers
            .iter()
            .map(|a| a.utterance_id.to_string())
            .collect()
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FriendsScene {
    /// `sSS_eEE_cCC`.
    pub title: String,
    pub season: u32,
    pub episode: u32,
    pub scene: u32,
    pub utterances: Vec<FriendsUtterance>,
    pub questions: Vec<FriendsQuestion>,
}

impl FriendsScene {
    /// How errors name this scene: `scene "<title>"`.
    pub fn record(&self) -> String {
        format!("scene {:?}", self.title)
    }

    /// Turn-level evidence of a question of this scene: `(session id, message id)` pairs.
    pub fn evidence_turns(&self, q: &FriendsQuestion) -> BTreeSet<(String, String)> {
        q.evidence_utterances()
            .into_iter()
            .map(|u| (self.title.clone(), u))
            .collect()
    }

    fn from_json(v: &Value, index: usize) -> Result<Self, InputError> {
        let anon = format!("data[{index}]");
        let m = fields::object(v, &anon, "a scene")?;
        let title = fields::string(m, &anon, "title")?;
        let rec = format!("scene {title:?}");
        let (season, episode, scene) = parse_title(&title).ok_or_else(|| {
            InputError::new(
                &rec,
                "field `title`: expected `sSS_eEE_cCC` (season, episode, scene)",
            )
        })?;
        let mut utterances = Vec::new();
        let mut questions = Vec::new();
        for (p, para) in fields::array(m, &rec, "paragraphs")?.iter().enumerate() {
            let prec = format!("{rec} paragraph {p}");
            let pm = fields::object(para, &prec, "a paragraph")?;
            let key = if pm.contains_key("utterances:") {
                "utterances:"
            } else {
                "utterances"
            };
            for u in fields::array(pm, &prec, key)? {
                let urec = format!("{rec} utterance {}", utterances.len());
                let um = fields::object(u, &urec, "an utterance")?;
                let uid = fields::uint(um, &urec, "uid")?;
                let urec = format!("{rec} utterance uid {uid}");
                utterances.push(FriendsUtterance {
                    uid,
                    speakers: fields::string_list(um, &urec, "speakers")?,
                    utterance: fields::string(um, &urec, "utterance")?,
                });
            }
            for (i, q) in fields::array(pm, &prec, "qas")?.iter().enumerate() {
                let qrec = format!("{prec} question {i}");
                let qm = fields::object(q, &qrec, "a question")?;
                let id = fields::string(qm, &qrec, "id")?;
                let qrec = format!("{rec} question {id:?}");
                let answers = fields::array(qm, &qrec, "answers")?
                    .iter()
                    .enumerate()
                    .map(|(a, ans)| parse_answer(ans, &format!("{qrec} answer {a}")))
                    .collect::<Result<Vec<_>, _>>()?;
                questions.push(FriendsQuestion {
                    question: fields::string(qm, &qrec, "question")?,
                    id,
                    answers,
                });
            }
        }
        Ok(FriendsScene {
            title,
            season,
            episode,
            scene,
            utterances,
            questions,
        })
    }
}

fn parse_answer(v: &Value, rec: &str) -> Result<FriendsAnswer, InputError> {
    let m = fields::object(v, rec, "an answer")?;
    let int = |key: &str| -> Result<i64, InputError> {
        let v = fields::get(m, rec, key)?;
        v.as_i64()
            .ok_or_else(|| fields::expected(rec, key, "an integer", v))
    };
    let is_speaker = match fields::get(m, rec, "is_speaker")? {
        Value::Bool(b) => *b,
        other => return Err(fields::expected(rec, "is_speaker", "a boolean", other)),
    };
    Ok(FriendsAnswer {
        answer_text: fields::string(m, rec, "answer_text")?,
        utterance_id: fields::uint(m, rec, "utterance_id")?,
        inner_start: int("inner_start")?,
        inner_end: int("inner_end")?,
        is_speaker,
    })
}

/// `s01_e23_c06` → (1, 23, 6).
fn parse_title(title: &str) -> Option<(u32, u32, u32)> {
    let mut parts = title.split('_');
    let mut num = |prefix: char| -> Option<u32> {
        let p = parts.next()?.strip_prefix(prefix)?;
        if p.is_empty() || !p.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        p.parse().ok()
    };
    let out = (num('s')?, num('e')?, num('c')?);
    parts.next().is_none().then_some(out)
}

/// Read a FriendsQA file (plain or gzip). Scenes come back sorted by (season, episode,
/// scene); titles must be unique. Errors name the file and the scene, utterance or question.
pub fn load_friendsqa(path: impl AsRef<Path>) -> Result<Vec<FriendsScene>, FormatError> {
    let path = path.as_ref();
    let text = read_text_file(path)?;
    let root: Value = serde_json::from_str(&text).map_err(|e| crate::io::json_err(path, &e))?;
    let rec = |e| FormatError::record(path, e);
    let top = fields::object(&root, "file", "a FriendsQA file").map_err(rec)?;
    let data = fields::array(top, "file", "data").map_err(rec)?;
    let mut scenes = data
        .iter()
        .enumerate()
        .map(|(i, s)| FriendsScene::from_json(s, i))
        .collect::<Result<Vec<_>, _>>()
        .map_err(rec)?;
    scenes.sort_by_key(|s| (s.season, s.episode, s.scene));
    for w in scenes.windows(2) {
        if (w[0].season, w[0].episode, w[0].scene) == (w[1].season, w[1].episode, w[1].scene) {
            return Err(rec(InputError::new(
                w[1].record(),
                format!("same scene as {:?}", w[0].title),
            )));
        }
    }
    Ok(scenes)
}

/// Scenes mapped onto group-chat days (see the module docs).
#[derive(Debug, Clone, PartialEq)]
pub struct FriendsHistory {
    /// Each episode's day with the messages of all its scenes, in time order.
    pub days: Vec<(NaiveDate, Vec<GroupMessage>)>,
    /// Utterances left out because their text is empty.
    pub skipped_empty_utterances: usize,
    /// The day given to each episode: `(season, episode) -> day`.
    pub episode_days: BTreeMap<(u32, u32), NaiveDate>,
}

impl FriendsHistory {
    /// The session a scene becomes once ingested (`None` for a scene not in the history).
    pub fn session_of(&self, scene: &FriendsScene) -> Option<String> {
        self.episode_days
            .get(&(scene.season, scene.episode))
            .map(|day| scene_session_id(&scene.title, *day))
    }
}

/// The session id of a scene ingested on `day`: `<title>/<YYYY-MM-DD>`.
pub fn scene_session_id(title: &str, day: NaiveDate) -> String {
    format!("{title}/{}", day.format("%Y-%m-%d"))
}

/// Maps scenes onto group-chat messages, one day per episode (see the module docs).
pub fn friendsqa_group_days(scenes: &[FriendsScene]) -> Result<FriendsHistory, InputError> {
    let base = NaiveDate::from_ymd_opt(BASE_DATE.0, BASE_DATE.1, BASE_DATE.2)
        .ok_or_else(|| InputError::new("BASE_DATE", "not a date"))?;
    let mut episode_days = BTreeMap::new();
    for s in scenes {
        episode_days.insert((s.season, s.episode), base);
    }
    for (k, day) in episode_days.values_mut().enumerate() {
        *day = base + Duration::days(k as i64);
    }
    let mut order: Vec<&FriendsScene> = scenes.iter().collect();
    order.sort_by_key(|s| (s.season, s.episode, s.scene));

    let mut days: Vec<(NaiveDate, Vec<GroupMessage>)> = Vec::new();
    let mut skipped = 0;
    for s in order {
        let rec = s.record();
        let day = episode_days[&(s.season, s.episode)];
        let start: Timestamp = Utc.from_utc_datetime(&day.and_time(chrono::NaiveTime::MIN))
            + Duration::minutes(i64::from(s.scene));
        if days.last().is_none_or(|(d, _)| *d != day) {
            days.push((day, Vec::new()));
        }
        let Some((_, messages)) = days.last_mut() else {
            continue;
        };
        for (i, u) in s.utterances.iter().enumerate() {
            if u.utterance.trim().is_empty() {
                skipped += 1;
                continue;
            }
            if u.speakers.is_empty() {
                return Err(InputError::new(
                    format!("{rec} utterance uid {}", u.uid),
                    "field `speakers` is empty",
                ));
            }
            let names: Vec<&str> = u
                .speakers
                .iter()
                .map(|n| if n == "#NOTE#" { NARRATION } else { n.as_str() })
                .collect();
            let m = GroupMessage {
                id: Some(u.uid.to_string()),
                speaker: names.join(", "),
                group: s.title.clone(),
                time: start + Duration::seconds(i as i64),
                text: u.utterance.clone(),
                metadata: if u.speakers.len() > 1 {
                    json!({ "speakers": u.speakers })
                } else {
                    Value::Null
                },
            };
            m.validate(messages.len()).map_err(|e| {
                InputError::new(format!("{rec} utterance uid {}", u.uid), e.to_string())
            })?;
            messages.push(m);
        }
    }
    days.retain(|(_, m)| !m.is_empty());
    Ok(FriendsHistory {
        days,
        skipped_empty_utterances: skipped,
        episode_days,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scene(title: &str, utterances: Value, qas: Value) -> Value {
        json!({"title": title, "paragraphs": [{"utterances:": utterances, "qas": qas}]})
    }

    fn good() -> Vec<Value> {
        vec![
            scene(
                "s02_e24_c03",
                json!([{"uid": 0, "speakers": ["Ross Geller"], "utterance": "Hi ."}]),
                json!([]),
            ),
            scene(
                "s01_e23_c06",
                json!([
                    {"uid": 0, "speakers": ["#NOTE#"], "utterance": "[ Scene : hospital . ]"},
                    {"uid": 1, "speakers": ["Ross Geller", "Susan Bunch"], "utterance": "Breathe ."},
                    {"uid": 2, "speakers": ["Ross Geller"], "utterance": " "}
                ]),
                json!([{"id": "s01_e23_c06_What", "question": "Who breathes ?", "answers": [
                    {"answer_text": "Ross Geller", "utterance_id": 1, "inner_start": -1, "inner_end": -1, "is_speaker": true}
                ]}]),
            ),
            scene(
                "s01_e23_c02",
                json!([{"uid": 0, "speakers": ["Monica Geller"], "utterance": "Go ."}]),
                json!([]),
            ),
        ]
    }

    fn load(data: Vec<Value>) -> Result<Vec<FriendsScene>, FormatError> {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("fqa.json");
        std::fs::write(&p, json!({"data": data, "version": "2.0"}).to_string()).unwrap();
        load_friendsqa(&p)
    }

    #[test]
    fn maps_scenes_to_dated_group_sessions() {
        let scenes = load(good()).unwrap();
        let titles: Vec<_> = scenes.iter().map(|s| s.title.as_str()).collect();
        assert_eq!(titles, ["s01_e23_c02", "s01_e23_c06", "s02_e24_c03"]);
        let h = friendsqa_group_days(&scenes).unwrap();
        assert_eq!(h.skipped_empty_utterances, 1);
        assert_eq!(h.days.len(), 2, "one day per episode");
        let (day, msgs) = &h.days[0];
        assert_eq!(day.to_string(), "2000-01-01");
        let times: Vec<_> = msgs.iter().map(|m| m.time.to_rfc3339()).collect();
        assert_eq!(
            times,
            [
                "2000-01-01T00:02:00+00:00",
                "2000-01-01T00:06:00+00:00",
                "2000-01-01T00:06:01+00:00"
            ]
        );
        assert_eq!(msgs[1].group, "s01_e23_c06");
        assert_eq!(msgs[1].speaker, NARRATION);
        assert_eq!(msgs[2].speaker, "Ross Geller, Susan Bunch");
        assert_eq!(msgs[2].id.as_deref(), Some("1"));
        assert_eq!(msgs[2].session_id(), "s01_e23_c06/2000-01-01");
        assert_eq!(
            h.session_of(&scenes[1]).as_deref(),
            Some("s01_e23_c06/2000-01-01")
        );
        assert_eq!(
            h.days[1].1[0].time.to_rfc3339(),
            "2000-01-02T00:03:00+00:00"
        );
        let q = &scenes[1].questions[0];
        assert_eq!(
            scenes[1].evidence_turns(q).into_iter().collect::<Vec<_>>(),
            [("s01_e23_c06".to_string(), "1".to_string())]
        );
    }

    #[test]
    fn errors_name_file_and_scene() {
        let mut bad_uid = good();
        bad_uid[1]["paragraphs"][0]["utterances:"][1]["uid"] = json!("one");
        let mut bad_answer = good();
        bad_answer[1]["paragraphs"][0]["qas"][0]["answers"][0]
            .as_object_mut()
            .unwrap()
            .remove("utterance_id");
        let mut bad_title = good();
        bad_title[0]["title"] = json!("episode one");
        let mut dup = good();
        dup[0]["title"] = json!("s01_e23_c02");
        let mut no_utt = good();
        no_utt[2]["paragraphs"][0]
            .as_object_mut()
            .unwrap()
            .remove("utterances:");
        let cases = [
            (bad_uid, "fqa.json: scene \"s01_e23_c06\" utterance 1: field `uid`: expected a non-negative integer, found a string"),
            (bad_answer, "scene \"s01_e23_c06\" question \"s01_e23_c06_What\" answer 0: missing field `utterance_id`"),
            (bad_title, "scene \"episode one\": field `title`"),
            (dup, "scene \"s01_e23_c02\": same scene as \"s01_e23_c02\""),
            (no_utt, "scene \"s01_e23_c02\" paragraph 0: missing field `utterances`"),
        ];
        for (data, want) in cases {
            let e = load(data).unwrap_err();
            assert!(e.to_string().contains(want), "{e}\nwanted: {want}");
        }
    }

    #[test]
    fn titles_parse_strictly() {
        assert_eq!(parse_title("s01_e23_c06"), Some((1, 23, 6)));
        assert_eq!(parse_title("s01_e23"), None);
        assert_eq!(parse_title("s01_e23_c06_x"), None);
        assert_eq!(parse_title("s1_e+2_c3"), None);
    }
}
