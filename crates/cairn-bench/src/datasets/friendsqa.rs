//! FriendsQA as the retrieval protocol takes it: every scene a group conversation of its
//! episode's day (`cairn::formats::friendsqa_group_days`), each question's evidence the
//! utterances its answers name in that scene, question words as question types.
use crate::protocol::retrieval::QuestionSpec;
use crate::records::retrieval::Evidence;
use cairn::formats::{FriendsHistory, FriendsScene};

/// The question word a question is grouped by: the first of what, who, where, when,
/// why, how (which, whose and whom count as what and who), else `other`.
pub fn question_word(question: &str) -> &'static str {
    for w in question
        .split(|c: char| !c.is_alphanumeric())
        .map(str::to_lowercase)
    {
        match w.as_str() {
            "what" | "which" => return "what",
            "who" | "whom" | "whose" => return "who",
            "where" => return "where",
            "when" => return "when",
            "why" => return "why",
            "how" => return "how",
            _ => {}
        }
    }
    "other"
}

/// The questions of the scenes that made it into the history (only `wanted` ids, when
/// any), in file order, then at most `limit`.
pub fn specs(
    scenes: &[FriendsScene],
    history: &FriendsHistory,
    wanted: &[String],
    limit: Option<usize>,
) -> Vec<QuestionSpec> {
    let wanted: Vec<&str> = wanted.iter().map(|s| s.trim()).collect();
    let mut specs: Vec<QuestionSpec> = Vec::new();
    for scene in scenes {
        let Some(session) = history.session_of(scene) else {
            continue;
        };
        for q in &scene.questions {
            if !wanted.is_empty() && !wanted.contains(&q.id.as_str()) {
                continue;
            }
            specs.push(QuestionSpec {
                id: q.id.clone(),
                qtype: question_word(&q.question).to_string(),
                question: q.question.clone(),
                answer: q.answers.first().map(|a| a.answer_text.clone()),
                question_date: None,
                as_of: None,
                as_of_note: None,
                exclusion: None,
                evidence: Evidence {
                    sessions: vec![session.clone()],
                    turns: q
                        .evidence_utterances()
                        .into_iter()
                        .map(|u| (session.clone(), u))
                        .collect(),
                    notes: Vec::new(),
                },
                filter: None,
            });
        }
    }
    specs.truncate(limit.unwrap_or(usize::MAX));
    specs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn questions_group_by_their_first_question_word() {
        assert_eq!(question_word("Who is Monica dating ?"), "who");
        assert_eq!(question_word("Whose apartment is it?"), "who");
        assert_eq!(question_word("In which cafe do they meet?"), "what");
        assert_eq!(question_word("Ross goes where after work?"), "where");
        assert_eq!(question_word("Name the cat."), "other");
    }
}
