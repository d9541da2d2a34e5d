"""LlamaIndex adapters (``pip install 'cairn-client[llamaindex]'``).

- :class:`CairnRetriever`: a ``BaseRetriever`` whose nodes are Cairn recall hits
  (``TextNode`` with the unit id as node id, provenance as metadata, the hit's score).
- :class:`CairnMemoryBlock`: a long-term block for LlamaIndex's ``Memory``: messages
  flushed out of the short-term buffer are appended to a Cairn session (the memory's
  ``session_id``), and each ``get`` recalls what the space knows about the latest user
  message, as packed context text.
"""

from __future__ import annotations

import hashlib
import json
from contextlib import asynccontextmanager
from typing import Any, AsyncIterator, Dict, List, Optional

from llama_index.core.base.base_retriever import BaseRetriever
from llama_index.core.base.llms.types import ChatMessage, MessageRole
from llama_index.core.memory.memory import BaseMemoryBlock
from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode
from pydantic import ConfigDict, Field

from ._steps import Clients, Steps, call
from .types import Hit, Recall


def hit_node(hit: Hit) -> NodeWithScore:
    meta: Dict[str, Any] = {"unit_id": hit.unit_id, "kind": hit.kind, "session_id": hit.session_id,
                            "turn_ids": hit.turn_ids, "speakers": hit.speakers,
                            "occurred_at": hit.occurred_at}
    for extra in ("superseded_by", "trajectory_id", "states"):
        if getattr(hit, extra) is not None:
            meta[extra] = getattr(hit, extra)
    return NodeWithScore(node=TextNode(text=hit.text, id_=hit.unit_id, metadata=meta), score=hit.score)


class CairnRetriever(BaseRetriever):
    """Nodes for a query from a Cairn space's recall (``top_k``, ``filter``, ``kinds``,
    ``as_of`` passed on). Give ``url``/``api_key`` (default ``CAIRN_URL`` and
    ``CAIRN_API_KEY``), or ``client=`` / ``async_client=``."""

    def __init__(self, space: str, *, url: Optional[str] = None, api_key: Optional[str] = None,
                 client: Any = None, async_client: Any = None, top_k: int = 5,
                 filter: Optional[Dict[str, Any]] = None, kinds: Optional[List[str]] = None,
                 as_of: Optional[str] = None, **kwargs: Any):
        super().__init__(**kwargs)
        self.space, self.top_k, self.filter, self.kinds, self.as_of = space, top_k, filter, kinds, as_of
        self._clients = Clients(client, async_client, url, api_key)

    def _steps(self, query: str) -> Steps[List[NodeWithScore]]:
        found: Recall = yield call("recall", self.space, query, top_k=self.top_k, filter=self.filter,
                                   kinds=self.kinds, as_of=self.as_of)
        return [hit_node(h) for h in found.hits]

    def _retrieve(self, query_bundle: QueryBundle) -> List[NodeWithScore]:
        return self._clients.run(self._steps(query_bundle.query_str))

    async def _aretrieve(self, query_bundle: QueryBundle) -> List[NodeWithScore]:
        return await self._clients.arun(self._steps(query_bundle.query_str))


_ROLES = {MessageRole.USER: "user", MessageRole.ASSISTANT: "assistant", MessageRole.SYSTEM: "system"}


class CairnMemoryBlock(BaseMemoryBlock[str]):
    """Long-term memory in the Cairn space ``space`` for LlamaIndex's ``Memory``.

    ``session_id`` names the Cairn session flushed messages go to (default: the memory's
    own session id). ``top_k``/``token_budget``/``filter`` shape the recall; ``metadata``
    (default: the plain equalities of ``filter``, so ``filter={"user_id": "u1"}`` files
    what the block keeps under ``user_id`` u1, where its recall finds it) is the metadata
    of the sessions it writes. LlamaIndex
    runs memory blocks in fresh event loops from its sync methods, so unless
    ``async_client`` is given, each call opens (and closes) its own client from
    ``url``/``api_key`` (default ``CAIRN_URL`` and ``CAIRN_API_KEY``).
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    name: str = Field(default="cairn", description="The name of the memory block.")
    space: str
    session_id: Optional[str] = None
    top_k: int = 5
    #: ``None``: the server's default, as every other surface.
    token_budget: Optional[int] = None
    filter: Optional[Dict[str, Any]] = None
    metadata: Optional[Dict[str, Any]] = None
    url: Optional[str] = None
    api_key: Optional[str] = None
    async_client: Any = None

    @asynccontextmanager
    async def _client(self) -> AsyncIterator[Any]:
        if self.async_client is not None:
            yield self.async_client
            return
        from .client import AsyncCairn

        async with AsyncCairn(self.url, self.api_key) as c:
            yield c

    async def _aget(self, messages: Optional[List[ChatMessage]] = None, **block_kwargs: Any) -> str:
        asked = [m for m in (messages or []) if m.role == MessageRole.USER and (m.content or "").strip()]
        if not asked:
            return ""
        async with self._client() as c:
            found = await c.recall(self.space, asked[-1].content, top_k=self.top_k,
                                   token_budget=self.token_budget, filter=self.filter)
        return found.context

    async def _aput(self, messages: List[ChatMessage]) -> None:
        meta = self.metadata if self.metadata is not None else _equalities(self.filter)
        by_session: Dict[str, List[Dict[str, Any]]] = {}
        for m in messages:
            text = (m.content or "").strip()
            if not text:
                continue
            sid = self.session_id or m.additional_kwargs.get("session_id") or _default_session(meta)
            role = _ROLES.get(m.role)
            msg: Dict[str, Any] = {"text": text, **({"role": role} if role else {"speaker": str(m.role.value)})}
            by_session.setdefault(sid, []).append(msg)
        if not by_session:
            return
        async with self._client() as c:
            for sid, msgs in by_session.items():
                await c.add_messages(self.space, sid, msgs, metadata=meta or None)


def _equalities(flt: Optional[Dict[str, Any]]) -> Dict[str, Any]:
    """The plain ``key: value`` conditions of a filter (what a session must hold to pass)."""
    return {k: v for k, v in (flt or {}).items()
            if not k.startswith("$") and k.lower() not in ("and", "or", "not")
            and isinstance(v, (str, int, float, bool))}


def _default_session(meta: Dict[str, Any]) -> str:
    """The session of a block that names none: one per metadata (a session's metadata is
    fixed when it is made, so two users' blocks must not share one)."""
    if not meta:
        return "llamaindex"
    digest = hashlib.sha256(json.dumps(meta, sort_keys=True).encode()).hexdigest()[:16]
    return f"llamaindex-{digest}"
