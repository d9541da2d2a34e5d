/**
 * The wire mapping without the client class: a `Call` is one request (method, route,
 * body, how to read the answer, how safe it is to send twice); `send` runs it with
 * retries. Everything here uses only `fetch`, `AbortSignal` and timers, so it runs on
 * Node 18+, Deno, Bun and browsers.
 */
import { ApiError, CairnError, ConnectionError, TimeoutError } from "./errors.js";
import type { Warning } from "./types.js";

/** How a call may be repeated when an attempt's outcome is unknown. */
export type Safety =
  /** Reads (and recall): repeating changes nothing. */
  | "read"
  /** Writes carrying an `Idempotency-Key`: the server answers a repeat with the first answer. */
  | "idempotent"
  /** Deletes and MCP messages: repeated only when the server surely did not act. */
  | "unsafe";

export interface Call<T> {
  method: "GET" | "POST" | "DELETE";
  /** The route as the spec writes it, e.g. `/v1/spaces/{space}/recall`. */
  route: string;
  path: string;
  query?: Record<string, string | number | undefined>;
  json?: unknown;
  body?: string;
  headers?: Record<string, string>;
  safety: Safety;
  read: (response: Response) => Promise<T>;
}

/** Retries with exponential backoff and jitter. An attempt is retried (at most
 * `maxRetries` times) when it failed to connect, timed out, lost its connection, or was
 * answered 429 or 5xx, and repeating it is safe (see `Safety`). The wait before retry
 * `n` (0-based) is drawn from `[d/2, d]` with `d = min(maxBackoffMs, backoffMs * 2^n)`;
 * a longer `Retry-After` is waited instead, and one past `maxRetryAfterMs` not at all
 * (the error is thrown at once). */
export interface RetryPolicy {
  maxRetries?: number;
  backoffMs?: number;
  maxBackoffMs?: number;
  maxRetryAfterMs?: number;
  /** Called before each wait with the retry's number (from 1), the wait and the error. */
  onRetry?: (attempt: number, delayMs: number, error: CairnError) => void;
}

export const DEFAULT_RETRY: Required<Omit<RetryPolicy, "onRetry">> = {
  maxRetries: 3,
  backoffMs: 500,
  maxBackoffMs: 8000,
  maxRetryAfterMs: 60_000,
};

export const IDEMPOTENCY_HEADER = "Idempotency-Key";
export const REPLAYED_HEADER = "Idempotency-Replayed";
const KEY = /^[\x21-\x7e]{1,255}$/;

function uuid4(): string {
  const c = (globalThis as { crypto?: Crypto }).crypto;
  if (c?.randomUUID) return c.randomUUID();
  const b = new Uint8Array(16);
  if (c?.getRandomValues) c.getRandomValues(b);
  else for (let i = 0; i < 16; i++) b[i] = Math.floor(Math.random() * 256);
  b[6] = (b[6]! & 0x0f) | 0x40;
  b[8] = (b[8]! & 0x3f) | 0x80;
  const h = [...b].map((x) => x.toString(16).padStart(2, "0")).join("");
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

/** The caller's key (checked: 1-255 visible ASCII characters) or a fresh uuid4. */
export function idempotencyKey(given?: string): string {
  if (given === undefined) return uuid4();
  if (typeof given !== "string" || !KEY.test(given)) {
    throw new TypeError("idempotencyKey must be 1-255 visible ASCII characters (no spaces)");
  }
  return given;
}

/** Fills a route template, percent-encoding each segment (a `/` in an id too). */
export function fill(route: string, segments: Record<string, string | number>): string {
  return route.replace(/\{([a-z_]+)\}/g, (_, name: string) => {
    const v = segments[name];
    if (v === undefined) throw new TypeError(`missing path segment ${name}`);
    return encodeURIComponent(String(v));
  });
}

export function retryAfterSeconds(response: Response): number | undefined {
  const raw = response.headers.get("retry-after")?.trim();
  if (!raw) return undefined;
  if (/^\d+$/.test(raw)) return Number(raw);
  const when = Date.parse(raw);
  return Number.isNaN(when) ? undefined : Math.max(0, (when - Date.now()) / 1000);
}

export async function apiError(response: Response): Promise<ApiError> {
  const text = await response.text().catch(() => "");
  let problem: Record<string, unknown>;
  try {
    const parsed: unknown = JSON.parse(text);
    problem = parsed && typeof parsed === "object" && !Array.isArray(parsed)
      ? (parsed as Record<string, unknown>)
      : { code: "http_error", detail: text };
  } catch {
    problem = { code: "http_error", detail: text.trim() || response.statusText };
  }
  return new ApiError(response.status, problem, retryAfterSeconds(response));
}

/** Node's fetch (undici) names the socket error in `cause.code`; these mean the request
 * never left (nothing to fear in repeating it). Browsers say nothing: unknown outcome. */
const NOT_SENT = new Set([
  "ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN", "EHOSTUNREACH", "ENETUNREACH",
  "UND_ERR_CONNECT_TIMEOUT", "UND_ERR_CONNECT",
]);

function causeCode(e: unknown): string | undefined {
  let c: unknown = e;
  for (let i = 0; i < 4 && c && typeof c === "object"; i++) {
    const code = (c as { code?: unknown }).code;
    if (typeof code === "string") return code;
    c = (c as { cause?: unknown }).cause;
  }
  return undefined;
}

export interface Transport {
  baseUrl: string;
  headers: Record<string, string>;
  timeoutMs: number;
  retry: RetryPolicy;
  fetch: typeof fetch;
  onWarning?: ((w: Warning) => void) | undefined;
}

/** Hands each of an answer's `warnings` to `onWarning` (read from a copy of the body: a
 * method that returns a bare list has no field to carry them). */
async function warnOf(t: Transport, response: Response): Promise<void> {
  if (!t.onWarning || !(response.headers.get("content-type") ?? "").startsWith("application/json")) return;
  const body: unknown = await response.clone().json();
  const ws = (body as { warnings?: unknown } | null)?.warnings;
  if (!Array.isArray(ws)) return;
  for (const w of ws) t.onWarning(w as Warning);
}

interface Failure {
  ok: false;
  error: CairnError;
  retryable: boolean;
  retryAfter?: number | undefined;
}

function url(t: Transport, call: Call<unknown>): string {
  const u = new URL(t.baseUrl + call.path);
  for (const [k, v] of Object.entries(call.query ?? {})) {
    if (v !== undefined) u.searchParams.set(k, String(v));
  }
  return u.toString();
}

type Outcome<T> = { ok: true; value: T } | Failure;

async function attempt<T>(t: Transport, call: Call<T>, signal?: AbortSignal): Promise<Outcome<T>> {
  const timeout = AbortSignal.timeout(t.timeoutMs);
  const both = signal ? anySignal([signal, timeout]) : timeout;
  const headers: Record<string, string> = { ...t.headers, ...call.headers };
  let body: string | undefined = call.body;
  if (call.json !== undefined) {
    body = JSON.stringify(call.json);
    headers["Content-Type"] ??= "application/json";
  }
  let response: Response;
  try {
    response = await t.fetch(url(t, call), { method: call.method, headers, body, signal: both });
    if (response.ok) {
      await warnOf(t, response);
      return { ok: true, value: await call.read(response) };
    }
  } catch (e) {
    if (e instanceof SyntaxError) {
      // A 2xx that is not JSON (a proxy's page, another server): not worth repeating.
      throw new CairnError(`unexpected answer to ${call.method} ${call.path}: ${e.message}`, { cause: e });
    }
    if (signal?.aborted) throw signal.reason ?? e;
    if (timeout.aborted) {
      return { ok: false, error: new TimeoutError(`no answer within ${t.timeoutMs} ms`, { cause: e }),
        retryable: call.safety !== "unsafe" };
    }
    if (e instanceof CairnError) throw e;
    const code = causeCode(e);
    return {
      ok: false,
      error: new ConnectionError(`connection failed${code ? ` (${code})` : ""}: ${String(e)}`, { cause: e }),
      retryable: (code !== undefined && NOT_SENT.has(code)) || call.safety !== "unsafe",
    };
  }
  const error = await apiError(response);
  // 429: refused before it was handled; a 5xx may have come after a write happened.
  const retryable = response.status === 429 || (response.status >= 500 && call.safety !== "unsafe");
  return { ok: false, error, retryable, retryAfter: error.retryAfter };
}

function anySignal(signals: AbortSignal[]): AbortSignal {
  const any = (AbortSignal as unknown as { any?: (s: AbortSignal[]) => AbortSignal }).any;
  if (any) return any(signals);
  const c = new AbortController();
  for (const s of signals) {
    if (s.aborted) c.abort(s.reason);
    else s.addEventListener("abort", () => c.abort(s.reason), { once: true });
  }
  return c.signal;
}

const sleep = (ms: number, signal?: AbortSignal) => new Promise<void>((resolve, reject) => {
  const id = setTimeout(resolve, ms);
  signal?.addEventListener("abort", () => { clearTimeout(id); reject(signal.reason); }, { once: true });
});

/** Runs a call: attempts, waits and retries as the policy says; the value or the last error. */
export async function send<T>(t: Transport, call: Call<T>, signal?: AbortSignal): Promise<T> {
  const p = { ...DEFAULT_RETRY, ...t.retry };
  for (let n = 0; ; n++) {
    const out = await attempt(t, call, signal);
    if (out.ok) return out.value;
    if (!out.retryable || n >= p.maxRetries) throw out.error;
    const asked = out.retryAfter !== undefined ? out.retryAfter * 1000 : undefined;
    if (asked !== undefined && asked > p.maxRetryAfterMs) throw out.error;
    const d = Math.min(p.maxBackoffMs, p.backoffMs * 2 ** n);
    const delay = Math.max(d / 2 + Math.random() * (d / 2), asked ?? 0);
    p.onRetry?.(n + 1, delay, out.error);
    await sleep(delay, signal);
  }
}
