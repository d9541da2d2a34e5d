// A filter naming a metadata key no session carries: the server answers `warnings` beside
// the result (docs/scope.md). The client keeps them on the result and hands each to
// `onWarning`, also for the methods that return a bare list. The answers here are the
// server's JSON, served by a fake fetch (no server needed).
import assert from "node:assert/strict";
import { test } from "node:test";
import { Cairn } from "../dist/index.js";

const WARNING = {
  code: "unknown_filter_key", field: "filter.userid",
  message: 'no session of this space carries metadata key "userid" (keys seen: source, user_id)',
};
const ANSWERS = {
  "/v1/spaces/shared/recall": { hits: [], context: "", context_tokens: 0, hits_cut: 0, hits_cut_ids: [],
    no_relevant_memory: true, context_unit_ids: [], timings: {}, warnings: [WARNING] },
  "/v1/spaces/shared/subjects": { subjects: [], warnings: [WARNING] },
  "/v1/spaces/shared/speakers": { speakers: [] },
};
const fetchFn = async (url) => new Response(JSON.stringify(ANSWERS[new URL(url).pathname]),
  { status: 200, headers: { "Content-Type": "application/json" } });

test("results keep their warnings and onWarning hears each, bare lists too", async () => {
  const heard = [];
  const c = new Cairn({ baseUrl: "http://cairn.test", fetch: fetchFn, onWarning: (w) => heard.push(w) });
  const r = await c.recall("shared", "cat?", { filter: { userid: "u1" } });
  assert.deepEqual(r.warnings, [WARNING]);
  assert.deepEqual(await c.subjects("shared", { filter: { userid: "u1" } }), []);
  assert.deepEqual(await c.speakers("shared"), []);
  assert.deepEqual(heard, [WARNING, WARNING]);
});

test("without onWarning the results still carry them", async () => {
  const c = new Cairn({ baseUrl: "http://cairn.test", fetch: fetchFn });
  const r = await c.recall("shared", "cat?", { filter: { userid: "u1" } });
  assert.equal(r.warnings[0].field, "filter.userid");
});
