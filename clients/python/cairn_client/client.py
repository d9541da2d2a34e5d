"""The client: one method per route, typed results, errors as :class:`CairnError`."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence
from urllib.parse import quote

import httpx

JSON = Dict[str, Any]


class CairnError(Exception):
    """An error answered by the server: RFC 9457 problem details with a stable ``code``."""

    def __init__(self, status: int, code: str, detail: str, field: Optional[str] = None):
        super().__init__(f"{status} {code}: {detail}")
        self.status = status
        self.code = code
        self.detail = detail
        self.field = field


@dataclass(frozen=True)
class Hit:
    unit_id: str
    kind: str
    text: str
    score: float
    session_id: Optional[str]
    turn_ids: List[str]
    speakers: List[str]
    occurred_at: Optional[str]
    #: For a fact replaced by a later statement: the unit of the current version.
    superseded_by: Optional[str] = None
    #: For trajectory units: the trajectory and its states ``[first, end)``.
    trajectory_id: Optional[str] = None
    states: Optional[List[int]] = None

    @classmethod
    def from_json(cls, d: JSON) -> "Hit":
        return cls(
            unit_id=d["unit_id"],
            kind=d["kind"],
            text=d["text"],
            score=float(d["score"]),
            session_id=d.get("session_id"),
            turn_ids=list(d.get("turn_ids", [])),
            speakers=list(d.get("speakers", [])),
            occurred_at=d.get("occurred_at"),
            superseded_by=d.get("superseded_by"),
            trajectory_id=d.get("trajectory_id"),
            states=list(d["states"]) if d.get("states") is not None else None,
        )


@dataclass(frozen=True)
class Recall:
    hits: List[Hit]
    context: str
    context_tokens: int
    hits_cut: int
    context_unit_ids: List[str]
    timings: Dict[str, float]

    @classmethod
    def from_json(cls, d: JSON) -> "Recall":
        return cls(
            hits=[Hit.from_json(h) for h in d["hits"]],
            context=d["context"],
            context_tokens=int(d["context_tokens"]),
            hits_cut=int(d["hits_cut"]),
            context_unit_ids=list(d["context_unit_ids"]),
            timings=dict(d.get("timings", {})),
        )


@dataclass(frozen=True)
class IngestReport:
    sessions: int
    unchanged: int
    messages_added: int
    units: int
    vectors_computed: int
    vectors_cached: int
    trajectories: int = 0

    @classmethod
    def from_json(cls, d: JSON) -> "IngestReport":
        return cls(**{k: int(d.get(k, 0)) for k in cls.__dataclass_fields__})


@dataclass(frozen=True)
class SpaceStats:
    space: str
    sessions: int
    messages: int
    units: int
    units_by_kind: Dict[str, int] = field(default_factory=dict)

    @classmethod
    def from_json(cls, d: JSON) -> "SpaceStats":
        return cls(
            space=d["space"],
            sessions=int(d["sessions"]),
            messages=int(d["messages"]),
            units=int(d["units"]),
            units_by_kind=dict(d.get("units_by_kind", {})),
        )


@dataclass(frozen=True)
class Page:
    """A page of a listing; ``items`` are plain dicts (sessions or memory units)."""

    items: List[JSON]
    total: int
    offset: int
    next_offset: Optional[int]

    @classmethod
    def from_json(cls, d: JSON) -> "Page":
        return cls(d["items"], int(d["total"]), int(d["offset"]), d.get("next_offset"))


def _seg(s: str) -> str:
    return quote(s, safe="")


class Cairn:
    """A Cairn server. ``api_key`` is a key from ``cairn keys create`` or the admin key."""

    def __init__(
        self,
        base_url: str = "http://127.0.0.1:7700",
        api_key: Optional[str] = None,
        timeout: float = 60.0,
        client: Optional[httpx.Client] = None,
    ):
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._http = client or httpx.Client(base_url=base_url, headers=headers, timeout=timeout)

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> "Cairn":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def _call(self, method: str, path: str, **kw: Any) -> httpx.Response:
        r = self._http.request(method, path, **kw)
        if r.status_code >= 400:
            try:
                p = r.json()
            except ValueError:
                p = {"code": "http_error", "detail": r.text}
            raise CairnError(r.status_code, p.get("code", ""), p.get("detail", ""), p.get("field"))
        return r

    # service
    def health(self) -> JSON:
        return self._call("GET", "/v1/health").json()

    def ready(self) -> JSON:
        return self._call("GET", "/v1/ready").json()

    def openapi(self) -> JSON:
        return self._call("GET", "/v1/openapi.json").json()

    # spaces
    def spaces(self) -> List[str]:
        return list(self._call("GET", "/v1/spaces").json()["spaces"])

    def create_space(self, name: str) -> bool:
        """True if created, False if it existed."""
        return bool(self._call("POST", "/v1/spaces", json={"name": name}).json()["created"])

    def delete_space(self, space: str) -> None:
        self._call("DELETE", f"/v1/spaces/{_seg(space)}")

    def stats(self, space: Optional[str] = None) -> List[SpaceStats]:
        if space is None:
            return [SpaceStats.from_json(s) for s in self._call("GET", "/v1/stats").json()["spaces"]]
        return [SpaceStats.from_json(self._call("GET", f"/v1/spaces/{_seg(space)}/stats").json())]

    # ingest
    def ingest_session(self, space: str, session: Mapping[str, Any]) -> IngestReport:
        r = self._call("POST", f"/v1/spaces/{_seg(space)}/sessions", json=dict(session))
        return IngestReport.from_json(r.json())

    def ingest_sessions(self, space: str, sessions: Iterable[Mapping[str, Any]]) -> IngestReport:
        body = {"sessions": [dict(s) for s in sessions]}
        r = self._call("POST", f"/v1/spaces/{_seg(space)}/sessions/batch", json=body)
        return IngestReport.from_json(r.json())

    def add_messages(
        self,
        space: str,
        session_id: str,
        messages: Sequence[Mapping[str, Any]],
        *,
        occurred_at: Optional[str] = None,
        group: Optional[str] = None,
        metadata: Optional[Mapping[str, Any]] = None,
    ) -> IngestReport:
        """Mem0's ``add``: append messages to a session, creating it on first use."""
        body: JSON = {"session_id": session_id, "messages": [dict(m) for m in messages]}
        if occurred_at is not None:
            body["occurred_at"] = occurred_at
        if group is not None:
            body["group"] = group
        if metadata is not None:
            body["metadata"] = dict(metadata)
        r = self._call("POST", f"/v1/spaces/{_seg(space)}/messages", json=body)
        return IngestReport.from_json(r.json())

    def add_group_messages(self, space: str, messages: Sequence[Mapping[str, Any]]) -> IngestReport:
        """Group-chat messages ``{speaker, group, time, text}``; each group's day is a session."""
        body = {"messages": [dict(m) for m in messages]}
        r = self._call("POST", f"/v1/spaces/{_seg(space)}/group-messages", json=body)
        return IngestReport.from_json(r.json())

    # facts and people
    def history(self, space: str, subject: str, *, as_of: Optional[str] = None) -> JSON:
        """The versions of a fact subject, oldest first (the last is current)."""
        params: JSON = {"subject": subject}
        if as_of is not None:
            params["as_of"] = as_of
        return self._call("GET", f"/v1/spaces/{_seg(space)}/history", params=params).json()

    def speakers(self, space: str) -> List[str]:
        return list(self._call("GET", f"/v1/spaces/{_seg(space)}/speakers").json()["speakers"])

    def profile(self, space: str, speaker: str) -> JSON:
        return self._call("GET", f"/v1/spaces/{_seg(space)}/profiles/{_seg(speaker)}").json()

    # trajectories
    def insert_trajectories(self, space: str, trajectories: Iterable[Mapping[str, Any]]) -> IngestReport:
        body = {"trajectories": [dict(t) for t in trajectories]}
        r = self._call("POST", f"/v1/spaces/{_seg(space)}/trajectories", json=body)
        return IngestReport.from_json(r.json())

    def trajectories(self, space: str) -> List[JSON]:
        """The manifest: goal, outcome, steps and URLs of every trajectory."""
        return list(self._call("GET", f"/v1/spaces/{_seg(space)}/trajectories").json()["trajectories"])

    def trajectory(self, space: str, trajectory_id: str) -> JSON:
        return self._call("GET", f"/v1/spaces/{_seg(space)}/trajectories/{_seg(trajectory_id)}").json()

    def trajectory_state(self, space: str, trajectory_id: str, index: int) -> JSON:
        path = f"/v1/spaces/{_seg(space)}/trajectories/{_seg(trajectory_id)}/states/{index}"
        return self._call("GET", path).json()

    def forget_trajectory(self, space: str, trajectory_id: str) -> int:
        r = self._call("DELETE", f"/v1/spaces/{_seg(space)}/trajectories/{_seg(trajectory_id)}")
        return int(r.json()["removed_units"])

    # recall
    def recall(
        self,
        space: str,
        query: str,
        *,
        top_k: Optional[int] = None,
        token_budget: Optional[int] = None,
        format: Optional[str] = None,
        as_of: Optional[str] = None,
        since: Optional[str] = None,
        sessions: Optional[Sequence[str]] = None,
        speakers: Optional[Sequence[str]] = None,
        groups: Optional[Sequence[str]] = None,
        kinds: Optional[Sequence[str]] = None,
        quotas: Optional[Mapping[str, int]] = None,
        filter: Optional[Mapping[str, Any]] = None,
    ) -> Recall:
        body: JSON = {"query": query}
        opts = {
            "top_k": top_k,
            "token_budget": token_budget,
            "format": format,
            "as_of": as_of,
            "since": since,
            "quotas": dict(quotas) if quotas is not None else None,
            "sessions": list(sessions) if sessions is not None else None,
            "speakers": list(speakers) if speakers is not None else None,
            "groups": list(groups) if groups is not None else None,
            "kinds": list(kinds) if kinds is not None else None,
            "filter": dict(filter) if filter is not None else None,
        }
        body.update({k: v for k, v in opts.items() if v is not None})
        return Recall.from_json(self._call("POST", f"/v1/spaces/{_seg(space)}/recall", json=body).json())

    # sessions
    def sessions(
        self,
        space: str,
        *,
        limit: int = 50,
        offset: int = 0,
        filter: Optional[Mapping[str, Any]] = None,
    ) -> Page:
        params: JSON = {"limit": limit, "offset": offset}
        if filter is not None:
            params["filter"] = json.dumps(filter)
        return Page.from_json(self._call("GET", f"/v1/spaces/{_seg(space)}/sessions", params=params).json())

    def session(self, space: str, session_id: str) -> JSON:
        return self._call("GET", f"/v1/spaces/{_seg(space)}/sessions/{_seg(session_id)}").json()

    def forget_session(self, space: str, session_id: str) -> int:
        r = self._call("DELETE", f"/v1/spaces/{_seg(space)}/sessions/{_seg(session_id)}")
        return int(r.json()["removed_units"])

    def forget_message(self, space: str, session_id: str, message_id: str) -> int:
        path = f"/v1/spaces/{_seg(space)}/sessions/{_seg(session_id)}/messages/{_seg(message_id)}"
        return int(self._call("DELETE", path).json()["removed_units"])

    # memories
    def memories(
        self,
        space: str,
        *,
        limit: int = 50,
        offset: int = 0,
        kind: Optional[str] = None,
        session_id: Optional[str] = None,
        speaker: Optional[str] = None,
        since: Optional[str] = None,
        until: Optional[str] = None,
        filter: Optional[Mapping[str, Any]] = None,
    ) -> Page:
        params: JSON = {"limit": limit, "offset": offset}
        for k, v in (("kind", kind), ("session_id", session_id), ("speaker", speaker),
                     ("since", since), ("until", until)):
            if v is not None:
                params[k] = v
        if filter is not None:
            params["filter"] = json.dumps(filter)
        return Page.from_json(self._call("GET", f"/v1/spaces/{_seg(space)}/memories", params=params).json())

    def memory(self, space: str, memory_id: str) -> JSON:
        return self._call("GET", f"/v1/spaces/{_seg(space)}/memories/{_seg(memory_id)}").json()

    def delete_memory(self, space: str, memory_id: str) -> JSON:
        return self._call("DELETE", f"/v1/spaces/{_seg(space)}/memories/{_seg(memory_id)}").json()

    # export / import
    def export(self, space: str) -> str:
        """JSONL: one session record per line, then one trajectory record per line."""
        return self._call("GET", f"/v1/spaces/{_seg(space)}/export").text

    def import_(self, space: str, jsonl: str) -> IngestReport:
        r = self._call(
            "POST",
            f"/v1/spaces/{_seg(space)}/import",
            content=jsonl.encode(),
            headers={"Content-Type": "application/x-ndjson"},
        )
        return IngestReport.from_json(r.json())
