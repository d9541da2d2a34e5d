//! What the optional LLM is asked when it reads a message for facts, and how its answer
//! is read: the domain rule of LLM enrichment (what a fact is, how much of one is kept),
//! as pure functions. The facade sends the request through `cairn-llm`; the readings
//! become fact units through `engine/enrich.rs`.
use cairn_core::{EnrichInput, EnrichedFact};
use serde_json::{json, Value};

/// The system prompt.
pub const SYSTEM: &str = "You extract facts from one chat message for a long-term memory. A fact is something the message states about the speaker, another person, or a thing they deal with: a name, an amount, a date, a place, a preference, a plan, who owns a task. Give each fact a short subject naming what the value belongs to (e.g. \"user's cat's name\", \"budget for Project Atlas\") and the value as stated. Reply with JSON only, in the form {\"facts\": [{\"subject\": \"...\", \"value\": \"...\"}]}; reply {\"facts\": []} when the message states no fact.";

/// Characters of a message shown to the model.
const MESSAGE_CHARS: usize = 4000;
/// Most facts kept from one answer, and the longest subject and value.
const MAX_FACTS: usize = 8;
const SUBJECT_CHARS: usize = 100;
const VALUE_CHARS: usize = 200;

/// The user turn: the message with its speaker and date.
pub fn message(m: &EnrichInput<'_>) -> String {
    let date = m
        .occurred_at
        .map(|t| t.format("%Y-%m-%d %H:%M").to_string())
        .unwrap_or_else(|| "unknown".into());
    let text: String = m.text.chars().take(MESSAGE_CHARS).collect();
    format!("Speaker: {}\nDate: {date}\nMessage: {text}", m.speaker)
}

/// The JSON schema of an answer (structured output where the server supports it).
pub fn answer_schema() -> Value {
    json!({
        "type": "object",
        "properties": {"facts": {"type": "array", "items": {
            "type": "object",
            "properties": {"subject": {"type": "string"}, "value": {"type": "string"}},
            "required": ["subject", "value"]
        }}},
        "required": ["facts"]
    })
}

/// The facts of a model's JSON answer: `{"facts": [...]}` or a bare array; items without
/// a subject and a value are dropped.
pub fn parse_facts(v: &Value) -> Option<Vec<EnrichedFact>> {
    let items = v.get("facts").unwrap_or(v).as_array()?;
    let text = |x: &Value, k: &str, max: usize| -> Option<String> {
        let s = match x.get(k)? {
            Value::String(s) => s.trim().to_string(),
            Value::Number(n) => n.to_string(),
            Value::Bool(b) => b.to_string(),
            _ => return None,
        };
        (!s.is_empty()).then(|| s.chars().take(max).collect())
    };
    Some(
        items
            .iter()
            .filter_map(|x| {
                Some(EnrichedFact {
                    subject: text(x, "subject", SUBJECT_CHARS)?,
                    value: text(x, "value", VALUE_CHARS)?,
                })
            })
            .take(MAX_FACTS)
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_answer_is_read_in_either_shape_and_bounded() {
        let wrapped = json!({"facts": [
            {"subject": " cat's name ", "value": "Luna"},
            {"subject": "age", "value": 7},
            {"subject": "", "value": "dropped"},
            {"value": "no subject"}
        ]});
        let got = parse_facts(&wrapped).unwrap();
        let pairs: Vec<(&str, &str)> = got
            .iter()
            .map(|f| (f.subject.as_str(), f.value.as_str()))
            .collect();
        assert_eq!(pairs, [("cat's name", "Luna"), ("age", "7")]);
        let bare = json!([{"subject": "s", "value": "v".repeat(500)}]);
        assert_eq!(parse_facts(&bare).unwrap()[0].value.len(), VALUE_CHARS);
        let many: Vec<Value> = (0..20)
            .map(|i| json!({"subject": format!("s{i}"), "value": "v"}))
            .collect();
        assert_eq!(parse_facts(&json!(many)).unwrap().len(), MAX_FACTS);
        assert!(parse_facts(&json!({"answer": "none"})).is_none());
    }
}
