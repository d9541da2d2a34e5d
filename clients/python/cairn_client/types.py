"""Typed results (and inputs) of the HTTP API, one dataclass per schema of ``openapi.json``.

Class names are the schema names of the spec (``components.schemas``) wherever the spec
names one, and ``tests/test_contract.py`` fails when a schema lists a property that its
class lacks. Parsing ignores fields it does not know, so a newer server keeps working with
an older client. Times are kept as the server's RFC 3339 strings.
"""

from __future__ import annotations

import dataclasses
import functools
import typing
from dataclasses import dataclass, field
from typing import Any, Dict, List, Mapping, Optional, Type, TypeVar, Union

T = TypeVar("T")
JSON = Dict[str, Any]


@dataclass(frozen=True)
class Health:
    status: str
    version: Optional[str] = None


@dataclass(frozen=True)
class Ready:
    status: str
    spaces: int = 0


@dataclass(frozen=True)
class SpaceStats:
    space: str
    sessions: int
    messages: int
    units: int
    trajectories: int = 0
    units_by_kind: Dict[str, int] = field(default_factory=dict)
    #: Estimated bytes of the space's rows in the store (not shared index files).
    disk_bytes: Optional[int] = None
    #: When the newest session or trajectory was recorded.
    last_recorded_at: Optional[str] = None


@dataclass(frozen=True)
class IngestReport:
    sessions: int = 0
    trajectories: int = 0
    unchanged: int = 0
    messages_added: int = 0
    #: Messages that came without a time: each was given the time it was recorded.
    dated_at_recording: int = 0
    units: int = 0
    vectors_computed: int = 0
    vectors_cached: int = 0
    #: True when the server answered a repeat of an earlier request with the same
    #: idempotency key (``Idempotency-Replayed: true``): nothing was written again.
    replayed: bool = False


@dataclass(frozen=True)
class Message:
    """One message: ``role`` (user, assistant, system) or ``speaker``, and ``text``."""

    text: str
    role: Optional[str] = None
    speaker: Optional[str] = None
    id: Optional[str] = None
    occurred_at: Optional[str] = None
    metadata: Any = None


@dataclass(frozen=True)
class SessionInput:
    """A session as ingested (the JSONL line shape)."""

    id: str
    messages: List[Message]
    occurred_at: Optional[str] = None
    group: Optional[str] = None
    metadata: Any = None


@dataclass(frozen=True)
class Warning:  # noqa: A001 (the spec's name; Python's own is ``builtins.Warning``)
    """Something a read answered but wants its caller to know: ``code``
    (``unknown_filter_key``: a ``filter`` names a metadata key no session the request may
    see carries, most often a misspelling), the request's ``field`` (``filter.userid``)
    and a ``message``."""

    code: str
    field: str
    message: str


@dataclass(frozen=True)
class SessionRecord:
    space: str
    recorded_at: str
    session: SessionInput


@dataclass(frozen=True)
class SessionPage:
    items: List[SessionRecord]
    total: int
    offset: int
    next_offset: Optional[int] = None
    #: What the server wants the caller to know about the request (a ``filter`` key no
    #: session carries); every one is also emitted as a :class:`cairn_client.CairnWarning`.
    warnings: List[Warning] = field(default_factory=list)


@dataclass(frozen=True)
class GroupMessage:
    speaker: str
    group: str
    time: str
    text: str
    id: Optional[str] = None
    metadata: Any = None


@dataclass(frozen=True)
class ListScore:
    """What one candidate list (lexical: BM25, dense: cosine) gave a hit."""

    score: float = 0.0
    #: Place in the list as searched, from 1; ``None`` for a cosine computed by completion.
    rank: Optional[int] = None
    fused: float = 0.0


@dataclass(frozen=True)
class HitExplanation:
    """Why a hit scored what it did (``recall(..., explain=True)``)."""

    scored_as: Optional[str] = None
    lexical: Optional[ListScore] = None
    dense: Optional[ListScore] = None
    fused: float = 0.0
    #: The signals a learned ranking weighs, by name (``[engine.rank.learned]``).
    features: Dict[str, float] = field(default_factory=dict)
    #: Each second-pass step: ``{step, op, by, score_after, note}``.
    adjustments: List[JSON] = field(default_factory=list)
    version_notes: List[str] = field(default_factory=list)
    placed_above: Optional[str] = None


@dataclass(frozen=True)
class RecallExplanation:
    """What a recall's stages kept, skipped and packed (``explain=True``)."""

    #: Candidates kept by each stage: lexical, dense, completed, fused, visible, ranked.
    counts: Dict[str, int] = field(default_factory=dict)
    quota_skipped: List[str] = field(default_factory=list)
    #: ``{token_budget, tokens_used, entries: [{unit_id, outcome, full_tokens, tokens}]}``.
    packing: Optional[JSON] = None
    #: ``[{stage, ms}]``.
    stages: List[JSON] = field(default_factory=list)


@dataclass(frozen=True)
class HitPart:
    """One unit of a place hit's excerpt, with the messages it covers."""
    unit_id: str
    turn_ids: List[str] = field(default_factory=list)


@dataclass(frozen=True)
class Hit:
    unit_id: str
    kind: str
    text: str
    score: float
    session_id: Optional[str] = None
    turn_ids: List[str] = field(default_factory=list)
    speakers: List[str] = field(default_factory=list)
    occurred_at: Optional[str] = None
    #: For a fact replaced by a later statement: the unit of the current version.
    superseded_by: Optional[str] = None
    #: For trajectory units: the trajectory and its states ``[first, end)``.
    trajectory_id: Optional[str] = None
    states: Optional[List[int]] = None
    #: Cosine of the hit's and the query's embeddings: one scale for every recall, so it
    #: can be thresholded (``score`` only orders one recall's hits). ``None`` without a vector.
    relevance: Optional[float] = None
    #: The units a place hit's excerpt shows (its best first, then in rank order), when it
    #: shows several; ``context_unit_ids`` names each part the context shows.
    parts: List[HitPart] = field(default_factory=list)
    #: How the entity graph linked the hit to the question; ``None``: it played no part.
    via: Optional[str] = None
    explain: Optional[HitExplanation] = None


@dataclass(frozen=True)
class Timings:
    embed_ms: float = 0.0
    lexical_ms: float = 0.0
    dense_ms: float = 0.0
    rank_ms: float = 0.0
    pack_ms: float = 0.0
    total_ms: float = 0.0


@dataclass(frozen=True)
class CardLine:
    """A line of the user's card: the newest statement of one of the user's chains."""

    #: The fact unit it cites.
    unit_id: str
    #: ``instruction`` for a standing instruction, else the fact's category.
    category: str
    #: The sentence that states it, verbatim.
    statement: str
    session_id: str
    message_id: str
    stated_at: Optional[str] = None


@dataclass(frozen=True)
class Recall:
    hits: List[Hit]
    context: str
    context_tokens: int
    hits_cut: int
    context_unit_ids: List[str]
    #: The user's card at the head of ``context``: standing instructions, then what the
    #: user said of themself that holds now and bears on the query, each cited.
    card: List[CardLine] = field(default_factory=list)
    #: The hits not shown whole in ``context``: trimmed, shown in part or left out.
    hits_cut_ids: List[str] = field(default_factory=list)
    #: Places after the first ``top_k`` that ``context`` also shows (the budget had room).
    extra_hits: List[Hit] = field(default_factory=list)
    #: Nothing passed the relevance floor (``min_relevance``): no hits, and the context
    #: holds at most the user's card.
    no_relevant_memory: bool = False
    timings: Timings = field(default_factory=Timings)
    explain: Optional[RecallExplanation] = None
    #: What the server wants the caller to know about the request (a ``filter`` key no
    #: session carries); every one is also emitted as a :class:`cairn_client.CairnWarning`.
    warnings: List[Warning] = field(default_factory=list)


@dataclass(frozen=True)
class Provenance:
    session_id: Optional[str] = None
    message_ids: List[str] = field(default_factory=list)
    first_position: int = 0
    speakers: List[str] = field(default_factory=list)
    group: Optional[str] = None
    trajectory_id: Optional[str] = None
    states: Optional[List[int]] = None


@dataclass(frozen=True)
class Unit:
    """A memory unit (turn, round, episode, fact, slice, event, note, profile)."""

    id: str
    space: str
    kind: str
    text: str
    provenance: Provenance
    recorded_at: str
    key: str = ""
    embed_text: Optional[str] = None
    part_of: Optional[str] = None
    occurred_at: Optional[str] = None
    #: Structured content of fact and profile units, as the server sends it.
    detail: Optional[JSON] = None


@dataclass(frozen=True)
class UnitPage:
    items: List[Unit]
    total: int
    offset: int
    next_offset: Optional[int] = None
    #: What the server wants the caller to know about the request (a ``filter`` key no
    #: session carries); every one is also emitted as a :class:`cairn_client.CairnWarning`.
    warnings: List[Warning] = field(default_factory=list)


@dataclass(frozen=True)
class ForgotMemory:
    """What deleting a memory forgot: its messages (or whole session, or trajectory)."""

    removed_units: int
    memory_id: Optional[str] = None
    session_id: Optional[str] = None
    forgotten_messages: Optional[List[str]] = None
    forgotten_session: bool = False
    trajectory_id: Optional[str] = None
    forgotten_trajectory: bool = False


@dataclass(frozen=True)
class ForgotPartition:
    """What forgetting an end user (a partition) removed; all zero when it held nothing."""

    sessions: int
    messages: int
    units: int


#: The name of :class:`ForgotMemory` before 0.3.0.
MemoryDeleted = ForgotMemory


@dataclass(frozen=True)
class AgentState:
    url: Optional[str] = None
    action: Optional[str] = None
    thought: Optional[str] = None
    #: Accessibility tree text (``accessibility_tree`` is accepted on input too).
    observation: Optional[str] = None
    screenshot: Optional[str] = None


@dataclass(frozen=True)
class TrajectoryInput:
    id: str
    goal: str
    states: List[AgentState]
    domain: Optional[str] = None
    start_url: Optional[str] = None
    #: ``True``/``False``, ``"success"``/``"failure"``, or any JSON.
    outcome: Any = None
    occurred_at: Optional[str] = None
    metadata: Any = None


@dataclass(frozen=True)
class TrajectoryRecord:
    space: str
    recorded_at: str
    trajectory: TrajectoryInput


@dataclass(frozen=True)
class TrajectorySummary:
    id: str
    goal: str
    steps: int
    recorded_at: str
    domain: Optional[str] = None
    outcome: Any = None
    succeeded: Optional[bool] = None
    urls: List[str] = field(default_factory=list)


@dataclass(frozen=True)
class FactVersion:
    unit_id: str
    subject: str
    value: str
    text: str
    #: The value as a reader says it ("dislikes jazz", "no longer Acme").
    statement: Optional[str] = None
    valid_from: Optional[str] = None
    valid_to: Optional[str] = None
    superseded_by: Optional[str] = None
    session_id: Optional[str] = None
    message_id: Optional[str] = None
    speaker: Optional[str] = None
    group: Optional[str] = None
    #: A personal fact's person (the speaker, or a relation of theirs: "user's sister").
    person: Optional[str] = None
    #: A personal fact's category ("home", "diet", ...).
    category: Optional[str] = None
    #: The statement denies the value.
    negated: bool = False
    #: When the stated change took effect, when the statement dates it.
    since: Optional[str] = None


@dataclass(frozen=True)
class FactHistory:
    subject: str
    #: Oldest first; the last is current.
    versions: List[FactVersion]
    #: What the server wants the caller to know about the request (a ``filter`` key no
    #: session carries); every one is also emitted as a :class:`cairn_client.CairnWarning`.
    warnings: List[Warning] = field(default_factory=list)

    @property
    def current(self) -> Optional[FactVersion]:
        return self.versions[-1] if self.versions else None


@dataclass(frozen=True)
class Evidence:
    what: str
    session_id: str
    message_id: str


@dataclass(frozen=True)
class Style:
    avg_words: float = 0.0
    question_rate: float = 0.0
    exclamation_rate: float = 0.0
    emoji_rate: float = 0.0
    formality: float = 0.0
    directive_rate: float = 0.0
    collaborative_rate: float = 0.0
    avg_reply_seconds: Optional[float] = None
    traits: List[str] = field(default_factory=list)


@dataclass(frozen=True)
class ProfileFact:
    """A personal fact in a profile: the current value of one of the speaker's chains,
    with the message that states it."""

    category: str
    attribute: str
    value: str
    session_id: str
    message_id: str
    negated: bool = False
    stated_at: Optional[str] = None
    earlier: int = 0


@dataclass(frozen=True)
class SpeakerProfile:
    speaker: str
    messages: int
    summary: str
    groups: List[str] = field(default_factory=list)
    first_seen: Optional[str] = None
    last_seen: Optional[str] = None
    style: Style = field(default_factory=Style)
    roles: List[Evidence] = field(default_factory=list)
    skills: List[Evidence] = field(default_factory=list)
    topics: List[str] = field(default_factory=list)
    facts: List[ProfileFact] = field(default_factory=list)
    #: What the server wants the caller to know about the request (a ``filter`` key no
    #: session carries); every one is also emitted as a :class:`cairn_client.CairnWarning`.
    warnings: List[Warning] = field(default_factory=list)


# ---- the caller, fact subjects ---------------------------------------------------------


@dataclass(frozen=True)
class Me:
    """Who the key is: its id (``admin`` for the admin key, ``local`` without auth), its
    label, whether it sees every space, whether it is read-only, the existing spaces it
    sees and (not for admin) the spaces it is for."""

    key_id: str
    admin: bool = False
    read_only: bool = False
    spaces: List[str] = field(default_factory=list)
    label: Optional[str] = None
    scope: Optional[List[str]] = None
    #: The end-user partition the key is pinned to (``{"user_id": "u1"}``), if any.
    partition: Optional[Dict[str, Any]] = None


@dataclass(frozen=True)
class KeyInfo:
    """A key as listed (never its token): its spaces, whether read-only, its label, the
    end-user partition it is pinned to, when it was made and revoked."""

    id: str
    spaces: List[str]
    read_only: bool
    created_at: str
    label: Optional[str] = None
    partition: Optional[Dict[str, Any]] = None
    revoked_at: Optional[str] = None


@dataclass(frozen=True)
class NewKey(KeyInfo):
    """A key just made: its ``token`` (shown this once) and what :class:`KeyInfo` lists."""

    token: str = field(kw_only=True)


@dataclass(frozen=True)
class FactSubject:
    """A subject the space holds versioned facts about (what ``history`` takes)."""

    subject: str
    versions: int = 0
    current_value: Optional[str] = None
    #: The newest statement as a reader says it ("dislikes jazz", "no longer Acme").
    statement: Optional[str] = None
    last_stated: Optional[str] = None
    #: A personal fact's person (the speaker, or a relation of theirs: "user's sister").
    person: Optional[str] = None
    #: A personal fact's category ("home", "work", "diet", ...).
    category: Optional[str] = None
    #: The current statement says it does not hold.
    negated: bool = False


# ---- the entity graph ------------------------------------------------------------------


@dataclass(frozen=True)
class EntitySummary:
    """A person, place, organization or thing the space's messages name."""

    name: str
    kind: str
    aliases: List[str] = field(default_factory=list)
    mention_count: int = 0
    sessions: int = 0
    first_seen: Optional[str] = None
    last_seen: Optional[str] = None


@dataclass(frozen=True)
class EntityMention:
    """A unit linked to an entity (``edge``: speaker_of, mention, fact_subject)."""

    unit_id: str
    edge: str
    message_ids: List[str] = field(default_factory=list)
    surface: str = ""
    recorded_at: Optional[str] = None
    session_id: Optional[str] = None
    occurred_at: Optional[str] = None


@dataclass(frozen=True)
class EntityRelation:
    """Another entity met in the same sessions (and how many messages link both)."""

    name: str
    kind: str
    sessions: int = 0
    messages: int = 0
    first_seen: Optional[str] = None
    last_seen: Optional[str] = None


@dataclass(frozen=True)
class TimelineEntry:
    session_id: str
    mentions: int = 0
    first: Optional[str] = None


@dataclass(frozen=True)
class EntityDetail:
    """One entity with its mentions (oldest first), relations and timeline."""

    name: str
    kind: str
    aliases: List[str] = field(default_factory=list)
    mention_count: int = 0
    sessions: int = 0
    first_seen: Optional[str] = None
    last_seen: Optional[str] = None
    mentions: List[EntityMention] = field(default_factory=list)
    relations: List[EntityRelation] = field(default_factory=list)
    timeline: List[TimelineEntry] = field(default_factory=list)
    #: What the server wants the caller to know about the request (a ``filter`` key no
    #: session carries); every one is also emitted as a :class:`cairn_client.CairnWarning`.
    warnings: List[Warning] = field(default_factory=list)


# ---- trajectory inspection -------------------------------------------------------------


@dataclass(frozen=True)
class StepLine:
    """One state in a summary or full manifest; ``action`` names the element acted on."""

    state: int
    url: Optional[str] = None
    title: Optional[str] = None
    thought: Optional[str] = None
    action: Optional[str] = None
    screenshot: Optional[str] = None


@dataclass(frozen=True)
class ManifestEntry:
    id: str
    goal: str
    outcome: str
    states: int
    domain: Optional[str] = None
    start_url: Optional[str] = None
    succeeded: Optional[bool] = None
    #: Only in the ``full`` form.
    steps: List[StepLine] = field(default_factory=list)
    truncated: Optional[str] = None


@dataclass(frozen=True)
class Manifest:
    """A page of the manifest: ``next_offset`` says where the next page starts and
    ``truncated`` says in words what the page left out."""

    form: str
    total: int
    offset: int
    entries: List[ManifestEntry]
    next_offset: Optional[int] = None
    truncated: Optional[str] = None


@dataclass(frozen=True)
class TrajectoryOverview:
    """A trajectory's summary: a line per state (at most 120; ``truncated`` says so)."""

    id: str
    goal: str
    outcome: str
    states: int
    steps: List[StepLine]
    domain: Optional[str] = None
    start_url: Optional[str] = None
    succeeded: Optional[bool] = None
    truncated: Optional[str] = None


@dataclass(frozen=True)
class StateView:
    """One state for reading: the page (``observation``) whole or cut in the middle to the
    characters asked (the cut marked in it and in ``truncated``)."""

    trajectory_id: str
    state: int
    states: int
    observation: str
    observation_chars: int
    url: Optional[str] = None
    title: Optional[str] = None
    thought: Optional[str] = None
    action: Optional[str] = None
    screenshot: Optional[str] = None
    truncated: Optional[str] = None


@dataclass(frozen=True)
class SpanView:
    trajectory_id: str
    goal: str
    start: int
    end: int
    states: List[StateView]
    truncated: Optional[str] = None


@dataclass(frozen=True)
class MatchLine:
    #: ``url``, ``thought``, ``action`` or ``page``.
    field: str
    text: str


@dataclass(frozen=True)
class StateMatch:
    trajectory_id: str
    state: int
    words_matched: int = 0
    lines: List[MatchLine] = field(default_factory=list)
    more_lines: int = 0
    url: Optional[str] = None
    title: Optional[str] = None
    action: Optional[str] = None


@dataclass(frozen=True)
class Matches:
    """The states matching a pattern (one trajectory's, or a search of the space)."""

    pattern: str
    mode: str
    trajectories_searched: int
    states_matched: int
    states: List[StateMatch]
    trajectory_id: Optional[str] = None
    truncated: Optional[str] = None


@dataclass(frozen=True)
class ContextSpan:
    """States ``start_state`` to ``end_state`` (inclusive, 0-based) of a trajectory."""

    trajectory_id: str
    start_state: int
    end_state: int


@dataclass(frozen=True)
class RenderedSpan:
    trajectory_id: str
    start_state: int
    end_state: int
    states_shown: int
    lines_cut: int


@dataclass(frozen=True)
class RenderedContext:
    """A note and spans rendered within ``token_budget`` tokens (never more)."""

    context: str
    tokens: int
    token_budget: int
    note_cut: bool
    spans: List[RenderedSpan]


@dataclass(frozen=True)
class InspectedRecall:
    """Recall + inspection: the note and spans chosen, the trajectories shortlisted and
    the rendered context."""

    note: str
    spans: List[ContextSpan]
    shortlist: List[str]
    context: RenderedContext
    recall_ms: float = 0.0
    inspect_ms: float = 0.0
    render_ms: float = 0.0
    total_ms: float = 0.0


@dataclass(frozen=True)
class AgentStep:
    step: int
    tool: str
    args: Any = None
    model_ms: float = 0.0
    tool_ms: float = 0.0
    result_chars: int = 0
    error: Optional[str] = None


@dataclass(frozen=True)
class AgentRun:
    """The agent controller's answer: ``mode`` is ``agent``, or ``fallback`` with
    ``fallback_reason`` saying why (no model configured, a failure, the time budget)."""

    mode: str
    note: str
    spans: List[ContextSpan]
    context: str
    context_tokens: int
    steps: List[AgentStep]
    model_calls: int
    elapsed_ms: float
    fallback_reason: Optional[str] = None
    model: Optional[str] = None


# ---------------------------------------------------------------------------------------
# JSON <-> dataclasses, driven by the field annotations (so a new type is just a class).


class ShapeError(ValueError):
    """A response body that does not have the documented shape."""


@functools.lru_cache(maxsize=None)
def _hints(cls: type) -> Dict[str, Any]:
    return typing.get_type_hints(cls)


def parse(tp: Any, value: Any) -> Any:
    """Builds ``tp`` (a dataclass, ``List[...]``, ``Dict[str, ...]``, ``Optional[...]`` or a
    scalar) from decoded JSON. Unknown object keys are ignored."""
    if value is None:
        return None
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if origin is Union:
        inner = [a for a in args if a is not type(None)]
        return parse(inner[0], value) if len(inner) == 1 else value
    if origin in (list, List):
        if not isinstance(value, list):
            raise ShapeError(f"expected a list, got {type(value).__name__}")
        return [parse(args[0], v) for v in value] if args else list(value)
    if origin in (dict, Dict):
        if not isinstance(value, dict):
            raise ShapeError(f"expected an object, got {type(value).__name__}")
        return {k: parse(args[1], v) for k, v in value.items()} if args else dict(value)
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        if not isinstance(value, dict):
            raise ShapeError(f"expected an object for {tp.__name__}, got {type(value).__name__}")
        hints = _hints(tp)
        kwargs = {f.name: parse(hints[f.name], value[f.name])
                  for f in dataclasses.fields(tp) if f.name in value and f.init}
        try:
            return tp(**kwargs)
        except TypeError as e:
            raise ShapeError(f"{tp.__name__}: {e}") from None
    if tp is float:
        return float(value)
    if tp is int and not isinstance(value, bool):
        return int(value)
    return value


def parse_as(cls: Type[T], value: Any) -> T:
    return typing.cast(T, parse(cls, value))


def to_json(value: Any) -> Any:
    """Input for the wire: dataclasses become objects without their unset (``None``)
    fields; mappings and sequences are copied; anything else is left as it is."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: to_json(getattr(value, f.name))
                for f in dataclasses.fields(value) if getattr(value, f.name) is not None}
    if isinstance(value, Mapping):
        return {k: to_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_json(v) for v in value]
    return value


#: Every schema class, by the name the spec gives it (what the contract test reads).
SCHEMAS: Dict[str, type] = {
    c.__name__: c
    for c in (SpaceStats, IngestReport, Message, SessionInput, SessionRecord, SessionPage,
              GroupMessage, Hit, CardLine, Recall, Provenance, Unit, UnitPage, AgentState,
              TrajectoryInput, TrajectoryRecord, TrajectorySummary, FactVersion, FactHistory,
              Evidence, Style, ProfileFact, SpeakerProfile, Timings, ForgotMemory, ForgotPartition, Health, Ready, Me,
              FactSubject, StepLine, ManifestEntry, Manifest, TrajectoryOverview, StateView,
              SpanView, MatchLine, StateMatch, Matches, ContextSpan, RenderedSpan,
              RenderedContext, InspectedRecall, AgentStep, AgentRun, ListScore, HitExplanation,
              RecallExplanation, EntitySummary, EntityMention, EntityRelation, TimelineEntry,
              EntityDetail, HitPart, Warning, KeyInfo, NewKey)
}
