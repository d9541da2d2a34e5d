"""LangGraph ``BaseStore`` on Cairn (``pip install 'cairn-client[langgraph]'``).

The mapping (README, "LangGraph"): a store lives in one Cairn space. Each item
``(namespace, key, value)`` is one session: its id is derived from namespace and key
(``lg:<sha256>``), its one message is the item's text (the ``index`` fields, by default
every top-level field as ``field: value`` lines), and its metadata carries the namespace,
the key, the JSON value and the times, under ``metadata.langgraph``, and the namespace
also as ``metadata.namespace``: the end-user partition Cairn keeps derived knowledge in
(a fact stated in one namespace never supersedes another namespace's, a profile never
mixes two). So:

- ``get`` reads the session by id; ``delete`` forgets it (with everything derived);
- ``put`` forgets the old session and ingests the new one (Cairn never edits a record);
- ``search`` with a ``query`` is a Cairn recall filtered to the namespace prefix, hits
  folded into their items (score: the best hit's); without one it lists the sessions of
  the prefix, newest first; ``filter`` is applied to values exactly as LangGraph's own
  stores do (equality and ``$eq $ne $gt $gte $lt $lte``), with plain equalities also sent
  to the server to narrow the candidates;
- ``list_namespaces`` reads the namespaces of the items (prefix, suffix, ``*`` wildcards,
  ``max_depth``);
- ``forget_namespace`` (not LangGraph's API: a data-protection request) forgets every
  item of a namespace and of the namespaces under it, as Cairn partition forgets (the
  namespace is the partition), so everything derived from them goes too.
"""

from __future__ import annotations

import hashlib
import json
import operator
from datetime import datetime, timezone
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple

from langgraph.store.base import (
    BaseStore,
    GetOp,
    Item,
    ListNamespacesOp,
    MatchCondition,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
    get_text_at_path,
)

from ._steps import Clients, Steps, call
from .errors import ApiError
from .types import ForgotPartition, SessionRecord

Namespace = Tuple[str, ...]
PAGE = 1000


def session_id(namespace: Namespace, key: str) -> str:
    """The Cairn session of an item: stable, short, and free of any character an id
    may not hold, whatever the namespace labels and the key are."""
    digest = hashlib.sha256(json.dumps([list(namespace), key]).encode()).hexdigest()
    return f"lg:{digest}"


def item_text(value: Dict[str, Any], fields: Optional[Sequence[str]]) -> str:
    """What Cairn indexes for an item: the given JSON paths (LangGraph's path syntax),
    or every top-level field as a ``field: value`` line."""
    if fields and list(fields) != ["$"]:
        parts = [text for f in fields for text in get_text_at_path(value, f)]
    else:
        parts = [f"{k}: {v if isinstance(v, str) else json.dumps(v, ensure_ascii=False)}"
                 for k, v in value.items()]
    text = "\n".join(p for p in parts if p.strip())
    return text or json.dumps(value, ensure_ascii=False, sort_keys=True)


def _now() -> str:
    return datetime.now(timezone.utc).isoformat()


def _is_scalar(v: Any) -> bool:
    return isinstance(v, (str, int, float, bool))


def _server_filter(prefix: Sequence[str], value_filter: Optional[Dict[str, Any]],
                   indexed_only: bool = False) -> Dict[str, Any]:
    """What Cairn can filter on exactly or as a superset: the namespace labels, and
    plain equalities on top-level value fields (the exact check runs on the client)."""
    f: Dict[str, Any] = {"langgraph.depth": {"gte": max(1, len(prefix))}}
    for i, label in enumerate(prefix):
        if label != "*":
            f[f"langgraph.labels.{i}"] = label
    if indexed_only:
        f["langgraph.indexed"] = True
    for k, v in (value_filter or {}).items():
        if "." in k or k.startswith("$"):
            continue
        if isinstance(v, dict) and set(v) == {"$eq"}:
            v = v["$eq"]
        if _is_scalar(v):
            f[f"langgraph.value.{k}"] = v
    return f


def matches(value: Any, flt: Any) -> bool:
    """LangGraph's filter semantics (those of its in-memory and PostgreSQL stores)."""
    if isinstance(flt, dict):
        if any(k.startswith("$") for k in flt):
            return all(_op(value, k, v) for k, v in flt.items())
        return isinstance(value, dict) and all(matches(value.get(k), v) for k, v in flt.items())
    if isinstance(flt, (list, tuple)):
        return (isinstance(value, (list, tuple)) and len(value) == len(flt)
                and all(matches(a, b) for a, b in zip(value, flt)))
    return value == flt


_COMPARE = {"$gt": operator.gt, "$gte": operator.ge, "$lt": operator.lt, "$lte": operator.le}


def _op(value: Any, op: str, want: Any) -> bool:
    if op == "$eq":
        return value == want
    if op == "$ne":
        return value != want
    if op not in _COMPARE:
        raise ValueError(f"unsupported filter operator: {op}")
    try:
        return bool(_COMPARE[op](float(value), float(want)))
    except (TypeError, ValueError):
        return False


def namespace_matches(ns: Namespace, cond: MatchCondition) -> bool:
    path = tuple(cond.path)
    if len(ns) < len(path):
        return False
    pairs = zip(ns, path) if cond.match_type == "prefix" else zip(reversed(ns), reversed(path))
    return all(p == "*" or a == p for a, p in pairs)


class CairnStore(BaseStore):
    """A LangGraph store in the Cairn space ``space``.

    Give ``url`` (and ``api_key``) to have the store make its own clients, or
    ``client=Cairn(...)`` and/or ``async_client=AsyncCairn(...)``. ``index_fields``: the
    JSON paths of a value that Cairn indexes (LangGraph's ``fields``; default: every
    top-level field); ``put(..., index=[...])`` overrides it per item and
    ``index=False`` keeps an item out of query searches.
    """

    supports_ttl = False

    def __init__(self, space: str, *, url: Optional[str] = None, api_key: Optional[str] = None,
                 client: Any = None, async_client: Any = None,
                 index_fields: Optional[Sequence[str]] = None, **client_options: Any):
        self.space = space
        self.index_fields = list(index_fields) if index_fields else None
        self._clients = Clients(client, async_client, url, api_key, **client_options)

    # LangGraph's entry points: every public method of BaseStore comes through these.
    def batch(self, ops: Iterable[Op]) -> List[Result]:
        return [self._clients.run(self._op(op)) for op in ops]

    async def abatch(self, ops: Iterable[Op]) -> List[Result]:
        return [await self._clients.arun(self._op(op)) for op in ops]

    def _op(self, op: Op) -> Steps[Result]:
        if isinstance(op, GetOp):
            return self._get(op.namespace, op.key)
        if isinstance(op, PutOp):
            if op.value is None:
                return self._delete(op.namespace, op.key)
            return self._put(op.namespace, op.key, dict(op.value), op.index)
        if isinstance(op, SearchOp):
            return self._search(op)
        if isinstance(op, ListNamespacesOp):
            return self._list_namespaces(op)
        raise ValueError(f"unknown operation {type(op).__name__}")

    # --- steps ------------------------------------------------------------------------

    def _record(self, namespace: Namespace, key: str) -> Steps[Optional[SessionRecord]]:
        try:
            return (yield call("session", self.space, session_id(namespace, key)))
        except ApiError as e:
            if e.status == 404:
                return None
            raise

    def _get(self, namespace: Namespace, key: str) -> Steps[Optional[Item]]:
        rec = yield from self._record(tuple(namespace), key)
        return _item(rec) if rec is not None else None

    def _delete(self, namespace: Namespace, key: str) -> Steps[None]:
        try:
            yield call("forget_session", self.space, session_id(tuple(namespace), key))
        except ApiError as e:
            if e.status != 404:
                raise
        return None

    def _put(self, namespace: Namespace, key: str, value: Dict[str, Any], index: Any) -> Steps[None]:
        namespace = tuple(namespace)
        old = yield from self._record(namespace, key)
        meta = old.session.metadata.get("langgraph", {}) if old is not None else {}
        now = _now()
        fields = self.index_fields if index is None else (index or None)
        body = {
            "id": session_id(namespace, key),
            "occurred_at": now,
            "messages": [{"role": "user", "text": item_text(value, fields)}],
            "metadata": {"namespace": list(namespace), "langgraph": {
                "namespace": list(namespace),
                "labels": {str(i): label for i, label in enumerate(namespace)},
                "depth": len(namespace),
                "key": key,
                "value": value,
                "indexed": index is not False,
                "created_at": meta.get("created_at", now),
                "updated_at": now,
            }},
        }
        for attempt in range(3):
            if old is not None or attempt > 0:
                yield from self._delete(namespace, key)
            try:
                yield call("ingest_session", self.space, body)
                return None
            except ApiError as e:
                # Another writer put the same item between our forget and our ingest.
                if e.code != "conflict" or attempt == 2:
                    raise
        return None

    # --- beyond LangGraph's API ---------------------------------------------------------

    def forget_namespace(self, namespace: Sequence[str]) -> ForgotPartition:
        """Forgets every item of ``namespace`` and of the namespaces under it (a user's
        everything when namespaces are per user, e.g. ``("users", "u1")``) with all Cairn
        derived from them (facts, profiles, entities, index entries), gone from its files
        when this returns. One partition forget per namespace found; the counts summed."""
        return self._clients.run(self._forget_namespace(tuple(namespace)))

    async def aforget_namespace(self, namespace: Sequence[str]) -> ForgotPartition:
        """:meth:`forget_namespace`, asynchronously."""
        return await self._clients.arun(self._forget_namespace(tuple(namespace)))

    def _forget_namespace(self, prefix: Namespace) -> Steps[ForgotPartition]:
        recs = yield from self._matching(prefix, None)
        found = sorted({tuple(r.session.metadata["langgraph"]["namespace"]) for r in recs})
        sessions = messages = units = 0
        for ns in found:
            r = yield call("forget_partition", self.space, {"namespace": list(ns)})
            sessions, messages, units = sessions + r.sessions, messages + r.messages, units + r.units
        return ForgotPartition(sessions=sessions, messages=messages, units=units)

    def _matching(self, prefix: Namespace, flt: Optional[Dict[str, Any]]) -> Steps[List[SessionRecord]]:
        """Every session of the store under ``prefix`` whose value passes ``flt``."""
        out: List[SessionRecord] = []
        offset: Optional[int] = 0
        server = _server_filter(prefix, flt)
        while offset is not None:
            try:
                page = yield call("sessions", self.space, limit=PAGE, offset=offset, filter=server)
            except ApiError as e:
                if e.code == "space_not_found":
                    return []
                raise
            out.extend(r for r in page.items if _passes(r, flt))
            offset = page.next_offset
        return out

    def _search(self, op: SearchOp) -> Steps[List[SearchItem]]:
        prefix = tuple(op.namespace_prefix)
        if not op.query:
            recs = yield from self._matching(prefix, op.filter)
            recs.sort(key=lambda r: r.session.metadata["langgraph"]["updated_at"], reverse=True)
            return [_item(r, None) for r in recs[op.offset: op.offset + op.limit]]
        want = op.offset + op.limit
        try:
            # A store's search ranks every matching item by the query; it never drops one
            # as irrelevant, so no relevance floor.
            found = yield call("recall", self.space, op.query, top_k=min(1000, max(10, 4 * want)),
                               filter=_server_filter(prefix, op.filter, indexed_only=True),
                               min_relevance=-1)
        except ApiError as e:
            if e.code == "space_not_found":
                return []
            raise
        scores: Dict[str, float] = {}
        for h in found.hits:
            if h.session_id and h.session_id not in scores:
                scores[h.session_id] = h.score
        if not scores:
            return []
        page = yield call("sessions", self.space, limit=min(PAGE, len(scores)),
                          filter={"session_id": {"in": list(scores)}})
        by_id = {r.session.id: r for r in page.items if _passes(r, op.filter)}
        ranked = [by_id[s] for s in scores if s in by_id]
        return [_item(r, scores[r.session.id]) for r in ranked[op.offset: want]]

    def _list_namespaces(self, op: ListNamespacesOp) -> Steps[List[Namespace]]:
        conds = op.match_conditions or ()
        prefix: Namespace = ()
        for c in conds:
            if c.match_type == "prefix":
                prefix = tuple(c.path)
        recs = yield from self._matching(prefix, None)
        found = {tuple(r.session.metadata["langgraph"]["namespace"]) for r in recs}
        found = {ns for ns in found if all(namespace_matches(ns, c) for c in conds)}
        if op.max_depth is not None:
            found = {ns[: op.max_depth] for ns in found}
        return sorted(found)[op.offset: op.offset + op.limit]


def _passes(rec: SessionRecord, flt: Optional[Dict[str, Any]]) -> bool:
    meta = rec.session.metadata
    if not isinstance(meta, dict) or "langgraph" not in meta:
        return False
    value = meta["langgraph"].get("value", {})
    return not flt or all(matches(value.get(k), v) for k, v in flt.items())


def _item(rec: SessionRecord, score: Any = False) -> Any:
    m = rec.session.metadata["langgraph"]
    fields = dict(namespace=tuple(m["namespace"]), key=m["key"], value=m["value"],
                  created_at=datetime.fromisoformat(m["created_at"]),
                  updated_at=datetime.fromisoformat(m["updated_at"]))
    if score is False:
        return Item(**fields)
    return SearchItem(score=score, **fields)
