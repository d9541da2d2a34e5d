// The API client of the inspector: every call goes to this server's /v1 with the key
// the user signed in with (kept in this tab's sessionStorage, sent as a Bearer header).
const KEY = "cairn.inspector.key";

export function key() {
  return sessionStorage.getItem(KEY);
}

export function setKey(k) {
  sessionStorage.setItem(KEY, k);
}

export function clearKey() {
  sessionStorage.removeItem(KEY);
}

/** A problem document the server answered with. */
export class ApiError extends Error {
  constructor(status, problem) {
    super(problem.detail || `HTTP ${status}`);
    this.status = status;
    this.code = problem.code || "";
    this.field = problem.field || null;
  }
}

/** Calls the API; resolves to the parsed JSON, or the Response itself with `raw`. */
export async function api(method, path, body, opts = {}) {
  const headers = { Authorization: `Bearer ${key() || ""}` };
  const init = { method, headers };
  if (body !== undefined) {
    headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const r = await fetch(path, init);
  if (!r.ok) {
    let problem = {};
    try {
      problem = await r.json();
    } catch {
      problem = { detail: r.statusText };
    }
    throw new ApiError(r.status, problem);
  }
  return opts.raw ? r : r.json();
}

export const enc = encodeURIComponent;

/** The API path of a space, with more segments (each encoded). */
export function sp(space, ...rest) {
  return ["/v1/spaces", space, ...rest].map((s, i) => (i ? enc(s) : s)).join("/");
}

let openapiDoc;
/** The unit kinds (`all`) and those a listing shows by default (`memories`), as the
 * server's OpenAPI document states them: the library's lists, not copies of them. */
export async function unitKinds() {
  // A failed read is not kept: the next view asks again.
  openapiDoc ??= api("GET", "/v1/openapi.json").catch((e) => {
    openapiDoc = undefined;
    throw e;
  });
  const doc = await openapiDoc;
  const kind = doc.paths["/v1/spaces/{space}/memories"].get.parameters.find((p) => p.name === "kind");
  return { all: doc.components.schemas.RecallRequest.properties.kinds.items.enum, memories: kind["x-memory-kinds"] };
}
