"""The LangGraph store against the real `langgraph` package and a real `cairn serve`."""

import pytest

langgraph = pytest.importorskip("langgraph", reason="SKIPPED: langgraph not installed (pip install 'cairn-client[langgraph]')")

from langgraph.graph import END, START, StateGraph  # noqa: E402
from langgraph.store.base import BaseStore, Item, SearchItem  # noqa: E402
from typing_extensions import TypedDict  # noqa: E402

from cairn_client import AsyncCairn, Cairn  # noqa: E402
from cairn_client.langgraph import CairnStore, session_id  # noqa: E402


@pytest.fixture()
def store(server):
    with Cairn(server["url"], api_key=server["admin"]) as c:
        yield CairnStore("py-lg", client=c)


def test_put_get_overwrite_delete(store):
    ns = ("users", "u1", "prefs")
    assert store.get(ns, "food") is None
    store.put(ns, "food", {"likes": "Dumplings with chili oil", "rating": 5})
    item = store.get(ns, "food")
    assert isinstance(item, Item)
    assert (item.namespace, item.key, item.value) == (ns, "food", {"likes": "Dumplings with chili oil", "rating": 5})
    assert item.created_at == item.updated_at
    store.put(ns, "food", {"likes": "Ramen", "rating": 4})
    again = store.get(ns, "food")
    assert again.value == {"likes": "Ramen", "rating": 4}
    assert again.created_at == item.created_at and again.updated_at > item.updated_at
    rec = store._clients.sync.session("py-lg", session_id(ns, "food"))
    assert [m.text for m in rec.session.messages] == ["likes: Ramen\nrating: 4"], "the old text is forgotten"
    found = store._clients.sync.recall("py-lg", "chili oil dumplings", top_k=10)
    assert "Dumplings" not in found.context and all("Dumplings" not in h.text for h in found.hits)
    store.delete(ns, "food")
    assert store.get(ns, "food") is None
    store.delete(ns, "food")  # deleting twice is fine


def test_search_by_query_prefix_and_filter(store):
    store.put(("users", "u2", "notes"), "n1", {"text": "Allergic to peanuts and shellfish", "kind": "health"})
    store.put(("users", "u2", "notes"), "n2", {"text": "Plays the cello on weekends", "kind": "hobby"})
    store.put(("users", "u2", "trips"), "t1", {"text": "Flying to Oslo in March", "kind": "travel"})
    store.put(("users", "u3", "notes"), "n1", {"text": "Allergic to cats", "kind": "health"})
    store.put(("users", "u2", "notes"), "secret", {"text": "Peanuts hidden in the pantry"}, index=False)

    hits = store.search(("users", "u2"), query="What food allergies does the user have?", limit=2)
    assert hits and isinstance(hits[0], SearchItem) and hits[0].key == "n1"
    assert hits[0].namespace == ("users", "u2", "notes") and hits[0].score is not None
    assert all(h.namespace[:2] == ("users", "u2") for h in hits)
    assert "secret" not in {h.key for h in store.search(("users", "u2"), query="peanuts", limit=10)}

    health = store.search(("users",), filter={"kind": "health"}, limit=10)
    assert {(h.namespace[1], h.key) for h in health} == {("u2", "n1"), ("u3", "n1")}
    assert all(h.score is None for h in health)
    assert [h.key for h in store.search(("users", "u2", "notes"), filter={"kind": {"$ne": "health"}})] == ["secret", "n2"]
    page = store.search(("users", "u2"), limit=2, offset=1)
    assert len(page) == 2, "newest first, offset 1"
    assert [h.key for h in store.search(("users", "u2"), query="cello", filter={"kind": "travel"})] == ["t1"]


def test_list_namespaces(store):
    for ns in [("a", "b", "c"), ("a", "b", "d", "e"), ("a", "b", "d", "i"), ("a", "b", "f"), ("a", "c", "f")]:
        store.put(ns, "k", {"text": "/".join(ns)})
    assert store.list_namespaces(prefix=("a", "b"), max_depth=3) == [("a", "b", "c"), ("a", "b", "d"), ("a", "b", "f")]
    assert store.list_namespaces(prefix=("a",), suffix=("f",)) == [("a", "b", "f"), ("a", "c", "f")]
    assert store.list_namespaces(prefix=("a", "*", "f")) == [("a", "b", "f"), ("a", "c", "f")]
    assert store.list_namespaces(prefix=("a",), limit=2, offset=1) == [("a", "b", "d", "e"), ("a", "b", "d", "i")]


def test_forget_namespace_forgets_a_users_everything(server):
    with Cairn(server["url"], api_key=server["admin"]) as c:
        s = CairnStore("py-lg-forget", client=c)
        s.put(("users", "u1"), "home", {"text": "Lives in Zorvantha"})
        s.put(("users", "u1", "prefs"), "food", {"text": "Likes pelliwog stew"})
        s.put(("users", "u2"), "home", {"text": "Lives in Tamberlune"})
        gone = s.forget_namespace(("users", "u1"))
        assert (gone.sessions, gone.messages) == (2, 2) and gone.units > 0
        assert s.get(("users", "u1"), "home") is None and s.get(("users", "u1", "prefs"), "food") is None
        assert s.list_namespaces() == [("users", "u2")]
        shown = c.export("py-lg-forget") + c.recall("py-lg-forget", "Zorvantha pelliwog", top_k=10).context
        assert "Zorvantha" not in shown and "pelliwog" not in shown and "Tamberlune" in shown
        again = s.forget_namespace(("users", "u1"))
        assert (again.sessions, again.units) == (0, 0)
        assert CairnStore("py-lg-none", client=c).forget_namespace(("x",)).sessions == 0


def test_an_empty_store_answers_empty(server):
    with Cairn(server["url"], api_key=server["admin"]) as c:
        s = CairnStore("py-lg-empty", client=c)
        assert s.get(("x",), "y") is None
        assert s.search(("x",)) == [] and s.search(("x",), query="anything") == []
        assert s.list_namespaces() == []


@pytest.mark.anyio
async def test_async_methods(server):
    async with AsyncCairn(server["url"], api_key=server["admin"]) as ac:
        s = CairnStore("py-lg-async", async_client=ac)
        ns = ("agent", "memories")
        await s.aput(ns, "m1", {"text": "The user's dog is a beagle named Biscuit"})
        await s.aput(ns, "m2", {"text": "The user works night shifts at a hospital"})
        assert (await s.aget(ns, "m1")).value["text"].endswith("Biscuit")
        hits = await s.asearch(("agent",), query="What breed is the dog?", limit=1)
        assert [h.key for h in hits] == ["m1"]
        assert await s.alist_namespaces() == [ns]
        await s.adelete(ns, "m1")
        assert await s.aget(ns, "m1") is None
        with pytest.raises(RuntimeError):
            s.get(ns, "m2")  # no sync client given


def test_in_a_graph(server):
    """A real LangGraph graph whose nodes use the store the graph was compiled with."""

    class State(TypedDict):
        user: str
        said: str
        recalled: str

    def remember(state: State, *, store: BaseStore):
        store.put(("memories", state["user"]), "latest", {"text": state["said"]})
        return {}

    def recall(state: State, *, store: BaseStore):
        hits = store.search(("memories", state["user"]), query="Where is the user moving?", limit=1)
        return {"recalled": hits[0].value["text"] if hits else ""}

    g = StateGraph(State)
    g.add_node("remember", remember)
    g.add_node("recall", recall)
    g.add_edge(START, "remember")
    g.add_edge("remember", "recall")
    g.add_edge("recall", END)
    store = CairnStore("py-lg-graph", url=server["url"], api_key=server["admin"])
    app = g.compile(store=store)
    out = app.invoke({"user": "zoe", "said": "I am moving to Montreal next spring.", "recalled": ""})
    assert out["recalled"] == "I am moving to Montreal next spring."
