/**
 * `Cairn`: one method per route of the HTTP API (the table is `ROUTES` in routes.ts),
 * the same methods as the Python client (names in camelCase), typed results.
 */
import { send, fill, idempotencyKey, IDEMPOTENCY_HEADER, REPLAYED_HEADER, type Call, type RetryPolicy, type Safety, type Transport } from "./core.js";
import type * as T from "./types.js";
import { VERSION } from "./version.js";

export interface CairnOptions {
  /** Default: `CAIRN_URL` from the environment (Node, Deno, Bun), else
   *  `http://127.0.0.1:7700`. */
  baseUrl?: string;
  /** A key from `cairn keys create`, or the admin key; none with `--no-auth`. Default:
   *  `CAIRN_API_KEY` from the environment, where there is one. */
  apiKey?: string;
  /** Per attempt, from sending to the end of the answer's body (default 60 000 ms).
   * `fetch` has no separate connect timeout. */
  timeoutMs?: number;
  /** Retries (`{ maxRetries: 0 }` never retries). */
  retry?: RetryPolicy;
  headers?: Record<string, string>;
  /** A `fetch` to use instead of the global one (proxies, tests, older runtimes). */
  fetch?: typeof fetch;
  /** Called with each warning an answer carries (`warnings`: a `filter` key no session
   * carries, ...), also for the methods that return a bare list (`subjects`, `entities`,
   * `speakers`). Default: none (the answers' own `warnings` still hold them). */
  onWarning?: (w: T.Warning) => void;
}

/** Options every method takes last: `signal` cancels the call (and its retries). */
export interface CallOptions {
  signal?: AbortSignal;
}

/** Writes also take the idempotency key to send (default: a fresh uuid4 per call). */
export interface WriteOptions extends CallOptions {
  idempotencyKey?: string;
}

const json = <R>() => async (r: Response): Promise<R> => (await r.json()) as R;
const field = <R>(name: string) => async (r: Response): Promise<R> =>
  ((await r.json()) as Record<string, unknown>)[name] as R;
const report = async (r: Response): Promise<T.IngestReport> => ({
  trajectories: 0,
  ...((await r.json()) as Omit<T.IngestReport, "replayed">),
  replayed: (r.headers.get(REPLAYED_HEADER) ?? "").trim().toLowerCase() === "true",
});

function call<R>(method: Call<R>["method"], route: string, read: Call<R>["read"],
  segments: Record<string, string | number> = {}, safety: Safety = "read"): Call<R> {
  return { method, route, path: fill(route, segments), read, safety };
}

function write(route: string, body: unknown, opts: WriteOptions | undefined,
  segments: Record<string, string>): Call<T.IngestReport> {
  const c = call("POST", route, report, segments, "idempotent");
  c.json = body;
  c.headers = { [IDEMPOTENCY_HEADER]: idempotencyKey(opts?.idempotencyKey) };
  return c;
}

function pageQuery(o: T.ListMemoriesOptions = {}): Record<string, string | number | undefined> {
  return { limit: 50, offset: 0, ...scopeQuery(o) };
}

/** Query parameters of a read's scope: `filter` as JSON text (the server takes it so). */
function scopeQuery<O extends { filter?: T.Filter }>(o: O): Record<string, string | number | undefined> {
  const { filter, ...rest } = o;
  return { ...(rest as Record<string, string | number | undefined>),
    filter: filter === undefined ? undefined : JSON.stringify(filter) };
}

/** A variable of the process environment, where the runtime has one (not in browsers). */
function env(name: string): string | undefined {
  const p = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process;
  return p?.env?.[name] || undefined;
}

export class Cairn {
  private readonly t: Transport;

  constructor(options: CairnOptions = {}) {
    const headers: Record<string, string> = { Accept: "application/json", ...options.headers };
    const apiKey = options.apiKey ?? env("CAIRN_API_KEY");
    if (apiKey) headers.Authorization = `Bearer ${apiKey}`;
    // Browsers refuse to let scripts set User-Agent; elsewhere it names the client.
    if (typeof (globalThis as { window?: unknown }).window === "undefined") {
      headers["User-Agent"] = `cairn-client-js/${VERSION}`;
    }
    const f = options.fetch ?? globalThis.fetch;
    if (!f) throw new TypeError("no fetch in this runtime: pass options.fetch");
    this.t = {
      baseUrl: (options.baseUrl ?? env("CAIRN_URL") ?? "http://127.0.0.1:7700").replace(/\/+$/, ""),
      headers,
      timeoutMs: options.timeoutMs ?? 60_000,
      retry: options.retry ?? {},
      fetch: (...args) => f(...args),
      onWarning: options.onWarning,
    };
  }

  private run<R>(c: Call<R>, o?: CallOptions): Promise<R> {
    return send(this.t, c, o?.signal);
  }

  // ---- service
  /** Liveness (no key needed). */
  async health(o?: CallOptions): Promise<T.Health> {
    return this.run(call("GET", "/v1/health", json<T.Health>()), o);
  }
  /** Readiness: the store answers reads (503 `not_ready` otherwise). */
  async ready(o?: CallOptions): Promise<T.Ready> {
    return this.run(call("GET", "/v1/ready", json<T.Ready>()), o);
  }
  /** The server's OpenAPI document. */
  async openapi(o?: CallOptions): Promise<Record<string, unknown>> {
    return this.run(call("GET", "/v1/openapi.json", json<Record<string, unknown>>()), o);
  }
  /** One JSON-RPC message to the MCP endpoint; the answer, or null for a notification. */
  async mcp(message: Record<string, unknown>, o?: CallOptions): Promise<Record<string, unknown> | null> {
    const c = call("POST", "/mcp", async (r) => {
      const text = await r.text();
      return text ? (JSON.parse(text) as Record<string, unknown>) : null;
    }, {}, "unsafe");
    c.json = message;
    c.headers = { Accept: "application/json, text/event-stream" };
    return this.run(c, o);
  }

  // ---- spaces
  /** The spaces this key may see. */
  async spaces(o?: CallOptions): Promise<string[]> {
    return this.run(call("GET", "/v1/spaces", field<string[]>("spaces")), o);
  }
  /** Who the key is: admin or not, read-only or not, the spaces it sees and is for. */
  async me(o?: CallOptions): Promise<T.Me> {
    return this.run(call("GET", "/v1/me", json<T.Me>()), o);
  }
  /** Makes a key for `spaces` (the admin key only); its `token` is in this answer alone.
   * With `partition` (`{ user_id: "u1" }`) the key is pinned to that end user. */
  async createKey(spaces: string[], opts: { read_only?: boolean; label?: string; partition?: T.Partition } = {},
    o?: CallOptions): Promise<T.NewKey> {
    const c = call("POST", "/v1/keys", json<T.NewKey>(), {}, "unsafe");
    c.json = { spaces, ...opts } satisfies T.CreateKey;
    return this.run(c, o);
  }
  /** Every key, revoked ones included, never with its token (the admin key only). */
  async keys(o?: CallOptions): Promise<T.KeyInfo[]> {
    return this.run(call("GET", "/v1/keys", json<T.KeyInfo[]>()), o);
  }
  /** Revokes a key by id (the admin key only); it stops working on its next request. */
  async revokeKey(keyId: string, o?: CallOptions): Promise<void> {
    await this.run(call("DELETE", "/v1/keys/{id}", json<unknown>(), { id: keyId }, "unsafe"), o);
  }
  /** Creates a space: true if created, false if it existed (so repeating is safe). */
  async createSpace(name: string, o?: CallOptions): Promise<boolean> {
    const c = call("POST", "/v1/spaces", field<boolean>("created"));
    c.json = { name };
    return this.run(c, o);
  }
  /** Forgets a space: every session, unit, index entry and cached vector. */
  async deleteSpace(space: string, o?: CallOptions): Promise<void> {
    await this.run(call("DELETE", "/v1/spaces/{space}", json<unknown>(), { space }, "unsafe"), o);
  }
  /** Counts of every visible space, or (space given) of that one, as a list of one. */
  async stats(space?: string, o?: CallOptions): Promise<T.SpaceStats[]> {
    if (space === undefined) return this.run(call("GET", "/v1/stats", field<T.SpaceStats[]>("spaces")), o);
    return this.run(call("GET", "/v1/spaces/{space}/stats",
      async (r) => [(await r.json()) as T.SpaceStats], { space }), o);
  }

  // ---- ingest (writes carry an idempotency key)
  /** Stores a session; a stored id accepts only appended messages (else 409 `conflict`). */
  async ingestSession(space: string, session: T.SessionInput, o?: WriteOptions): Promise<T.IngestReport> {
    return this.run(write("/v1/spaces/{space}/sessions", session, o, { space }), o);
  }
  /** Stores sessions in one batch, all validated before any is written. */
  async ingestSessions(space: string, sessions: T.SessionInput[], o?: WriteOptions): Promise<T.IngestReport> {
    return this.run(write("/v1/spaces/{space}/sessions/batch", { sessions }, o, { space }), o);
  }
  /** Mem0's `add`: appends messages to a session, creating it on first use. */
  async addMessages(space: string, sessionId: string, messages: T.Message[],
    extra: Omit<T.AddMessages, "session_id" | "messages"> = {}, o?: WriteOptions): Promise<T.IngestReport> {
    const body = { session_id: sessionId, messages, ...extra };
    return this.run(write("/v1/spaces/{space}/messages", body, o, { space }), o);
  }
  /** Group-chat messages; each group's day is a session `<group>/<YYYY-MM-DD>`. */
  async addGroupMessages(space: string, messages: T.GroupMessage[], o?: WriteOptions): Promise<T.IngestReport> {
    return this.run(write("/v1/spaces/{space}/group-messages", { messages }, o, { space }), o);
  }
  /** Agent runs, kept verbatim; slices, events and a note are derived from each. */
  async insertTrajectories(space: string, trajectories: T.TrajectoryInput[], o?: WriteOptions): Promise<T.IngestReport> {
    return this.run(write("/v1/spaces/{space}/trajectories", { trajectories }, o, { space }), o);
  }
  /** Restores an export of this space (JSONL, as `export` writes it). */
  async import(space: string, jsonl: string, o?: WriteOptions): Promise<T.IngestReport> {
    const c = write("/v1/spaces/{space}/import", undefined, o, { space });
    c.body = jsonl;
    c.headers = { ...c.headers, "Content-Type": "application/x-ndjson" };
    return this.run(c, o);
  }

  // ---- recall
  /** Ranked, cited evidence for `query`, packed into `token_budget` tokens. */
  async recall(space: string, query: string, options: T.RecallOptions = {}, o?: CallOptions): Promise<T.Recall> {
    const c = call("POST", "/v1/spaces/{space}/recall", json<T.Recall>(), { space });
    c.json = { query, ...options } satisfies T.RecallRequest;
    return this.run(c, o);
  }

  // ---- sessions
  /** Sessions exactly as ingested, in ingest order, optionally filtered. */
  async sessions(space: string, options: T.ListSessionsOptions = {}, o?: CallOptions): Promise<T.SessionPage> {
    const c = call("GET", "/v1/spaces/{space}/sessions", json<T.SessionPage>(), { space });
    c.query = pageQuery(options);
    return this.run(c, o);
  }
  async session(space: string, sessionId: string, o?: CallOptions): Promise<T.SessionRecord> {
    return this.run(call("GET", "/v1/spaces/{space}/sessions/{session}", json<T.SessionRecord>(),
      { space, session: sessionId }), o);
  }
  /** Every unit derived from a session, in write order; 404 when it is not stored. */
  async sessionUnits(space: string, sessionId: string, o?: CallOptions): Promise<T.Unit[]> {
    return this.run(call("GET", "/v1/spaces/{space}/sessions/{session}/units", field<T.Unit[]>("units"),
      { space, session: sessionId }), o);
  }
  /** Forgets a session and everything derived from it; the units removed. */
  async forgetSession(space: string, sessionId: string, o?: CallOptions): Promise<number> {
    return this.run(call("DELETE", "/v1/spaces/{space}/sessions/{session}", field<number>("removed_units"),
      { space, session: sessionId }, "unsafe"), o);
  }
  /** Forgets one message (the session is re-derived without it); the units removed. With
   *  `exchange: true` the reply to it goes too: the next message, when the other party wrote
   *  it (so "Congratulations on the move to Lisbon!" goes with "I moved to Lisbon"). */
  async forgetMessage(space: string, sessionId: string, messageId: string,
    options: T.ForgetMessageOptions = {}, o?: CallOptions): Promise<number> {
    const c = call("DELETE", "/v1/spaces/{space}/sessions/{session}/messages/{message}",
      field<number>("removed_units"), { space, session: sessionId, message: messageId }, "unsafe");
    if (options.exchange) c.query = { exchange: "true" };
    return this.run(c, o);
  }
  /** Forgets an end user (a data-protection request, Mem0's `delete_all(user_id=...)`):
   *  every session whose metadata holds the partition's values (`{ user_id: "u1" }`; keys
   *  `user_id`, `agent_id`, `namespace`) and everything derived from them. A partition
   *  holding no session answers zeros, not an error. */
  async forgetPartition(space: string, partition: T.Partition, o?: CallOptions): Promise<T.ForgotPartition> {
    const c = call("POST", "/v1/spaces/{space}/partitions/forget", json<T.ForgotPartition>(), { space }, "unsafe");
    c.json = { partition };
    return this.run(c, o);
  }

  // ---- memories
  /** Memories in time order, filtered and paginated: one per message, fact and trajectory
   *  by default; `kind` lists a derived kind (`round`, ...) or `all` units. */
  async memories(space: string, options: T.ListMemoriesOptions = {}, o?: CallOptions): Promise<T.UnitPage> {
    const c = call("GET", "/v1/spaces/{space}/memories", json<T.UnitPage>(), { space });
    c.query = pageQuery(options);
    return this.run(c, o);
  }
  async memory(space: string, memoryId: string, o?: CallOptions): Promise<T.Unit> {
    return this.run(call("GET", "/v1/spaces/{space}/memories/{id}", json<T.Unit>(), { space, id: memoryId }), o);
  }
  /** Forgets the messages a memory came from (the whole session for an episode). */
  async deleteMemory(space: string, memoryId: string, o?: CallOptions): Promise<T.ForgotMemory> {
    return this.run(call("DELETE", "/v1/spaces/{space}/memories/{id}", json<T.ForgotMemory>(),
      { space, id: memoryId }, "unsafe"), o);
  }

  // ---- export
  /** JSONL: one session record per line, then one trajectory record per line. */
  async export(space: string, o?: CallOptions): Promise<string> {
    const c = call("GET", "/v1/spaces/{space}/export", (r) => r.text(), { space });
    c.headers = { Accept: "application/x-ndjson" };
    return this.run(c, o);
  }

  // ---- facts and people
  /** The versions of a fact subject, oldest first (the last is current), among what the
   * scope sees (`filter`, `as_of`). */
  async history(space: string, subject: string, options: T.ScopeOptions = {}, o?: CallOptions): Promise<T.FactHistory> {
    const c = call("GET", "/v1/spaces/{space}/history", json<T.FactHistory>(), { space });
    c.query = { subject, ...scopeQuery(options) };
    return this.run(c, o);
  }
  /** Every subject the space holds versioned facts about (as of `as_of`, default now; of
   * the sessions `filter` admits). */
  async subjects(space: string, options: T.ScopeOptions = {}, o?: CallOptions): Promise<T.FactSubject[]> {
    const c = call("GET", "/v1/spaces/{space}/subjects", field<T.FactSubject[]>("subjects"), { space });
    c.query = scopeQuery(options);
    return this.run(c, o);
  }
  /** The people, places, organizations and things the space names, most linked first
   * (`q`: only names or aliases containing it). */
  async entities(space: string, options: T.ScopeOptions & { q?: string } = {}, o?: CallOptions): Promise<T.EntitySummary[]> {
    const c = call("GET", "/v1/spaces/{space}/entities", field<T.EntitySummary[]>("entities"), { space });
    c.query = scopeQuery(options);
    return this.run(c, o);
  }
  /** One entity by name or alias, with its mentions, relations and timeline. */
  async entity(space: string, name: string, options: T.ScopeOptions = {}, o?: CallOptions): Promise<T.EntityDetail> {
    const c = call("GET", "/v1/spaces/{space}/entities/{name}", json<T.EntityDetail>(), { space, name });
    c.query = scopeQuery(options);
    return this.run(c, o);
  }
  async speakers(space: string, options: T.ScopeOptions = {}, o?: CallOptions): Promise<string[]> {
    const c = call("GET", "/v1/spaces/{space}/speakers", field<string[]>("speakers"), { space });
    c.query = scopeQuery(options);
    return this.run(c, o);
  }
  /** What the space shows of a person (a name several users' sessions know needs a
   * `filter`: whose). */
  async profile(space: string, speaker: string, options: T.ScopeOptions = {}, o?: CallOptions): Promise<T.SpeakerProfile> {
    const c = call("GET", "/v1/spaces/{space}/profiles/{speaker}", json<T.SpeakerProfile>(),
      { space, speaker });
    c.query = scopeQuery(options);
    return this.run(c, o);
  }

  // ---- trajectories
  /** The manifest: goal, outcome, steps and URLs of every trajectory. */
  async trajectories(space: string, o?: CallOptions): Promise<T.TrajectorySummary[]> {
    return this.run(call("GET", "/v1/spaces/{space}/trajectories",
      field<T.TrajectorySummary[]>("trajectories"), { space }), o);
  }
  async trajectory(space: string, trajectoryId: string, o?: CallOptions): Promise<T.TrajectoryRecord> {
    return this.run(call("GET", "/v1/spaces/{space}/trajectories/{id}", json<T.TrajectoryRecord>(),
      { space, id: trajectoryId }), o);
  }
  async trajectoryState(space: string, trajectoryId: string, index: number, o?: CallOptions): Promise<T.AgentState> {
    return this.run(call("GET", "/v1/spaces/{space}/trajectories/{id}/states/{index}", json<T.AgentState>(),
      { space, id: trajectoryId, index }), o);
  }
  async forgetTrajectory(space: string, trajectoryId: string, o?: CallOptions): Promise<number> {
    return this.run(call("DELETE", "/v1/spaces/{space}/trajectories/{id}", field<number>("removed_units"),
      { space, id: trajectoryId }, "unsafe"), o);
  }
  /** The slices, events and note derived from a trajectory; 404 when it is not stored. */
  async trajectoryUnits(space: string, trajectoryId: string, o?: CallOptions): Promise<T.Unit[]> {
    return this.run(call("GET", "/v1/spaces/{space}/trajectories/{id}/units", field<T.Unit[]>("units"),
      { space, id: trajectoryId }), o);
  }

  // ---- trajectory inspection (every answer bounded; its cuts said in `truncated`)
  /** A page of the manifest in insert order; `form: "full"` adds every state's line. */
  async trajectoryManifest(space: string, options: T.ManifestOptions = {}, o?: CallOptions): Promise<T.Manifest> {
    const c = call("GET", "/v1/spaces/{space}/trajectory-manifest", json<T.Manifest>(), { space });
    c.query = { form: options.form, offset: options.offset, limit: options.limit };
    return this.run(c, o);
  }
  /** Goal, start URL, outcome and a line per state (at most 120). */
  async trajectorySummary(space: string, trajectoryId: string, o?: CallOptions): Promise<T.TrajectoryOverview> {
    return this.run(call("GET", "/v1/spaces/{space}/trajectories/{id}/summary", json<T.TrajectoryOverview>(),
      { space, id: trajectoryId }), o);
  }
  /** One state for reading, the page cut in the middle to `max_chars` (default 6000). */
  async trajectoryStateView(space: string, trajectoryId: string, index: number,
    options: { max_chars?: number } = {}, o?: CallOptions): Promise<T.StateView> {
    const c = call("GET", "/v1/spaces/{space}/trajectories/{id}/states/{index}/view", json<T.StateView>(),
      { space, id: trajectoryId, index });
    c.query = { max_chars: options.max_chars };
    return this.run(c, o);
  }
  /** States `start` to `end` (inclusive; at most 10), each page cut to `max_chars` (2500). */
  async trajectorySpan(space: string, trajectoryId: string, start: number, end: number,
    options: { max_chars?: number } = {}, o?: CallOptions): Promise<T.SpanView> {
    const c = call("GET", "/v1/spaces/{space}/trajectories/{id}/span", json<T.SpanView>(), { space, id: trajectoryId });
    c.query = { start, end, max_chars: options.max_chars };
    return this.run(c, o);
  }
  /** The states of one trajectory matching `pattern` (`mode`: `regex`, the default, or `words`). */
  async trajectoryMatch(space: string, trajectoryId: string, pattern: string,
    options: T.PatternOptions = {}, o?: CallOptions): Promise<T.Matches> {
    const c = call("GET", "/v1/spaces/{space}/trajectories/{id}/match", json<T.Matches>(), { space, id: trajectoryId });
    c.query = { pattern, mode: options.mode, limit: options.limit };
    return this.run(c, o);
  }
  /** (trajectory, state) pairs of the space holding `pattern` (`mode`: `words`, the default, or `regex`). */
  async trajectorySearch(space: string, pattern: string, options: T.PatternOptions = {}, o?: CallOptions): Promise<T.Matches> {
    const c = call("GET", "/v1/spaces/{space}/trajectory-search", json<T.Matches>(), { space });
    c.query = { pattern, mode: options.mode, limit: options.limit };
    return this.run(c, o);
  }
  /** Renders a note and spans within `token_budget` tokens (never exceeded). A read. */
  async trajectoryContext(space: string, request: T.ContextRequest, o?: CallOptions): Promise<T.RenderedContext> {
    const c = call("POST", "/v1/spaces/{space}/trajectory-context", json<T.RenderedContext>(), { space });
    c.json = request;
    return this.run(c, o);
  }
  /** Recall + inspection (no LLM): shortlisted runs' best states as spans, rendered. A read. */
  async trajectoryInspect(space: string, question: string, options: T.InspectOptions = {}, o?: CallOptions): Promise<T.InspectedRecall> {
    const c = call("POST", "/v1/spaces/{space}/trajectory-inspect", json<T.InspectedRecall>(), { space });
    c.json = { question, ...options } satisfies T.InspectRequest;
    return this.run(c, o);
  }
  /** Runs the agent controller with the server's LLM; without one (or when it fails) the
   * answer is the fallback. It writes nothing, but a run costs model calls and may outlast
   * `timeoutMs`, so it is retried only when the server surely did not start it. */
  async trajectoryAgent(space: string, question: string, options: T.AgentOptions = {}, o?: CallOptions): Promise<T.AgentRun> {
    const c = call("POST", "/v1/spaces/{space}/trajectory-agent", json<T.AgentRun>(), { space }, "unsafe");
    c.json = { question, ...options } satisfies T.AgentRequest;
    return this.run(c, o);
  }
}
