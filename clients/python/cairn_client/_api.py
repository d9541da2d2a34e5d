"""One builder per route: arguments -> :class:`Call` (request + parser + safety).

``ROUTES`` maps each ``"METHOD /path"`` of ``openapi.json`` to the builder (and so the
client method) that serves it; ``tests/test_contract.py`` fails when the spec has a route
that is not here. Adding a route: write its builder under ``@route(...)``, then add one
line to each client class in ``client.py`` (``name = _sync(_api.name)`` and
``name = _async(_api.name)``).
"""

from __future__ import annotations

import dataclasses
import json as _json
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, Sequence, Type, TypeVar, Union

import httpx

from . import types as t
from ._core import IDEMPOTENCY_HEADER, REPLAYED_HEADER, Call, Safety, idempotency_key, path

T = TypeVar("T")
F = TypeVar("F", bound=Callable[..., Any])

#: ``"METHOD /path"`` -> builder name (= client method name).
ROUTES: Dict[str, str] = {}


def route(*specs: str) -> Callable[[F], F]:
    """Registers a builder as the client method of these routes."""

    def register(fn: F) -> F:
        for spec in specs:
            if spec in ROUTES:
                raise RuntimeError(f"route {spec} registered twice")
            ROUTES[spec] = fn.__name__
        fn.__cairn_routes__ = specs  # type: ignore[attr-defined]
        return fn

    return register


def _json_body(cls: Type[T]) -> Callable[[httpx.Response], T]:
    return lambda r: t.parse_as(cls, r.json())


def _field(name: str, conv: Callable[[Any], T]) -> Callable[[httpx.Response], T]:
    return lambda r: conv(r.json()[name])


def _report(r: httpx.Response) -> t.IngestReport:
    report = t.parse_as(t.IngestReport, r.json())
    replayed = r.headers.get(REPLAYED_HEADER, "").strip().lower() == "true"
    return dataclasses.replace(report, replayed=replayed)


def _call(method: str, template: str, parse: Callable[[httpx.Response], T],
          safety: Safety = Safety.READ, **segments: Any) -> Call[T]:
    return Call(method, template, path(template, **segments), parse, safety)


def _write(template: str, body: Any, key: Optional[str], **segments: Any) -> Call[t.IngestReport]:
    """A POST write: carries an idempotency key, sent unchanged on every retry."""
    c = _call("POST", template, _report, Safety.IDEMPOTENT, **segments)
    c.json = body
    c.headers[IDEMPOTENCY_HEADER] = idempotency_key(key)
    return c


def _opts(**kw: Any) -> Dict[str, Any]:
    return {k: t.to_json(v) for k, v in kw.items() if v is not None}


# ---- service ---------------------------------------------------------------------------

@route("GET /v1/health")
def health() -> Call[t.Health]:
    """Liveness: the process is up (no key needed)."""
    return _call("GET", "/v1/health", _json_body(t.Health))


@route("GET /v1/ready")
def ready() -> Call[t.Ready]:
    """Readiness: the store answers reads (503 ``not_ready`` otherwise)."""
    return _call("GET", "/v1/ready", _json_body(t.Ready))


@route("GET /v1/openapi.json")
def openapi() -> Call[Dict[str, Any]]:
    """The server's OpenAPI document."""
    return _call("GET", "/v1/openapi.json", lambda r: dict(r.json()))


@route("POST /mcp")
def mcp(message: Mapping[str, Any]) -> Call[Optional[Dict[str, Any]]]:
    """One JSON-RPC message to the MCP endpoint (stateless streamable HTTP); the JSON-RPC
    answer, or ``None`` for a notification. An MCP SDK is the usual way to talk MCP; this
    is for a quick tool call with the client's key and retries."""
    c = _call("POST", "/mcp", lambda r: r.json() if r.content else None, Safety.UNSAFE)
    c.json = dict(message)
    c.headers["Accept"] = "application/json, text/event-stream"
    return c


# ---- spaces ----------------------------------------------------------------------------

@route("GET /v1/spaces")
def spaces() -> Call[List[str]]:
    """The spaces this key may see."""
    return _call("GET", "/v1/spaces", _field("spaces", list))


@route("GET /v1/me")
def me() -> Call[t.Me]:
    """Who the key is: admin or not, read-only or not, the spaces it sees and is for."""
    return _call("GET", "/v1/me", _json_body(t.Me))


# ---- keys (the admin key's) ------------------------------------------------------------

@route("POST /v1/keys")
def create_key(spaces: Sequence[str], *, read_only: bool = False, label: Optional[str] = None,
               partition: Optional[Mapping[str, Any]] = None) -> Call[t.NewKey]:
    """Makes a key for ``spaces`` (the admin key only); its ``token`` is in this answer
    alone. With ``partition`` (``{"user_id": "u1"}``) the key is pinned to that end user:
    everything it reads is theirs and everything it writes is tagged with it."""
    c = _call("POST", "/v1/keys", _json_body(t.NewKey), Safety.UNSAFE)
    c.json = _opts(spaces=list(spaces), read_only=read_only, label=label,
                   partition=None if partition is None else dict(partition))
    return c


@route("GET /v1/keys")
def keys() -> Call[List[t.KeyInfo]]:
    """Every key, revoked ones included, never with its token (the admin key only)."""
    return _call("GET", "/v1/keys", lambda r: [t.parse_as(t.KeyInfo, k) for k in r.json()])


@route("DELETE /v1/keys/{id}")
def revoke_key(key_id: str) -> Call[None]:
    """Revokes a key by id (the admin key only); it stops working on its next request."""
    return _call("DELETE", "/v1/keys/{id}", lambda r: None, Safety.UNSAFE, id=key_id)


@route("POST /v1/spaces")
def create_space(name: str) -> Call[bool]:
    """Creates a space: True if created, False if it existed (so repeating is safe)."""
    c = _call("POST", "/v1/spaces", _field("created", bool))
    c.json = {"name": name}
    return c


@route("DELETE /v1/spaces/{space}")
def delete_space(space: str) -> Call[None]:
    """Forgets a space: every session, unit, index entry and cached vector."""
    return _call("DELETE", "/v1/spaces/{space}", lambda r: None, Safety.UNSAFE, space=space)


@route("GET /v1/stats", "GET /v1/spaces/{space}/stats")
def stats(space: Optional[str] = None) -> Call[List[t.SpaceStats]]:
    """Counts of every visible space, or (``space`` given) of that one, as a list of one."""
    if space is None:
        return _call("GET", "/v1/stats",
                     lambda r: [t.parse_as(t.SpaceStats, s) for s in r.json()["spaces"]])
    return _call("GET", "/v1/spaces/{space}/stats",
                 lambda r: [t.parse_as(t.SpaceStats, r.json())], space=space)


# ---- ingest ----------------------------------------------------------------------------

SessionLike = Union[t.SessionInput, Mapping[str, Any]]
MessageLike = Union[t.Message, Mapping[str, Any]]


@route("POST /v1/spaces/{space}/sessions")
def ingest_session(space: str, session: SessionLike, *,
                   idempotency_key: Optional[str] = None) -> Call[t.IngestReport]:
    """Stores a session (the JSONL line shape); a stored id accepts only appended
    messages (else 409 ``conflict``)."""
    return _write("/v1/spaces/{space}/sessions", t.to_json(session), idempotency_key, space=space)


@route("POST /v1/spaces/{space}/sessions/batch")
def ingest_sessions(space: str, sessions: Iterable[SessionLike], *,
                    idempotency_key: Optional[str] = None) -> Call[t.IngestReport]:
    """Stores sessions in one batch, all validated before any is written."""
    body = {"sessions": [t.to_json(s) for s in sessions]}
    return _write("/v1/spaces/{space}/sessions/batch", body, idempotency_key, space=space)


@route("POST /v1/spaces/{space}/messages")
def add_messages(space: str, session_id: str, messages: Sequence[MessageLike], *,
                 occurred_at: Optional[str] = None, group: Optional[str] = None,
                 metadata: Optional[Mapping[str, Any]] = None,
                 idempotency_key: Optional[str] = None) -> Call[t.IngestReport]:
    """Mem0's ``add``: appends messages to a session, creating it on first use."""
    body = {"session_id": session_id, "messages": [t.to_json(m) for m in messages],
            **_opts(occurred_at=occurred_at, group=group, metadata=metadata)}
    return _write("/v1/spaces/{space}/messages", body, idempotency_key, space=space)


@route("POST /v1/spaces/{space}/group-messages")
def add_group_messages(space: str, messages: Sequence[Union[t.GroupMessage, Mapping[str, Any]]], *,
                       idempotency_key: Optional[str] = None) -> Call[t.IngestReport]:
    """Group-chat messages ``{speaker, group, time, text}``; each group's day is a session."""
    body = {"messages": [t.to_json(m) for m in messages]}
    return _write("/v1/spaces/{space}/group-messages", body, idempotency_key, space=space)


@route("POST /v1/spaces/{space}/trajectories")
def insert_trajectories(space: str, trajectories: Iterable[Union[t.TrajectoryInput, Mapping[str, Any]]], *,
                        idempotency_key: Optional[str] = None) -> Call[t.IngestReport]:
    """Agent runs, kept verbatim; slices, events and a note are derived from each."""
    body = {"trajectories": [t.to_json(x) for x in trajectories]}
    return _write("/v1/spaces/{space}/trajectories", body, idempotency_key, space=space)


@route("POST /v1/spaces/{space}/import")
def import_(space: str, jsonl: Union[str, bytes], *,
            idempotency_key: Optional[str] = None) -> Call[t.IngestReport]:
    """Restores an export of this space (JSONL of records, as ``export`` writes them)."""
    c = _write("/v1/spaces/{space}/import", None, idempotency_key, space=space)
    c.content = jsonl.encode() if isinstance(jsonl, str) else bytes(jsonl)
    c.headers["Content-Type"] = "application/x-ndjson"
    return c


# ---- recall ----------------------------------------------------------------------------

@route("POST /v1/spaces/{space}/recall")
def recall(space: str, query: str, *, top_k: Optional[int] = None,
           token_budget: Optional[int] = None, format: Optional[str] = None,
           as_of: Optional[str] = None, since: Optional[str] = None,
           sessions: Optional[Sequence[str]] = None, speakers: Optional[Sequence[str]] = None,
           groups: Optional[Sequence[str]] = None, kinds: Optional[Sequence[str]] = None,
           quotas: Optional[Mapping[str, int]] = None,
           filter: Optional[Mapping[str, Any]] = None,
           min_relevance: Optional[float] = None,
           explain: Optional[bool] = None) -> Call[t.Recall]:
    """Ranked, cited evidence for ``query``, packed into ``token_budget`` tokens;
    when no hit reaches ``min_relevance`` (cosine, -1..1; the server's stock floor when
    not given, -1 turns it off) there are none and ``no_relevant_memory`` is true. ``explain=True`` adds why each hit scored what it
    did and what packing did."""
    c = _call("POST", "/v1/spaces/{space}/recall", _json_body(t.Recall), space=space)
    c.json = {"query": query, **_opts(
        top_k=top_k, token_budget=token_budget, format=format, as_of=as_of, since=since,
        sessions=sessions, speakers=speakers, groups=groups, kinds=kinds, quotas=quotas,
        filter=filter, min_relevance=min_relevance, explain=explain)}
    return c


# ---- sessions --------------------------------------------------------------------------

def _page_params(limit: int, offset: int, filter: Optional[Mapping[str, Any]], **more: Any) -> Dict[str, Any]:
    return {"limit": limit, "offset": offset, **_scope(filter, **more)}


def _scope(filter: Optional[Mapping[str, Any]], **more: Any) -> Dict[str, Any]:
    """Query parameters of a read's scope: ``filter`` as JSON text (the server takes it so),
    the rest as they are."""
    params: Dict[str, Any] = _opts(**more)
    if filter is not None:
        params["filter"] = _json.dumps(t.to_json(filter))
    return params


@route("GET /v1/spaces/{space}/sessions")
def sessions(space: str, *, limit: int = 50, offset: int = 0,
             filter: Optional[Mapping[str, Any]] = None) -> Call[t.SessionPage]:
    """Sessions exactly as ingested, in ingest order, optionally filtered."""
    c = _call("GET", "/v1/spaces/{space}/sessions", _json_body(t.SessionPage), space=space)
    c.params = _page_params(limit, offset, filter)
    return c


@route("GET /v1/spaces/{space}/sessions/{session}")
def session(space: str, session_id: str) -> Call[t.SessionRecord]:
    return _call("GET", "/v1/spaces/{space}/sessions/{session}", _json_body(t.SessionRecord),
                 space=space, session=session_id)


def _units(r: httpx.Response) -> List[t.Unit]:
    return [t.parse_as(t.Unit, u) for u in r.json()["units"]]


@route("GET /v1/spaces/{space}/sessions/{session}/units")
def session_units(space: str, session_id: str) -> Call[List[t.Unit]]:
    """Every unit derived from a session (turns, rounds, episode, facts, speaker
    statistics), in write order; 404 when the session is not stored."""
    return _call("GET", "/v1/spaces/{space}/sessions/{session}/units", _units,
                 space=space, session=session_id)


def _removed(r: httpx.Response) -> int:
    return int(r.json()["removed_units"])


@route("DELETE /v1/spaces/{space}/sessions/{session}")
def forget_session(space: str, session_id: str) -> Call[int]:
    """Forgets a session and everything derived from it; the units removed."""
    return _call("DELETE", "/v1/spaces/{space}/sessions/{session}", _removed, Safety.UNSAFE,
                 space=space, session=session_id)


@route("DELETE /v1/spaces/{space}/sessions/{session}/messages/{message}")
def forget_message(space: str, session_id: str, message_id: str, *,
                   exchange: bool = False) -> Call[int]:
    """Forgets one message (the session is re-derived without it); the units removed. With
    ``exchange=True`` the reply to it goes too: the next message, when the other party
    wrote it (so "Congratulations on the move to Lisbon!" goes with "I moved to Lisbon")."""
    c = _call("DELETE", "/v1/spaces/{space}/sessions/{session}/messages/{message}", _removed,
              Safety.UNSAFE, space=space, session=session_id, message=message_id)
    if exchange:
        c.params = {"exchange": "true"}
    return c


@route("POST /v1/spaces/{space}/partitions/forget")
def forget_partition(space: str, partition: Mapping[str, Any]) -> Call[t.ForgotPartition]:
    """Forgets an end user (a data-protection request, Mem0's ``delete_all(user_id=...)``):
    every session whose metadata holds the partition's values (``{"user_id": "u1"}``; keys
    ``user_id``, ``agent_id``, ``namespace``) and everything derived from them. A partition
    holding no session answers zeros, not an error, so repeating it is harmless."""
    c = _call("POST", "/v1/spaces/{space}/partitions/forget", _json_body(t.ForgotPartition),
              Safety.UNSAFE, space=space)
    c.json = {"partition": dict(partition)}
    return c


# ---- memories --------------------------------------------------------------------------

@route("GET /v1/spaces/{space}/memories")
def memories(space: str, *, limit: int = 50, offset: int = 0, kind: Optional[str] = None,
             session_id: Optional[str] = None, speaker: Optional[str] = None,
             since: Optional[str] = None, until: Optional[str] = None,
             filter: Optional[Mapping[str, Any]] = None,
             as_of: Optional[str] = None) -> Call[t.UnitPage]:
    """Memories in time order, filtered and paginated: by default one per message, fact and
    trajectory (what a user thinks of as a memory); ``kind="round"`` (or another unit kind)
    lists that derived kind, ``kind="all"`` every unit; ``as_of``: those seen then."""
    c = _call("GET", "/v1/spaces/{space}/memories", _json_body(t.UnitPage), space=space)
    c.params = _page_params(limit, offset, filter, kind=kind, session_id=session_id,
                            speaker=speaker, since=since, until=until, as_of=as_of)
    return c


@route("GET /v1/spaces/{space}/memories/{id}")
def memory(space: str, memory_id: str) -> Call[t.Unit]:
    return _call("GET", "/v1/spaces/{space}/memories/{id}", _json_body(t.Unit),
                 space=space, id=memory_id)


@route("DELETE /v1/spaces/{space}/memories/{id}")
def delete_memory(space: str, memory_id: str) -> Call[t.ForgotMemory]:
    """Forgets the messages a memory came from (the whole session for an episode)."""
    return _call("DELETE", "/v1/spaces/{space}/memories/{id}", _json_body(t.ForgotMemory),
                 Safety.UNSAFE, space=space, id=memory_id)


# ---- export ----------------------------------------------------------------------------

@route("GET /v1/spaces/{space}/export")
def export(space: str) -> Call[str]:
    """JSONL: one session record per line, then one trajectory record per line."""
    c = _call("GET", "/v1/spaces/{space}/export", lambda r: r.text, space=space)
    c.headers["Accept"] = "application/x-ndjson"
    return c


# ---- facts and people ------------------------------------------------------------------

@route("GET /v1/spaces/{space}/history")
def history(space: str, subject: str, *, as_of: Optional[str] = None,
            filter: Optional[Mapping[str, Any]] = None) -> Call[t.FactHistory]:
    """The versions of a fact subject, oldest first (the last is current), among what
    ``filter`` (e.g. ``{"user_id": "u1"}``) and ``as_of`` see."""
    c = _call("GET", "/v1/spaces/{space}/history", _json_body(t.FactHistory), space=space)
    c.params = {"subject": subject, **_scope(filter, as_of=as_of)}
    return c


@route("GET /v1/spaces/{space}/subjects")
def subjects(space: str, *, as_of: Optional[str] = None,
             filter: Optional[Mapping[str, Any]] = None) -> Call[List[t.FactSubject]]:
    """Every subject the space holds versioned facts about (as of ``as_of``, default
    now; of the sessions ``filter`` admits): the subject ``history`` takes, how many
    statements, the newest value."""
    c = _call("GET", "/v1/spaces/{space}/subjects",
              lambda r: [t.parse_as(t.FactSubject, x) for x in r.json()["subjects"]], space=space)
    c.params = _scope(filter, as_of=as_of)
    return c


@route("GET /v1/spaces/{space}/entities")
def entities(space: str, *, q: Optional[str] = None, as_of: Optional[str] = None,
             filter: Optional[Mapping[str, Any]] = None) -> Call[List[t.EntitySummary]]:
    """The people, places, organizations and things the space names, most linked first
    (``q``: only names or aliases containing it)."""
    c = _call("GET", "/v1/spaces/{space}/entities",
              lambda r: [t.parse_as(t.EntitySummary, x) for x in r.json()["entities"]], space=space)
    c.params = _scope(filter, q=q, as_of=as_of)
    return c


@route("GET /v1/spaces/{space}/entities/{name}")
def entity(space: str, name: str, *, as_of: Optional[str] = None,
           filter: Optional[Mapping[str, Any]] = None) -> Call[t.EntityDetail]:
    """One entity by name or alias, with its mentions, relations and timeline."""
    c = _call("GET", "/v1/spaces/{space}/entities/{name}", _json_body(t.EntityDetail),
              space=space, name=name)
    c.params = _scope(filter, as_of=as_of)
    return c


@route("GET /v1/spaces/{space}/speakers")
def speakers(space: str, *, as_of: Optional[str] = None,
             filter: Optional[Mapping[str, Any]] = None) -> Call[List[str]]:
    c = _call("GET", "/v1/spaces/{space}/speakers", _field("speakers", list), space=space)
    c.params = _scope(filter, as_of=as_of)
    return c


@route("GET /v1/spaces/{space}/profiles/{speaker}")
def profile(space: str, speaker: str, *, as_of: Optional[str] = None,
            filter: Optional[Mapping[str, Any]] = None) -> Call[t.SpeakerProfile]:
    """What the space shows of a person, as of ``as_of``, from the sessions ``filter``
    admits (a name several users' sessions know needs a filter: whose)."""
    c = _call("GET", "/v1/spaces/{space}/profiles/{speaker}", _json_body(t.SpeakerProfile),
              space=space, speaker=speaker)
    c.params = _scope(filter, as_of=as_of)
    return c


# ---- trajectories ----------------------------------------------------------------------

@route("GET /v1/spaces/{space}/trajectories")
def trajectories(space: str) -> Call[List[t.TrajectorySummary]]:
    """The manifest: goal, outcome, steps and URLs of every trajectory."""
    return _call("GET", "/v1/spaces/{space}/trajectories",
                 lambda r: [t.parse_as(t.TrajectorySummary, x) for x in r.json()["trajectories"]],
                 space=space)


@route("GET /v1/spaces/{space}/trajectories/{id}")
def trajectory(space: str, trajectory_id: str) -> Call[t.TrajectoryRecord]:
    return _call("GET", "/v1/spaces/{space}/trajectories/{id}", _json_body(t.TrajectoryRecord),
                 space=space, id=trajectory_id)


@route("GET /v1/spaces/{space}/trajectories/{id}/states/{index}")
def trajectory_state(space: str, trajectory_id: str, index: int) -> Call[t.AgentState]:
    return _call("GET", "/v1/spaces/{space}/trajectories/{id}/states/{index}",
                 _json_body(t.AgentState), space=space, id=trajectory_id, index=index)


@route("DELETE /v1/spaces/{space}/trajectories/{id}")
def forget_trajectory(space: str, trajectory_id: str) -> Call[int]:
    return _call("DELETE", "/v1/spaces/{space}/trajectories/{id}", _removed, Safety.UNSAFE,
                 space=space, id=trajectory_id)


@route("GET /v1/spaces/{space}/trajectories/{id}/units")
def trajectory_units(space: str, trajectory_id: str) -> Call[List[t.Unit]]:
    """The slices (one per state), events (one per step) and note derived from a
    trajectory, in write order; 404 when it is not stored."""
    return _call("GET", "/v1/spaces/{space}/trajectories/{id}/units", _units,
                 space=space, id=trajectory_id)


# ---- trajectory inspection (every answer bounded; its cuts said in ``truncated``) ------

@route("GET /v1/spaces/{space}/trajectory-manifest")
def trajectory_manifest(space: str, *, form: Optional[str] = None, offset: Optional[int] = None,
                        limit: Optional[int] = None) -> Call[t.Manifest]:
    """A page of the manifest in insert order: goal, start URL, outcome and state count;
    ``form="full"`` adds every state's URL, title, thought and action. Default page: 200
    concise or 25 full entries (at most 1000); ``next_offset`` says where the next starts."""
    c = _call("GET", "/v1/spaces/{space}/trajectory-manifest", _json_body(t.Manifest), space=space)
    c.params = _opts(form=form, offset=offset, limit=limit)
    return c


@route("GET /v1/spaces/{space}/trajectories/{id}/summary")
def trajectory_summary(space: str, trajectory_id: str) -> Call[t.TrajectoryOverview]:
    """Goal, start URL, outcome and a line per state (at most 120)."""
    return _call("GET", "/v1/spaces/{space}/trajectories/{id}/summary",
                 _json_body(t.TrajectoryOverview), space=space, id=trajectory_id)


@route("GET /v1/spaces/{space}/trajectories/{id}/states/{index}/view")
def trajectory_state_view(space: str, trajectory_id: str, index: int, *,
                          max_chars: Optional[int] = None) -> Call[t.StateView]:
    """One state for reading: title, the action with the element it names, and the page
    cut in the middle to ``max_chars`` characters (default 6000, at most 200000)."""
    c = _call("GET", "/v1/spaces/{space}/trajectories/{id}/states/{index}/view",
              _json_body(t.StateView), space=space, id=trajectory_id, index=index)
    c.params = _opts(max_chars=max_chars)
    return c


@route("GET /v1/spaces/{space}/trajectories/{id}/span")
def trajectory_span(space: str, trajectory_id: str, start: int, end: int, *,
                    max_chars: Optional[int] = None) -> Call[t.SpanView]:
    """States ``start`` to ``end`` (inclusive; at most 10 per call), each page cut to
    ``max_chars`` (default 2500)."""
    c = _call("GET", "/v1/spaces/{space}/trajectories/{id}/span", _json_body(t.SpanView),
              space=space, id=trajectory_id)
    c.params = {"start": start, "end": end, **_opts(max_chars=max_chars)}
    return c


@route("GET /v1/spaces/{space}/trajectories/{id}/match")
def trajectory_match(space: str, trajectory_id: str, pattern: str, *, mode: Optional[str] = None,
                     limit: Optional[int] = None) -> Call[t.Matches]:
    """The states of one trajectory matching ``pattern``: ``mode="regex"`` (default, case
    insensitive) or ``"words"``; at most ``limit`` states (default 30)."""
    c = _call("GET", "/v1/spaces/{space}/trajectories/{id}/match", _json_body(t.Matches),
              space=space, id=trajectory_id)
    c.params = {"pattern": pattern, **_opts(mode=mode, limit=limit)}
    return c


@route("GET /v1/spaces/{space}/trajectory-search")
def trajectory_search(space: str, pattern: str, *, mode: Optional[str] = None,
                      limit: Optional[int] = None) -> Call[t.Matches]:
    """(trajectory, state) pairs of the whole space holding ``pattern``: ``mode="words"``
    (default, states holding most words first) or ``"regex"``; at most ``limit`` (20)."""
    c = _call("GET", "/v1/spaces/{space}/trajectory-search", _json_body(t.Matches), space=space)
    c.params = {"pattern": pattern, **_opts(mode=mode, limit=limit)}
    return c


SpanLike = Union[t.ContextSpan, Mapping[str, Any]]


@route("POST /v1/spaces/{space}/trajectory-context")
def trajectory_context(space: str, spans: Sequence[SpanLike], *, note: Optional[str] = None,
                       token_budget: Optional[int] = None,
                       query: Optional[str] = None) -> Call[t.RenderedContext]:
    """Renders ``note`` then each span (most important first) within ``token_budget``
    tokens (default 2000, never exceeded); lines holding the words of ``query`` are kept
    first when a page must be cut. A read: nothing is written."""
    c = _call("POST", "/v1/spaces/{space}/trajectory-context", _json_body(t.RenderedContext),
              space=space)
    c.json = {"spans": [t.to_json(x) for x in spans],
              **_opts(note=note, token_budget=token_budget, query=query)}
    return c


@route("POST /v1/spaces/{space}/trajectory-inspect")
def trajectory_inspect(space: str, question: str, *, token_budget: Optional[int] = None,
                       top_k: Optional[int] = None,
                       trajectories: Optional[int] = None) -> Call[t.InspectedRecall]:
    """Recall + inspection, no LLM: recall shortlists ``trajectories`` runs (default 3)
    from its ``top_k`` hits (20); the states it cites and each run's best word-matching
    state become spans, rendered within ``token_budget`` (2000). A read."""
    c = _call("POST", "/v1/spaces/{space}/trajectory-inspect", _json_body(t.InspectedRecall),
              space=space)
    c.json = {"question": question,
              **_opts(token_budget=token_budget, top_k=top_k, trajectories=trajectories)}
    return c


@route("POST /v1/spaces/{space}/trajectory-agent")
def trajectory_agent(space: str, question: str, *, max_steps: Optional[int] = None,
                     time_budget_ms: Optional[int] = None, token_budget: Optional[int] = None,
                     fallback: Optional[str] = None) -> Call[t.AgentRun]:
    """Runs the agent controller with the server's LLM (``[llm]``), bounded by
    ``max_steps`` model calls (default 8) and ``time_budget_ms`` (120000); without a
    model, or when it fails, the answer is the ``fallback`` (``"recall"`` or
    ``"recall_inspection"``). It writes nothing, but a run costs model calls and may
    outlast the client's ``timeout`` (60 s): it is retried only when the server surely
    did not start it (connection refused, 429), never after a timeout."""
    c = _call("POST", "/v1/spaces/{space}/trajectory-agent", _json_body(t.AgentRun),
              Safety.UNSAFE, space=space)
    c.json = {"question": question, **_opts(max_steps=max_steps, time_budget_ms=time_budget_ms,
                                            token_budget=token_budget, fallback=fallback)}
    return c
