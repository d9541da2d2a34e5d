//! LongMemEval-V2 questions and haystacks (the trajectories themselves are read by
//! [`crate::trajectories`]).
//!
//! `questions.jsonl`: one `{id, domain, question, image, answer, question_type,
//! eval_function}` per line. `question_type` is one of `static-environment`,
//! `dynamic-environment`, `procedure`, `errors-gotchas`, each optionally suffixed `-abs`
//! (abstention: the answer is not in the haystack).
//!
//! `eval_function` names how the reference scores a reader's answer. It is modelled as
//! data ([`EvalFunction`]) and accepted in two shapes:
//! - the dataset's own string, `name|key=value|key=value`, e.g.
//!   `norm_phrase_set_match|lower=true|separators=,;|require_non_empty=true`;
//! - an object, `{"name": "norm_phrase_set_match", "separators": ",;", ...}` (the same
//!   keys; `type` is accepted for `name`).
//!
//! Known names: `norm_phrase_set_match`, `norm_phrase_set_match_ordered` (every phrase
//! of the answer, split at the separators, must occur in the prediction after
//! normalization; in order for the second), `mc_choice_match`, `mc_choice_set_match`
//! (the predicted option letter, or set of letters, must equal the answer's),
//! `llm_abstention_checker`, `llm_gotchas_checker` (an LLM judge decides). Known options:
//! `lower`, `normalize_hyphen`, `strip_punct`, `require_non_empty` (booleans),
//! `separators`, `strip_chars` (characters). Any other name or option is an error that
//! names the file, the question and the field.
//!
//! `haystacks/lme_v2_<tier>.json`: `{question_id: [trajectory_id, ...]}`.
use crate::error::split_json_error;
use crate::io::{open_reader, read_text_file};
use crate::FormatError;
use cairn_core::InputError;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::{BTreeMap, HashSet};
use std::io::BufRead;
use std::path::Path;

/// The four question families of LongMemEval-V2.
pub const QUESTION_TYPES: [&str; 4] = [
    "static-environment",
    "dynamic-environment",
    "procedure",
    "errors-gotchas",
];

/// How the reference scores an answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EvalKind {
    /// `norm_phrase_set_match`.
    NormPhraseSetMatch,
    /// `norm_phrase_set_match_ordered`.
    NormPhraseSetMatchOrdered,
    /// `mc_choice_match`.
    McChoiceMatch,
    /// `mc_choice_set_match`.
    McChoiceSetMatch,
    /// `llm_abstention_checker`.
    LlmAbstentionChecker,
    /// `llm_gotchas_checker`.
    LlmGotchasChecker,
}

impl EvalKind {
    pub const ALL: [EvalKind; 6] = [
        EvalKind::NormPhraseSetMatch,
        EvalKind::NormPhraseSetMatchOrdered,
        EvalKind::McChoiceMatch,
        EvalKind::McChoiceSetMatch,
        EvalKind::LlmAbstentionChecker,
        EvalKind::LlmGotchasChecker,
    ];

    pub fn name(self) -> &'static str {
        match self {
            EvalKind::NormPhraseSetMatch => "norm_phrase_set_match",
            EvalKind::NormPhraseSetMatchOrdered => "norm_phrase_set_match_ordered",
            EvalKind::McChoiceMatch => "mc_choice_match",
            EvalKind::McChoiceSetMatch => "mc_choice_set_match",
            EvalKind::LlmAbstentionChecker => "llm_abstention_checker",
            EvalKind::LlmGotchasChecker => "llm_gotchas_checker",
        }
    }

    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|k| k.name() == name)
    }

    pub fn is_phrase_set(self) -> bool {
        matches!(
            self,
            EvalKind::NormPhraseSetMatch | EvalKind::NormPhraseSetMatchOrdered
        )
    }

    pub fn is_choice(self) -> bool {
        matches!(self, EvalKind::McChoiceMatch | EvalKind::McChoiceSetMatch)
    }

    pub fn is_llm_judged(self) -> bool {
        matches!(
            self,
            EvalKind::LlmAbstentionChecker | EvalKind::LlmGotchasChecker
        )
    }
}

/// An `eval_function`: its kind and options (defaults are the reference's).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EvalFunction {
    pub kind: EvalKind,
    pub lower: bool,
    pub normalize_hyphen: bool,
    pub strip_punct: bool,
    pub require_non_empty: bool,
    /// Phrase separators of the answer (phrase-set kinds).
    pub separators: Vec<char>,
    /// Characters stripped from a choice (choice kinds).
    pub strip_chars: Vec<char>,
}

impl EvalFunction {
    pub fn new(kind: EvalKind) -> Self {
        Self {
            kind,
            lower: true,
            normalize_hyphen: true,
            strip_punct: true,
            require_non_empty: true,
            separators: vec![',', ';'],
            strip_chars: vec!['.'],
        }
    }

    /// Parses the dataset's string form `name|key=value|...`.
    pub fn parse_spec(spec: &str) -> Result<Self, String> {
        let mut parts = spec.split('|').map(str::trim);
        let name = parts.next().unwrap_or("");
        let mut f = Self::new(Self::kind(name)?);
        for part in parts.filter(|p| !p.is_empty()) {
            let (k, v) = part
                .split_once('=')
                .ok_or_else(|| format!("option {part:?} is not key=value"))?;
            f.set(k.trim(), v.trim())?;
        }
        Ok(f)
    }

    fn kind(name: &str) -> Result<EvalKind, String> {
        EvalKind::parse(name).ok_or_else(|| {
            format!(
                "unknown eval function {name:?} (known: {})",
                EvalKind::ALL.map(EvalKind::name).join(", ")
            )
        })
    }

    fn set(&mut self, key: &str, value: &str) -> Result<(), String> {
        let flag = |v: &str| match v.to_ascii_lowercase().as_str() {
            "true" => Ok(true),
            "false" => Ok(false),
            _ => Err(format!("option {key:?}: {v:?} is not true or false")),
        };
        let chars = |v: &str| v.chars().filter(|c| !c.is_whitespace()).collect();
        match key {
            "lower" => self.lower = flag(value)?,
            "normalize_hyphen" => self.normalize_hyphen = flag(value)?,
            "strip_punct" => self.strip_punct = flag(value)?,
            "require_non_empty" => self.require_non_empty = flag(value)?,
            "separator" | "separators" => self.separators = chars(value),
            "strip_chars" => self.strip_chars = chars(value),
            _ => return Err(format!("unknown eval function option {key:?}")),
        }
        Ok(())
    }

    /// Reads either accepted JSON shape (a string, or an object with `name`/`type`).
    pub fn from_json(v: &Value) -> Result<Self, String> {
        match v {
            Value::String(s) => Self::parse_spec(s),
            Value::Object(m) => {
                let name = m
                    .get("name")
                    .or_else(|| m.get("type"))
                    .and_then(Value::as_str)
                    .ok_or("an eval function object needs a string `name`")?;
                let mut f = Self::new(Self::kind(name)?);
                for (k, v) in m {
                    if k == "name" || k == "type" {
                        continue;
                    }
                    let s = match v {
                        Value::Bool(b) => b.to_string(),
                        Value::String(s) => s.clone(),
                        Value::Array(a) => a
                            .iter()
                            .map(|x| x.as_str().map(String::from))
                            .collect::<Option<Vec<_>>>()
                            .ok_or_else(|| format!("option {k:?}: a list of strings"))?
                            .concat(),
                        other => return Err(format!("option {k:?}: unexpected value {other}")),
                    };
                    f.set(k, &s)?;
                }
                Ok(f)
            }
            other => Err(format!(
                "expected a string like \"norm_phrase_set_match|lower=true\" or an object, got {other}"
            )),
        }
    }

    /// Normalizes text as the reference does: lowercase, `-`/`_` to spaces, separators
    /// to spaces, punctuation removed, whitespace collapsed (each step per the options).
    pub fn normalize(&self, text: &str) -> String {
        let mut t = if self.lower {
            text.to_lowercase()
        } else {
            text.to_string()
        };
        if self.normalize_hyphen {
            t = t.replace(['-', '_'], " ");
        }
        t = t.replace([',', ';'], " ");
        if self.strip_punct {
            t = t
                .chars()
                .filter(|c| c.is_alphanumeric() || c.is_whitespace() || *c == '_')
                .collect();
        }
        t.split_whitespace().collect::<Vec<_>>().join(" ")
    }

    /// The normalized phrases of an answer (phrase-set kinds), in answer order.
    pub fn answer_phrases(&self, answer: &str) -> Vec<String> {
        let parts: Vec<&str> = if self.separators.is_empty() {
            vec![answer]
        } else {
            answer.split(&self.separators[..]).collect()
        };
        parts
            .into_iter()
            .map(|p| self.normalize(p))
            .filter(|p| !p.is_empty())
            .collect()
    }

    /// The option letters of an answer (choice kinds): `"B"`, `"(b)."`, `"A, C"`.
    pub fn answer_letters(&self, answer: &str) -> Vec<String> {
        let cleaned: String = answer
            .chars()
            .filter(|c| !self.strip_chars.contains(c))
            .collect();
        let mut out: Vec<String> = cleaned
            .split(|c: char| !c.is_ascii_alphanumeric())
            .filter(|w| !w.is_empty())
            .filter(|w| !["choice", "option", "and"].contains(&w.to_lowercase().as_str()))
            .map(|w| w.to_uppercase())
            .collect();
        out.dedup();
        out
    }
}

/// One LongMemEval-V2 question.
#[derive(Debug, Clone, PartialEq)]
pub struct LmeV2Question {
    pub id: String,
    pub domain: Option<String>,
    pub question: String,
    /// A reference to an image that is part of the question (not read).
    pub image: Option<String>,
    pub answer: String,
    /// As in the file, e.g. `procedure` or `procedure-abs`.
    pub question_type: String,
    pub eval_function: EvalFunction,
}

impl LmeV2Question {
    /// The type without its `-abs` suffix.
    pub fn base_type(&self) -> &str {
        self.question_type
            .strip_suffix("-abs")
            .unwrap_or(&self.question_type)
    }

    /// An abstention question (`*-abs`): the haystack does not hold the answer.
    pub fn is_abstention(&self) -> bool {
        self.question_type.ends_with("-abs")
    }

    /// Multiple-choice options written in the question (`A. text` / `(A) text` / `A) text`
    /// at the start of a line), by letter.
    pub fn options(&self) -> BTreeMap<String, String> {
        let mut out = BTreeMap::new();
        for line in self.question.lines() {
            let l = line.trim();
            let l = l.strip_prefix('(').unwrap_or(l);
            let mut chars = l.chars();
            let (Some(letter), Some(sep)) = (chars.next(), chars.next()) else {
                continue;
            };
            if letter.is_ascii_uppercase() && matches!(sep, '.' | ')' | ':') {
                let text = chars.as_str().trim();
                if !text.is_empty() {
                    out.insert(letter.to_string(), text.to_string());
                }
            }
        }
        out
    }

    /// The question without its option lines.
    pub fn stem(&self) -> String {
        let opts = self.options();
        if opts.is_empty() {
            return self.question.clone();
        }
        self.question
            .lines()
            .filter(|l| !opts.values().any(|o| l.trim().ends_with(o.as_str())))
            .collect::<Vec<_>>()
            .join("\n")
            .trim()
            .to_string()
    }
}

#[derive(Deserialize)]
struct RawQuestion {
    id: String,
    #[serde(default)]
    domain: Option<String>,
    question: String,
    #[serde(default)]
    image: Option<String>,
    answer: Value,
    question_type: String,
    eval_function: Value,
}

/// Reads `questions.jsonl` (plain or gzip). Errors name the file, the line, the question
/// and the field.
pub fn load_lme_v2_questions(path: impl AsRef<Path>) -> Result<Vec<LmeV2Question>, FormatError> {
    let path = path.as_ref();
    let mut out: Vec<LmeV2Question> = Vec::new();
    let mut seen = HashSet::new();
    for (i, line) in open_reader(path)?.lines().enumerate() {
        let line = line.map_err(|e| FormatError::Io {
            path: path.to_path_buf(),
            source: e,
        })?;
        if line.trim().is_empty() {
            continue;
        }
        let at = format!("line {}", i + 1);
        let raw: RawQuestion = serde_json::from_str(&line)
            .map_err(|e| FormatError::record(path, InputError::new(&at, split_json_error(&e).0)))?;
        let rec = format!("{at} (question {:?})", raw.id);
        let bad = |msg: String| FormatError::record(path, InputError::new(&rec, msg));
        if raw.id.trim().is_empty() {
            return Err(bad("field `id` is empty".into()));
        }
        if !seen.insert(raw.id.clone()) {
            return Err(bad("duplicate question id".into()));
        }
        if raw.question.trim().is_empty() {
            return Err(bad("field `question` is empty".into()));
        }
        let base = raw
            .question_type
            .strip_suffix("-abs")
            .unwrap_or(&raw.question_type);
        if !QUESTION_TYPES.contains(&base) {
            return Err(bad(format!(
                "field `question_type`: unknown type {:?} (known: {}, each optionally with -abs)",
                raw.question_type,
                QUESTION_TYPES.join(", ")
            )));
        }
        let answer = match raw.answer {
            Value::String(s) => s,
            Value::Array(a) => a
                .iter()
                .map(|v| v.as_str().map(String::from))
                .collect::<Option<Vec<_>>>()
                .ok_or_else(|| bad("field `answer`: a list that is not all strings".into()))?
                .join(", "),
            Value::Number(n) => n.to_string(),
            other => return Err(bad(format!("field `answer`: unexpected value {other}"))),
        };
        let eval_function = EvalFunction::from_json(&raw.eval_function)
            .map_err(|e| bad(format!("field `eval_function`: {e}")))?;
        let q = LmeV2Question {
            id: raw.id,
            domain: raw.domain,
            question: raw.question,
            image: raw.image,
            answer,
            question_type: raw.question_type,
            eval_function,
        };
        if q.eval_function.kind.is_choice() && q.eval_function.answer_letters(&q.answer).is_empty()
        {
            return Err(bad(
                "field `answer`: a choice question needs option letters".into(),
            ));
        }
        if q.eval_function.kind.is_phrase_set()
            && q.eval_function.require_non_empty
            && q.eval_function.answer_phrases(&q.answer).is_empty()
        {
            return Err(bad("field `answer`: no phrase to match".into()));
        }
        out.push(q);
    }
    Ok(out)
}

/// Reads a haystack file `{question_id: [trajectory_id, ...]}`. Errors name the file and
/// the question.
pub fn load_lme_v2_haystacks(
    path: impl AsRef<Path>,
) -> Result<BTreeMap<String, Vec<String>>, FormatError> {
    let path = path.as_ref();
    let text = read_text_file(path)?;
    let v: Value = serde_json::from_str(&text).map_err(|e| {
        let (msg, at) = split_json_error(&e);
        FormatError::Json {
            path: path.to_path_buf(),
            msg: match at {
                Some((l, c)) => format!("{msg} (line {l}, column {c})"),
                None => msg,
            },
        }
    })?;
    let Value::Object(map) = v else {
        return Err(FormatError::Json {
            path: path.to_path_buf(),
            msg: "the top level must be an object {question_id: [trajectory_id, ...]}".into(),
        });
    };
    let mut out = BTreeMap::new();
    for (qid, ids) in map {
        let rec = format!("question {qid:?}");
        let bad = |msg: &str| FormatError::record(path, InputError::new(&rec, msg));
        let Value::Array(ids) = ids else {
            return Err(bad("the haystack must be a list of trajectory ids"));
        };
        let ids = ids
            .into_iter()
            .map(|v| match v {
                Value::String(s) if !s.trim().is_empty() => Some(s),
                _ => None,
            })
            .collect::<Option<Vec<_>>>()
            .ok_or_else(|| bad("every trajectory id must be a non-empty string"))?;
        if ids.is_empty() {
            return Err(bad("the haystack is empty"));
        }
        out.insert(qid, ids);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &tempfile::TempDir, name: &str, text: &str) -> std::path::PathBuf {
        let p = dir.path().join(name);
        std::fs::write(&p, text).unwrap();
        p
    }

    #[test]
    fn eval_functions_parse_in_both_shapes() {
        let f = EvalFunction::parse_spec(
            "norm_phrase_set_match|lower=true|normalize_hyphen=true|strip_punct=true|separators=,;|require_non_empty=true",
        )
        .unwrap();
        assert_eq!(f.kind, EvalKind::NormPhraseSetMatch);
        assert_eq!(f.separators, [',', ';']);
        assert_eq!(
            f.answer_phrases("Catalog > Products; Add-Product"),
            ["catalog products", "add product"]
        );
        let g = EvalFunction::from_json(
            &serde_json::json!({"type": "mc_choice_set_match", "strip_chars": "."}),
        )
        .unwrap();
        assert_eq!(g.kind, EvalKind::McChoiceSetMatch);
        assert_eq!(g.answer_letters("A, C."), ["A", "C"]);
        assert_eq!(
            EvalFunction::parse_spec("llm_gotchas_checker")
                .unwrap()
                .kind,
            EvalKind::LlmGotchasChecker
        );
        let e = EvalFunction::parse_spec("fuzzy_match").unwrap_err();
        assert!(e.contains("unknown eval function \"fuzzy_match\""), "{e}");
        let e = EvalFunction::parse_spec("mc_choice_match|colour=red").unwrap_err();
        assert!(e.contains("unknown eval function option \"colour\""), "{e}");
        let e = EvalFunction::parse_spec("mc_choice_match|lower=maybe").unwrap_err();
        assert!(e.contains("not true or false"), "{e}");
        assert!(EvalFunction::from_json(&serde_json::json!(3)).is_err());
    }

    #[test]
    fn questions_load_and_bad_ones_are_named() {
        let dir = tempfile::tempdir().unwrap();
        let p = write(
            &dir,
            "questions.jsonl",
            concat!(
                r#"{"id":"q1","domain":"shop","question":"Where is the coupon form?","image":null,"answer":"Marketing, Cart Price Rules","question_type":"static-environment","eval_function":"norm_phrase_set_match"}"#,
                "\n\n",
                r#"{"id":"q2","domain":"shop","question":"Which button saves?\nA. Save Rule\nB. Apply","image":null,"answer":"A","question_type":"dynamic-environment-abs","eval_function":{"name":"mc_choice_match"}}"#,
                "\n"
            ),
        );
        let qs = load_lme_v2_questions(&p).unwrap();
        assert_eq!(qs.len(), 2);
        assert_eq!(qs[1].base_type(), "dynamic-environment");
        assert!(qs[1].is_abstention() && !qs[0].is_abstention());
        assert_eq!(qs[1].options()["B"], "Apply");
        assert_eq!(qs[1].stem(), "Which button saves?");
        let line = |body: &str| format!("{{\"id\":\"q9\",\"question\":\"x?\",{body}}}\n");
        for (body, want) in [
            (
                r#""answer":"a","question_type":"trivia","eval_function":"norm_phrase_set_match""#,
                "line 1 (question \"q9\"): field `question_type`: unknown type \"trivia\"",
            ),
            (
                r#""answer":"a","question_type":"procedure","eval_function":"guess""#,
                "field `eval_function`: unknown eval function \"guess\"",
            ),
            (
                r#""answer":"","question_type":"procedure","eval_function":"norm_phrase_set_match""#,
                "field `answer`: no phrase to match",
            ),
            (
                r#""answer":"?","question_type":"procedure","eval_function":"mc_choice_match""#,
                "needs option letters",
            ),
            (
                r#""answer":"a","question_type":"procedure""#,
                "line 1: missing field `eval_function`",
            ),
        ] {
            let p = write(&dir, "bad.jsonl", &line(body));
            let e = load_lme_v2_questions(&p).unwrap_err().to_string();
            assert!(e.contains("bad.jsonl") && e.contains(want), "{e}");
        }
        let ok = line(
            r#""answer":"a","question_type":"procedure","eval_function":"norm_phrase_set_match""#,
        );
        let p = write(&dir, "dup.jsonl", &format!("{ok}{ok}"));
        let e = load_lme_v2_questions(&p).unwrap_err().to_string();
        assert!(e.contains("line 2 (question \"q9\"): duplicate"), "{e}");
    }

    #[test]
    fn haystacks_load_and_bad_ones_are_named() {
        let dir = tempfile::tempdir().unwrap();
        let p = write(&dir, "h.json", r#"{"q1": ["t1", "t2"], "q2": ["t3"]}"#);
        let h = load_lme_v2_haystacks(&p).unwrap();
        assert_eq!(h["q1"], ["t1", "t2"]);
        for (text, want) in [
            (r#"["t1"]"#, "the top level must be an object"),
            (
                r#"{"q1": "t1"}"#,
                "question \"q1\": the haystack must be a list",
            ),
            (r#"{"q1": []}"#, "question \"q1\": the haystack is empty"),
            (r#"{"q1": ["t1", 3]}"#, "every trajectory id"),
            (r#"{"q1": ["t1"]"#, "invalid JSON"),
        ] {
            let p = write(&dir, "h.json", text);
            let e = load_lme_v2_haystacks(&p).unwrap_err().to_string();
            assert!(e.contains("h.json") && e.contains(want), "{e}");
        }
    }
}
