"""The client against a real server: every method, errors, key scoping, deletion."""

import json

import pytest

from cairn_client import (
    ApiError, Cairn, CairnError, IngestReport, Message, Recall, SessionInput, SessionRecord, Unit,
)


def session(sid, text, reply, **metadata):
    return {
        "id": sid,
        "date": "2024-03-01 09:30",
        "metadata": metadata,
        "messages": [{"role": "user", "text": text}, {"role": "assistant", "text": reply}],
    }


def test_ingest_recall_list_and_forget(admin):
    sp = "py-main"
    assert admin.health().status == "ok"
    assert admin.ready().status == "ready"
    assert "/v1/spaces/{space}/recall" in admin.openapi()["paths"]
    assert admin.create_space(sp) is True
    assert admin.create_space(sp) is False
    r = admin.ingest_session(sp, session("pets", "I adopted a grey cat named Luna.", "Lovely.", user_id="u1"))
    assert isinstance(r, IngestReport) and r.messages_added == 2
    r = admin.ingest_sessions(
        sp,
        [
            session("trip", "I am flying to Kyoto in October.", "Enjoy the temples.", user_id="u2"),
            session("work", "My manager is Ingrid.", "Noted.", user_id="u1"),
        ],
    )
    assert r.sessions == 2
    r = admin.add_messages(sp, "chat", [{"role": "user", "text": "My bike is a red Bianchi."}],
                           metadata={"user_id": "u1"})
    r = admin.add_messages(sp, "chat", [{"role": "assistant", "text": "Nice bike."}])
    assert r.messages_added == 1

    rec = admin.recall(sp, "grey cat Luna", top_k=2)
    assert isinstance(rec, Recall)
    assert rec.hits[0].session_id == "pets"
    assert "Luna" in rec.context
    rec = admin.recall(sp, "Kyoto cat manager bike", top_k=10, token_budget=400, format="raw",
                       as_of="2030-01-01", kinds=["round"], filter={"user_id": "u1"})
    assert rec.hits and all(h.session_id != "trip" for h in rec.hits)

    assert sp in admin.spaces()
    [st] = admin.stats(sp)
    assert (st.sessions, st.messages) == (4, 8)
    assert any(s.space == sp for s in admin.stats())
    page = admin.sessions(sp, limit=3)
    assert page.total == 4 and len(page.items) == 3 and page.next_offset == 3
    assert admin.sessions(sp, filter={"user_id": "u1"}).total == 3
    rec_ = admin.session(sp, "chat")
    assert isinstance(rec_, SessionRecord) and rec_.session.messages[1].text == "Nice bike."
    assert rec_.session.metadata == {"user_id": "u1"}
    mem = admin.memories(sp, kind="round", session_id="pets")
    assert mem.items and all(isinstance(u, Unit) and u.kind == "round" for u in mem.items)
    uid = mem.items[0].id
    assert admin.memory(sp, uid).provenance.session_id == "pets"

    dump = admin.export(sp)
    assert len(dump.splitlines()) == 4
    moved = "".join(json.dumps({**json.loads(l), "space": "py-copy"}) + "\n" for l in dump.splitlines())
    assert admin.import_("py-copy", moved).sessions == 4

    gone = admin.delete_memory(sp, uid)
    # A round cites both messages of the session: forgetting it leaves none, so the session goes.
    assert gone.memory_id == uid and gone.session_id == "pets"
    assert gone.forgotten_messages == ["0", "1"] and gone.forgotten_session is True
    assert admin.forget_message(sp, "chat", "0") >= 0
    assert admin.forget_session(sp, "work") > 0
    rec = admin.recall(sp, "manager Ingrid", top_k=10)
    assert "Ingrid" not in rec.context
    admin.delete_space("py-copy")
    assert "py-copy" not in admin.spaces()


def test_errors_carry_code_status_and_field(admin):
    with pytest.raises(ApiError) as e:
        admin.recall("py-nobody", "anything")
    assert (e.value.status, e.value.code) == (404, "space_not_found")
    admin.create_space("py-err")
    with pytest.raises(ApiError) as e:
        admin.recall("py-err", "x", top_k=0)
    assert e.value.code == "invalid_input" and e.value.field == "top_k"
    with pytest.raises(ApiError) as e:
        admin.ingest_session("py-err", {"id": "s", "messages": [{"role": "user", "text": 5}]})
    assert e.value.status == 422 and e.value.field == "messages[0].text"
    with pytest.raises(ApiError) as e:
        admin.recall("py-err", "x", filter={"score": {"near": 1}})
    assert e.value.field == "filter.score.near"


def test_a_key_sees_only_its_space(server):
    key = server["make_key"]("py-a")
    ro = server["make_key"]("py-a", read_only=True)
    with Cairn(server["url"], api_key=server["admin"]) as admin:
        admin.ingest_session("py-b", session("s", "The safe code is 4921.", "Stored."))
    with Cairn(server["url"], api_key=key) as a:
        a.ingest_session("py-a", session("s", "I like oolong tea.", "Nice."))
        assert a.spaces() == ["py-a"]
        for call in (
            lambda: a.recall("py-b", "safe code"),
            lambda: a.sessions("py-b"),
            lambda: a.memories("py-b"),
            lambda: a.export("py-b"),
            lambda: a.stats("py-b"),
            lambda: a.forget_session("py-b", "s"),
        ):
            with pytest.raises(ApiError) as e:
                call()
            assert (e.value.status, e.value.code) == (403, "forbidden")
    with Cairn(server["url"], api_key=ro) as r:
        assert "oolong" in r.recall("py-a", "tea").context
        with pytest.raises(ApiError) as e:
            r.add_messages("py-a", "s2", [{"role": "user", "text": "hi"}])
        assert e.value.code == "read_only_key"
    with Cairn(server["url"]) as anon:
        with pytest.raises(ApiError) as e:
            anon.spaces()
        assert e.value.status == 401


def test_group_chats_versions_profiles_and_trajectories(admin):
    sp = "py-team"
    r = admin.add_group_messages(
        sp,
        [
            {"speaker": "Maya", "group": "Atlas", "time": "2025-03-03 09:00", "text": "The budget for Project Atlas is $120,000."},
            {"speaker": "Priya", "group": "Atlas", "time": "2025-03-03 09:05", "text": "I'm the finance director, please send the breakdown."},
            {"speaker": "Maya", "group": "Atlas", "time": "2025-03-10 14:00", "text": "Update: the Atlas budget has been cut to $100,000."},
        ],
    )
    assert r.messages_added == 3 and r.sessions == 2
    h = admin.history(sp, "Atlas budget")
    assert [v.value for v in h.versions] == ["$120,000", "$100,000"]
    assert h.current is not None and h.current.value == "$100,000" and h.versions[0].superseded_by == h.current.unit_id
    assert len(admin.history(sp, "Atlas budget", as_of="2025-03-05").versions) == 1
    assert admin.speakers(sp) == ["Maya", "Priya"]
    prof = admin.profile(sp, "Priya")
    assert prof.roles[0].what == "finance director" and prof.groups == ["Atlas"] and prof.style.avg_words > 0
    with pytest.raises(ApiError) as e:
        admin.profile(sp, "Nobody")
    assert e.value.status == 404
    hits = admin.recall(sp, "What is the Atlas budget now?", top_k=3, since="2025-03-01").hits
    assert any(h.superseded_by is None and "$100,000" in h.text for h in hits)

    run = {
        "id": "coupon", "goal": "Create coupon SPRING10", "outcome": "failure",
        "states": [
            {"url": "http://shop/admin/coupons/new", "action": "click [63]", "accessibility_tree": "[63] button 'Save'"},
            {"url": "http://shop/admin/coupons/new", "accessibility_tree": "[64] alert 'The coupon code SPRING10 already exists.'"},
        ],
    }
    assert admin.insert_trajectories("py-agent", [run]).trajectories == 1
    assert admin.insert_trajectories("py-agent", [run]).unchanged == 1
    [summary] = admin.trajectories("py-agent")
    assert summary.succeeded is False and summary.steps == 2 and summary.urls == ["http://shop/admin/coupons/new"]
    traj = admin.trajectory("py-agent", "coupon")
    assert traj.trajectory.goal == run["goal"] and traj.trajectory.states[0].action == "click [63]"
    assert "already exists" in (admin.trajectory_state("py-agent", "coupon", 1).observation or "")
    assert admin.stats("py-agent")[0].trajectories == 1
    hit = admin.recall("py-agent", "coupon already exists", kinds=["note"], quotas={"note": 1}).hits[0]
    assert hit.trajectory_id == "coupon" and hit.states is not None
    assert admin.forget_trajectory("py-agent", "coupon") >= 3


def test_typed_inputs_mcp_and_the_error_hierarchy(admin):
    sp = "py-typed"
    s = SessionInput(id="typed", occurred_at="2024-05-01",
                     messages=[Message(role="user", text="My sister Ana lives in Porto."),
                               Message(role="assistant", text="Porto is lovely.")])
    assert admin.ingest_session(sp, s).messages_added == 2
    assert admin.session(sp, "typed").session.messages[0].text == "My sister Ana lives in Porto."
    with pytest.raises(CairnError) as e:
        admin.session(sp, "nope")
    assert isinstance(e.value, ApiError) and e.value.status == 404 and e.value.problem["code"] == "not_found"
    init = admin.mcp({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                      "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                                 "clientInfo": {"name": "py-test", "version": "1"}}})
    assert init["result"]["serverInfo"]["name"] == "cairn"
    tools = admin.mcp({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}})
    assert {"remember", "recall"} <= {t["name"] for t in tools["result"]["tools"]}
    out = admin.mcp({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                     "params": {"name": "recall", "arguments": {"space": sp, "query": "Where does Ana live?"}}})
    assert "Porto" in out["result"]["content"][0]["text"]


def test_forget_a_user_and_an_exchange(admin):
    sp = "py-forget"
    admin.ingest_sessions(sp, [
        session("a1", "My locker code is zuvefadi.", "Noted zuvefadi.", user_id="u1"),
        session("a2", "I work at Quenbrix.", "Nice.", user_id="u1", agent_id="a1"),
        session("b1", "My locker code is zobakilu.", "Noted.", user_id="u2"),
    ])
    gone = admin.forget_partition(sp, {"user_id": "u1"})
    assert (gone.sessions, gone.messages) == (2, 4) and gone.units > 0
    again = admin.forget_partition(sp, {"user_id": "u1"})
    assert (again.sessions, again.messages, again.units) == (0, 0, 0)
    shown = admin.export(sp) + admin.recall(sp, "locker code Quenbrix", top_k=10).context
    assert "zuvefadi" not in shown and "Quenbrix" not in shown and "zobakilu" in shown
    with pytest.raises(ApiError) as e:
        admin.forget_partition(sp, {"email": "x@y"})
    assert e.value.status == 422 and e.value.field == "partition"

    admin.ingest_session(sp, {"id": "move", "messages": [
        {"role": "user", "text": "I moved to Lisbon."},
        {"role": "assistant", "text": "Congratulations on the move to Lisbon!"},
        {"role": "user", "text": "Thanks."}]})
    assert admin.forget_message(sp, "move", "0", exchange=True) >= 0
    assert [m.id for m in admin.session(sp, "move").session.messages] == ["2"]
    assert "Lisbon" not in admin.export(sp)
    assert all(e.name != "Lisbon" for e in admin.entities(sp))


def test_a_key_pinned_to_a_user_reads_and_writes_that_user_alone(server, admin):
    sp = "py-pinned"
    admin.ingest_sessions(sp, [
        session("u1-s", "My locker code is Quenlockone.", "Noted.", user_id="u1"),
        session("u2-s", "My locker code is Quenlocktwo.", "Noted.", user_id="u2"),
    ])
    made = admin.create_key([sp], partition={"user_id": "u1"}, label="u1's agent")
    assert made.partition == {"user_id": "u1"} and made.token.startswith("cairn_")
    assert any(k.id == made.id and k.partition == {"user_id": "u1"} for k in admin.keys())
    with Cairn(server["url"], api_key=made.token) as u1:
        assert u1.me().partition == {"user_id": "u1"}
        # No filter, or another user's: the key reads u1's memories alone.
        for filter in (None, {"user_id": "u2"}):
            shown = u1.recall(sp, "locker code", top_k=10, min_relevance=-1, filter=filter).context
            assert "Quenlocktwo" not in shown
        assert "Quenlockone" in u1.recall(sp, "locker code", top_k=10, min_relevance=-1).context
        assert [s.session.id for s in u1.sessions(sp).items] == ["u1-s"]
        with pytest.raises(ApiError) as e:
            u1.session(sp, "u2-s")
        assert e.value.status == 404
        # What it writes is u1's, and it cannot write as another user.
        u1.add_messages(sp, "u1-new", [{"role": "user", "text": "I moved to Oslo."}])
        assert admin.session(sp, "u1-new").session.metadata == {"user_id": "u1"}
        with pytest.raises(ApiError) as e:
            u1.ingest_session(sp, session("x", "hi", "hello", user_id="u2"))
        assert e.value.status == 422
        with pytest.raises(ApiError) as e:
            u1.stats(sp)
        assert e.value.code == "pinned_key"
    admin.revoke_key(made.id)
    with Cairn(server["url"], api_key=made.token) as gone:
        with pytest.raises(ApiError) as e:
            gone.me()
        assert e.value.status == 401


def test_a_pinned_users_card_holds_their_standing_instruction_alone(server, admin):
    sp = "py-card"
    admin.ingest_sessions(sp, [
        session("u1-i", "From now on, always answer me in Portuguese.", "Combinado.", user_id="u1"),
        session("u2-i", "Going forward, never use emojis in your replies.", "Noted.", user_id="u2"),
    ])
    made = admin.create_key([sp], partition={"user_id": "u1"}, label="u1's card")
    with Cairn(server["url"], api_key=made.token) as u1:
        r = u1.recall(sp, "Suggest a quiet weekend activity.")
        assert [line.category for line in r.card] == ["instruction"]
        assert "Portuguese" in r.card[0].statement and r.card[0].session_id == "u1-i"
        assert r.context.startswith("About the user:") and "emojis" not in r.context
        assert r.context_unit_ids[0] == r.card[0].unit_id
    admin.revoke_key(made.id)
