//! Derivation of memory units from a session. Pure and deterministic: the same session
//! gives the same units with the same ids, so re-deriving is idempotent and the derived
//! state can always be rebuilt from the verbatim record.
use crate::text::content_words;
use cairn_core::{Message, Provenance, Role, SessionInput, SpaceId, Timestamp, Unit, UnitKind};
use std::borrow::Cow;
use std::collections::{HashMap, HashSet};

/// Version of the rules below. Stores remember which version made their units; opening
/// a store made by another version re-derives every unit from the record (trajectory
/// units too: 4 changed what slice and event vectors read; 5 reads the clause after a
/// lead-in colon as the fact; 6 cuts each message's text in units to
/// [`MAX_UNIT_MESSAGE_BYTES`]; 7 bounds user/assistant episodes and makes profile
/// contributions per block of messages, so an append re-derives a bounded tail; 8 stamps
/// every unit with its session's end-user partition, `Provenance::partition`; 9 adds
/// personal facts, with a vector each; 10 counts reply times only between messages with
/// times of their own, in chats without an assistant; 11 reads standing instructions to
/// an assistant, and notes about "the user" as the user's own words).
pub const DERIVE_VERSION: u32 = 11;

/// The most of one message's text that a unit holds. The record keeps every message whole;
/// units (and so the indexes, and every recall that loads candidates) hold at most this
/// much of each, so a reply of hundreds of KB of pasted code costs a recall what a
/// message of this size does. 16 KiB is about 4,000 tokens: more of one message than a
/// packed context of the default budgets ever shows.
pub const MAX_UNIT_MESSAGE_BYTES: usize = 16 << 10;

/// A silence this long ends an episode of a multi-party chat.
const EPISODE_GAP_MINUTES: i64 = 30;
/// Messages an episode has before a change of topic may end it.
const MIN_EPISODE: usize = 3;
/// Longest episode of named speakers, in messages; longer stretches are cut where the
/// topic moves most. A user/assistant episode ends at the first user message after this
/// many, and at twice this many in any case, so the episode an append touches is bounded.
pub const MAX_EPISODE: usize = 40;
/// Messages compared on each side of a possible topic boundary.
pub const TOPIC_WINDOW: usize = 3;
/// Openers that announce a new topic.
const TOPIC_CUES: &[&str] = &[
    "btw",
    "by the way",
    "on another note",
    "switching gears",
    "different topic",
    "moving on",
    "another thing",
    "separately",
    "unrelated",
    "new topic",
    "quick question",
    "changing topic",
];

/// Derives the units of one session:
/// - a `turn` per message;
/// - a `round` per exchange: in a user/assistant chat, a user message with the replies
///   that follow it; in a chat of named speakers (no roles), a message with the next
///   message when another speaker wrote it;
/// - `episode`s: bounded stretches of the conversation. In a user/assistant chat an
///   episode runs to the first user message after [`MAX_EPISODE`] messages (so a session
///   of up to that many messages is one episode); for named speakers, the coherent
///   stretches found by [`segment`] (silences, topic changes);
/// - a `fact` per statement of a subject's value (see `facts/`);
/// - a `profile` contribution per speaker and block of messages (see `profile/`).
///
/// Keys (the lexically boosted words) and embedded text favour what a person said, since
/// questions ask about the person; assistant replies are long and are served by the
/// full-text field of BM25 rather than by a vector.
pub fn derive_session_units(
    space: &SpaceId,
    session: &SessionInput,
    recorded_at: Timestamp,
) -> Vec<Unit> {
    derive_window(space, session, recorded_at, &Window::default(), Vec::new())
}

/// Where, by kind, the units of a derivation start: a unit is derived when its first
/// position is at or after its kind's start. The whole session is all zeros; an append
/// derives only the end of its session (see `tail.rs`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Window {
    pub turn: usize,
    pub round: usize,
    /// Also a boundary of the session's episodes, where their segmentation restarts.
    pub episode: usize,
    pub fact: usize,
    /// A multiple of [`crate::profile::PROFILE_BLOCK`].
    pub profile: usize,
}

impl Window {
    /// The earliest position any kind starts at.
    pub fn start(&self) -> usize {
        [self.turn, self.round, self.episode, self.fact, self.profile]
            .into_iter()
            .min()
            .unwrap_or(0)
    }

    /// Whether `u` (a unit of this session) is one this window derives.
    pub fn covers(&self, u: &Unit) -> bool {
        let from = match u.kind {
            UnitKind::Turn => self.turn,
            UnitKind::Round => self.round,
            UnitKind::Episode => self.episode,
            UnitKind::Fact => self.fact,
            UnitKind::Profile => self.profile,
            _ => return false,
        };
        u.provenance.first_position as usize >= from
    }
}

/// The units of `window`, exactly as [`derive_session_units`] derives them. `earlier`
/// holds the facts stated before `window.fact`, in order (a revision may refer to one).
pub(crate) fn derive_window(
    space: &SpaceId,
    session: &SessionInput,
    recorded_at: Timestamp,
    window: &Window,
    earlier: Vec<crate::facts::Extracted>,
) -> Vec<Unit> {
    let session = &*within_unit_bounds(session, window.start());
    let has_roles = session.has_roles();
    let rounds = if has_roles {
        role_rounds(&session.messages)
    } else {
        speaker_rounds(&session.messages)
    };
    let round_id = |i: usize| round_id(session, &session.messages[rounds[i].0]);
    let mut units = Vec::new();
    for (pos, m) in session.messages.iter().enumerate().skip(window.turn) {
        let mut turn = turn_unit(space, session, pos, m, recorded_at);
        // In user/assistant chats every round is disjoint, so a turn has one container.
        // Speaker rounds overlap: a line belongs to the round it opens (the line with its
        // answer), which is how a reader needs to see it. Rounds are in position order.
        let opened = rounds.partition_point(|&(a, _)| a <= pos).checked_sub(1);
        turn.part_of = opened
            .filter(|&i| match has_roles {
                true => pos < rounds[i].1,
                false => rounds[i].0 == pos,
            })
            .map(round_id);
        units.push(turn);
    }
    for &span in rounds.iter().filter(|&&(a, _)| a >= window.round) {
        units.push(round_unit(space, session, span, recorded_at));
    }
    let episodes = match has_roles {
        true => role_episodes(&session.messages, window.episode),
        false => segment_from(session, window.episode),
    };
    for (a, b) in episodes.into_iter().filter(|&(a, b)| b - a > 1) {
        let id = match (has_roles, a) {
            (true, 0) => format!("episode:{}", session.id),
            _ => format!("episode:{}:{}", session.id, session.messages[a].id),
        };
        units.push(episode_unit(
            space,
            session,
            id,
            (a, b),
            has_roles,
            recorded_at,
        ));
    }
    // A fact credits the exchange its message belongs to, as its turn does.
    let mut facts = crate::facts::fact_units(space, session, recorded_at, window.fact, earlier);
    for f in &mut facts {
        f.part_of = units
            .iter()
            .find(|u| {
                u.kind == UnitKind::Turn && u.provenance.message_ids == f.provenance.message_ids
            })
            .and_then(|t| t.part_of.clone());
    }
    units.extend(facts);
    units.extend(crate::profile::profile_units(
        space,
        session,
        recorded_at,
        window.profile,
    ));
    stamp_partition(&mut units, &session.metadata);
    units
}

/// Units split by partition, in their order (one borrowed slice when they are all of one
/// partition, the common case).
pub(crate) fn partitions(units: &[Unit]) -> Vec<Cow<'_, [Unit]>> {
    let Some(first) = units.first() else {
        return Vec::new();
    };
    let one = &first.provenance.partition;
    if units.iter().all(|u| &u.provenance.partition == one) {
        return vec![Cow::Borrowed(units)];
    }
    let mut index: HashMap<Option<&str>, usize> = HashMap::new();
    let mut out: Vec<Vec<Unit>> = Vec::new();
    for u in units {
        let i = *index
            .entry(u.provenance.partition.as_deref())
            .or_insert_with(|| {
                out.push(Vec::new());
                out.len() - 1
            });
        out[i].push(u.clone());
    }
    out.into_iter().map(Cow::Owned).collect()
}

/// Stamps units of a session with the session's end-user partition: what derived
/// knowledge (chains, profiles, entities) keeps apart.
pub(crate) fn stamp_partition(units: &mut [Unit], metadata: &serde_json::Value) {
    let partition = cairn_core::partition_of(metadata);
    for u in units {
        u.provenance.partition.clone_from(&partition);
    }
}

/// The session as units see it: the text of every message from `from` on cut to
/// [`MAX_UNIT_MESSAGE_BYTES`] (at a line or word end when one is near), with a note of
/// how much the record holds beyond. Borrowed as is when no such message is that long.
/// (A derivation reads no text before its window's start.)
fn within_unit_bounds(session: &SessionInput, from: usize) -> Cow<'_, SessionInput> {
    let long = |m: &Message| m.text.len() > MAX_UNIT_MESSAGE_BYTES;
    if !session.messages.iter().skip(from).any(long) {
        return Cow::Borrowed(session);
    }
    let mut cut = session.clone();
    for m in cut.messages.iter_mut().skip(from).filter(|m| long(m)) {
        m.text = excerpt(&m.text, MAX_UNIT_MESSAGE_BYTES);
    }
    Cow::Owned(cut)
}

/// The first `max` bytes of `text` or less (ending at a line end, else a space, within
/// the last eighth), and how many bytes follow in the record.
fn excerpt(text: &str, max: usize) -> String {
    let head = cairn_core::text::prefix(text, max);
    let end = head.len();
    let floor = end - end / 8;
    let end = head
        .rfind('\n')
        .filter(|&i| i >= floor)
        .or_else(|| head.rfind(' ').filter(|&i| i >= floor))
        .unwrap_or(end);
    format!(
        "{}\n[… {} more bytes of this message in the session record]",
        &text[..end],
        text.len() - end
    )
}

/// Splits a chat of named speakers into episodes `[start, end)`: a new one starts after
/// a silence of [`EPISODE_GAP_MINUTES`], at a message that announces a new topic, or
/// where the words of the messages before and after stop overlapping.
pub fn segment(s: &SessionInput) -> Vec<(usize, usize)> {
    segment_from(s, 0)
}

/// The episodes of [`segment`] from `from` on, which must be where one of them starts:
/// every decision below looks back no further than the episode's start.
pub(crate) fn segment_from(s: &SessionInput, from: usize) -> Vec<(usize, usize)> {
    let msgs = &s.messages;
    let words: Vec<HashSet<String>> = msgs
        .iter()
        .skip(from)
        .map(|m| content_words(&m.text).into_iter().collect())
        .collect();
    let window = |a: usize, b: usize| -> HashSet<&String> {
        words[a - from..b - from]
            .iter()
            .flat_map(|w| w.iter())
            .collect()
    };
    let mut spans = Vec::new();
    let mut start = from;
    for i in from + 1..msgs.len() {
        let gap = silence_before(s, i);
        let len = i - start;
        let opener = msgs[i].text.trim_start().to_lowercase();
        let cue = TOPIC_CUES.iter().any(|c| opener.starts_with(c));
        let shift = len >= MIN_EPISODE && i + TOPIC_WINDOW <= msgs.len() && {
            let before = window(i.saturating_sub(TOPIC_WINDOW).max(start), i);
            let after = window(i, i + TOPIC_WINDOW);
            before.is_disjoint(&after)
        };
        if gap || (len >= MIN_EPISODE && cue) || shift || len >= MAX_EPISODE {
            spans.push((start, i));
            start = i;
        }
    }
    if start < msgs.len() {
        spans.push((start, msgs.len()));
    }
    spans
}

/// Whether message `i` (> 0) follows a silence that ends an episode whatever came before.
pub(crate) fn silence_before(s: &SessionInput, i: usize) -> bool {
    let msgs = &s.messages;
    match (s.message_time(&msgs[i - 1]), s.message_time(&msgs[i])) {
        (Some(a), Some(b)) => (b - a).num_minutes() >= EPISODE_GAP_MINUTES,
        _ => false,
    }
}

/// The episodes of a user/assistant chat from `from` on (where one starts): each ends
/// at the first user message after [`MAX_EPISODE`] messages, or after twice that many.
pub(crate) fn role_episodes(messages: &[Message], from: usize) -> Vec<(usize, usize)> {
    let mut spans = Vec::new();
    let mut start = from;
    for (i, m) in messages.iter().enumerate().skip(from + 1) {
        let len = i - start;
        if (len >= MAX_EPISODE && is_user(m)) || len >= 2 * MAX_EPISODE {
            spans.push((start, i));
            start = i;
        }
    }
    if start < messages.len() {
        spans.push((start, messages.len()));
    }
    spans
}

/// A stretch of a session as one unit. Its key is what people said (the user's side in
/// a user/assistant chat), so BM25 can score a conversation by everything said in it.
fn episode_unit(
    space: &SpaceId,
    s: &SessionInput,
    id: String,
    (start, end): (usize, usize),
    has_roles: bool,
    recorded_at: Timestamp,
) -> Unit {
    let msgs = &s.messages[start..end];
    let text = msgs.iter().map(speaker_line).collect::<Vec<_>>().join("\n");
    let key = if has_roles {
        msgs.iter()
            .filter(|m| is_user(m))
            .map(|m| m.text.as_str())
            .collect::<Vec<_>>()
            .join("\n")
    } else {
        text.clone()
    };
    let mut speakers: Vec<String> = Vec::new();
    for m in msgs {
        if !speakers.iter().any(|x| x == m.speaker_name()) {
            speakers.push(m.speaker_name().to_string());
        }
    }
    let occurred_at = s.message_time(&msgs[0]);
    Unit {
        id,
        space: space.clone(),
        kind: UnitKind::Episode,
        text,
        key,
        embed_text: None,
        provenance: Provenance {
            session_id: Some(s.id.clone()),
            message_ids: msgs.iter().map(|m| m.id.clone()).collect(),
            first_position: start as u32,
            speakers,
            group: s.group.clone(),
            ..Default::default()
        },
        part_of: None,
        occurred_at,
        recorded_at,
        detail: None,
    }
}

pub(crate) fn is_user(m: &Message) -> bool {
    m.role == Some(Role::User)
}

/// Message index spans `[start, end)` of user-led rounds.
fn role_rounds(messages: &[Message]) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < messages.len() {
        if !is_user(&messages[i]) {
            i += 1;
            continue;
        }
        let mut end = i + 1;
        while end < messages.len() && !is_user(&messages[end]) {
            end += 1;
        }
        out.push((i, end));
        i = end;
    }
    out
}

/// Each message with the following one, when someone else answers it.
fn speaker_rounds(messages: &[Message]) -> Vec<(usize, usize)> {
    (0..messages.len().saturating_sub(1))
        .filter(|&i| messages[i].speaker_name() != messages[i + 1].speaker_name())
        .map(|i| (i, i + 2))
        .collect()
}

fn speaker_line(m: &Message) -> String {
    format!("{}: {}", m.speaker_name(), m.text)
}

/// The id of the turn unit of a session's message.
pub fn turn_id(session: &str, message: &str) -> String {
    format!("turn:{session}:{message}")
}

fn turn_unit(
    space: &SpaceId,
    s: &SessionInput,
    pos: usize,
    m: &Message,
    recorded_at: Timestamp,
) -> Unit {
    let named_speaker = m.role.is_none();
    let embed_text = match m.role {
        Some(Role::Assistant) => None,
        _ if named_speaker => Some(speaker_line(m)),
        _ => Some(m.text.clone()),
    };
    Unit {
        id: turn_id(&s.id, &m.id),
        space: space.clone(),
        kind: UnitKind::Turn,
        text: m.text.clone(),
        key: if named_speaker {
            speaker_line(m)
        } else {
            m.text.clone()
        },
        embed_text,
        provenance: Provenance::of_message(s, m, pos),
        part_of: None,
        occurred_at: s.message_time(m),
        recorded_at,
        detail: None,
    }
}

/// A round is named by the session and the message that opens it.
fn round_id(s: &SessionInput, lead: &Message) -> String {
    format!("round:{}:{}", s.id, lead.id)
}

fn round_unit(
    space: &SpaceId,
    s: &SessionInput,
    (start, end): (usize, usize),
    recorded_at: Timestamp,
) -> Unit {
    let msgs = &s.messages[start..end];
    let lead = &msgs[0];
    let mut speakers: Vec<String> = Vec::new();
    for m in msgs {
        if !speakers.iter().any(|x| x == m.speaker_name()) {
            speakers.push(m.speaker_name().to_string());
        }
    }
    let text = msgs.iter().map(speaker_line).collect::<Vec<_>>().join("\n");
    let (key, embed_text) = if lead.role.is_some() {
        (lead.text.clone(), lead.text.clone())
    } else {
        (text.clone(), text.clone())
    };
    Unit {
        id: round_id(s, lead),
        space: space.clone(),
        kind: UnitKind::Round,
        text,
        key,
        embed_text: Some(embed_text),
        provenance: Provenance {
            session_id: Some(s.id.clone()),
            message_ids: msgs.iter().map(|m| m.id.clone()).collect(),
            first_position: start as u32,
            speakers,
            group: s.group.clone(),
            ..Default::default()
        },
        part_of: None,
        occurred_at: s.message_time(lead),
        recorded_at,
        detail: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn msg(id: &str, role: Option<Role>, speaker: Option<&str>, text: &str) -> Message {
        Message {
            id: id.into(),
            role,
            speaker: speaker.map(Into::into),
            text: text.into(),
            occurred_at: None,
            metadata: serde_json::Value::Null,
        }
    }

    fn session(messages: Vec<Message>) -> SessionInput {
        SessionInput {
            id: "s1".into(),
            occurred_at: Some(cairn_core::time::parse_timestamp("2023-05-01").unwrap()),
            group: None,
            messages,
            metadata: serde_json::Value::Null,
        }
    }

    #[test]
    fn user_assistant_chat_gives_turns_and_user_led_rounds() {
        let s = session(vec![
            msg("0", Some(Role::Assistant), None, "Welcome!"),
            msg("1", Some(Role::User), None, "I adopted a cat named Luna."),
            msg("2", Some(Role::Assistant), None, "Congratulations on Luna!"),
            msg("3", Some(Role::User), None, "Thanks."),
        ]);
        let space = SpaceId::new("t").unwrap();
        let units = derive_session_units(&space, &s, chrono::Utc::now());
        let turns: Vec<_> = units.iter().filter(|u| u.kind == UnitKind::Turn).collect();
        let rounds: Vec<_> = units.iter().filter(|u| u.kind == UnitKind::Round).collect();
        assert_eq!(turns.len(), 4);
        assert_eq!(rounds.len(), 2);
        assert_eq!(rounds[0].id, "round:s1:1");
        assert_eq!(rounds[0].provenance.message_ids, ["1", "2"]);
        assert_eq!(rounds[0].key, "I adopted a cat named Luna.");
        assert!(rounds[0].text.contains("assistant: Congratulations"));
        assert_eq!(rounds[1].provenance.message_ids, ["3"]);
        assert!(
            turns[0].embed_text.is_none(),
            "assistant turns are not embedded"
        );
        assert_eq!(
            turns[0].part_of, None,
            "a greeting before any user turn stands alone"
        );
        assert_eq!(turns[2].part_of.as_deref(), Some("round:s1:1"));
        assert_eq!(turns[1].occurred_at, s.occurred_at);
        // Deterministic: deriving again gives the same units.
        let again = derive_session_units(&space, &s, units[0].recorded_at);
        assert_eq!(units, again);
    }

    #[test]
    fn named_speakers_pair_each_message_with_its_answer() {
        let s = session(vec![
            msg("D1:1", None, Some("Ann"), "Hi Bob"),
            msg("D1:2", None, Some("Bob"), "Hey Ann"),
            msg("D1:3", None, Some("Bob"), "Guess what"),
        ]);
        let units = derive_session_units(&SpaceId::new("t").unwrap(), &s, chrono::Utc::now());
        let rounds: Vec<_> = units.iter().filter(|u| u.kind == UnitKind::Round).collect();
        assert_eq!(rounds.len(), 1);
        assert_eq!(rounds[0].provenance.speakers, ["Ann", "Bob"]);
        assert_eq!(rounds[0].text, "Ann: Hi Bob\nBob: Hey Ann");
        let t = units.iter().find(|u| u.id == "turn:s1:D1:3").unwrap();
        assert_eq!(t.key, "Bob: Guess what");
    }

    #[test]
    fn units_hold_a_bounded_excerpt_of_a_long_message_and_say_what_is_left() {
        // Multi-byte text, so a cut at the byte bound would split a character.
        let long: String = (0..9000).map(|i| format!("é{i} ")).collect();
        assert!(long.len() > 2 * MAX_UNIT_MESSAGE_BYTES);
        let s = session(vec![
            msg("m1", Some(Role::User), None, "paste the parser"),
            msg("m2", Some(Role::Assistant), None, &long),
        ]);
        let space = SpaceId::new("x").unwrap();
        let units = derive_session_units(&space, &s, chrono::Utc::now());
        let turn = units.iter().find(|u| u.id == "turn:s1:m2").unwrap();
        let (head, note) = turn.text.split_once("\n[… ").unwrap();
        assert!(
            head.len() <= MAX_UNIT_MESSAGE_BYTES && head.len() > MAX_UNIT_MESSAGE_BYTES * 7 / 8
        );
        assert!(long.starts_with(head) && head.ends_with(char::is_alphanumeric));
        let left: usize = note.split(' ').next().unwrap().parse().unwrap();
        assert_eq!(head.len() + left, long.len());
        for u in &units {
            assert!(
                u.text.len() < 2 * MAX_UNIT_MESSAGE_BYTES,
                "{} holds {} bytes",
                u.id,
                u.text.len()
            );
        }
        // A session of short messages is derived from itself, unchanged.
        let short = session(vec![msg("m1", Some(Role::User), None, "hi")]);
        assert!(matches!(within_unit_bounds(&short, 0), Cow::Borrowed(_)));
        // Nor is a session whose long messages all come before the window.
        assert!(matches!(within_unit_bounds(&s, 2), Cow::Borrowed(_)));
    }
}
