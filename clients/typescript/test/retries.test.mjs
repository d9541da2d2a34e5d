// Retries, idempotency keys, timeouts and connection errors, against the real server.
// Network faults come from a fetch wrapped around the real one (`faulty`): a refused
// connection (never sent), a lost answer (sent and handled, the answer lost), or an
// answer given for the server (503, 429). Real sockets give the timeout and the refusal.
import assert from "node:assert/strict";
import { createServer } from "node:net";
import { after, test } from "node:test";
import { ApiError, Cairn, CairnError, ConnectionError, TimeoutError } from "../dist/index.js";
import { specHasIdempotency, startServer } from "./server.mjs";

const server = await startServer();
const skip = server.skip ?? false;
const skipReplay = skip || (specHasIdempotency() ? false
  : "SKIPPED: this server's openapi.json does not document Idempotency-Key yet");
after(() => server.stop?.());
const FAST = { backoffMs: 10, maxBackoffMs: 50 };

function faulty(plan) {
  const seen = [];
  const fetchFn = async (url, init) => {
    seen.push({ url: String(url), method: init.method, headers: { ...init.headers } });
    const action = plan.shift() ?? "pass";
    if (action === "refuse") throw new TypeError("fetch failed", { cause: { code: "ECONNREFUSED" } });
    if (action === "html") return new Response("<html>a captive portal</html>", { status: 200 });
    if (Array.isArray(action)) {
      const [status, headers] = action;
      return new Response(JSON.stringify({ code: "injected", detail: "injected", status }),
        { status, headers: { "Content-Type": "application/problem+json", ...headers } });
    }
    const response = await fetch(url, init);
    if (action === "lose") {
      await response.arrayBuffer();
      throw new TypeError("fetch failed", { cause: { code: "ECONNRESET" } });
    }
    return response;
  };
  return { fetchFn, seen };
}

function client(plan, retry = {}) {
  const { fetchFn, seen } = faulty(plan);
  const delays = [];
  const c = new Cairn({ baseUrl: server.url, apiKey: server.admin, fetch: fetchFn,
    retry: { ...FAST, ...retry, onRetry: (n, d, e) => delays.push([n, d, e]) } });
  return { c, seen, delays };
}
const keys = (seen) => seen.map((r) => r.headers["Idempotency-Key"]);

test("a write whose answer was lost is sent again with the same key", { skip: skipReplay }, async () => {
  const { c, seen, delays } = client(["lose"]);
  const r = await c.addMessages("ts-retry", "chat", [{ role: "user", text: "My locker code is 7731." }]);
  assert.equal(seen.length, 2);
  assert.ok(keys(seen)[0] && keys(seen)[0] === keys(seen)[1]);
  assert.equal(r.replayed, true);
  assert.equal(r.messages_added, 1);
  const rec = await c.session("ts-retry", "chat");
  assert.deepEqual(rec.session.messages.map((m) => m.text), ["My locker code is 7731."]);
  assert.ok(delays[0][2] instanceof ConnectionError);
});

test("a key reused with another body is refused", { skip: skipReplay }, async () => {
  const { c } = client([]);
  const msg = (text) => [{ role: "user", text }];
  await c.addMessages("ts-retry", "reuse", msg("one"), {}, { idempotencyKey: "ts-key-1" });
  assert.equal((await c.addMessages("ts-retry", "reuse", msg("one"), {}, { idempotencyKey: "ts-key-1" })).replayed, true);
  await assert.rejects(c.addMessages("ts-retry", "reuse", msg("two"), {}, { idempotencyKey: "ts-key-1" }),
    (e) => e instanceof ApiError && e.status === 422 && e.code === "idempotency_key_reused");
});

test("each write gets its own key; a given key is sent verbatim; reads send none", { skip }, async () => {
  const { c, seen } = client([]);
  await c.ingestSession("ts-keys", { id: "a", messages: [{ role: "user", text: "hello" }] });
  await c.ingestSessions("ts-keys", [{ id: "b", messages: [{ role: "user", text: "hi" }] }], { idempotencyKey: "caller-key" });
  await c.recall("ts-keys", "hello");
  const [first, given, read] = keys(seen);
  assert.match(first, /^[0-9a-f-]{36}$/);
  assert.equal(given, "caller-key");
  assert.equal(read, undefined);
  await assert.rejects(c.ingestSession("ts-keys", { id: "c", messages: [] }, { idempotencyKey: "has space" }), TypeError);
  assert.equal(seen.length, 3);
});

test("Retry-After is honoured and reads retry on 5xx", { skip }, async () => {
  const { c, seen, delays } = client([[503, { "Retry-After": "1" }], [500, {}]]);
  assert.equal((await c.health()).status, "ok");
  assert.equal(seen.length, 3);
  assert.ok(delays[0][1] >= 1000 && delays[1][1] < 1000);
  assert.equal(delays[0][2].retryAfter, 1);
});

test("retries stop at maxRetries; a Retry-After past the limit is not waited for", { skip }, async () => {
  let { c, seen } = client([[503, {}], [503, {}], [503, {}], [503, {}]], { maxRetries: 2 });
  await assert.rejects(c.spaces(), (e) => e instanceof ApiError && e.status === 503);
  assert.equal(seen.length, 3);
  ({ c, seen } = client([[503, { "Retry-After": "3600" }]]));
  await assert.rejects(c.spaces(), ApiError);
  assert.equal(seen.length, 1);
});

test("deletes are retried only when the server surely did not act", { skip }, async () => {
  const a = new Cairn({ baseUrl: server.url, apiKey: server.admin });
  for (const id of ["d1", "d2", "d3"]) await a.ingestSession("ts-del", { id, messages: [{ role: "user", text: `note ${id}` }] });
  let { c, seen } = client(["lose"]);
  await assert.rejects(c.forgetSession("ts-del", "d1"), ConnectionError);
  assert.equal(seen.length, 1);
  ({ c, seen } = client([[500, {}]]));
  await assert.rejects(c.forgetSession("ts-del", "d2"), ApiError);
  assert.equal(seen.length, 1);
  ({ c, seen } = client(["refuse", [429, { "Retry-After": "0" }]]));
  assert.ok((await c.forgetSession("ts-del", "d3")) > 0);
  assert.equal(seen.length, 3);
});

test("an answer of the wrong shape is a CairnError, not retried", { skip }, async () => {
  const { c, seen } = client(["html"]);
  await assert.rejects(c.recall("ts-keys", "anything"), (e) =>
    e instanceof CairnError && !(e instanceof ApiError) && !(e instanceof ConnectionError) && /unexpected answer/.test(e.message));
  assert.equal(seen.length, 1);
});

test("a server that never answers times out", async () => {
  const sockets = [];
  const silent = createServer((s) => sockets.push(s));
  await new Promise((r) => silent.listen(0, "127.0.0.1", r));
  try {
    const c = new Cairn({ baseUrl: `http://127.0.0.1:${silent.address().port}`, timeoutMs: 200,
      retry: { ...FAST, maxRetries: 1 } });
    const t0 = Date.now();
    await assert.rejects(c.health(), (e) => e instanceof TimeoutError && e instanceof CairnError);
    const took = Date.now() - t0;
    assert.ok(took >= 400 && took < 5000, `two attempts of 200 ms, took ${took} ms`);
  } finally {
    sockets.forEach((s) => s.destroy());
    silent.close();
  }
});

test("a closed port is a connection error after the retries, even for a delete", async () => {
  const probe = createServer();
  await new Promise((r) => probe.listen(0, "127.0.0.1", r));
  const port = probe.address().port;
  await new Promise((r) => probe.close(r));
  const seen = [];
  const c = new Cairn({ baseUrl: `http://127.0.0.1:${port}`, retry: { ...FAST, maxRetries: 2, onRetry: (n) => seen.push(n) } });
  await assert.rejects(c.forgetSession("s", "x"), ConnectionError);
  assert.deepEqual(seen, [1, 2]);
});

test("an abort signal cancels the call and its retries", { skip }, async () => {
  const { c, seen } = client([[503, { "Retry-After": "30" }]], { maxRetryAfterMs: 60_000 });
  const ac = new AbortController();
  setTimeout(() => ac.abort(new Error("caller gave up")), 100);
  await assert.rejects(c.spaces({ signal: ac.signal }), /caller gave up/);
  assert.equal(seen.length, 1);
});
