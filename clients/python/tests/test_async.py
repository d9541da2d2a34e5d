"""The async client against the real server: the same methods and typed results as the
blocking one (both run the builders of `_api.py`; the contract test checks that)."""

import asyncio
import json

import pytest

from cairn_client import ApiError, AsyncCairn, FactHistory, IngestReport, Recall, SessionPage, UnitPage

pytestmark = pytest.mark.anyio


async def test_every_kind_of_call_works_with_await(server):
    sp = "py-async"
    async with AsyncCairn(server["url"], api_key=server["admin"]) as c:
        assert (await c.health()).status == "ok"
        assert (await c.ready()).status == "ready"
        assert "paths" in await c.openapi()
        assert await c.create_space(sp) is True
        r = await c.ingest_session(sp, {"id": "pets", "date": "2024-03-01", "metadata": {"user_id": "u1"},
                                        "messages": [{"role": "user", "text": "My parrot is called Kiwi."},
                                                     {"role": "assistant", "text": "A fine name."}]})
        assert isinstance(r, IngestReport) and r.messages_added == 2 and r.replayed is False
        # Calls run concurrently on one client.
        reports = await asyncio.gather(*[
            c.add_messages(sp, f"chat-{i}", [{"role": "user", "text": f"Fact number {i}: I own {i} bikes."}])
            for i in range(5)])
        assert [x.messages_added for x in reports] == [1] * 5
        await c.ingest_sessions(sp, [{"id": "work", "messages": [{"role": "user", "text": "I work at Zeiss."}]}])
        rec = await c.recall(sp, "What is my parrot called?", top_k=3)
        assert isinstance(rec, Recall) and rec.hits[0].session_id == "pets" and "Kiwi" in rec.context
        assert rec.timings.total_ms > 0
        assert sp in await c.spaces()
        assert (await c.stats(sp))[0].sessions == 7
        page = await c.sessions(sp, limit=2, filter={"user_id": "u1"})
        assert isinstance(page, SessionPage) and page.total == 1 and page.items[0].session.id == "pets"
        assert (await c.session(sp, "work")).session.messages[0].text == "I work at Zeiss."
        units = await c.memories(sp, kind="turn", session_id="pets")
        assert isinstance(units, UnitPage) and units.total == 2
        assert (await c.memory(sp, units.items[0].id)).kind == "turn"
        dump = await c.export(sp)
        moved = "".join(json.dumps({**json.loads(l), "space": "py-async-copy"}) + "\n" for l in dump.splitlines())
        assert (await c.import_("py-async-copy", moved)).sessions == 7
        await c.delete_space("py-async-copy")
        assert (await c.delete_memory(sp, units.items[1].id)).removed_units > 0
        assert await c.forget_message(sp, "chat-0", "0") > 0
        assert await c.forget_session(sp, "work") > 0

        await c.add_group_messages("py-async-team", [
            {"speaker": "Lea", "group": "Orion", "time": "2025-04-01 09:00", "text": "The Orion deadline is May 3."},
            {"speaker": "Lea", "group": "Orion", "time": "2025-04-08 09:00", "text": "Update: the Orion deadline moved to May 17."},
        ])
        h = await c.history("py-async-team", "Orion deadline")
        assert isinstance(h, FactHistory) and h.current is not None and "May 17" in h.current.value
        assert await c.speakers("py-async-team") == ["Lea"]
        assert (await c.profile("py-async-team", "Lea")).speaker == "Lea"

        run = {"id": "login", "goal": "Log in", "outcome": "success",
               "states": [{"url": "http://app/login", "action": "click [2]", "accessibility_tree": "[2] button 'Sign in'"},
                          {"url": "http://app/home", "accessibility_tree": "[9] heading 'Welcome'"}]}
        assert (await c.insert_trajectories("py-async-agent", [run])).trajectories == 1
        assert (await c.trajectories("py-async-agent"))[0].succeeded is True
        assert (await c.trajectory("py-async-agent", "login")).trajectory.states[1].url == "http://app/home"
        assert (await c.trajectory_state("py-async-agent", "login", 0)).action == "click [2]"
        assert await c.forget_trajectory("py-async-agent", "login") > 0
        tools = await c.mcp({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}})
        assert any(t["name"] == "recall" for t in tools["result"]["tools"])

        with pytest.raises(ApiError) as e:
            await c.recall("py-async-nobody", "x")
        assert (e.value.status, e.value.code) == (404, "space_not_found")
