// Memories: what the space holds as a user thinks of it, one entry per message, fact and
// trajectory (derived units on request, by kind), searchable; forgetting one first says
// which messages it covers.
import { api, sp, unitKinds } from "./api.js";
import { confirmAction, errorBox, fill, fmtTime, h, kind, title } from "./dom.js";

const PAGE = 50;

/** The messages a unit was drawn from, as lines for the forget dialog. */
async function covered(ctx, unitId) {
  const u = await api("GET", sp(ctx.space, "memories", unitId));
  const p = u.provenance;
  if (p.trajectory_id) return [`The whole trajectory ${p.trajectory_id}.`];
  if (!p.session_id) return ["No message: nothing else goes with it."];
  const rec = await api("GET", sp(ctx.space, "sessions", p.session_id));
  const byId = new Map(rec.session.messages.map((m) => [m.id, m]));
  return p.message_ids.map((id) => {
    const m = byId.get(id);
    const text = m ? m.text : "";
    const who = m ? m.speaker || m.role || "" : "";
    return `#${id} ${who}: ${text.length > 140 ? `${text.slice(0, 140)}…` : text}`;
  });
}

/**
 * Asks before forgetting a memory, listing the messages (of which session) it covers,
 * then forgets it; resolves to the server's answer, or null when cancelled.
 */
export async function forgetMemory(ctx, unitId) {
  const lines = await covered(ctx, unitId);
  const ok = await confirmAction(
    `Forget memory ${unitId}? These messages are deleted for good, with everything derived from them:`,
    "Forget",
    lines,
  );
  if (!ok) return null;
  return api("DELETE", sp(ctx.space, "memories", unitId));
}

export async function render(main, ctx, state = {}) {
  // The memories of the default view are the server's default listing.
  const { all: KINDS, memories: MEMORIES } = await unitKinds();
  const kindSel = h(
    "select",
    { id: "memory-kind", "aria-label": "Kind" },
    h("option", { value: "", selected: !state.kind }, "Memories (messages, facts, runs)"),
    h("option", { value: "all", selected: state.kind === "all" }, "Every unit"),
    KINDS.map((k) => h("option", { value: k, selected: state.kind === k }, k)),
  );
  const query = h("input", {
    id: "memory-query",
    type: "search",
    placeholder: "Search memories",
    "aria-label": "Search memories",
    value: state.q || "",
  });
  const status = h("p", { class: "status", role: "status", "aria-live": "polite" }, state.done || "");
  const list = h("ol", { class: "memories", id: "memories" });
  const form = h(
    "form",
    {
      class: "row",
      role: "search",
      onsubmit: (ev) => {
        ev.preventDefault();
        render(main, ctx, { q: query.value.trim(), kind: kindSel.value });
      },
    },
    query,
    kindSel,
    h("button", { type: "submit", id: "memory-search" }, "Show"),
  );
  fill(
    main,
    title(`Memories of ${ctx.space}`, "One per message, fact and trajectory; choose a kind to see derived units. A search is a recall of those memories."),
    form,
    status,
    list,
  );
  const again = (done) => render(main, ctx, { ...state, done });
  const entry = (id, k, text, meta, sessionId) =>
    h(
      "li",
      { class: "memory", dataset: { memory: id } },
      h("div", { class: "unit-head" }, kind(k), h("code", {}, id), h("span", { class: "muted" }, meta)),
      h("p", { class: "clip" }, text),
      h(
        "div",
        { class: "row" },
        sessionId ? h("a", { href: ctx.link(ctx.space, "sessions", sessionId) }, `session ${sessionId}`) : null,
        ctx.readOnly
          ? null
          : h(
              "button",
              {
                class: "small danger",
                "aria-label": `Forget memory ${id}`,
                onclick: async () => {
                  try {
                    const r = await forgetMemory(ctx, id);
                    if (r) again(`Forgot ${id}: messages ${r.forgotten_messages.join(", ") || "none"}${r.session_id ? ` of ${r.session_id}` : ""}.`);
                  } catch (e) {
                    fill(status, errorBox(e));
                  }
                },
              },
              "Forget",
            ),
      ),
    );
  if (state.q) {
    const kinds = !state.kind ? MEMORIES : state.kind === "all" ? null : [state.kind];
    const r = await api("POST", sp(ctx.space, "recall"), {
      query: state.q,
      top_k: 20,
      token_budget: 200,
      format: "raw",
      ...(kinds ? { kinds } : {}),
    });
    if (!r.hits.length) fill(list, h("li", { class: "muted" }, "Nothing found."));
    else
      fill(
        list,
        r.hits.map((hit) =>
          entry(
            hit.unit_id,
            hit.kind,
            hit.text,
            ` · ${fmtTime(hit.occurred_at)} · score ${hit.score.toFixed(3)}`,
            hit.session_id,
          ),
        ),
      );
    return;
  }
  const offset = state.offset || 0;
  const params = new URLSearchParams({ limit: String(PAGE), offset: String(offset) });
  if (state.kind) params.set("kind", state.kind);
  const page = await api("GET", `${sp(ctx.space, "memories")}?${params}`);
  fill(
    list,
    page.items.length ? null : h("li", { class: "muted" }, "No memories of this kind."),
    page.items.map((u) =>
      entry(
        u.id,
        u.kind,
        u.text,
        ` · ${fmtTime(u.occurred_at)} · ${u.provenance.speakers.join(", ")}`,
        u.provenance.session_id,
      ),
    ),
  );
  if (page.total > PAGE) {
    list.after(
      h(
        "div",
        { class: "row" },
        offset > 0 ? h("button", { onclick: () => render(main, ctx, { ...state, offset: Math.max(0, offset - PAGE), done: "" }) }, "Previous") : null,
        page.next_offset ? h("button", { onclick: () => render(main, ctx, { ...state, offset: page.next_offset, done: "" }) }, "Next") : null,
        h("span", { class: "muted" }, `${offset + 1}–${offset + page.items.length} of ${page.total}`),
      ),
    );
  } else {
    list.after(h("p", { class: "muted", id: "memory-count" }, `${page.total} in all`));
  }
}
