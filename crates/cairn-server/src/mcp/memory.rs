//! The memory tools, as a table (name, the text an agent reads, the operation) over the
//! shared operations of `ops.rs`, which the HTTP routes call too: `remember`, `recall`,
//! `forget`, `history`, `profile`, `spaces`, `subjects`, `entities`.
use super::args::*;
use super::tools::{pretty, tool, Answer, Call, Caller};
use crate::error::ApiError;
use crate::ops;
use crate::wire::out::HitOut;
use crate::wire::RecallRequest;
use cairn::{Format, Memo, Message, RememberInput, Role};
use rmcp::handler::server::router::tool::ToolRouter;
use serde_json::{json, Value};

/// The memory tools.
pub fn tools<S: Caller>() -> ToolRouter<S> {
    ToolRouter::new()
        .with_route(tool("remember", REMEMBER, remember))
        .with_route(tool("recall", RECALL, recall))
        .with_route(tool("forget", FORGET, forget))
        .with_route(tool("history", HISTORY, history))
        .with_route(tool("profile", PROFILE, profile))
        .with_route(tool("spaces", SPACES, spaces))
        .with_route(tool("subjects", SUBJECTS, subjects))
        .with_route(tool("entities", ENTITIES, entities))
}

const REMEMBER: &str = "Store something in long-term memory so it can be recalled in later conversations. Pass `note` for one fact, preference, decision or instruction worth keeping (\"User's daughter is called Mia\"), or `messages` to keep conversation turns verbatim (appended to `session_id`). Memory keeps the exact words and when they were said; nothing is summarized away. Returns what was stored.";

const RECALL: &str = "Search long-term memory for evidence relevant to a question, before answering anything about the user's past, preferences, plans or earlier conversations. Returns `context` (the evidence as text, dated and attributed, within `token_budget` tokens: quote from it; it opens with the user's card, their standing instructions and current facts, listed in `card`: follow them), `hits` (ranked memories with their session_id, turn ids, speakers, dates and `relevance`, for citing or forgetting), `extra_hits` (further memories the context shows because the budget had room), `hits_cut` (memories the context shows only in part or not at all) `no_relevant_memory` (true when nothing stored bears on the question: say you do not know rather than guess) and, when `filter` names a metadata key no conversation carries, `warnings` (check the key's spelling). Relative dates in the query (\"last week\") resolve against `as_of` (default now).";

const FORGET: &str = "Permanently delete from long-term memory: a memory `recall` returned (`memory_id`: the messages it was drawn from are deleted, and the answer lists them), a whole conversation (`session_id`), one message of it (`session_id` and `message_id`; with `exchange: true` the reply to it too), or an end user whole (`partition`: `{\"user_id\": \"u1\"}`, when a user asks to be forgotten). The words and everything derived from them are removed and can no longer be recalled. Use when the user asks to forget something or information is wrong; it cannot be undone.";

const HISTORY: &str = "How a fact changed over time: every stated value of a subject (a budget, a date, a price, who owns a task), oldest first, with when each was said, by whom, and which one replaced it. The last version is the current one. Use for \"what is the final X\", \"when did X change\", or \"what was X on <date>\" (pass `as_of`).";

const PROFILE: &str = "What the memory shows about a person: communication style (brief or detailed, formal or casual, directive or collaborative, reply speed), roles and skills said of them (each with the message that shows it), topics they talk about, and their groups. Use before writing to or about someone, or to answer \"who is X\" and \"what is X good at\".";

const SPACES: &str = "Which memory spaces this connection may use (and whether it may write), so you can name the right `space` in other calls. Call it first when you do not know which `space` to pass; `default` is the space used when a call names none (with a key for a single space, that space).";

const SUBJECTS: &str = "Every subject the memory holds versioned facts about (a budget, a date, an owner), with how many values were stated and the newest one. Use to find the words to pass to `history`.";

const ENTITIES: &str = "The people, places, organizations and things the memory's conversations name, with how often and when; with `name`, one of them with the messages that mention it, who and what it appears with, and the sessions it appears in, in time order.";

async fn remember(c: Call, args: RememberArgs) -> Answer {
    let space = c.space_to_write(args.space).await?;
    let occurred_at = args
        .occurred_at
        .as_deref()
        .map(|t| crate::wire::parse_time(t, "occurred_at"))
        .transpose()?;
    let memo = match (args.note, args.messages) {
        (Some(note), None) => Memo::Note(note),
        (None, Some(ms)) if !ms.is_empty() => Memo::Messages(messages_of(ms)?),
        _ => {
            return Err(ApiError::invalid(
                "note",
                "pass either `note` or a non-empty `messages`",
            ))
        }
    };
    let input = RememberInput {
        memo,
        session_id: args.session_id,
        occurred_at,
        metadata: args.metadata.map_or(Value::Null, Value::Object),
    };
    let kept = ops::remember(&c.state, &c.who, &space, input).await?;
    pretty(&json!({
        "space": space,
        "session_id": kept.session_id,
        "messages_added": kept.report.messages_added,
        "dated_at_recording": kept.report.dated_at_recording,
        "units": kept.report.units,
    }))
}

async fn recall(c: Call, args: RecallArgs) -> Answer {
    let space = c.space(args.space)?;
    let format = match args.format.as_deref() {
        None => Format::Synthesized,
        Some(f) => f
            .parse::<Format>()
            .map_err(|e| ApiError::invalid("format", e.to_string()))?,
    };
    let stock = cairn::RecallOptions::default();
    let req = RecallRequest {
        query: args.query,
        top_k: args.top_k.unwrap_or(stock.top_k),
        token_budget: args.token_budget.unwrap_or(stock.token_budget),
        format,
        quotas: None,
        min_relevance: args.min_relevance.unwrap_or(stock.min_relevance),
        explain: false,
        scope: args.scope,
    };
    let r = ops::recall(&c.state, &c.who, &space, req).await?;
    let cited = |hits: &[HitOut]| -> Vec<Value> {
        hits.iter()
            .map(|h| {
                json!({
                    "memory_id": h.unit_id, "session_id": h.session_id,
                    "turn_ids": h.turn_ids, "speakers": h.speakers,
                    "occurred_at": h.occurred_at, "score": h.score,
                    "relevance": h.relevance,
                })
            })
            .collect()
    };
    let mut v = json!({
        "context": r.context,
        "hits": cited(&r.hits),
        "extra_hits": cited(&r.extra_hits),
        "no_relevant_memory": r.no_relevant_memory,
        "hits_cut": r.hits_cut_ids,
    });
    if !r.card.is_empty() {
        v["card"] = json!(r
            .card
            .iter()
            .map(|l| json!({
                "memory_id": l.unit_id, "category": l.category,
                "statement": l.statement, "stated_at": l.stated_at,
                "session_id": l.session_id,
            }))
            .collect::<Vec<_>>());
    }
    if !r.warnings.is_empty() {
        v["warnings"] = json!(r.warnings);
    }
    pretty(&v)
}

async fn forget(c: Call, args: ForgetArgs) -> Answer {
    let space = c.space(args.space)?;
    if args.exchange && args.message_id.is_none() {
        return Err(ApiError::invalid(
            "exchange",
            "`exchange` forgets a message's reply with it: pass it with `session_id` and `message_id`",
        ));
    }
    let (state, who) = (&c.state, &c.who);
    if let Some(p) = args.partition {
        if args.memory_id.is_some() || args.session_id.is_some() {
            return Err(ApiError::invalid(
                "partition",
                "`partition` forgets an end user whole: give it alone",
            ));
        }
        let p = cairn::Partition::parse(&Value::Object(p)).map_err(cairn::Error::from)?;
        return forgotten(ops::forget_partition(state, who, &space, p).await?);
    }
    match (args.memory_id, args.session_id) {
        (Some(id), None) if args.message_id.is_none() => {
            let r = ops::forget_memory(state, who, &space, id).await?;
            forgotten(r)
        }
        (None, Some(session)) => match args.message_id.as_deref() {
            Some(message) => {
                let exchange = args.exchange;
                let r = ops::forget_message(state, who, &space, &session, message, exchange)
                    .await?;
                forgotten(r)
            }
            None => {
                let n = ops::forget_session(state, who, &space, &session).await?;
                pretty(&json!({"forgotten": true, "removed_units": n}))
            }
        },
        _ => Err(ApiError::invalid(
            "memory_id",
            "pass `memory_id` (a recall hit's), `session_id` with an optional `message_id`, or `partition`",
        )),
    }
}

async fn history(c: Call, args: HistoryArgs) -> Answer {
    let space = c.space(args.space)?;
    let scope = args.scope.checked_options()?;
    warned(ops::history(&c.state, &c.who, &space, args.subject, scope).await?)
}

async fn profile(c: Call, args: ProfileArgs) -> Answer {
    let space = c.space(args.space)?;
    let scope = args.scope.checked_options()?;
    warned(ops::profile(&c.state, &c.who, &space, args.speaker, scope).await?)
}

async fn spaces(c: Call, _args: SpacesArgs) -> Answer {
    let me = ops::me(&c.state, &c.who).await?;
    let mut v = serde_json::to_value(&me).map_err(ApiError::internal)?;
    v["default"] = json!(c.space(None).ok());
    pretty(&v)
}

async fn subjects(c: Call, args: SubjectsArgs) -> Answer {
    let space = c.space(args.space)?;
    let scope = args.scope.checked_options()?;
    pretty(&ops::subjects(&c.state, &c.who, &space, scope).await?)
}

async fn entities(c: Call, args: EntitiesArgs) -> Answer {
    let space = c.space(args.space)?;
    let scope = args.scope.checked_options()?;
    match args.name {
        Some(name) => pretty(&ops::entity(&c.state, &c.who, &space, name, scope).await?),
        None => pretty(&ops::entities(&c.state, &c.who, &space, args.search, scope).await?),
    }
}

/// What a forget removed, said to be forgotten.
fn forgotten(report: impl serde::Serialize) -> Answer {
    let mut v = serde_json::to_value(report).map_err(ApiError::internal)?;
    v["forgotten"] = json!(true);
    pretty(&v)
}

/// A library answer as a tool answers it, with its request's warnings (`warnings`, as
/// over HTTP) when there are any.
fn warned<T: serde::Serialize>(w: ops::Warned<T>) -> Answer {
    let mut v = serde_json::to_value(&w.answer).map_err(ApiError::internal)?;
    if let (Value::Object(m), false) = (&mut v, w.warnings.is_empty()) {
        let warnings = serde_json::to_value(&w.warnings).map_err(ApiError::internal)?;
        m.insert("warnings".into(), warnings);
    }
    pretty(&v)
}

/// The tool's messages as the library's: roles and times read, nothing decided.
fn messages_of(ms: Vec<MessageArg>) -> Result<Vec<Message>, ApiError> {
    ms.into_iter()
        .enumerate()
        .map(|(i, m)| {
            let role = m
                .role
                .map(|r| {
                    serde_json::from_value::<Role>(Value::String(r.clone())).map_err(|_| {
                        ApiError::invalid(
                            format!("messages[{i}].role"),
                            format!("unknown role {r:?} (user, assistant, system)"),
                        )
                    })
                })
                .transpose()?;
            let occurred_at = m
                .occurred_at
                .as_deref()
                .map(|t| crate::wire::parse_time(t, &format!("messages[{i}].occurred_at")))
                .transpose()?;
            Ok(Message {
                id: String::new(),
                role,
                speaker: m.speaker,
                text: m.text,
                occurred_at,
                metadata: Value::Null,
            })
        })
        .collect()
}
