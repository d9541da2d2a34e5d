//! Agent trajectories: the second kind of verbatim record. A web agent pursued a goal
//! through a sequence of states (page, action taken, its thought, what it observed);
//! memory of many such runs lets an agent know an environment like a colleague does.
use crate::source::{check_id, check_json_value, check_metadata, clip};
use crate::time::serde_time;
use crate::{InputError, SpaceId, Timestamp};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::bounds::{MAX_FIELD_BYTES, MAX_OBSERVATION_BYTES, MAX_STATES};

/// One state of a trajectory.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct AgentState {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// The action taken in this state.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub action: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thought: Option<String>,
    /// What the agent saw (accessibility tree text).
    #[serde(
        default,
        alias = "accessibility_tree",
        skip_serializing_if = "Option::is_none"
    )]
    pub observation: Option<String>,
    /// A reference to a screenshot (path or URL); the image itself is not stored.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub screenshot: Option<String>,
}

impl AgentState {
    /// Each text field with its bound in bytes: what validation checks, and what the
    /// server refuses with 413 before reading further.
    pub fn bounded_fields(&self) -> [(&'static str, Option<&str>, usize); 5] {
        [
            ("url", self.url.as_deref(), MAX_FIELD_BYTES),
            ("action", self.action.as_deref(), MAX_FIELD_BYTES),
            ("thought", self.thought.as_deref(), MAX_FIELD_BYTES),
            (
                "observation",
                self.observation.as_deref(),
                MAX_OBSERVATION_BYTES,
            ),
            ("screenshot", self.screenshot.as_deref(), MAX_FIELD_BYTES),
        ]
    }
}

/// One run of an agent, as inserted.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TrajectoryInput {
    pub id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub domain: Option<String>,
    pub goal: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_url: Option<String>,
    /// How it ended: `true`/`false`, `"success"`/`"failure"`, or any JSON the source uses.
    #[serde(default, skip_serializing_if = "Value::is_null")]
    pub outcome: Value,
    pub states: Vec<AgentState>,
    #[serde(
        default,
        alias = "date",
        skip_serializing_if = "Option::is_none",
        deserialize_with = "serde_time::option"
    )]
    pub occurred_at: Option<Timestamp>,
    #[serde(default, skip_serializing_if = "Value::is_null")]
    pub metadata: Value,
}

/// A trajectory as stored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TrajectoryRecord {
    pub space: SpaceId,
    #[serde(deserialize_with = "serde_time::required")]
    pub recorded_at: Timestamp,
    pub trajectory: TrajectoryInput,
}

/// What the manifest of a space says about one trajectory.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TrajectorySummary {
    pub id: String,
    pub domain: Option<String>,
    pub goal: String,
    pub outcome: Value,
    pub succeeded: Option<bool>,
    pub steps: usize,
    /// Distinct URLs visited, in first-visit order.
    pub urls: Vec<String>,
    pub recorded_at: Timestamp,
}

impl TrajectoryInput {
    /// Checks every field; errors name the trajectory, the state and the field.
    pub fn validate(self) -> Result<Self, InputError> {
        let rec = format!("trajectory {:?}", clip(&self.id));
        check_id(&self.id, &rec, "id")?;
        if self.goal.trim().is_empty() {
            return Err(InputError::new(rec, "field `goal` is empty").at("goal"));
        }
        if self.states.is_empty() {
            return Err(InputError::new(rec, "field `states` is empty").at("states"));
        }
        if self.states.len() > MAX_STATES {
            return Err(InputError::new(
                rec,
                format!("has {} states (at most {MAX_STATES})", self.states.len()),
            )
            .at("states"));
        }
        check_text(&self.goal, &rec, "goal", MAX_FIELD_BYTES)?;
        for (field, v) in [("domain", &self.domain), ("start_url", &self.start_url)] {
            if let Some(v) = v {
                check_text(v, &rec, field, MAX_FIELD_BYTES)?;
            }
        }
        check_metadata(&self.metadata, &rec, "metadata")?;
        check_json_value(&self.outcome, &rec, "outcome")?;
        for (i, s) in self.states.iter().enumerate() {
            let srec = format!("{rec} state {i}");
            let at = format!("states[{i}]");
            for (field, v, max) in s.bounded_fields() {
                if let Some(v) = v {
                    check_text(v, &srec, field, max).map_err(|e| e.nested(&at))?;
                }
            }
        }
        Ok(self)
    }

    /// `Some(true)` for a run that reached its goal, `Some(false)` for one that did not,
    /// `None` when the outcome does not say.
    pub fn succeeded(&self) -> Option<bool> {
        match &self.outcome {
            Value::Bool(b) => Some(*b),
            Value::Number(n) => n.as_f64().map(|x| x > 0.0),
            Value::String(s) => outcome_word(s),
            Value::Object(m) => ["success", "succeeded", "status", "result", "outcome"]
                .iter()
                .find_map(|k| match m.get(*k) {
                    Some(Value::Bool(b)) => Some(*b),
                    Some(Value::String(s)) => outcome_word(s),
                    Some(Value::Number(n)) => n.as_f64().map(|x| x > 0.0),
                    _ => None,
                }),
            _ => None,
        }
    }

    pub fn summary(&self, recorded_at: Timestamp) -> TrajectorySummary {
        let mut urls: Vec<String> = Vec::new();
        for u in self
            .start_url
            .iter()
            .chain(self.states.iter().filter_map(|s| s.url.as_ref()))
        {
            if !urls.contains(u) {
                urls.push(u.clone());
            }
        }
        TrajectorySummary {
            id: self.id.clone(),
            domain: self.domain.clone(),
            goal: self.goal.clone(),
            outcome: self.outcome.clone(),
            succeeded: self.succeeded(),
            steps: self.states.len(),
            urls,
            recorded_at,
        }
    }
}

fn outcome_word(s: &str) -> Option<bool> {
    let s = s.to_lowercase();
    if [
        "fail",
        "error",
        "abort",
        "incomplete",
        "unsuccessful",
        "timeout",
    ]
    .iter()
    .any(|w| s.contains(w))
    {
        Some(false)
    } else if ["success", "succeed", "complete", "done", "pass", "achieved"]
        .iter()
        .any(|w| s.contains(w))
    {
        Some(true)
    } else {
        None
    }
}

fn check_text(v: &str, rec: &str, field: &str, max: usize) -> Result<(), InputError> {
    if v.len() > max {
        return Err(InputError::new(
            rec,
            format!("field `{field}` has {} bytes (at most {max})", v.len()),
        )
        .at(field));
    }
    if v.contains('\0') {
        return Err(
            InputError::new(rec, format!("field `{field}` contains a NUL character")).at(field),
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_lme_v2_shape_and_names_bad_states() {
        let t: TrajectoryInput = serde_json::from_str(
            r#"{"id":"t1","domain":"shop","goal":"Add a product","start_url":"http://a/",
                "outcome":"success","states":[{"url":"http://a/","action":"click [12]",
                "thought":"open the form","accessibility_tree":"[12] link 'New'","screenshot":"s/0.png"}]}"#,
        )
        .unwrap();
        let t = t.validate().unwrap();
        assert_eq!(t.states[0].observation.as_deref(), Some("[12] link 'New'"));
        assert_eq!(t.succeeded(), Some(true));
        assert_eq!(t.summary(chrono::Utc::now()).urls, ["http://a/"]);
        let bad = TrajectoryInput {
            states: vec![AgentState {
                action: Some("a\0b".into()),
                ..Default::default()
            }],
            ..t
        };
        let e = bad.validate().unwrap_err().to_string();
        assert!(
            e.contains("trajectory \"t1\" state 0") && e.contains("`action`"),
            "{e}"
        );
    }

    #[test]
    fn outcomes_read_in_their_common_shapes() {
        let with = |v: Value| TrajectoryInput {
            id: "t".into(),
            domain: None,
            goal: "g".into(),
            start_url: None,
            outcome: v,
            states: vec![AgentState::default()],
            occurred_at: None,
            metadata: Value::Null,
        };
        assert_eq!(with(serde_json::json!(false)).succeeded(), Some(false));
        assert_eq!(
            with(serde_json::json!("FAILED: timeout")).succeeded(),
            Some(false)
        );
        assert_eq!(
            with(serde_json::json!({"success": true})).succeeded(),
            Some(true)
        );
        assert_eq!(with(Value::Null).succeeded(), None);
    }
}
