// The routes the inspector and agents read through, against a real `cairn serve`: the
// caller (`me`), fact subjects, the units of a session or trajectory, recall's
// explanation, and the trajectory inspection verbs (manifest, summary, state view, span,
// match, search, context, recall + inspection, the agent controller's fallback).
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { ApiError, Cairn } from "../dist/index.js";
import { startServer } from "./server.mjs";

const server = await startServer();
const skip = server.skip ?? false;
after(() => server.stop?.());
const admin = () => new Cairn({ baseUrl: server.url, apiKey: server.admin });
const SP = "ts-inspect";

const LOGIN = {
  id: "login", goal: "Log in to the shop admin", outcome: "success", start_url: "http://shop/login",
  states: [
    { url: "http://shop/login", thought: "The sign-in form is here.", action: "type [4] 'admin'",
      accessibility_tree: "[2] heading 'Sign in'\n[4] textbox 'Username'\n[5] button 'Sign in'" },
    { url: "http://shop/login", action: "click [5]", accessibility_tree: "[4] textbox 'Username' 'admin'\n[5] button 'Sign in'" },
    { url: "http://shop/admin", accessibility_tree: "[9] heading 'Dashboard'\n[10] link 'Coupons'" },
  ],
};
const COUPON = {
  id: "coupon", goal: "Create coupon SPRING10", outcome: "failure",
  states: [
    { url: "http://shop/admin/coupons/new", action: "click [63]",
      accessibility_tree: "[61] textbox 'Code' 'SPRING10'\n[63] button 'Save'" },
    { url: "http://shop/admin/coupons/new",
      accessibility_tree: "[64] alert 'The coupon code SPRING10 already exists.'\n[63] button 'Save'" },
  ],
};

const rejectsWith = (p, check) => assert.rejects(p, (e) => e instanceof ApiError && check(e));

before(async () => {
  if (skip) return;
  const c = admin();
  await c.ingestSession(SP, { id: "pets", date: "2024-03-01", messages: [
    { role: "user", text: "My parrot is called Kiwi." }, { role: "assistant", text: "A fine name." }] });
  await c.addGroupMessages(SP, [
    { speaker: "Lea", group: "Orion", time: "2025-04-01 09:00", text: "The Orion deadline is May 3." },
    { speaker: "Lea", group: "Orion", time: "2025-04-08 09:00", text: "Update: the Orion deadline moved to May 17." },
  ]);
  await c.insertTrajectories(SP, [LOGIN, COUPON]);
});

test("me says who the key is", { skip }, async () => {
  const me = await admin().me();
  assert.equal(me.admin, true);
  assert.equal(me.read_only, false);
  assert.equal(me.scope, undefined);
  assert.ok(me.spaces.includes(SP));
  const key = server.makeKey(["ts-me-only"], true);
  const mine = await new Cairn({ baseUrl: server.url, apiKey: key }).me();
  assert.deepEqual([mine.admin, mine.read_only, mine.scope, mine.spaces], [false, true, ["ts-me-only"], []]);
});

test("subjects, and the units of a session and of a trajectory", { skip }, async () => {
  const c = admin();
  const orion = (await c.subjects(SP)).find((s) => /orion deadline/i.test(s.subject));
  assert.ok(orion, "the Orion deadline is a subject");
  assert.equal(orion.versions, 2);
  assert.match(orion.current_value, /May 17/);
  const then = (await c.subjects(SP, { as_of: "2025-04-02" })).find((s) => /orion/i.test(s.subject));
  assert.equal(then.versions, 1);
  assert.match(then.current_value, /May 3/);
  assert.equal((await c.history(SP, orion.subject)).versions.length, 2);

  const units = await c.sessionUnits(SP, "pets");
  assert.ok(units.length > 0 && units.every((u) => u.provenance.session_id === "pets"));
  assert.ok(units.some((u) => u.kind === "turn") && units.some((u) => u.kind === "round"));
  await rejectsWith(c.sessionUnits(SP, "no-such-session"), (e) => e.status === 404);

  const t = await c.trajectoryUnits(SP, "coupon");
  assert.equal(t.filter((u) => u.kind === "slice").length, 2);
  assert.ok(t.some((u) => u.kind === "note") && t.every((u) => u.provenance.trajectory_id === "coupon"));
  await rejectsWith(c.trajectoryUnits(SP, "nope"), (e) => e.status === 404);
});

test("recall explains its hits on request", { skip }, async () => {
  const c = admin();
  const plain = await c.recall(SP, "What is my parrot called?", { top_k: 2 });
  assert.equal(plain.explain, undefined);
  const rec = await c.recall(SP, "What is my parrot called?", { top_k: 2, explain: true });
  assert.ok(rec.explain.counts.ranked >= 1);
  assert.ok(rec.hits[0].explain.fused >= 0);
  assert.ok(rec.hits[0].relevance > 0 && rec.hits[0].relevance <= 1);
});

test("manifest, summary, state view and span", { skip }, async () => {
  const c = admin();
  const m = await c.trajectoryManifest(SP);
  assert.deepEqual([m.form, m.total, m.next_offset], ["concise", 2, undefined]);
  assert.deepEqual(m.entries.map((e) => [e.id, e.succeeded, e.states]), [["login", true, 3], ["coupon", false, 2]]);
  const page = await c.trajectoryManifest(SP, { form: "full", limit: 1 });
  assert.deepEqual([page.form, page.entries.length, page.next_offset], ["full", 1, 1]);
  assert.ok(page.truncated);
  assert.deepEqual(page.entries[0].steps.map((s) => s.state), [0, 1, 2]);
  assert.equal((await c.trajectoryManifest(SP, { offset: 1 })).entries[0].id, "coupon");

  const o = await c.trajectorySummary(SP, "login");
  assert.deepEqual([o.states, o.steps.length], [3, 3]);
  assert.match(o.steps[1].action, /button 'Sign in'/);

  const v = await c.trajectoryStateView(SP, "coupon", 1);
  assert.deepEqual([v.state, v.states, v.truncated], [1, 2, undefined]);
  assert.match(v.observation, /already exists/);
  const cut = await c.trajectoryStateView(SP, "login", 0, { max_chars: 20 });
  assert.ok(cut.observation_chars > 20 && cut.truncated);
  await rejectsWith(c.trajectoryStateView(SP, "login", 9), (e) => e.status === 404 || e.status === 422);

  const span = await c.trajectorySpan(SP, "login", 1, 99);
  assert.deepEqual([span.start, span.end, span.states.map((s) => s.state), span.goal], [1, 2, [1, 2], LOGIN.goal]);
});

test("match, search and context", { skip }, async () => {
  const c = admin();
  const m = await c.trajectoryMatch(SP, "coupon", "already\\s+exists");
  assert.deepEqual([m.mode, m.trajectory_id, m.states.map((s) => s.state)], ["regex", "coupon", [1]]);
  assert.ok(m.states[0].lines.some((l) => l.field === "page" && l.text.includes("SPRING10")));
  const words = await c.trajectoryMatch(SP, "login", "dashboard coupons", { mode: "words" });
  assert.deepEqual([words.mode, words.states.map((s) => s.state)], ["words", [2]]);
  await rejectsWith(c.trajectoryMatch(SP, "coupon", "("), (e) => e.status === 422 && e.field === "pattern");

  const s = await c.trajectorySearch(SP, "sign in button");
  assert.deepEqual([s.mode, s.trajectories_searched, s.states[0].trajectory_id], ["words", 2, "login"]);
  assert.equal((await c.trajectorySearch(SP, "Save", { mode: "regex", limit: 1 })).states.length, 1);

  const ctx = await c.trajectoryContext(SP, {
    note: "Check the coupon code first.", token_budget: 400, query: "coupon exists",
    spans: [{ trajectory_id: "coupon", start_state: 0, end_state: 1 }, { trajectory_id: "login", start_state: 2, end_state: 2 }],
  });
  assert.ok(ctx.tokens > 0 && ctx.tokens <= 400 && ctx.token_budget === 400);
  // The note leads, then the spans in the order given.
  const at = (w) => ctx.context.indexOf(w);
  assert.ok(at("Check the coupon code first.") >= 0 && at("Check the coupon code first.") < at("## Trajectory coupon"));
  assert.ok(at("## Trajectory coupon") < at("## Trajectory login") && ctx.context.includes("already exists"));
  assert.deepEqual(ctx.spans.map((r) => [r.trajectory_id, r.start_state, r.end_state]), [["coupon", 0, 1], ["login", 2, 2]]);
  await rejectsWith(c.trajectoryContext(SP, { spans: [{ trajectory_id: "coupon", start_state: 0, end_state: 7 }] }),
    (e) => e.field === "spans[0].end_state");
});

test("recall + inspection, and the agent's fallback without an LLM", { skip }, async () => {
  const c = admin();
  const r = await c.trajectoryInspect(SP, "Why did creating coupon SPRING10 fail?", { token_budget: 500 });
  assert.ok(r.shortlist.includes("coupon") && r.spans.some((s) => s.trajectory_id === "coupon"));
  assert.ok(r.context.tokens > 0 && r.context.tokens <= 500 && r.context.context.includes("already exists"));
  const run = await c.trajectoryAgent(SP, "Why did creating coupon SPRING10 fail?",
    { fallback: "recall_inspection", max_steps: 2, time_budget_ms: 5000 });
  assert.deepEqual([run.mode, run.model_calls], ["fallback", 0]);
  assert.ok(run.fallback_reason && run.context && run.spans.length > 0);
  await rejectsWith(c.trajectoryAgent(SP, "x", { time_budget_ms: 0 }), (e) => e.field === "time_budget_ms");
});

test("a foreign key gets 403 from every inspection route", { skip }, async () => {
  const c = new Cairn({ baseUrl: server.url, apiKey: server.makeKey(["ts-elsewhere"]) });
  const span = [{ trajectory_id: "login", start_state: 0, end_state: 0 }];
  for (const call of [
    () => c.subjects(SP), () => c.sessionUnits(SP, "pets"), () => c.trajectoryUnits(SP, "login"),
    () => c.trajectoryManifest(SP), () => c.trajectorySummary(SP, "login"), () => c.trajectoryStateView(SP, "login", 0),
    () => c.trajectorySpan(SP, "login", 0, 1), () => c.trajectoryMatch(SP, "login", "x"), () => c.trajectorySearch(SP, "x"),
    () => c.trajectoryContext(SP, { spans: span }), () => c.trajectoryInspect(SP, "x"), () => c.trajectoryAgent(SP, "x"),
  ]) {
    await rejectsWith(call(), (e) => e.status === 403 && e.code === "forbidden");
  }
});
