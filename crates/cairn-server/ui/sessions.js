// Sessions and group days: the verbatim messages with speakers and dates, and beside
// each message the units derived from it; forget a session, a message or a memory.
import { api, sp } from "./api.js";
import { confirmAction, errorBox, facts, fill, fmtTime, h, kind, title } from "./dom.js";
import { forgetMemory } from "./memories.js";

const PAGE = 50;

export async function render(main, ctx) {
  if (ctx.id) return renderSession(main, ctx);
  return renderList(main, ctx, 0);
}

async function renderList(main, ctx, offset) {
  const page = await api("GET", `${sp(ctx.space, "sessions")}?limit=${PAGE}&offset=${offset}`);
  const days = page.items.filter((r) => r.session.group);
  const plain = page.items.filter((r) => !r.session.group);
  const item = (r) => {
    const s = r.session;
    const speakers = [...new Set(s.messages.map((m) => m.speaker || m.role).filter(Boolean))];
    return h(
      "li",
      {},
      h("a", { href: ctx.link(ctx.space, "sessions", s.id) }, s.id),
      h("span", { class: "muted" }, ` · ${fmtTime(s.occurred_at)} · ${s.messages.length} messages · ${speakers.join(", ")}`),
    );
  };
  const byGroup = new Map();
  for (const r of days) {
    const g = r.session.group;
    if (!byGroup.has(g)) byGroup.set(g, []);
    byGroup.get(g).push(r);
  }
  const pager = h(
    "div",
    { class: "row" },
    offset > 0 ? h("button", { onclick: () => renderList(main, ctx, Math.max(0, offset - PAGE)) }, "Previous") : null,
    page.next_offset ? h("button", { onclick: () => renderList(main, ctx, page.next_offset) }, "Next") : null,
    h("span", { class: "muted" }, `${offset + 1}–${offset + page.items.length} of ${page.total}`),
  );
  fill(
    main,
    title(`Sessions of ${ctx.space}`, "Conversations exactly as ingested; group chats as one session per group and day."),
    page.total === 0 ? h("p", { class: "muted" }, "No sessions in this space.") : null,
    plain.length ? h("section", {}, h("h2", {}, "Sessions"), h("ul", { class: "list", id: "session-list" }, plain.map(item))) : null,
    [...byGroup].map(([g, rs]) =>
      h("section", {}, h("h2", {}, `Group ${g}: days`), h("ul", { class: "list group-days" }, rs.map(item))),
    ),
    page.total > PAGE ? pager : null,
  );
}

/** Units wider than this many messages (episodes) are listed once, not beside each. */
const WIDE = 2;

/** The units derived from a message: those whose provenance names it (wide ones aside). */
function unitsOf(units, messageId) {
  return units.filter((u) => u.provenance.message_ids.length <= WIDE && u.provenance.message_ids.includes(messageId));
}

async function forget(what, path, main, ctx, status) {
  if (!(await confirmAction(`Forget ${what}? Its words and everything derived from them are deleted for good.`))) {
    return;
  }
  try {
    await api("DELETE", path);
    await renderSession(main, ctx, `Forgot ${what}.`);
  } catch (e) {
    if (e.status === 404) {
      // The session went with its last message.
      location.hash = ctx.link(ctx.space, "sessions");
      return;
    }
    fill(status, errorBox(e));
  }
}

async function renderSession(main, ctx, done) {
  const id = ctx.id;
  const [rec, derived] = await Promise.all([
    api("GET", sp(ctx.space, "sessions", id)),
    api("GET", sp(ctx.space, "sessions", id, "units")),
  ]);
  const s = rec.session;
  const units = derived.units;
  const status = h("p", { class: "status", role: "status", "aria-live": "polite" }, done || "");
  const canDelete = !ctx.readOnly;
  const unitCard = (u) =>
    h(
      "li",
      { class: "unit", dataset: { unit: u.id } },
      h("div", { class: "unit-head" }, kind(u.kind), h("code", {}, u.id)),
      h("p", { class: "clip" }, u.text),
      canDelete
        ? h(
            "button",
            {
              class: "small danger",
              "aria-label": `Forget memory ${u.id}`,
              onclick: async () => {
                try {
                  const r = await forgetMemory(ctx, u.id);
                  if (!r) return;
                  if (r.forgotten_session) location.hash = ctx.link(ctx.space, "sessions");
                  else await renderSession(main, ctx, `Forgot memory ${u.id}: messages ${r.forgotten_messages.join(", ")}.`);
                } catch (e) {
                  fill(status, errorBox(e));
                }
              },
            },
            "Forget memory",
          )
        : null,
    );
  const messages = s.messages.map((m) =>
    h(
      "li",
      { class: "message", id: `m-${m.id}`, dataset: { message: m.id } },
      h(
        "div",
        { class: "said" },
        h("div", { class: "who-when" }, h("strong", {}, m.speaker || m.role || "unknown"), " ", h("time", {}, fmtTime(m.occurred_at || s.occurred_at)), h("code", { class: "muted" }, ` #${m.id}`)),
        h("p", { class: "text" }, m.text),
        canDelete
          ? h(
              "button",
              {
                class: "small danger",
                "aria-label": `Forget message ${m.id}`,
                onclick: () => forget(`message ${m.id}`, sp(ctx.space, "sessions", id, "messages", m.id), main, ctx, status),
              },
              "Forget message",
            )
          : null,
      ),
      h("ul", { class: "derived", "aria-label": `Units derived from message ${m.id}` }, unitsOf(units, m.id).map(unitCard)),
    ),
  );
  const whole = units.filter((u) => u.provenance.message_ids.length > WIDE || !u.provenance.message_ids.length);
  fill(
    main,
    title(`Session ${s.id}`),
    facts([
      ["When", fmtTime(s.occurred_at)],
      ["Group", s.group],
      ["Recorded", fmtTime(rec.recorded_at)],
      ["Messages", String(s.messages.length)],
      ["Units derived", String(units.length)],
      ["Metadata", s.metadata ? h("code", {}, JSON.stringify(s.metadata)) : null],
    ]),
    h(
      "div",
      { class: "row" },
      h("a", { href: ctx.link(ctx.space, "sessions") }, "← All sessions"),
      canDelete
        ? h(
            "button",
            {
              class: "danger",
              id: "forget-session",
              onclick: async () => {
                if (!(await confirmAction(`Forget session ${s.id} and everything derived from it?`))) return;
                try {
                  await api("DELETE", sp(ctx.space, "sessions", s.id));
                  location.hash = ctx.link(ctx.space, "sessions");
                } catch (e) {
                  fill(status, errorBox(e));
                }
              },
            },
            "Forget session",
          )
        : null,
    ),
    status,
    h("h2", {}, "Messages and what was derived from each"),
    h("ol", { class: "messages", id: "messages" }, messages),
    whole.length
      ? h("section", {}, h("h2", {}, "Units spanning several messages"), h("ul", { class: "derived wide" }, whole.map(unitCard)))
      : null,
  );
}
