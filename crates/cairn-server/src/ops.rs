//! The operations behind both the HTTP handlers and the MCP tools: authorization, limits,
//! and the call into the library on the blocking pool (the trajectory-inspection ones in
//! `ops/trajectories.rs`). Handlers and tools only translate their shapes; MCP imports
//! no route module.
use crate::auth::{Access, Need, Principal};
use crate::error::ApiError;
use crate::wire::entities::EntityDetailOut;
use crate::wire::out::{Entities, Me, RecallOut, Subjects};
use crate::wire::warning::{warnings_out, WarningOut};
use crate::wire::{AddMessages, RecallRequest};
use crate::AppState;
use cairn::{Memory, WriteOptions};
use std::sync::Arc;

pub mod trajectories;

type S = Arc<AppState>;

/// Runs a library call on the blocking pool: the engine does CPU work (embedding) and
/// synchronous I/O (SQLite with fsync) that must not stall the async workers. A panic in
/// the call becomes a 500, never a dropped connection. A write is answered once the
/// record store committed it: durable, and visible to the next recall (the engine
/// commits pending text-index entries before it searches).
///
/// A blocking task cannot be aborted, so when this future is dropped (the client went
/// away) the call is cancelled: its next work check fails and it stops.
pub async fn blocking<T, F>(state: &Arc<AppState>, f: F) -> Result<T, ApiError>
where
    T: Send + 'static,
    F: FnOnce(&Memory) -> Result<T, cairn::Error> + Send + 'static,
{
    let memory = state.memory.clone();
    match cancellable(state.config.limits.max_request_time, move || f(&memory)).await {
        Ok(r) => r.map_err(ApiError::from),
        Err(e) => Err(ApiError::internal(format!("library call failed: {e}"))),
    }
}

/// `f` on the blocking pool within `deadline`, cancelled when this future is dropped.
async fn cancellable<T: Send + 'static>(
    deadline: Option<std::time::Duration>,
    f: impl FnOnce() -> T + Send + 'static,
) -> Result<T, tokio::task::JoinError> {
    let cancel = CancelOnDrop(cairn::Cancel::new());
    let mine = cancel.0.clone();
    tokio::task::spawn_blocking(move || mine.run(deadline, f)).await
}

/// Cancels its call when dropped; after the call has answered that changes nothing.
struct CancelOnDrop(cairn::Cancel);

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        self.0.cancel();
    }
}

/// A read's answer with the warnings of its request (`Memory::filter_warnings`), which
/// every route and tool that takes a filter answers beside it.
pub struct Warned<T> {
    pub answer: T,
    pub warnings: Vec<WarningOut>,
}

impl<T> Warned<T> {
    /// The answer, or a 404 (`what` not found) whose detail carries the warnings: a
    /// misspelt filter key is the likely reason nothing was found.
    fn found(self, what: String) -> Result<Warned<T::Item>, ApiError>
    where
        T: IntoIterator,
    {
        match self.answer.into_iter().next() {
            Some(answer) => Ok(Warned {
                answer,
                warnings: self.warnings,
            }),
            None => {
                let notes: Vec<&str> = self.warnings.iter().map(|w| w.message.as_str()).collect();
                let detail = match notes.is_empty() {
                    true => what,
                    false => format!("{what} (warning: {})", notes.join("; ")),
                };
                Err(ApiError::not_found("not_found", detail))
            }
        }
    }
}

/// `read` and the warnings of its scope, in one call on the blocking pool (the read
/// first: a missing space is its error).
async fn warned<T: Send + 'static>(
    state: &Arc<AppState>,
    space: &str,
    scope: cairn::ScopeOptions,
    read: impl FnOnce(&Memory, &str, &cairn::ScopeOptions) -> Result<T, cairn::Error> + Send + 'static,
) -> Result<Warned<T>, ApiError> {
    let sp = space.to_string();
    let (answer, warnings) = blocking(state, move |m| {
        let answer = read(m, &sp, &scope)?;
        Ok((answer, m.filter_warnings(&sp, &scope)?))
    })
    .await?;
    Ok(Warned {
        answer,
        warnings: warnings_out(warnings),
    })
}

/// The warnings of a listing's metadata filter (`sessions`: the listing's filter and a
/// pinned key's partition, which bounds the keys the warning may name).
pub async fn listing_warnings(
    state: &Arc<AppState>,
    space: &str,
    sessions: cairn::ScopeOptions,
) -> Result<Vec<cairn::Warning>, ApiError> {
    if sessions.filter.is_none() {
        return Ok(Vec::new());
    }
    let sp = space.to_string();
    blocking(state, move |m| m.filter_warnings(&sp, &sessions)).await
}

/// The version history of a fact subject among what `scope` sees; 404 when no fact it
/// sees has it.
pub async fn history(
    state: &Arc<AppState>,
    who: &Principal,
    space: &str,
    subject: String,
    scope: cairn::ScopeOptions,
) -> Result<Warned<cairn::FactHistory>, ApiError> {
    let scope = who.require_in(space, Need::Read)?.scope(scope)?;
    let asked = subject.clone();
    warned(state, space, scope, move |m, sp, scope| {
        m.history(sp, &asked, scope)
    })
    .await?
    .found(format!("no fact about {subject:?}"))
}

/// A speaker's profile as `scope` shows it; 404 for a name it does not know.
pub async fn profile(
    state: &Arc<AppState>,
    who: &Principal,
    space: &str,
    speaker: String,
    scope: cairn::ScopeOptions,
) -> Result<Warned<cairn::SpeakerProfile>, ApiError> {
    let scope = who.require_in(space, Need::Read)?.scope(scope)?;
    let name = speaker.clone();
    warned(state, space, scope, move |m, sp, scope| {
        m.profile(sp, &name, scope)
    })
    .await?
    .found(format!("no speaker {speaker:?}"))
}

/// The speakers of what `scope` sees.
pub async fn speakers(
    state: &Arc<AppState>,
    who: &Principal,
    space: &str,
    scope: cairn::ScopeOptions,
) -> Result<Warned<Vec<String>>, ApiError> {
    let scope = who.require_in(space, Need::Read)?.scope(scope)?;
    warned(state, space, scope, |m, sp, scope| m.speakers(sp, scope)).await
}

/// Appends messages to a session, creating it on first use: one engine call, atomic
/// across servers.
pub async fn add_messages(
    state: &Arc<AppState>,
    who: &Principal,
    space: &str,
    req: AddMessages,
    opts: WriteOptions,
) -> Result<cairn::IngestReport, ApiError> {
    let pin = who.require_in(space, Need::Write)?;
    let mut input = req.into_input()?;
    input.metadata = pin.metadata(input.metadata)?;
    state.config.limits.check_messages(&input.messages)?;
    let sp = space.to_string();
    blocking(state, move |m| m.append(&sp, input, &opts)).await
}

/// Keeps a note or conversation turns (`Memory::remember`: the library decides what a
/// note is, names a new session and dates the messages), under the same limits as an
/// append.
pub async fn remember(
    state: &Arc<AppState>,
    who: &Principal,
    space: &str,
    mut input: cairn::RememberInput,
) -> Result<cairn::Remembered, ApiError> {
    let pin = who.require_in(space, Need::Write)?;
    input.metadata = pin.metadata(input.metadata)?;
    state.config.limits.check_memo(&input.memo)?;
    let sp = space.to_string();
    blocking(state, move |m| {
        m.remember(&sp, input, &WriteOptions::default())
    })
    .await
}

/// Recall with every library option, the metadata filter included.
pub async fn recall(
    state: &Arc<AppState>,
    who: &Principal,
    space: &str,
    req: RecallRequest,
) -> Result<RecallOut, ApiError> {
    let pin = who.require_in(space, Need::Read)?;
    state.config.limits.check_query(&req.query)?;
    let mut options = req.options()?;
    options.scope = pin.scope(options.scope)?;
    let space = space.to_string();
    let query = req.query;
    let r = blocking(state, move |m| m.recall(&space, &query, &options)).await?;
    Ok(r.into())
}

/// Forgets a memory (a unit, by the id recall cites): the messages it was drawn from, or
/// the trajectory it stands for. The answer names what went.
pub async fn forget_memory(
    state: &Arc<AppState>,
    who: &Principal,
    space: &str,
    id: String,
) -> Result<crate::wire::out::ForgotMemory, ApiError> {
    let pin = who.require_in(space, Need::Write)?;
    let sp = space.to_string();
    let report = blocking(state, move |m| {
        // A memory outside a pinned key's partition is absent to it: the same 404 as an
        // unknown id. (Only a pinned key pays for reading the unit first.)
        if pin.partition().is_some() {
            let unit = m.units(&sp, std::slice::from_ref(&id))?.pop();
            if unit.as_ref().is_some_and(|u| !pin.holds_unit(u)) {
                return Err(cairn::StoreError::NotFound(format!("memory {id:?}")).into());
            }
        }
        m.forget_unit(&sp, &id)
    })
    .await
    .map_err(|e| match e.code {
        "not_found" => ApiError::not_found("memory_not_found", e.detail),
        _ => e,
    })?;
    Ok(report.into())
}

/// Forgets a session. Returns the units removed.
pub async fn forget_session(
    state: &Arc<AppState>,
    who: &Principal,
    space: &str,
    session: &str,
) -> Result<usize, ApiError> {
    let pin = who.require_in(space, Need::Write)?;
    let (sp, s) = (space.to_string(), session.to_string());
    blocking(state, move |m| {
        require_held(m, &pin, &sp, &s)?;
        m.forget_session(&sp, &s)
    })
    .await
}

/// Forgets one message of a session, with `exchange` the reply to it too.
pub async fn forget_message(
    state: &Arc<AppState>,
    who: &Principal,
    space: &str,
    session: &str,
    message: &str,
    exchange: bool,
) -> Result<crate::wire::out::ForgotMessages, ApiError> {
    let pin = who.require_in(space, Need::Write)?;
    let (sp, s, msg) = (space.to_string(), session.to_string(), message.to_string());
    let r = blocking(state, move |m| {
        require_held(m, &pin, &sp, &s)?;
        m.forget_message_with(&sp, &s, &msg, exchange)
    })
    .await?;
    Ok(r.into())
}

/// Forgets every session of an end-user partition (a data-protection request). The
/// caller parsed the partition, so a key pinned to one can check it before this runs.
pub async fn forget_partition(
    state: &Arc<AppState>,
    who: &Principal,
    space: &str,
    partition: cairn::Partition,
) -> Result<crate::wire::out::ForgotPartition, ApiError> {
    // A pinned key forgets its own partition only (403 `outside_partition` otherwise).
    who.require_in(space, Need::Write)?.admits(&partition)?;
    let sp = space.to_string();
    let r = blocking(state, move |m| m.forget_partition(&sp, &partition)).await?;
    Ok(r.into())
}

/// Refuses, as the store does an unknown session, a session outside a pinned key's
/// partition (absent to it).
fn require_held(
    m: &Memory,
    pin: &crate::auth::Pin,
    space: &str,
    id: &str,
) -> Result<(), cairn::Error> {
    if pin.partition().is_none() {
        return Ok(());
    }
    let held = m
        .session(space, id)?
        .is_some_and(|r| pin.holds(&r.session.metadata));
    if !held {
        return Err(
            cairn::StoreError::NotFound(format!("session {id:?} in space {space:?}")).into(),
        );
    }
    Ok(())
}

/// Who the caller is and what it sees.
pub async fn me(st: &S, who: &Principal) -> Result<Me, ApiError> {
    let p = who.clone();
    let spaces = blocking(st, move |m| {
        Ok(m.spaces()?
            .into_iter()
            .map(|s| s.as_str().to_string())
            .filter(|s| p.can_see(s))
            .collect::<Vec<_>>())
    })
    .await?;
    let label = match who.access {
        Access::All => None,
        Access::Spaces(_) => st
            .keys
            .list()
            .map_err(ApiError::internal)?
            .into_iter()
            .find(|k| k.id == who.key_id)
            .and_then(|k| k.label),
    };
    Ok(Me {
        key_id: who.key_id.clone(),
        label,
        admin: who.access == Access::All,
        read_only: who.read_only,
        spaces,
        scope: match &who.access {
            Access::All => None,
            Access::Spaces(s) => Some(s.clone()),
        },
        partition: who.partition.as_ref().map(cairn::Partition::to_value),
    })
}

/// The fact subjects of what `scope` sees.
pub async fn subjects(
    st: &S,
    who: &Principal,
    space: &str,
    scope: cairn::ScopeOptions,
) -> Result<Subjects, ApiError> {
    let scope = who.require_in(space, Need::Read)?.scope(scope)?;
    let w = warned(st, space, scope, |m, sp, scope| m.fact_subjects(sp, scope)).await?;
    Ok(Subjects {
        subjects: w.answer.into_iter().map(Into::into).collect(),
        warnings: w.warnings,
    })
}

/// The entities of what `scope` sees, optionally searched.
pub async fn entities(
    st: &S,
    who: &Principal,
    space: &str,
    search: Option<String>,
    scope: cairn::ScopeOptions,
) -> Result<Entities, ApiError> {
    let scope = who.require_in(space, Need::Read)?.scope(scope)?;
    let w = warned(st, space, scope, move |m, sp, scope| {
        m.entities(sp, search.as_deref(), scope)
    })
    .await?;
    Ok(Entities {
        entities: w.answer.into_iter().map(Into::into).collect(),
        warnings: w.warnings,
    })
}

/// One entity by name or alias; 404 when the scope sees none by that name.
pub async fn entity(
    st: &S,
    who: &Principal,
    space: &str,
    name: String,
    scope: cairn::ScopeOptions,
) -> Result<EntityDetailOut, ApiError> {
    let scope = who.require_in(space, Need::Read)?.scope(scope)?;
    let asked = name.clone();
    let w = warned(st, space, scope, move |m, sp, scope| {
        m.entity(sp, &asked, scope)
    })
    .await?
    .found(format!("no entity {name:?}"))?;
    Ok(EntityDetailOut {
        warnings: w.warnings,
        ..w.answer.into()
    })
}

#[cfg(test)]
mod tests {
    use std::sync::mpsc;
    use std::time::Duration;

    /// A client that goes away drops its request's future: the library call must stop at
    /// its next work check instead of running on.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_call_whose_caller_went_away_stops_at_its_next_check() {
        let (started, is_started) = mpsc::channel();
        let (stopped, is_stopped) = mpsc::channel();
        let call = tokio::spawn(super::cancellable(None, move || {
            started.send(()).expect("started");
            while cairn::check_deadline("test loop").is_ok() {
                std::thread::yield_now();
            }
            stopped.send(()).expect("stopped");
        }));
        tokio::task::spawn_blocking(move || is_started.recv())
            .await
            .expect("join")
            .expect("the call started");
        call.abort();
        // A bound on the wait only, so that a failure ends the test.
        let end =
            tokio::task::spawn_blocking(move || is_stopped.recv_timeout(Duration::from_secs(60)))
                .await
                .expect("join");
        assert!(end.is_ok(), "the call ran on after its caller went away");
    }
}
