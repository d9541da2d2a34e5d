// The inspector end to end: a real `cairn serve`, Debian's headless Chromium, every view,
// a recall with its explanation, the as_of slider, forgetting a message, the memories
// (searched, by kind, one forgotten after the dialog named its messages), an entity, a
// key that must not see another space, a read-only key, a wide window, a phone-sized
// window and the keyboard.
// Screenshots for the README go to docs/screenshots/.
import assert from "node:assert/strict";
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { ADMIN, CHROMIUM, SCREENSHOTS, SECRET, cairnBin, call, openBrowser, seed, startServer } from "./harness.mjs";

const missing = [cairnBin(), CHROMIUM].filter((p) => !existsSync(p));
const skip = missing.length ? `SKIPPED: missing ${missing.join(", ")} (build with cargo build --release; apt-get install chromium)` : false;
if (skip) console.log(skip);

let server;
let browser;

before(async () => {
  if (skip) return;
  server = await startServer();
  await seed(server.base);
  mkdirSync(SCREENSHOTS, { recursive: true });
});

after(async () => {
  if (browser) await browser.close();
  if (server) await server.stop();
});

// Waits until `selector` matches at least `n` elements: a view fills its lists after
// its heading, and may render them twice (a hash change and a click), so a count read
// right after the first element appears can see a list half filled (CI saw one bar of
// two, one mention of two). Fails by timing out when the list never gets there.
async function filled(page, selector, n) {
  await page.waitForFunction(
    ([sel, want]) => document.querySelectorAll(sel).length >= want,
    [selector, n],
  );
}

async function signIn(page, key) {
  await page.goto(`${server.base}/ui#/signin`);
  await page.getByLabel("API key").fill(key);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.locator("#who .key-id").waitFor();
}

async function signOut(page) {
  await page.locator("#sign-out").click();
  await page.getByLabel("API key").waitFor();
}

const text = (page) => page.locator("body").innerText();

test("the page is served with a strict policy and signs in with a key", { skip }, async () => {
  const r = await fetch(`${server.base}/ui`);
  assert.equal(r.status, 200);
  const csp = r.headers.get("content-security-policy");
  assert.match(csp, /script-src 'self'/);
  assert.match(csp, /default-src 'none'/);
  assert.doesNotMatch(csp, /unsafe-inline/);
  assert.equal((await fetch(`${server.base}/ui/app.js`)).headers.get("content-type"), "text/javascript; charset=utf-8");
  assert.equal((await fetch(`${server.base}/ui/nothing.js`)).status, 404);

  browser = await openBrowser();
  const { page } = browser;
  await page.goto(`${server.base}/ui`);
  await page.getByLabel("API key").fill("cairn_000000000000_wrong");
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByRole("alert").waitFor();
  assert.match(await page.getByRole("alert").innerText(), /unknown or revoked/);
  await signIn(page, ADMIN);
  assert.equal(await page.locator("#who .badge").first().innerText(), "admin");
  assert.equal(await page.evaluate(() => sessionStorage.getItem("cairn.inspector.key")), ADMIN);
});

test("browse every view as admin", { skip }, async () => {
  const { page } = browser;
  // Spaces: counts per kind, disk, last recorded, for every space.
  await page.goto(`${server.base}/ui#/spaces`);
  const team = page.locator('#spaces tr[data-space="team"]');
  await team.waitFor();
  const row = await team.innerText();
  assert.match(row, /KiB|B/, row);
  assert.match(row, /2025|20\d\d-/, row);
  assert.equal(await page.locator('#spaces tr[data-space="secret"]').count(), 1);
  // Export: the space's JSONL, downloaded through the API with the signed-in key.
  const [download] = await Promise.all([
    page.waitForEvent("download"),
    team.getByRole("button", { name: "Export team" }).click(),
  ]);
  assert.equal(download.suggestedFilename(), "team.jsonl");
  const lines = readFileSync(await download.path(), "utf8").trim().split("\n").map((l) => JSON.parse(l));
  assert.ok(lines.some((l) => l.session && l.session.id === "pets"));
  assert.ok(lines.some((l) => l.trajectory && l.trajectory.id === "coupon"));
  assert.ok(lines.every((l) => l.space === "team"));

  // Sessions and group days: verbatim messages with the units derived from each.
  await team.getByRole("link", { name: "team" }).click();
  await page.locator("#session-list").waitFor();
  assert.match(await text(page), /Group Atlas: days/);
  await page.getByRole("link", { name: "Atlas/2025-03-03" }).click();
  await page.locator("#messages").waitFor();
  const first = page.locator('.message[data-message="0"]');
  assert.match(await first.innerText(), /Maya/);
  assert.match(await first.innerText(), /\$120,000/);
  assert.ok((await first.locator(".derived .unit").count()) >= 2, "a message shows its turn, round and fact");
  assert.ok((await first.locator(".kind-fact").count()) >= 1, "the fact read from the message is beside it");

  // Profiles: roles with evidence.
  await page.getByRole("link", { name: "Profiles" }).click();
  await page.getByRole("link", { name: "Priya" }).click();
  await page.locator("#profile h2", { hasText: "Priya" }).waitFor();
  assert.match(await page.locator("#profile").innerText(), /finance director/);
  assert.ok(await page.locator("#profile .evidence a").count());

  // Trajectories: manifest, state viewer, slices, events and note.
  await page.getByRole("link", { name: "Trajectories" }).click();
  await page.locator("#manifest").waitFor();
  assert.match(await page.locator("#manifest").innerText(), /Create coupon SPRING10/);
  await page.getByRole("link", { name: "coupon" }).click();
  await page.locator("#state-url").waitFor();
  assert.equal(await page.locator("#state-action").innerText(), "click [63]");
  await page.locator("#next-state").click();
  await page.locator("#state h2", { hasText: "State 2 of 2" }).waitFor();
  assert.match(await page.locator("#state-observation").innerText(), /already exists/);
  assert.match(await page.locator("#state-thought").innerText(), /taken/);
  assert.ok(await page.locator("#pool-note .unit").count());
  assert.ok(await page.locator("#pool-slice .unit").count());
  await page.screenshot({ path: join(SCREENSHOTS, "trajectory-state.png"), fullPage: false });
});

test("move the as_of slider on a fact and see the value change", { skip }, async () => {
  const { page } = browser;
  await page.goto(`${server.base}/ui#/s/team/facts`);
  await page.locator("#subjects a", { hasText: /budget/i }).first().click();
  await page.locator("#fact-detail h2", { hasText: /budget/i }).waitFor();
  await filled(page, "#timeline .bar", 2);
  assert.equal(await page.locator("#timeline .bar").count(), 2);
  assert.equal(await page.locator("#as-of-value").innerText(), "$100,000");
  // The slider is a native range: keyboard and pointer both move it. Set it to
  // 2025-03-05 (between the two statements) as an input event would.
  const march5 = Date.parse("2025-03-05T12:00:00Z");
  await page.locator("#as-of").evaluate((el, t) => {
    el.value = String(t);
    el.dispatchEvent(new Event("input", { bubbles: true }));
  }, march5);
  await page.locator("#as-of-value", { hasText: "$120,000" }).waitFor();
  assert.match(await page.locator("#as-of-date").innerText(), /2025-03-05/);
  assert.equal(await page.locator("#timeline .bar.unknown").count(), 1, "the later version was not yet stated");
  await page.screenshot({ path: join(SCREENSHOTS, "fact-timeline.png") });
  // Back to the end with the keyboard: End key on the focused slider.
  await page.locator("#as-of").focus();
  await page.keyboard.press("End");
  await page.locator("#as-of-value", { hasText: "$100,000" }).waitFor();
  assert.equal(await page.locator("#as-of-date").innerText(), "now");
});

test("run a recall and read where each score came from", { skip }, async () => {
  const { page } = browser;
  await page.goto(`${server.base}/ui#/s/team/recall`);
  await page.getByLabel("Query").fill("What is the budget for Project Atlas now?");
  await page.getByLabel("top_k").fill("5");
  await page.getByLabel("token_budget").fill("300");
  await page.getByRole("button", { name: "Recall" }).click();
  await page.locator("#hits .hit").first().waitFor();
  const top = page.locator("#hits .hit").first();
  assert.match(await top.innerText(), /\$100,000/);
  assert.match(await top.locator(".why").innerText(), /lexical \(BM25\)|version_placement/);
  assert.ok(await page.locator("#hits .adjustments li, #hits .why table").count());
  const tokens = await page.locator("#context-tokens").innerText();
  const [used, budget] = tokens.match(/\d+/g).map(Number);
  assert.equal(budget, 300);
  assert.ok(used > 0 && used <= 300, tokens);
  assert.match(await page.locator("#context").innerText(), /\$100,000/);
  // The user's standing instruction heads the context and has its own list, cited.
  assert.match(await page.locator("#card").innerText(), /instruction[\s\S]*keep your replies short/);
  assert.match(await page.locator("#context").innerText(), /^About the user:/);
  assert.match(await page.locator("#timings").innerText(), /embed[\s\S]*lexical[\s\S]*dense[\s\S]*rank[\s\S]*pack/);
  assert.match(await page.locator("#counts").innerText(), /fused \d+/);
  await page.screenshot({ path: join(SCREENSHOTS, "recall-playground.png"), fullPage: true });

  // Bad input names the field.
  await page.getByLabel("as_of").fill("someday");
  await page.getByRole("button", { name: "Recall" }).click();
  await page.getByRole("alert").waitFor();
  assert.match(await page.locator("#recall-result").innerText(), /field: as_of/);
});

test("forget a message and see it gone", { skip }, async () => {
  const { page } = browser;
  await page.goto(`${server.base}/ui#/s/team/sessions/pets`);
  const rex = page.locator('.message[data-message="2"]');
  await rex.waitFor();
  assert.match(await rex.innerText(), /Rex/);
  // Cancel first: nothing happens.
  await rex.getByRole("button", { name: "Forget message 2" }).click();
  await page.locator("#confirm-cancel").click();
  assert.equal(await page.locator('.message[data-message="2"]').count(), 1);
  await rex.getByRole("button", { name: "Forget message 2" }).click();
  await page.locator("#confirm-ok").click();
  await page.locator(".status", { hasText: "Forgot message 2" }).waitFor();
  assert.equal(await page.locator('.message[data-message="2"]').count(), 0);
  assert.doesNotMatch(await page.locator("#messages").innerText(), /My old dog Rex/);
  const rec = await call(server.base, ADMIN, "GET", "/v1/spaces/team/sessions/pets");
  assert.equal(rec.session.messages.length, 5);
  const recall = await call(server.base, ADMIN, "POST", "/v1/spaces/team/recall", { query: "dog Rex jealous" });
  assert.doesNotMatch(recall.context, /jealous/);
});

test("memories: one per message and fact, derived ones by kind, searched, one forgotten", { skip }, async () => {
  const { page } = browser;
  await page.goto(`${server.base}/ui#/s/team/memories`);
  await page.locator("#memories .memory").first().waitFor();
  const kinds = async () => page.locator("#memories .memory .kind").allInnerTexts();
  const shown = await kinds();
  assert.ok(shown.includes("turn") && shown.includes("fact"), shown.join());
  assert.ok(shown.every((k) => ["turn", "fact", "note"].includes(k)), shown.join());
  // Derived units on request.
  await page.locator("#memory-kind").selectOption("round");
  await page.locator("#memory-search").click();
  await page.locator("#memories .memory .kind", { hasText: "round" }).first().waitFor();
  assert.ok((await kinds()).every((k) => k === "round"));
  // A search is a recall over the memories.
  await page.locator("#memory-kind").selectOption("");
  await page.locator("#memory-query").fill("grey cat named Luna");
  await page.locator("#memory-search").click();
  await page.locator("#memories .memory", { hasText: "Luna" }).first().waitFor();
  // Forgetting one names the messages it covers first; cancel, then confirm.
  await page.locator("#memory-query").fill("");
  await page.locator("#memory-search").click();
  const luna = page.locator('#memories .memory[data-memory="turn:pets:0"]');
  await luna.waitFor();
  await luna.getByRole("button", { name: "Forget memory turn:pets:0" }).click();
  await page.locator("#confirm-details li").first().waitFor();
  const covered = await page.locator("#confirm-details").innerText();
  assert.match(covered, /#0 user: I adopted a grey cat and named her Luna/);
  await page.locator("#confirm-cancel").click();
  assert.equal(await luna.count(), 1);
  await luna.getByRole("button", { name: "Forget memory turn:pets:0" }).click();
  await page.locator("#confirm-ok").click();
  await page.locator(".status", { hasText: "Forgot turn:pets:0: messages 0 of pets" }).waitFor();
  assert.equal(await page.locator('#memories .memory[data-memory="turn:pets:0"]').count(), 0);
  const rec = await call(server.base, ADMIN, "GET", "/v1/spaces/team/sessions/pets");
  assert.ok(rec.session.messages.every((m) => m.id !== "0"));
});

test("an entity: searched, with its relations and mentions", { skip }, async () => {
  const { page } = browser;
  await page.goto(`${server.base}/ui#/s/team/entities`);
  await page.locator("#entities li").first().waitFor();
  await page.locator("#entity-query").fill("atlas");
  await page.locator("#entity-search").click();
  await page.locator("#entities a", { hasText: "Project Atlas" }).click();
  await page.locator("#entity h2", { hasText: "Project Atlas" }).waitFor();
  // The mentions are filled after the heading.
  await filled(page, "#mentions li", 2);
  assert.match(await page.locator("#entity").innerText(), /Maya/);
  await page.locator("#mentions a").first().click();
  await page.locator("#messages").waitFor();
});

test("a wide window shows every column of the spaces table, Export included", { skip }, async () => {
  const { page } = browser;
  await page.setViewportSize({ width: 1400, height: 900 });
  await page.goto(`${server.base}/ui#/spaces`);
  const button = page.getByRole("button", { name: "Export team" });
  await button.waitFor();
  const box = await button.boundingBox();
  const scroll = await page.locator("main .scroll").boundingBox();
  assert.ok(box.x >= scroll.x && box.x + box.width <= scroll.x + scroll.width + 1, `${JSON.stringify(box)} outside ${JSON.stringify(scroll)}`);
  assert.ok(box.x + box.width <= 1400);
  // Nothing covers it: the button is what a click at its centre reaches.
  const hit = await page.evaluate(
    ({ x, y }) => document.elementFromPoint(x, y)?.getAttribute("aria-label"),
    { x: box.x + box.width / 2, y: box.y + box.height / 2 },
  );
  assert.equal(hit, "Export team");
  await page.setViewportSize({ width: 1280, height: 900 });
});

test("a key for one space sees no other space anywhere", { skip }, async () => {
  const { page } = browser;
  await signOut(page);
  await signIn(page, server.keys.team);
  assert.match(await page.locator("#who").innerText(), /team key/);
  const options = await page.locator("#space-picker option").allInnerTexts();
  assert.deepEqual(options.filter((o) => o !== "Choose a space"), ["team"]);
  const views = [
    "#/spaces",
    "#/s/team/memories",
    "#/s/team/sessions",
    "#/s/team/facts",
    "#/s/team/profiles",
    "#/s/team/entities",
    "#/s/team/trajectories",
  ];
  for (const v of views) {
    await page.goto(`${server.base}/ui${v}`);
    await page.locator("main h1").waitFor();
    await page.waitForLoadState("networkidle");
    const body = await text(page);
    assert.doesNotMatch(body, /secret|vault|31-7-22/i, v);
  }
  await page.goto(`${server.base}/ui#/s/team/recall`);
  await page.getByLabel("Query").fill("vault combination");
  await page.getByRole("button", { name: "Recall" }).click();
  await page.locator("#context").waitFor();
  assert.doesNotMatch(await text(page), /31-7-22/);
  // Asking for the other space by URL is refused like any foreign space.
  await page.goto(`${server.base}/ui#/s/secret/sessions`);
  await page.getByRole("alert").waitFor();
  assert.match(await page.getByRole("alert").innerText(), /no access to space "secret"/);
  assert.doesNotMatch(await text(page), /vault|31-7-22/);
});

test("a read-only key reads everything and deletes nothing", { skip }, async () => {
  const { page } = browser;
  await signOut(page);
  await signIn(page, server.keys.teamReadOnly);
  assert.equal(await page.locator("#read-only").innerText(), "read-only");
  await page.goto(`${server.base}/ui#/s/team/sessions/pets`);
  await page.locator("#messages").waitFor();
  assert.equal(await page.getByRole("button", { name: /Forget/ }).count(), 0);
  // The server refuses anyway.
  const status = await page.evaluate(async () => {
    const key = sessionStorage.getItem("cairn.inspector.key");
    const r = await fetch("/v1/spaces/team/sessions/pets", { method: "DELETE", headers: { Authorization: `Bearer ${key}` } });
    return r.status;
  });
  assert.equal(status, 403);
  await page.goto(`${server.base}/ui#/s/team/recall`);
  // (Luna's message was forgotten by the memories test above.)
  await page.getByLabel("Query").fill("What is the budget for Project Atlas now?");
  await page.getByRole("button", { name: "Recall" }).click();
  await page.locator("#hits .hit").first().waitFor();
});

test("works on a phone-sized window and from the keyboard", { skip }, async () => {
  assert.deepEqual(browser.problems, [], "no script error or policy violation on the desktop run");
  await browser.close();
  browser = await openBrowser({ width: 390, height: 844 });
  const { page } = browser;
  await page.goto(`${server.base}/ui`);
  // Keyboard only: the page puts focus in the key field; Tab reaches the button, and
  // Shift+Tab comes back; Enter signs in.
  await page.locator("#key:focus").waitFor();
  await page.keyboard.press("Tab");
  assert.equal(await page.evaluate(() => document.activeElement.id), "sign-in");
  await page.keyboard.press("Shift+Tab");
  assert.equal(await page.evaluate(() => document.activeElement.id), "key");
  await page.keyboard.type(ADMIN);
  await page.keyboard.press("Enter");
  await page.locator("#spaces").waitFor();
  // Focus is visible: the focused element gets an outline.
  await page.keyboard.press("Tab");
  const outline = await page.evaluate(() => getComputedStyle(document.activeElement).outlineStyle);
  assert.notEqual(outline, "none");
  for (const v of [
    "#/s/team/sessions/Atlas%2F2025-03-03",
    "#/s/team/memories",
    "#/s/team/facts",
    "#/s/team/entities",
    "#/s/team/trajectories/coupon",
    "#/s/team/recall",
  ]) {
    await page.goto(`${server.base}/ui${v}`);
    await page.locator("main h1").waitFor();
    await page.waitForLoadState("networkidle");
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    assert.ok(overflow <= 1, `${v} scrolls sideways by ${overflow}px`);
  }
  // Every form control has a label.
  const unlabelled = await page.evaluate(() =>
    [...document.querySelectorAll("input, select, textarea")]
      .filter((el) => !el.labels?.length && !el.getAttribute("aria-label"))
      .map((el) => el.id || el.name),
  );
  assert.deepEqual(unlabelled, []);
  assert.deepEqual(browser.problems, []);
});
