// The Vercel AI SDK tool set with the real `ai` and `zod` packages and a real server:
// the tools' input schemas and execute functions, as the SDK calls them (no LLM needed).
import assert from "node:assert/strict";
import { after, test } from "node:test";
import { Cairn } from "../dist/index.js";
import { cairnTools } from "../dist/ai.js";
import { startServer } from "./server.mjs";

const server = await startServer();
const skip = server.skip ?? false;
after(() => server.stop?.());
const opts = (id) => ({ toolCallId: id, messages: [], context: {} });

test("remember then recall through the tools' execute functions", { skip }, async () => {
  const c = new Cairn({ baseUrl: server.url, apiKey: server.admin });
  const tools = cairnTools(c, { space: "ts-ai", metadata: { user_id: "u7" }, filter: { user_id: "u7" } });
  assert.deepEqual(Object.keys(tools).sort(), ["recall", "remember"]);
  for (const t of Object.values(tools)) {
    assert.equal(typeof t.description, "string");
    assert.equal(typeof t.execute, "function");
  }
  assert.equal(tools.remember.inputSchema.safeParse({ text: "" }).success, false);
  assert.equal(tools.recall.inputSchema.safeParse({ query: "q", top_k: 50 }).success, false);

  const saved = await tools.remember.execute({ text: "The user is allergic to penicillin." }, opts("call-1"));
  assert.equal(saved.stored, true);
  assert.match(saved.session_id, /^remembered\/u7\/\d{4}-\d{2}-\d{2}$/);
  await tools.remember.execute({ text: "The user's favourite band is Khruangbin." }, opts("call-2"));
  const [rec] = await Promise.all([tools.recall.execute({ query: "Which medicine must the user avoid?", top_k: 2 }, opts("call-3"))]);
  assert.match(rec.context, /penicillin/);
  assert.ok(rec.memories.length > 0 && rec.memories[0].text.includes("penicillin"));
  const session = await c.session("ts-ai", saved.session_id);
  assert.deepEqual(session.session.metadata, { user_id: "u7" });
  assert.equal(session.session.messages.length, 2);

  const other = cairnTools(c, { space: "ts-ai", filter: { user_id: "someone-else" } });
  const none = await other.recall.execute({ query: "penicillin" }, opts("call-4"));
  assert.equal(none.memories.length, 0, "the filter keeps other users' memories out");
});

test("a fixed session id and the abort signal are honoured", { skip }, async () => {
  const c = new Cairn({ baseUrl: server.url, apiKey: server.admin });
  const tools = cairnTools(c, { space: "ts-ai-2", sessionId: () => "thread-42" });
  const r = await tools.remember.execute({ text: "Prefers answers in Portuguese." }, opts("a"));
  assert.equal(r.session_id, "thread-42");
  const ac = new AbortController();
  ac.abort(new Error("stopped by the SDK"));
  await assert.rejects(tools.recall.execute({ query: "language" }, { ...opts("b"), abortSignal: ac.signal }), /stopped by the SDK/);
});
