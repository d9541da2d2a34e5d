"""The LangChain retriever and chat history against the real `langchain-core` package and
a real `cairn serve` (the chat model in the last test is LangChain's scripted fake: it
stands in for an LLM, which is an outside service)."""

import pytest

pytest.importorskip("langchain_core", reason="SKIPPED: langchain-core not installed (pip install 'cairn-client[langchain]')")

from langchain_core.chat_history import BaseChatMessageHistory  # noqa: E402
from langchain_core.documents import Document  # noqa: E402
from langchain_core.language_models.fake_chat_models import FakeListChatModel  # noqa: E402
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage  # noqa: E402
from langchain_core.prompts import ChatPromptTemplate, MessagesPlaceholder  # noqa: E402
from langchain_core.retrievers import BaseRetriever  # noqa: E402
from langchain_core.runnables import RunnableLambda  # noqa: E402
from langchain_core.runnables.history import RunnableWithMessageHistory  # noqa: E402

from cairn_client import AsyncCairn, Cairn  # noqa: E402
from cairn_client.langchain import CairnChatMessageHistory, CairnRetriever  # noqa: E402


@pytest.fixture()
def seeded(server):
    with Cairn(server["url"], api_key=server["admin"]) as c:
        c.ingest_sessions("py-lc", [
            {"id": "s1", "date": "2024-02-01", "metadata": {"user_id": "u1"},
             "messages": [{"role": "user", "text": "My daughter Mila started violin lessons."},
                          {"role": "assistant", "text": "How exciting for her!"}]},
            {"id": "s2", "date": "2024-02-03", "metadata": {"user_id": "u2"},
             "messages": [{"role": "user", "text": "I repair vintage motorcycles."},
                          {"role": "assistant", "text": "A great hobby."}]},
        ])
        yield c


def test_retriever_returns_hits_as_documents(seeded, server):
    r = CairnRetriever(space="py-lc", client=seeded, top_k=2)
    assert isinstance(r, BaseRetriever)
    docs = r.invoke("What instrument does my daughter play?")
    assert docs and isinstance(docs[0], Document)
    assert "violin" in docs[0].page_content and docs[0].metadata["session_id"] == "s1"
    assert docs[0].metadata["score"] > 0 and docs[0].id == docs[0].metadata["unit_id"]
    only_u2 = CairnRetriever(space="py-lc", client=seeded, filter={"user_id": "u2"}).invoke("vintage motorcycles hobby")
    assert only_u2 and all(d.metadata["session_id"] == "s2" for d in only_u2)
    # Nothing in u2's memory bears on the violin: no documents rather than u1's.
    assert CairnRetriever(space="py-lc", client=seeded, filter={"user_id": "u2"}).invoke("violin daughter") == []
    chain = r | RunnableLambda(lambda ds: "\n".join(d.page_content for d in ds))
    assert "Mila" in chain.invoke("Who takes violin lessons?")


@pytest.mark.anyio
async def test_retriever_async(seeded, server):
    async with AsyncCairn(server["url"], api_key=server["admin"]) as ac:
        docs = await CairnRetriever(space="py-lc", async_client=ac).ainvoke("motorcycles")
        assert docs[0].metadata["session_id"] == "s2"


def test_chat_history_round_trips_messages(server):
    h = CairnChatMessageHistory("py-lc-chat", "conv-1", url=server["url"], api_key=server["admin"],
                                metadata={"user_id": "u9"})
    assert isinstance(h, BaseChatMessageHistory) and h.messages == []
    h.add_messages([SystemMessage("Be brief."), HumanMessage("My flight to Lima is on June 4.")])
    h.add_ai_message(AIMessage("", tool_calls=[{"name": "calendar", "args": {"day": "June 4"}, "id": "call-1"}]))
    h.add_messages([ToolMessage("added", tool_call_id="call-1"), AIMessage("Noted: June 4.")])
    got = h.messages
    assert [type(m) for m in got] == [SystemMessage, HumanMessage, AIMessage, ToolMessage, AIMessage]
    assert got[1].content == "My flight to Lima is on June 4."
    assert got[2].tool_calls[0]["args"] == {"day": "June 4"} and got[3].tool_call_id == "call-1"
    with Cairn(server["url"], api_key=server["admin"]) as c:
        rec = c.recall("py-lc-chat", "When is the flight to Lima?", filter={"user_id": "u9"})
        assert "June 4" in rec.context
        assert [m.role for m in c.session("py-lc-chat", "conv-1").session.messages][:2] == ["system", "user"]
    h.clear()
    assert h.messages == []
    h.clear()


@pytest.mark.anyio
async def test_chat_history_async(server):
    async with AsyncCairn(server["url"], api_key=server["admin"]) as ac:
        h = CairnChatMessageHistory("py-lc-chat", "conv-async", async_client=ac)
        await h.aadd_messages([HumanMessage("hello there"), AIMessage("hi!")])
        assert [m.content for m in await h.aget_messages()] == ["hello there", "hi!"]
        await h.aclear()
        assert await h.aget_messages() == []


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_chat_history_in_a_runnable_with_message_history(server):
    prompt = ChatPromptTemplate.from_messages([MessagesPlaceholder("history"), ("human", "{input}")])
    model = FakeListChatModel(responses=["Nice to meet you, Rui.", "You are Rui."])
    chain = RunnableWithMessageHistory(
        prompt | model,
        lambda sid: CairnChatMessageHistory("py-lc-run", sid, url=server["url"], api_key=server["admin"]),
        input_messages_key="input", history_messages_key="history")
    cfg = {"configurable": {"session_id": "rui"}}
    chain.invoke({"input": "I am Rui."}, config=cfg)
    chain.invoke({"input": "Who am I?"}, config=cfg)
    h = CairnChatMessageHistory("py-lc-run", "rui", url=server["url"], api_key=server["admin"])
    assert [m.content for m in h.messages] == ["I am Rui.", "Nice to meet you, Rui.", "Who am I?", "You are Rui."]
