// Starts a real `cairn serve` on a free loopback port with a fresh data directory.
import { spawn, execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { createInterface } from "node:readline";

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "..");
export const SPEC_PATH = join(ROOT, "crates", "cairn-server", "openapi.json");
export const ADMIN = "ts-test-admin-key-0123456789abcdef";

export function cairnBin() {
  if (process.env.CAIRN_BIN) return process.env.CAIRN_BIN;
  const target = process.env.CARGO_TARGET_DIR ?? join(ROOT, "target");
  const p = join(target, "release", "cairn");
  return existsSync(p) ? p : null;
}

/** Whether the server implements idempotency keys (its spec documents the header). */
export const specHasIdempotency = () => readFileSync(SPEC_PATH, "utf8").includes("Idempotency-Key");

/** `{ url, admin, makeKey(spaces, readOnly), stop() }`, or a `skip` reason. */
export async function startServer() {
  const bin = cairnBin();
  if (!bin) return { skip: "SKIPPED: no cairn binary: run `cargo build --release -p cairn-cli` or set CAIRN_BIN" };
  const dir = mkdtempSync(join(tmpdir(), "cairn-ts-"));
  const proc = spawn(bin, ["--dir", dir, "serve", "--bind", "127.0.0.1:0"], {
    env: { ...process.env, CAIRN_ADMIN_KEY: ADMIN },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  proc.stderr.on("data", (d) => { stderr += d; });
  const line = await new Promise((resolve) => {
    const rl = createInterface({ input: proc.stdout });
    rl.once("line", (l) => resolve(l));
    proc.once("exit", () => resolve(null));
  });
  const prefix = "cairn serve: listening on ";
  if (!line || !line.startsWith(prefix)) {
    proc.kill();
    rmSync(dir, { recursive: true, force: true });
    if (stderr.includes("embedding model")) return { skip: `SKIPPED: embedding model not installed: ${stderr.trim()}` };
    throw new Error(`cairn serve failed: ${stderr}`);
  }
  return {
    url: line.slice(prefix.length).trim(),
    admin: ADMIN,
    makeKey(spaces, readOnly = false) {
      const args = ["--dir", dir, "keys", "create", ...spaces.flatMap((s) => ["--space", s])];
      if (readOnly) args.push("--read-only");
      return execFileSync(bin, args, { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] }).trim();
    },
    async stop() {
      const exited = new Promise((r) => proc.once("exit", r));
      proc.kill("SIGTERM");
      await exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
