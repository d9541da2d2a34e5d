// Checks the hand-written types (src/types.ts) against the API's source of truth,
// crates/cairn-server/openapi.json: generates the spec's types with openapi-typescript
// into generated/ (not checked in: always from the current spec), then type-checks
// test/spec-types.ts, which requires every property of every schema to exist in our
// type with a compatible type. Exits non-zero (printing tsc's errors) when they disagree.
import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import openapiTS, { astToString } from "openapi-typescript";

const here = dirname(dirname(fileURLToPath(import.meta.url)));
const spec = join(here, "..", "..", "crates", "cairn-server", "openapi.json");
const ast = await openapiTS(JSON.parse(readFileSync(spec, "utf8")), { emptyObjectsUnknown: true });
mkdirSync(join(here, "generated"), { recursive: true });
writeFileSync(join(here, "generated", "openapi.ts"), astToString(ast));
try {
  execFileSync(process.execPath, [join(here, "node_modules", "typescript", "bin", "tsc"), "-p", join(here, "tsconfig.check.json")],
    { stdio: "inherit" });
} catch {
  console.error("\ncheck-spec: src/types.ts disagrees with openapi.json (see the errors above)");
  process.exit(1);
}
console.log("check-spec: src/types.ts covers every schema of openapi.json");
