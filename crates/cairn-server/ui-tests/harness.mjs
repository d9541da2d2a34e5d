// A real `cairn serve` on a fresh data directory and loopback port, keys made by
// `cairn keys create`, data written through the HTTP API, and Debian's Chromium driven by
// playwright-core (never a browser it downloads itself).
import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { chromium } from "playwright-core";

export const ADMIN = "inspector-admin-key-0123456789abcdef";
const ROOT = resolve(import.meta.dirname, "../../..");
export const SCREENSHOTS = join(ROOT, "docs/screenshots");

/** The `cairn` binary: $CAIRN_BIN, else the release build of this checkout. */
export function cairnBin() {
  if (process.env.CAIRN_BIN) return process.env.CAIRN_BIN;
  const target = process.env.CARGO_TARGET_DIR || join(ROOT, "target");
  return join(target, "release/cairn");
}

export const CHROMIUM = process.env.CHROMIUM || "/usr/bin/chromium";

/** Flags for a machine without internet: nothing in the background dials out. */
export const CHROMIUM_FLAGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

function freePort() {
  return new Promise((ok, fail) => {
    const s = createServer();
    s.on("error", fail);
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => ok(port));
    });
  });
}

function createKey(dir, space, opts = {}) {
  const args = ["keys", "create", "--dir", dir, "--space", space, "--json"];
  if (opts.readOnly) args.push("--read-only");
  if (opts.label) args.push("--label", opts.label);
  const out = execFileSync(cairnBin(), args, { encoding: "utf8" });
  return JSON.parse(out).token;
}

/** Starts the server; resolves once it answers `/v1/ready`. */
export async function startServer() {
  const dir = mkdtempSync(join(tmpdir(), "cairn-ui-"));
  const keys = {
    team: createKey(dir, "team", { label: "team key" }),
    teamReadOnly: createKey(dir, "team", { readOnly: true, label: "team viewer" }),
  };
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const proc = spawn(cairnBin(), ["serve", "--dir", dir, "--bind", `127.0.0.1:${port}`, "--admin-key", ADMIN], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  let log = "";
  proc.stdout.on("data", (d) => (log += d));
  proc.stderr.on("data", (d) => (log += d));
  const deadline = Date.now() + 120_000;
  for (;;) {
    if (proc.exitCode !== null) throw new Error(`cairn serve exited: ${log}`);
    try {
      const r = await fetch(`${base}/v1/ready`);
      if (r.ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`cairn serve not ready: ${log}`);
    await new Promise((r) => setTimeout(r, 250));
  }
  return {
    base,
    dir,
    keys,
    log: () => log,
    async stop() {
      proc.kill("SIGTERM");
      await new Promise((r) => (proc.exitCode !== null ? r() : proc.on("exit", r)));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Calls the API as `key`; throws on a non-2xx answer. */
export async function call(base, key, method, path, body) {
  const r = await fetch(`${base}${path}`, {
    method,
    headers: { Authorization: `Bearer ${key}`, ...(body ? { "Content-Type": "application/json" } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await r.text();
  if (!r.ok) throw Object.assign(new Error(`${method} ${path}: ${r.status} ${text}`), { status: r.status });
  return text ? JSON.parse(text) : null;
}

export const SECRET = "The vault combination is 31-7-22.";

/** Group chats with a changing budget, a user session, an agent run; another tenant. */
export async function seed(base) {
  const post = (path, body) => call(base, ADMIN, "POST", path, body);
  const msg = (time, speaker, text) => ({ speaker, group: "Atlas", time, text });
  await post("/v1/spaces/team/group-messages", {
    messages: [
      msg("2025-03-03 09:00", "Maya", "The budget for Project Atlas is $120,000 for this quarter."),
      msg("2025-03-03 09:05", "Priya", "I'm the finance director, please send me the breakdown by Friday."),
      msg("2025-03-03 09:07", "Tom", "I've got 6 years of experience with AWS cost tuning, so it's easy."),
    ],
  });
  await post("/v1/spaces/team/group-messages", {
    messages: [msg("2025-03-10 14:00", "Maya", "Update: the Atlas budget has been cut to $100,000 after the finance review.")],
  });
  await post("/v1/spaces/team/sessions", {
    id: "pets",
    date: "2025-02-20 10:00",
    metadata: { user_id: "u1" },
    messages: [
      { role: "user", text: "I adopted a grey cat and named her Luna." },
      { role: "assistant", text: "Luna is a lovely name." },
      { role: "user", text: "My old dog Rex is jealous of the cat." },
      { role: "assistant", text: "Give Rex some extra walks." },
      { role: "user", text: "From now on, keep your replies short." },
      { role: "assistant", text: "Will do." },
    ],
  });
  await post("/v1/spaces/team/trajectories", {
    trajectories: [
      {
        id: "coupon",
        goal: "Create coupon SPRING10",
        outcome: "failure",
        states: [
          {
            url: "http://shop.test/admin/coupons/new",
            action: "click [63]",
            thought: "The form is filled; save it.",
            accessibility_tree: "[61] textbox 'Code' value 'SPRING10'\n[63] button 'Save'",
          },
          {
            url: "http://shop.test/admin/coupons/new",
            thought: "The code is taken.",
            accessibility_tree: "[64] alert 'The coupon code SPRING10 already exists.'",
          },
        ],
      },
    ],
  });
  await post("/v1/spaces/secret/sessions", {
    id: "vault",
    date: "2025-01-01",
    messages: [
      { role: "user", text: SECRET },
      { role: "assistant", text: "Stored." },
    ],
  });
}

/** A fresh browser profile in a temp directory, with a page at `base`. */
export async function openBrowser(viewport = { width: 1280, height: 900 }) {
  const profile = mkdtempSync(join(tmpdir(), "cairn-ui-chromium-"));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: CHROMIUM_FLAGS,
    viewport,
  });
  const page = context.pages()[0] || (await context.newPage());
  const problems = [];
  page.on("pageerror", (e) => problems.push(`page error: ${e.message}`));
  page.on("console", (m) => {
    // A refused call is answered by the UI; anything else the console reports (a CSP
    // violation, a script error) is a failure.
    if (m.type() === "error" && !/status of 4(01|03|04|22)/.test(m.text())) problems.push(`console: ${m.text()}`);
  });
  return {
    page,
    problems,
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
