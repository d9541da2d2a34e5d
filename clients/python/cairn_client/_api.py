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
           filter: Optional[Mapping[str, Any]] = None) -> Call[t.Recall]:
    """Ranked, cited evidence for ``query``, packed into ``token_budget`` tokens."""
    c = _call("POST", "/v1/spaces/{space}/recall", _json_body(t.Recall), space=space)
    c.json = {"query": query, **_opts(
        top_k=top_k, token_budget=token_budget, format=format, as_of=as_of, since=since,
        sessions=sessions, speakers=speakers, groups=groups, kinds=kinds, quotas=quotas,
        filter=filter)}
    return c


# ---- sessions --------------------------------------------------------------------------

def _page_params(limit: int, offset: int, filter: Optional[Mapping[str, Any]], **more: Any) -> Dict[str, Any]:
    params: Dict[str, Any] = {"limit": limit, "offset": offset, **_opts(**more)}
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


def _removed(r: httpx.Response) -> int:
    return int(r.json()["removed_units"])


@route("DELETE /v1/spaces/{space}/sessions/{session}")
def forget_session(space: str, session_id: str) -> Call[int]:
    """Forgets a session and everything derived from it; the units removed."""
    return _call("DELETE", "/v1/spaces/{space}/sessions/{session}", _removed, Safety.UNSAFE,
                 space=space, session=session_id)


@route("DELETE /v1/spaces/{space}/sessions/{session}/messages/{message}")
def forget_message(space: str, session_id: str, message_id: str) -> Call[int]:
    """Forgets one message (the session is re-derived without it)."""
    return _call("DELETE", "/v1/spaces/{space}/sessions/{session}/messages/{message}", _removed,
                 Safety.UNSAFE, space=space, session=session_id, message=message_id)


# ---- memories --------------------------------------------------------------------------

@route("GET /v1/spaces/{space}/memories")
def memories(space: str, *, limit: int = 50, offset: int = 0, kind: Optional[str] = None,
             session_id: Optional[str] = None, speaker: Optional[str] = None,
             since: Optional[str] = None, until: Optional[str] = None,
             filter: Optional[Mapping[str, Any]] = None) -> Call[t.UnitPage]:
    """Memory units in time order, filtered and paginated."""
    c = _call("GET", "/v1/spaces/{space}/memories", _json_body(t.UnitPage), space=space)
    c.params = _page_params(limit, offset, filter, kind=kind, session_id=session_id,
                            speaker=speaker, since=since, until=until)
    return c


@route("GET /v1/spaces/{space}/memories/{id}")
def memory(space: str, memory_id: str) -> Call[t.Unit]:
    return _call("GET", "/v1/spaces/{space}/memories/{id}", _json_body(t.Unit),
                 space=space, id=memory_id)


@route("DELETE /v1/spaces/{space}/memories/{id}")
def delete_memory(space: str, memory_id: str) -> Call[t.MemoryDeleted]:
    """Forgets the messages a memory came from (the whole session for an episode)."""
    return _call("DELETE", "/v1/spaces/{space}/memories/{id}", _json_body(t.MemoryDeleted),
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
def history(space: str, subject: str, *, as_of: Optional[str] = None) -> Call[t.FactHistory]:
    """The versions of a fact subject, oldest first (the last is current)."""
    c = _call("GET", "/v1/spaces/{space}/history", _json_body(t.FactHistory), space=space)
    c.params = {"subject": subject, **_opts(as_of=as_of)}
    return c


@route("GET /v1/spaces/{space}/speakers")
def speakers(space: str) -> Call[List[str]]:
    return _call("GET", "/v1/spaces/{space}/speakers", _field("speakers", list), space=space)


@route("GET /v1/spaces/{space}/profiles/{speaker}")
def profile(space: str, speaker: str) -> Call[t.SpeakerProfile]:
    return _call("GET", "/v1/spaces/{space}/profiles/{speaker}", _json_body(t.SpeakerProfile),
                 space=space, speaker=speaker)


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
