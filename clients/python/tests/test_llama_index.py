"""The LlamaIndex retriever and memory block against the real `llama-index-core`
package and a real `cairn serve`."""

import pytest

pytest.importorskip("llama_index.core", reason="SKIPPED: llama-index-core not installed (pip install 'cairn-client[llamaindex]')")

from llama_index.core.base.llms.types import ChatMessage  # noqa: E402
from llama_index.core.memory import Memory  # noqa: E402
from llama_index.core.retrievers import BaseRetriever  # noqa: E402
from llama_index.core.schema import NodeWithScore  # noqa: E402

from cairn_client import AsyncCairn, Cairn  # noqa: E402
from cairn_client.llama_index import CairnMemoryBlock, CairnRetriever  # noqa: E402


@pytest.fixture()
def seeded(server):
    with Cairn(server["url"], api_key=server["admin"]) as c:
        c.ingest_session("py-li", {"id": "s1", "date": "2024-06-01",
                                   "messages": [{"role": "user", "text": "Our wifi password is heron-42-lake."},
                                                {"role": "assistant", "text": "Saved."}]})
        c.ingest_session("py-li", {"id": "s2", "date": "2024-06-02",
                                   "messages": [{"role": "user", "text": "The plumber comes on Thursday."}]})
        yield c


def test_retriever(seeded, server):
    r = CairnRetriever("py-li", client=seeded, top_k=2)
    assert isinstance(r, BaseRetriever)
    nodes = r.retrieve("What is the wifi password?")
    assert nodes and isinstance(nodes[0], NodeWithScore)
    assert "heron-42-lake" in nodes[0].node.get_content() and nodes[0].node.metadata["session_id"] == "s1"
    assert nodes[0].node.node_id == nodes[0].node.metadata["unit_id"] and nodes[0].score > 0


@pytest.mark.anyio
async def test_retriever_async(seeded, server):
    async with AsyncCairn(server["url"], api_key=server["admin"]) as ac:
        nodes = await CairnRetriever("py-li", async_client=ac).aretrieve("When does the plumber come?")
        assert nodes[0].node.metadata["session_id"] == "s2"


def test_memory_block_keeps_flushed_messages_and_recalls_them(server):
    block = CairnMemoryBlock(space="py-li-mem", url=server["url"], api_key=server["admin"])
    memory = Memory.from_defaults(session_id="li-chat", token_limit=30, chat_history_token_ratio=0.5,
                                  token_flush_size=12, tokenizer_fn=lambda s: s.split(),
                                  memory_blocks=[block])
    memory.put_messages([
        ChatMessage(role="user", content="My cousin Teo is a marine biologist in Valparaiso."),
        ChatMessage(role="assistant", content="That sounds like a fascinating job."),
        ChatMessage(role="user", content="He studies the humboldt squid population every winter."),
        ChatMessage(role="assistant", content="Squid research in the cold season, interesting."),
    ])
    memory.put(ChatMessage(role="user", content="What does my cousin Teo do for work?"))
    got = memory.get()
    with Cairn(server["url"], api_key=server["admin"]) as c:
        stored = [m.text for m in c.session("py-li-mem", "li-chat").session.messages]
    assert stored and stored[0] == "My cousin Teo is a marine biologist in Valparaiso.", "flushed to Cairn"
    system = [m for m in got if m.role == "system"]
    assert system and "marine biologist" in system[0].content, "recalled into the prompt"
