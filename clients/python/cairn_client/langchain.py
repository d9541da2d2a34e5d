"""LangChain adapters (``pip install 'cairn-client[langchain]'``).

- :class:`CairnRetriever`: a ``BaseRetriever`` whose documents are Cairn recall hits
  (text, with the unit's id, kind, session, speakers, time and score as metadata).
- :class:`CairnChatMessageHistory`: a ``BaseChatMessageHistory`` kept as one Cairn
  session: ``add_messages`` appends to it, ``messages`` reads it back (each message's
  LangChain form rides in its Cairn metadata, so tool calls and ids come back as they
  went in), ``clear`` forgets the session. What the history says is recallable with the
  rest of the space.
"""

from __future__ import annotations

import json
from typing import Any, Dict, List, Mapping, Optional, Sequence

from langchain_core.callbacks import AsyncCallbackManagerForRetrieverRun, CallbackManagerForRetrieverRun
from langchain_core.chat_history import BaseChatMessageHistory
from langchain_core.documents import Document
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    ChatMessage,
    HumanMessage,
    SystemMessage,
    message_to_dict,
    messages_from_dict,
)
from langchain_core.retrievers import BaseRetriever
from pydantic import ConfigDict, PrivateAttr

from ._steps import Clients, Steps, call
from .errors import ApiError
from .types import Hit, Recall, SessionRecord


def hit_document(hit: Hit) -> Document:
    meta: Dict[str, Any] = {"unit_id": hit.unit_id, "kind": hit.kind, "score": hit.score,
                            "session_id": hit.session_id, "turn_ids": hit.turn_ids,
                            "speakers": hit.speakers, "occurred_at": hit.occurred_at}
    for extra in ("superseded_by", "trajectory_id", "states"):
        if getattr(hit, extra) is not None:
            meta[extra] = getattr(hit, extra)
    return Document(page_content=hit.text, metadata=meta, id=hit.unit_id)


class CairnRetriever(BaseRetriever):
    """Documents for a query from a Cairn space's recall.

    ``CairnRetriever(space="alice", url=..., api_key=...)`` or with ``client=`` /
    ``async_client=``; ``top_k``, ``filter`` (metadata filter), ``kinds``, ``as_of`` and
    ``token_budget`` go to recall as they are.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    space: str
    top_k: int = 5
    filter: Optional[Dict[str, Any]] = None
    kinds: Optional[List[str]] = None
    as_of: Optional[str] = None
    token_budget: Optional[int] = None
    url: Optional[str] = None
    api_key: Optional[str] = None
    client: Any = None
    async_client: Any = None
    _clients: Clients = PrivateAttr()

    def model_post_init(self, __context: Any) -> None:
        self._clients = Clients(self.client, self.async_client, self.url, self.api_key)

    def _steps(self, query: str) -> Steps[List[Document]]:
        found: Recall = yield call("recall", self.space, query, top_k=self.top_k, filter=self.filter,
                                   kinds=self.kinds, as_of=self.as_of, token_budget=self.token_budget)
        return [hit_document(h) for h in found.hits]

    def _get_relevant_documents(self, query: str, *, run_manager: CallbackManagerForRetrieverRun) -> List[Document]:
        return self._clients.run(self._steps(query))

    async def _aget_relevant_documents(self, query: str, *,
                                       run_manager: AsyncCallbackManagerForRetrieverRun) -> List[Document]:
        return await self._clients.arun(self._steps(query))


_ROLES = {"human": "user", "ai": "assistant", "system": "system"}


def to_cairn(message: BaseMessage) -> Dict[str, Any]:
    """A LangChain message as a Cairn message: role (or speaker), its text, and the
    whole LangChain message in the metadata for a lossless read back."""
    text = message.content if isinstance(message.content, str) else message.text
    if not text.strip():
        calls = getattr(message, "tool_calls", None)
        text = json.dumps(calls) if calls else f"({message.type} message)"
    out: Dict[str, Any] = {"text": text, "metadata": {"langchain": message_to_dict(message)}}
    role = _ROLES.get(message.type)
    if role is not None:
        out["role"] = role
    else:
        out["speaker"] = getattr(message, "role", None) or message.type
    return out


def from_cairn(m: Any) -> BaseMessage:
    meta = m.metadata if isinstance(m.metadata, dict) else {}
    if "langchain" in meta:
        return messages_from_dict([meta["langchain"]])[0]
    if m.role == "user":
        return HumanMessage(m.text)
    if m.role == "assistant":
        return AIMessage(m.text)
    if m.role == "system":
        return SystemMessage(m.text)
    return ChatMessage(content=m.text, role=m.speaker or "unknown")


class CairnChatMessageHistory(BaseChatMessageHistory):
    """A conversation kept as the Cairn session ``session_id`` of ``space``.
    ``metadata`` (e.g. ``{"user_id": "u1"}``) is the session's, for recall filters."""

    def __init__(self, space: str, session_id: str, *, url: Optional[str] = None,
                 api_key: Optional[str] = None, client: Any = None, async_client: Any = None,
                 metadata: Optional[Mapping[str, Any]] = None):
        self.space, self.session_id = space, session_id
        self.metadata = dict(metadata) if metadata else None
        self._clients = Clients(client, async_client, url, api_key)

    def _read(self) -> Steps[List[BaseMessage]]:
        try:
            rec: SessionRecord = yield call("session", self.space, self.session_id)
        except ApiError as e:
            if e.status == 404:
                return []
            raise
        return [from_cairn(m) for m in rec.session.messages]

    def _add(self, messages: Sequence[BaseMessage]) -> Steps[None]:
        if messages:
            yield call("add_messages", self.space, self.session_id, [to_cairn(m) for m in messages],
                       metadata=self.metadata)
        return None

    def _clear(self) -> Steps[None]:
        try:
            yield call("forget_session", self.space, self.session_id)
        except ApiError as e:
            if e.status != 404:
                raise
        return None

    @property
    def messages(self) -> List[BaseMessage]:  # type: ignore[override]
        return self._clients.run(self._read())

    async def aget_messages(self) -> List[BaseMessage]:
        return await self._clients.arun(self._read())

    def add_messages(self, messages: Sequence[BaseMessage]) -> None:
        self._clients.run(self._add(messages))

    async def aadd_messages(self, messages: Sequence[BaseMessage]) -> None:
        await self._clients.arun(self._add(messages))

    def clear(self) -> None:
        self._clients.run(self._clear())

    async def aclear(self) -> None:
        await self._clients.arun(self._clear())
