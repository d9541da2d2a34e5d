// The recall playground: a query with every option, the ranked hits with where each
// score came from, the user's card, the packed context with its token count and what was cut, and the
// time of each stage. Recalls ask for `explain: true`.
import { api, sp, unitKinds } from "./api.js";
import { errorBox, fill, fmtTime, h, kind, num, title } from "./dom.js";

const OPS = { add: "+", multiply: "×", set: "=" };

function field(id, label, input, help) {
  input.id = id;
  input.name = id;
  if (help) input.setAttribute("aria-describedby", `${id}-help`);
  return h("div", { class: "field" }, h("label", { for: id }, label), input, help ? h("small", { id: `${id}-help`, class: "muted" }, help) : null);
}

const list = (text) => {
  const items = text.split(",").map((s) => s.trim()).filter(Boolean);
  return items.length ? items : undefined;
};

/** The request from the form; throws naming the field on bad input. */
function request(form, kindNames) {
  const v = (id) => form.elements[id].value.trim();
  const body = { query: v("q"), top_k: Number(v("top_k")), token_budget: Number(v("token_budget")), format: v("format"), explain: true };
  if (v("as_of")) body.as_of = v("as_of");
  if (v("since")) body.since = v("since");
  for (const k of ["sessions", "speakers", "groups"]) if (list(v(k))) body[k] = list(v(k));
  const kinds = kindNames.filter((k) => form.elements[`kind-${k}`].checked);
  if (kinds.length) body.kinds = kinds;
  if (v("quotas")) {
    body.quotas = {};
    for (const part of list(v("quotas"))) {
      const [k, n] = part.split("=").map((s) => s.trim());
      if (!k || !/^\d+$/.test(n || "")) throw new Error(`quotas: write kind=count, e.g. note=2 (got ${part})`);
      body.quotas[k] = Number(n);
    }
  }
  if (v("filter")) {
    try {
      body.filter = JSON.parse(v("filter"));
    } catch (e) {
      throw new Error(`filter is not JSON: ${e.message}`);
    }
  }
  return body;
}

export async function render(main, ctx) {
  const { all: KINDS } = await unitKinds();
  const out = h("section", { id: "recall-result", "aria-live": "polite" });
  const kinds = h(
    "fieldset",
    { class: "kinds" },
    h("legend", {}, "Kinds (none: all)"),
    KINDS.map((k) => h("label", { class: "check" }, h("input", { type: "checkbox", id: `kind-${k}`, name: `kind-${k}` }), k)),
  );
  const form = h(
    "form",
    {
      class: "card playground",
      id: "recall-form",
      onsubmit: async (ev) => {
        ev.preventDefault();
        let body;
        try {
          body = request(form, KINDS);
        } catch (e) {
          fill(out, errorBox(e));
          return;
        }
        fill(out, h("p", { class: "muted" }, "Recalling…"));
        try {
          const r = await api("POST", sp(ctx.space, "recall"), body);
          showResult(out, r, ctx);
        } catch (e) {
          fill(out, errorBox(e), e.field ? h("p", { class: "muted" }, `field: ${e.field}`) : null);
        }
      },
    },
    field("q", "Query", h("input", { type: "search", required: true, autocomplete: "off", placeholder: "What is the Atlas budget now?" })),
    h(
      "div",
      { class: "grid" },
      field("top_k", "top_k", h("input", { type: "number", min: "1", max: "1000", value: "5" })),
      field("token_budget", "token_budget", h("input", { type: "number", min: "1", max: "1000000", value: "600" })),
      field("format", "format", h("select", {}, h("option", { value: "synthesized" }, "synthesized"), h("option", { value: "raw" }, "raw"))),
      field("as_of", "as_of", h("input", { type: "text", placeholder: "2025-03-05" }), "Recall as of then."),
      field("since", "since", h("input", { type: "text", placeholder: "2025-03-01" })),
      field("sessions", "sessions", h("input", { type: "text" }), "Comma separated."),
      field("speakers", "speakers", h("input", { type: "text" }), "Comma separated."),
      field("groups", "groups", h("input", { type: "text" }), "Comma separated."),
      field("quotas", "quotas", h("input", { type: "text", placeholder: "note=2, slice=5" }), "Most hits of a kind."),
    ),
    kinds,
    field("filter", "Metadata filter (JSON)", h("textarea", { rows: "2", placeholder: '{"user_id": "u1"}' })),
    h("button", { type: "submit", id: "run-recall" }, "Recall"),
  );
  fill(main, title(`Recall in ${ctx.space}`, "Every option of the API; each hit says where its score came from."), form, out);
}

function listScore(label, s) {
  if (!s) return h("tr", {}, h("th", { scope: "row" }, label), h("td", { colspan: "3", class: "muted" }, "not a candidate"));
  return h(
    "tr",
    {},
    h("th", { scope: "row" }, label),
    h("td", {}, num(s.score)),
    h("td", {}, s.rank ? `#${s.rank}` : "completed"),
    h("td", {}, `+${num(s.fused)}`),
  );
}

function explanation(e) {
  if (!e) return null;
  return h(
    "details",
    { class: "why", open: true },
    h("summary", {}, "Why this score"),
    e.scored_as
      ? h(
          "table",
          { class: "mini" },
          h("thead", {}, h("tr", {}, h("th", {}, "list"), h("th", {}, "score"), h("th", {}, "rank"), h("th", {}, "fused"))),
          h(
            "tbody",
            {},
            listScore("lexical (BM25)", e.lexical),
            listScore("dense (cosine)", e.dense),
            h("tr", {}, h("th", { scope: "row" }, "fused"), h("td", { colspan: "3" }, `${num(e.fused)} as ${e.scored_as}`)),
          ),
        )
      : null,
    e.adjustments.length
      ? h(
          "ol",
          { class: "adjustments" },
          e.adjustments.map((a) =>
            h("li", { dataset: { step: a.step } }, h("code", {}, a.step), ` ${OPS[a.op]} ${num(a.by)} → ${num(a.score_after)}`, a.note ? h("span", { class: "muted" }, ` (${a.note})`) : null),
          ),
        )
      : h("p", { class: "muted" }, "No second-pass adjustment."),
    e.version_notes && e.version_notes.length ? h("ul", { class: "notes" }, e.version_notes.map((n) => h("li", {}, n))) : null,
    e.placed_above ? h("p", {}, `Placed above ${e.placed_above}, which states an older value.`) : null,
  );
}

function showResult(out, r, ctx) {
  const ex = r.explain;
  const packing = new Map((ex ? ex.packing.entries : []).map((p) => [p.unit_id, p]));
  const hits = r.hits.map((hit, i) => {
    const p = packing.get(hit.unit_id);
    return h(
      "li",
      { class: "hit", dataset: { unit: hit.unit_id } },
      h(
        "div",
        { class: "unit-head" },
        h("span", { class: "rank" }, `#${i + 1}`),
        kind(hit.kind),
        h("strong", { class: "score" }, num(hit.score)),
        h("code", {}, hit.unit_id),
        p ? h("span", { class: `badge pack-${p.outcome}` }, `${p.outcome} · ${p.tokens}/${p.full_tokens} tokens`) : null,
      ),
      h(
        "p",
        { class: "muted" },
        fmtTime(hit.occurred_at),
        hit.session_id ? [" · ", h("a", { href: ctx.link(ctx.space, "sessions", hit.session_id) }, hit.session_id)] : null,
        hit.trajectory_id ? [" · ", h("a", { href: ctx.link(ctx.space, "trajectories", hit.trajectory_id) }, hit.trajectory_id)] : null,
        hit.speakers.length ? ` · ${hit.speakers.join(", ")}` : "",
        hit.superseded_by ? ` · superseded by ${hit.superseded_by}` : "",
      ),
      h("p", { class: "clip text" }, hit.text),
      explanation(hit.explain),
    );
  });
  const t = r.timings;
  const stages = [
    ["embed", t.embed_ms],
    ["lexical", t.lexical_ms],
    ["dense", t.dense_ms],
    ["rank", t.rank_ms],
    ["pack", t.pack_ms],
  ];
  const longest = Math.max(...stages.map(([, ms]) => ms), ...(ex ? ex.stages.map((s) => s.ms) : []), 0.001);
  const bar = (label, ms) => {
    const b = h("span", { class: "fill" });
    b.style.width = `${Math.max(1, (ms / longest) * 100).toFixed(1)}%`;
    return h("tr", {}, h("th", { scope: "row" }, label), h("td", { class: "barcell" }, b), h("td", {}, `${ms.toFixed(2)} ms`));
  };
  const cut = ex ? ex.packing.entries.filter((p) => p.outcome !== "whole") : [];
  const meter = h("meter", { id: "budget-meter", min: "0", max: String(ex ? ex.packing.token_budget : r.context_tokens), value: String(r.context_tokens) });
  fill(
    out,
    h("h2", {}, `${r.hits.length} hits`),
    h(
      "div",
      { class: "split result" },
      h("ol", { class: "hits", id: "hits" }, hits),
      h(
        "aside",
        {},
        r.card && r.card.length
          ? [
              h("h3", {}, "The user's card"),
              h(
                "ul",
                { class: "card", id: "card" },
                r.card.map((line) =>
                  h(
                    "li",
                    { dataset: { unit: line.unit_id } },
                    h("span", { class: "badge" }, line.category),
                    ` ${line.statement} `,
                    h("span", { class: "muted" }, fmtTime(line.stated_at), " · ", h("a", { href: ctx.link(ctx.space, "sessions", line.session_id) }, line.session_id)),
                  ),
                ),
              ),
            ]
          : null,
        h("h3", {}, "Packed context"),
        h(
          "p",
          { id: "context-tokens" },
          `${r.context_tokens} of ${ex ? ex.packing.token_budget : "?"} tokens · ${r.hits_cut} hits cut or trimmed`,
        ),
        meter,
        cut.length
          ? h("ul", { class: "cut", id: "cut" }, cut.map((p) => h("li", {}, h("code", {}, p.unit_id), ` ${p.outcome} (${p.tokens} of ${p.full_tokens} tokens)`)))
          : null,
        h("pre", { class: "context", id: "context", tabindex: "0" }, r.context || "(empty)"),
        h("h3", {}, "Timings"),
        h("table", { class: "timings", id: "timings" }, h("tbody", {}, stages.map(([s, ms]) => bar(s, ms)), h("tr", {}, h("th", { scope: "row" }, "total"), h("td", {}), h("td", {}, `${t.total_ms.toFixed(2)} ms`)))),
        ex
          ? [
              h("h4", {}, "Ranking, stage by stage"),
              h("table", { class: "timings" }, h("tbody", {}, ex.stages.map((s) => bar(s.stage, s.ms)))),
              h("h4", {}, "Candidates kept"),
              h(
                "p",
                { class: "muted", id: "counts" },
                `lexical ${ex.counts.lexical} · dense ${ex.counts.dense} (+${ex.counts.completed} completed) · fused ${ex.counts.fused} · visible ${ex.counts.visible} · ranked ${ex.counts.ranked}`,
              ),
              ex.quota_skipped && ex.quota_skipped.length
                ? h("p", { class: "muted" }, `Skipped by quotas: ${ex.quota_skipped.join(", ")}`)
                : null,
            ]
          : null,
      ),
    ),
  );
}
