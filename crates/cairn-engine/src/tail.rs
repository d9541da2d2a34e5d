//! What an append re-derives. Messages appended to a session change only units near its
//! end: the new turns, the round and the episode they join, the last profile block, and
//! the facts they state. [`derive_appended`] finds, per kind, the first position whose
//! unit may differ from the stored one and derives from there with the same rules as a
//! whole derivation ([`crate::derive::derive_window`]), so the result is exactly the end
//! of what [`crate::derive_session_units`] gives for the whole session (the tests in
//! `tests/append_derive.rs` hold it to that). The cost of an append is then bounded by
//! [`APPEND_LOOKBACK`], not by the length of the session.
use crate::derive::{
    derive_window, is_user, role_episodes, silence_before, Window, MAX_EPISODE, TOPIC_WINDOW,
};
use crate::profile::PROFILE_BLOCK;
use cairn_core::{SessionInput, SpaceId, Timestamp, Unit, UnitKind};

/// How far before the end of the stored messages an append may need stored units:
/// the longest episode (twice [`MAX_EPISODE`] for user/assistant chats), a segmentation
/// restart a topic window earlier, and a profile block.
pub const APPEND_LOOKBACK: usize = 2 * MAX_EPISODE + TOPIC_WINDOW + PROFILE_BLOCK;

/// The units of `session` (the stored session of `stored_len` messages with messages
/// appended) that the append may have changed, and the window they fill: stored units
/// the window covers and this does not derive are gone.
///
/// `stored` holds the session's stored units from position
/// `stored_len - APPEND_LOOKBACK` on (clamped at 0) and all its facts. `None` when the
/// end cannot be derived from those alone (the append made a chat of named speakers a
/// user/assistant chat, or an episode or round reaches further back): derive it whole.
pub fn derive_appended(
    space: &SpaceId,
    session: &SessionInput,
    recorded_at: Timestamp,
    stored_len: usize,
    stored: &[Unit],
) -> Option<(Vec<Unit>, Window)> {
    let window = window_after(session, stored_len, stored)?;
    let earlier = crate::facts::earlier_facts(stored, window.fact);
    let units = derive_window(space, session, recorded_at, &window, earlier);
    Some((units, window))
}

/// Per kind, the first position whose unit the append may change. The last profile
/// block changes only if the new messages join it: a full block before them stays.
fn window_after(session: &SessionInput, stored_len: usize, stored: &[Unit]) -> Option<Window> {
    let msgs = &session.messages;
    if stored_len == 0 || stored_len > msgs.len() {
        return None;
    }
    let roles = cairn_core::has_roles(msgs);
    if roles != cairn_core::has_roles(&msgs[..stored_len]) {
        return None;
    }
    let last = stored_len - 1;
    let floor = stored_len.saturating_sub(APPEND_LOOKBACK);
    let window = if roles {
        // A turn belongs to the round of the user message before it, which only grows.
        let round = match (floor..stored_len).rev().find(|&i| is_user(&msgs[i])) {
            Some(i) => i,
            None if floor == 0 => stored_len,
            None => return None,
        };
        let episode = role_episodes(msgs, 0)
            .into_iter()
            .find(|&(a, b)| a <= last && last < b)
            .map_or(0, |(a, _)| a);
        Window {
            turn: stored_len,
            round,
            episode,
            fact: stored_len,
            profile: stored_len / PROFILE_BLOCK * PROFILE_BLOCK,
        }
    } else {
        // The last stored line gains an answer (a round, and a container for its turn
        // and facts).
        Window {
            turn: last,
            round: last,
            episode: segment_restart(session, stored_len, floor, stored),
            fact: last,
            profile: stored_len / PROFILE_BLOCK * PROFILE_BLOCK,
        }
    };
    (window.start() >= floor || floor == 0).then_some(window)
}

/// A position where the segmentation of the whole session (old or new) starts an
/// episode and after which every episode may change: the latest silence, or stored
/// episode start, whose decision no appended message can reach (a topic shift at `i`
/// reads the messages up to `i + TOPIC_WINDOW`), else the session's start.
fn segment_restart(
    session: &SessionInput,
    stored_len: usize,
    floor: usize,
    stored: &[Unit],
) -> usize {
    // Decisions before a restart must not change: each reads up to TOPIC_WINDOW ahead.
    let settled = (stored_len + 1).saturating_sub(TOPIC_WINDOW);
    let silence = (floor.max(1)..settled)
        .rev()
        .find(|&i| silence_before(session, i));
    let started = stored
        .iter()
        .filter(|u| u.kind == UnitKind::Episode)
        .map(|u| u.provenance.first_position as usize)
        .filter(|&a| a + TOPIC_WINDOW <= stored_len)
        .max();
    silence.max(started).unwrap_or(0)
}
