// The client against a real `cairn serve`: every method, typed results, errors, key scoping.
import assert from "node:assert/strict";
import { after, test } from "node:test";
import { ApiError, Cairn, CairnError } from "../dist/index.js";
import { startServer } from "./server.mjs";

const server = await startServer();
const skip = server.skip ?? false;
after(() => server.stop?.());
const admin = () => new Cairn({ baseUrl: server.url, apiKey: server.admin });

const session = (id, text, reply, metadata = {}) => ({
  id, date: "2024-03-01 09:30", metadata,
  messages: [{ role: "user", text }, { role: "assistant", text: reply }],
});

test("ingest, recall, list, export/import and forget", { skip }, async () => {
  const c = admin();
  const sp = "ts-main";
  assert.equal((await c.health()).status, "ok");
  assert.equal((await c.ready()).status, "ready");
  assert.ok("/v1/spaces/{space}/recall" in (await c.openapi()).paths);
  assert.equal(await c.createSpace(sp), true);
  assert.equal(await c.createSpace(sp), false);
  let r = await c.ingestSession(sp, session("pets", "I adopted a grey cat named Luna.", "Lovely.", { user_id: "u1" }));
  assert.equal(r.messages_added, 2);
  assert.equal(r.replayed, false);
  r = await c.ingestSessions(sp, [
    session("trip", "I am flying to Kyoto in October.", "Enjoy the temples.", { user_id: "u2" }),
    session("work", "My manager is Ingrid.", "Noted.", { user_id: "u1" }),
  ]);
  assert.equal(r.sessions, 2);
  await c.addMessages(sp, "chat", [{ role: "user", text: "My bike is a red Bianchi." }], { metadata: { user_id: "u1" } });
  r = await c.addMessages(sp, "chat", [{ role: "assistant", text: "Nice bike." }]);
  assert.equal(r.messages_added, 1);

  let rec = await c.recall(sp, "grey cat Luna", { top_k: 2 });
  assert.equal(rec.hits[0].session_id, "pets");
  assert.match(rec.context, /Luna/);
  assert.ok(rec.timings.total_ms > 0);
  rec = await c.recall(sp, "Kyoto cat manager bike", { top_k: 10, token_budget: 400, format: "raw",
    as_of: "2030-01-01", kinds: ["round"], filter: { user_id: "u1" } });
  assert.ok(rec.hits.length > 0 && rec.hits.every((h) => h.session_id !== "trip"));

  assert.ok((await c.spaces()).includes(sp));
  const [st] = await c.stats(sp);
  assert.deepEqual([st.sessions, st.messages], [4, 8]);
  assert.ok((await c.stats()).some((s) => s.space === sp));
  const page = await c.sessions(sp, { limit: 3 });
  assert.deepEqual([page.total, page.items.length, page.next_offset], [4, 3, 3]);
  assert.equal((await c.sessions(sp, { filter: { user_id: "u1" } })).total, 3);
  const chat = await c.session(sp, "chat");
  assert.equal(chat.session.messages[1].text, "Nice bike.");
  const mem = await c.memories(sp, { kind: "round", session_id: "pets" });
  assert.ok(mem.items.length > 0 && mem.items.every((u) => u.kind === "round"));
  const uid = mem.items[0].id;
  assert.equal((await c.memory(sp, uid)).provenance.session_id, "pets");

  const dump = await c.export(sp);
  assert.equal(dump.trim().split("\n").length, 4);
  const moved = dump.trim().split("\n").map((l) => JSON.stringify({ ...JSON.parse(l), space: "ts-copy" })).join("\n");
  assert.equal((await c.import("ts-copy", moved)).sessions, 4);

  const gone = await c.deleteMemory(sp, uid);
  assert.equal(gone.session_id, "pets");
  assert.ok((await c.forgetMessage(sp, "chat", "0")) >= 0);
  assert.ok((await c.forgetSession(sp, "work")) > 0);
  assert.doesNotMatch((await c.recall(sp, "manager Ingrid", { top_k: 10 })).context, /Ingrid/);
  await c.deleteSpace("ts-copy");
  assert.ok(!(await c.spaces()).includes("ts-copy"));
});

test("forget an end user (a partition) and an exchange", { skip }, async () => {
  const c = admin();
  const sp = "ts-forget";
  await c.ingestSessions(sp, [
    session("a1", "My locker code is zuvefadi.", "Noted zuvefadi.", { user_id: "u1" }),
    session("a2", "I work at Quenbrix.", "Nice.", { user_id: "u1", agent_id: "a1" }),
    session("b1", "My locker code is zobakilu.", "Noted.", { user_id: "u2" }),
  ]);
  const gone = await c.forgetPartition(sp, { user_id: "u1" });
  assert.deepEqual([gone.sessions, gone.messages], [2, 4]);
  assert.ok(gone.units > 0);
  assert.deepEqual(await c.forgetPartition(sp, { user_id: "u1" }), { sessions: 0, messages: 0, units: 0 });
  const shown = (await c.export(sp)) + (await c.recall(sp, "locker code Quenbrix", { top_k: 10 })).context;
  assert.doesNotMatch(shown, /zuvefadi|Quenbrix/);
  assert.match(shown, /zobakilu/);
  await assert.rejects(c.forgetPartition(sp, { email: "x@y" }), (e) =>
    e instanceof ApiError && e.status === 422 && e.field === "partition");

  await c.ingestSession(sp, { id: "move", messages: [
    { role: "user", text: "I moved to Lisbon." },
    { role: "assistant", text: "Congratulations on the move to Lisbon!" },
    { role: "user", text: "Thanks." }] });
  assert.ok((await c.forgetMessage(sp, "move", "0", { exchange: true })) >= 0);
  assert.deepEqual((await c.session(sp, "move")).session.messages.map((m) => m.id), ["2"]);
  assert.doesNotMatch(await c.export(sp), /Lisbon/);
});

test("errors carry status, code and field", { skip }, async () => {
  const c = admin();
  await assert.rejects(c.recall("ts-nobody", "anything"), (e) =>
    e instanceof ApiError && e instanceof CairnError && e.status === 404 && e.code === "space_not_found");
  await c.createSpace("ts-err");
  await assert.rejects(c.recall("ts-err", "x", { top_k: 0 }), (e) => e.code === "invalid_input" && e.field === "top_k");
  await assert.rejects(c.ingestSession("ts-err", { id: "s", messages: [{ role: "user", text: 5 }] }),
    (e) => e.status === 422 && e.field === "messages[0].text");
  await assert.rejects(c.recall("ts-err", "x", { filter: { score: { near: 1 } } }), (e) => e.field === "filter.score.near");
  await assert.rejects(c.session("ts-err", "nope"), (e) => e.status === 404 && e.problem.code === "not_found");
});

test("a key sees only its space", { skip }, async () => {
  const key = server.makeKey(["ts-a"]);
  const ro = server.makeKey(["ts-a"], true);
  await admin().ingestSession("ts-b", session("s", "The safe code is 4921.", "Stored."));
  const a = new Cairn({ baseUrl: server.url, apiKey: key });
  await a.ingestSession("ts-a", session("s", "I like oolong tea.", "Nice."));
  assert.deepEqual(await a.spaces(), ["ts-a"]);
  for (const call of [() => a.recall("ts-b", "safe code"), () => a.sessions("ts-b"), () => a.memories("ts-b"),
    () => a.export("ts-b"), () => a.stats("ts-b"), () => a.forgetSession("ts-b", "s")]) {
    await assert.rejects(call(), (e) => e.status === 403 && e.code === "forbidden");
  }
  const r = new Cairn({ baseUrl: server.url, apiKey: ro });
  assert.match((await r.recall("ts-a", "tea")).context, /oolong/);
  await assert.rejects(r.addMessages("ts-a", "s2", [{ role: "user", text: "hi" }]), (e) => e.code === "read_only_key");
  await assert.rejects(new Cairn({ baseUrl: server.url }).spaces(), (e) => e.status === 401);
});

test("a key pinned to a user reads and writes that user alone", { skip }, async () => {
  const sp = "ts-pinned";
  await admin().ingestSessions(sp, [
    session("u1-s", "My locker code is Quenlockone.", "Noted.", { user_id: "u1" }),
    session("u2-s", "My locker code is Quenlocktwo.", "Noted.", { user_id: "u2" }),
  ]);
  const made = await admin().createKey([sp], { partition: { user_id: "u1" } });
  assert.deepEqual(made.partition, { user_id: "u1" });
  assert.ok((await admin().keys()).some((k) => k.id === made.id));
  const u1 = new Cairn({ baseUrl: server.url, apiKey: made.token });
  assert.deepEqual((await u1.me()).partition, { user_id: "u1" });
  for (const filter of [undefined, { user_id: "u2" }]) {
    const r = await u1.recall(sp, "locker code", { top_k: 10, min_relevance: -1, filter });
    assert.doesNotMatch(r.context, /Quenlocktwo/);
  }
  await assert.rejects(u1.session(sp, "u2-s"), (e) => e.status === 404);
  await u1.addMessages(sp, "u1-new", [{ role: "user", text: "I moved to Oslo." }]);
  assert.deepEqual((await admin().session(sp, "u1-new")).session.metadata, { user_id: "u1" });
  await assert.rejects(u1.stats(sp), (e) => e.code === "pinned_key");
  await admin().revokeKey(made.id);
  await assert.rejects(u1.me(), (e) => e.status === 401);
});

test("group chats, versions, profiles, trajectories and MCP", { skip }, async () => {
  const c = admin();
  const sp = "ts-team";
  const r = await c.addGroupMessages(sp, [
    { speaker: "Maya", group: "Atlas", time: "2025-03-03 09:00", text: "The budget for Project Atlas is $120,000." },
    { speaker: "Priya", group: "Atlas", time: "2025-03-03 09:05", text: "I'm the finance director, please send the breakdown." },
    { speaker: "Maya", group: "Atlas", time: "2025-03-10 14:00", text: "Update: the Atlas budget has been cut to $100,000." },
  ]);
  assert.deepEqual([r.messages_added, r.sessions], [3, 2]);
  const h = await c.history(sp, "Atlas budget");
  assert.deepEqual(h.versions.map((v) => v.value), ["$120,000", "$100,000"]);
  assert.equal(h.versions[0].superseded_by, h.versions[1].unit_id);
  assert.equal((await c.history(sp, "Atlas budget", { as_of: "2025-03-05" })).versions.length, 1);
  assert.deepEqual(await c.speakers(sp), ["Maya", "Priya"]);
  const p = await c.profile(sp, "Priya");
  assert.equal(p.roles[0].what, "finance director");
  assert.ok(p.style.avg_words > 0);
  await assert.rejects(c.profile(sp, "Nobody"), (e) => e.status === 404);
  const hits = (await c.recall(sp, "What is the Atlas budget now?", { top_k: 3, since: "2025-03-01" })).hits;
  assert.ok(hits.some((x) => x.superseded_by === undefined && x.text.includes("$100,000")));

  const run = {
    id: "coupon", goal: "Create coupon SPRING10", outcome: "failure",
    states: [
      { url: "http://shop/admin/coupons/new", action: "click [63]", accessibility_tree: "[63] button 'Save'" },
      { url: "http://shop/admin/coupons/new", accessibility_tree: "[64] alert 'The coupon code SPRING10 already exists.'" },
    ],
  };
  assert.equal((await c.insertTrajectories("ts-agent", [run])).trajectories, 1);
  assert.equal((await c.insertTrajectories("ts-agent", [run])).unchanged, 1);
  const [summary] = await c.trajectories("ts-agent");
  assert.deepEqual([summary.succeeded, summary.steps], [false, 2]);
  assert.equal((await c.trajectory("ts-agent", "coupon")).trajectory.goal, run.goal);
  assert.match((await c.trajectoryState("ts-agent", "coupon", 1)).observation, /already exists/);
  const note = (await c.recall("ts-agent", "coupon already exists", { kinds: ["note"], quotas: { note: 1 } })).hits[0];
  assert.equal(note.trajectory_id, "coupon");
  assert.equal(note.states.length, 2);
  assert.ok((await c.forgetTrajectory("ts-agent", "coupon")) >= 3);

  const init = await c.mcp({ jsonrpc: "2.0", id: 1, method: "initialize",
    params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "ts-test", version: "1" } } });
  assert.equal(init.result.serverInfo.name, "cairn");
  const tools = await c.mcp({ jsonrpc: "2.0", id: 2, method: "tools/list", params: {} });
  assert.ok(tools.result.tools.some((t) => t.name === "recall"));
});

test("ids with slashes and odd characters are percent-encoded", { skip }, async () => {
  const c = admin();
  await c.ingestSession("ts-ids", { id: "team/2025-01-01 #1?", messages: [{ role: "user", text: "odd id here" }] });
  assert.equal((await c.session("ts-ids", "team/2025-01-01 #1?")).session.id, "team/2025-01-01 #1?");
  assert.ok((await c.forgetSession("ts-ids", "team/2025-01-01 #1?")) > 0);
});
