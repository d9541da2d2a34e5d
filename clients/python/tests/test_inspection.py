"""The routes the inspector and agents read through, against a real server: the caller
(`me`), fact subjects, the units of a session or trajectory, recall's explanation, and the
trajectory inspection verbs (manifest, summary, state view, span, match, search, context,
recall + inspection, the agent controller's fallback)."""

import pytest

from cairn_client import (
    AgentRun, ApiError, AsyncCairn, Cairn, ContextSpan, FactSubject, InspectedRecall, Manifest,
    Matches, Me, RenderedContext, SpanView, StateView, TrajectoryOverview, Unit,
)

SP = "py-inspect"

LOGIN = {
    "id": "login", "goal": "Log in to the shop admin", "outcome": "success",
    "start_url": "http://shop/login",
    "states": [
        {"url": "http://shop/login", "thought": "The sign-in form is here.", "action": "type [4] 'admin'",
         "accessibility_tree": "[2] heading 'Sign in'\n[4] textbox 'Username'\n[5] button 'Sign in'"},
        {"url": "http://shop/login", "action": "click [5]",
         "accessibility_tree": "[4] textbox 'Username' 'admin'\n[5] button 'Sign in'"},
        {"url": "http://shop/admin", "accessibility_tree": "[9] heading 'Dashboard'\n[10] link 'Coupons'"},
    ],
}
COUPON = {
    "id": "coupon", "goal": "Create coupon SPRING10", "outcome": "failure",
    "states": [
        {"url": "http://shop/admin/coupons/new", "action": "click [63]",
         "accessibility_tree": "[61] textbox 'Code' 'SPRING10'\n[63] button 'Save'"},
        {"url": "http://shop/admin/coupons/new",
         "accessibility_tree": "[64] alert 'The coupon code SPRING10 already exists.'\n[63] button 'Save'"},
    ],
}


@pytest.fixture(scope="module")
def space(server):
    with Cairn(server["url"], api_key=server["admin"]) as c:
        c.ingest_session(SP, {"id": "pets", "date": "2024-03-01", "messages": [
            {"role": "user", "text": "My parrot is called Kiwi."}, {"role": "assistant", "text": "A fine name."}]})
        c.add_group_messages(SP, [
            {"speaker": "Lea", "group": "Orion", "time": "2025-04-01 09:00", "text": "The Orion deadline is May 3."},
            {"speaker": "Lea", "group": "Orion", "time": "2025-04-08 09:00",
             "text": "Update: the Orion deadline moved to May 17."},
        ])
        c.insert_trajectories(SP, [LOGIN, COUPON])
    return SP


def test_me_says_who_the_key_is(server, space):
    with Cairn(server["url"], api_key=server["admin"]) as admin:
        me = admin.me()
        assert isinstance(me, Me) and me.admin is True and me.read_only is False and me.scope is None
        assert space in me.spaces
    key = server["make_key"]("py-me-only", read_only=True)
    with Cairn(server["url"], api_key=key) as c:
        me = c.me()
        assert me.admin is False and me.read_only is True and me.scope == ["py-me-only"]
        # The space does not exist yet, and the key sees no other.
        assert me.spaces == [] and me.key_id not in ("admin", "local")


def test_subjects_and_units_of_a_session_and_a_trajectory(admin, space):
    subjects = admin.subjects(space)
    assert subjects and all(isinstance(s, FactSubject) for s in subjects)
    [orion] = [s for s in subjects if "orion deadline" in s.subject.lower()]
    assert orion.versions == 2 and "May 17" in (orion.current_value or "")
    [then] = [s for s in admin.subjects(space, as_of="2025-04-02") if "orion" in s.subject.lower()]
    assert then.versions == 1 and "May 3" in (then.current_value or "")
    # What `subjects` names is what `history` takes.
    assert admin.history(space, orion.subject).current.value == orion.current_value

    units = admin.session_units(space, "pets")
    assert units and all(isinstance(u, Unit) and u.provenance.session_id == "pets" for u in units)
    assert {"turn", "round"} <= {u.kind for u in units}
    with pytest.raises(ApiError) as e:
        admin.session_units(space, "no-such-session")
    assert e.value.status == 404

    tunits = admin.trajectory_units(space, "coupon")
    kinds = [u.kind for u in tunits]
    assert kinds.count("slice") == 2 and "note" in kinds
    assert all(u.provenance.trajectory_id == "coupon" for u in tunits)
    with pytest.raises(ApiError) as e:
        admin.trajectory_units(space, "nope")
    assert e.value.status == 404


def test_recall_explains_its_hits_on_request(admin, space):
    plain = admin.recall(space, "What is my parrot called?", top_k=2)
    assert plain.explain is None and all(h.explain is None for h in plain.hits)
    rec = admin.recall(space, "What is my parrot called?", top_k=2, explain=True)
    assert rec.explain is not None and rec.explain.counts.get("ranked", 0) >= 1
    top = rec.hits[0]
    assert top.explain is not None and top.explain.fused >= 0
    assert top.relevance is not None and 0 < top.relevance <= 1


def test_manifest_summary_state_and_span(admin, space):
    m = admin.trajectory_manifest(space)
    assert isinstance(m, Manifest) and m.form == "concise" and m.total == 2 and m.next_offset is None
    assert [e.id for e in m.entries] == ["login", "coupon"]
    assert m.entries[0].succeeded is True and m.entries[1].succeeded is False and m.entries[0].states == 3
    page = admin.trajectory_manifest(space, form="full", limit=1)
    assert page.form == "full" and len(page.entries) == 1 and page.next_offset == 1 and page.truncated
    assert [s.state for s in page.entries[0].steps] == [0, 1, 2]
    assert admin.trajectory_manifest(space, offset=1).entries[0].id == "coupon"

    o = admin.trajectory_summary(space, "login")
    assert isinstance(o, TrajectoryOverview) and o.states == 3 and len(o.steps) == 3
    # The action names the element it acts on.
    assert "button 'Sign in'" in (o.steps[1].action or "")

    v = admin.trajectory_state_view(space, "coupon", 1)
    assert isinstance(v, StateView) and v.state == 1 and v.states == 2 and "already exists" in v.observation
    assert v.truncated is None
    cut = admin.trajectory_state_view(space, "login", 0, max_chars=20)
    assert cut.observation_chars > 20 and cut.truncated
    with pytest.raises(ApiError) as e:
        admin.trajectory_state_view(space, "login", 9)
    assert e.value.status in (404, 422)

    span = admin.trajectory_span(space, "login", 1, 99)
    assert isinstance(span, SpanView) and (span.start, span.end) == (1, 2)
    assert [s.state for s in span.states] == [1, 2] and span.goal == LOGIN["goal"]


def test_match_search_and_context(admin, space):
    m = admin.trajectory_match(space, "coupon", r"already\s+exists")
    assert isinstance(m, Matches) and m.mode == "regex" and m.trajectory_id == "coupon"
    assert [s.state for s in m.states] == [1]
    assert any(line.field == "page" and "SPRING10" in line.text for line in m.states[0].lines)
    words = admin.trajectory_match(space, "login", "dashboard coupons", mode="words")
    assert words.mode == "words" and [s.state for s in words.states] == [2]
    with pytest.raises(ApiError) as e:
        admin.trajectory_match(space, "coupon", "(")
    assert e.value.status == 422 and e.value.field == "pattern"

    s = admin.trajectory_search(space, "sign in button")
    assert s.mode == "words" and s.trajectories_searched == 2
    assert s.states and s.states[0].trajectory_id == "login"
    assert len(admin.trajectory_search(space, "Save", mode="regex", limit=1).states) == 1

    ctx = admin.trajectory_context(space, [ContextSpan("coupon", 0, 1), {"trajectory_id": "login", "start_state": 2,
                                                                          "end_state": 2}],
                                   note="Check the coupon code first.", token_budget=400, query="coupon exists")
    assert isinstance(ctx, RenderedContext) and 0 < ctx.tokens <= 400 and ctx.token_budget == 400
    # The note leads, then the spans in the order given.
    text = ctx.context
    assert text.index("Check the coupon code first.") < text.index("## Trajectory coupon") < text.index("## Trajectory login")
    assert "already exists" in text
    assert [(r.trajectory_id, r.start_state, r.end_state) for r in ctx.spans] == [("coupon", 0, 1), ("login", 2, 2)]
    with pytest.raises(ApiError) as e:
        admin.trajectory_context(space, [{"trajectory_id": "coupon", "start_state": 0, "end_state": 7}])
    assert e.value.field == "spans[0].end_state"


def test_recall_inspection_and_the_agent_fallback(admin, space):
    r = admin.trajectory_inspect(space, "Why did creating coupon SPRING10 fail?", token_budget=500)
    assert isinstance(r, InspectedRecall) and "coupon" in r.shortlist
    assert any(s.trajectory_id == "coupon" for s in r.spans)
    assert 0 < r.context.tokens <= 500 and "already exists" in r.context.context
    # This server has no LLM configured: the answer is the fallback, never an error.
    run = admin.trajectory_agent(space, "Why did creating coupon SPRING10 fail?", fallback="recall_inspection",
                                 max_steps=2, time_budget_ms=5000)
    assert isinstance(run, AgentRun) and run.mode == "fallback" and run.fallback_reason
    assert run.model_calls == 0 and run.context and run.spans
    with pytest.raises(ApiError) as e:
        admin.trajectory_agent(space, "x", time_budget_ms=0)
    assert e.value.field == "time_budget_ms"


def test_a_foreign_key_gets_403_from_every_inspection_route(server, space):
    key = server["make_key"]("py-elsewhere")
    with Cairn(server["url"], api_key=key) as c:
        for call in (
            lambda: c.subjects(space), lambda: c.session_units(space, "pets"),
            lambda: c.trajectory_units(space, "login"), lambda: c.trajectory_manifest(space),
            lambda: c.trajectory_summary(space, "login"), lambda: c.trajectory_state_view(space, "login", 0),
            lambda: c.trajectory_span(space, "login", 0, 1), lambda: c.trajectory_match(space, "login", "x"),
            lambda: c.trajectory_search(space, "x"),
            lambda: c.trajectory_context(space, [ContextSpan("login", 0, 0)]),
            lambda: c.trajectory_inspect(space, "x"), lambda: c.trajectory_agent(space, "x"),
        ):
            with pytest.raises(ApiError) as e:
                call()
            assert (e.value.status, e.value.code) == (403, "forbidden")


@pytest.mark.anyio
async def test_the_async_client_inspects_too(server, space):
    async with AsyncCairn(server["url"], api_key=server["admin"]) as c:
        assert (await c.me()).admin is True
        assert any("orion" in s.subject.lower() for s in await c.subjects(space))
        assert {u.kind for u in await c.session_units(space, "pets")} >= {"turn"}
        assert len(await c.trajectory_units(space, "login")) >= 3
        assert (await c.trajectory_manifest(space)).total == 2
        assert (await c.trajectory_summary(space, "coupon")).succeeded is False
        assert "already exists" in (await c.trajectory_state_view(space, "coupon", 1)).observation
        assert len((await c.trajectory_span(space, "coupon", 0, 1)).states) == 2
        assert (await c.trajectory_match(space, "coupon", "SPRING10")).states_matched == 2
        assert (await c.trajectory_search(space, "coupon exists")).states[0].trajectory_id == "coupon"
        ctx = await c.trajectory_context(space, [ContextSpan("coupon", 1, 1)], token_budget=200)
        assert 0 < ctx.tokens <= 200
        assert "coupon" in (await c.trajectory_inspect(space, "coupon SPRING10 exists")).shortlist
        assert (await c.trajectory_agent(space, "coupon", max_steps=1)).mode == "fallback"
