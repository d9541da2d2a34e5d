// The client against the API's source of truth, crates/cairn-server/openapi.json (no
// server needed): every route has a method (ROUTES), it is the Python client's method of
// that route, and it sends that route. The types are checked by scripts/check-spec.mjs.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { Cairn, ROUTES, VERSION } from "../dist/index.js";
import { ROOT, SPEC_PATH } from "./server.mjs";

const spec = JSON.parse(readFileSync(SPEC_PATH, "utf8"));
// The inspector's page and files (HTML, scripts) are for browsers, not the client.
const NOT_API_TAGS = ["inspector"];
const specRoutes = Object.entries(spec.paths).flatMap(([path, ops]) =>
  Object.entries(ops).filter(([m, op]) => m !== "parameters" && !(op.tags ?? []).some((t) => NOT_API_TAGS.includes(t)))
    .map(([m]) => `${m.toUpperCase()} ${path}`));

test("every route of openapi.json has a method, and no method a route the spec lacks", () => {
  const missing = specRoutes.filter((r) => !(r in ROUTES));
  assert.deepEqual(missing, [], `routes without a TypeScript client method: ${missing.join(", ")}`);
  const unknown = Object.keys(ROUTES).filter((r) => !specRoutes.includes(r));
  assert.deepEqual(unknown, [], `methods for routes openapi.json does not list: ${unknown.join(", ")}`);
  for (const name of new Set(Object.values(ROUTES))) {
    assert.equal(typeof Cairn.prototype[name], "function", `Cairn lacks ${name}`);
  }
});

test("each route's method is the Python client's method of that route", () => {
  const py = readFileSync(join(ROOT, "clients", "python", "cairn_client", "_api.py"), "utf8");
  const pyRoutes = {};
  for (const m of py.matchAll(/@route\(([^)]*)\)\s*\ndef (\w+)/g)) {
    for (const r of m[1].matchAll(/"([^"]+)"/g)) pyRoutes[r[1]] = m[2];
  }
  assert.ok(Object.keys(pyRoutes).length >= specRoutes.length, "read the Python route table");
  const camel = (s) => s.replace(/_+$/, "").replace(/_([a-z])/g, (_, c) => c.toUpperCase());
  for (const [route, name] of Object.entries(ROUTES)) {
    assert.equal(name, camel(pyRoutes[route] ?? "(none)"), `${route}: TypeScript ${name}, Python ${pyRoutes[route]}`);
  }
});

test("each method sends its route", async () => {
  for (const [route, name] of Object.entries(ROUTES)) {
    const [method, template] = route.split(" ");
    const segments = [...template.matchAll(/\{(\w+)\}/g)].map((_, i) => `seg ${i}/x`);
    let seen;
    const recorder = async (url, init) => {
      seen = { url: new URL(url), method: init.method };
      return new Response("{}", { status: 200, headers: { "Content-Type": "application/json" } });
    };
    const c = new Cairn({ baseUrl: "http://cairn.test", fetch: recorder, retry: { maxRetries: 0 } });
    await c[name](...segments).catch(() => {});
    assert.ok(seen, `${name} sent nothing`);
    let i = 0;
    const want = template.replace(/\{\w+\}/g, () => encodeURIComponent(segments[i++]));
    assert.equal(`${seen.method} ${seen.url.pathname}`, `${method} ${want}`, `${name} for ${route}`);
  }
});

test("the version agrees with package.json and the changelog", () => {
  const here = join(ROOT, "clients", "typescript");
  assert.equal(JSON.parse(readFileSync(join(here, "package.json"), "utf8")).version, VERSION);
  assert.match(readFileSync(join(here, "CHANGELOG.md"), "utf8"), new RegExp(`^## ${VERSION.replace(/\./g, "\\.")}\\b`, "m"));
});
