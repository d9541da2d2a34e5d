// Trajectories: the manifest, a state viewer (URL, action, thought, observation), and the
// slices, events and note derived from a run.
import { api, sp } from "./api.js";
import { fill, fmtTime, h, kind, title } from "./dom.js";

export async function render(main, ctx) {
  if (ctx.id) return renderTrajectory(main, ctx);
  const { trajectories } = await api("GET", sp(ctx.space, "trajectories"));
  const rows = trajectories.map((t) =>
    h(
      "tr",
      {},
      h("th", { scope: "row" }, h("a", { href: ctx.link(ctx.space, "trajectories", t.id) }, t.id)),
      h("td", {}, t.goal),
      h("td", {}, t.succeeded === true ? "success" : t.succeeded === false ? "failure" : JSON.stringify(t.outcome)),
      h("td", {}, t.steps),
      h("td", {}, t.urls.length),
      h("td", {}, fmtTime(t.recorded_at)),
    ),
  );
  fill(
    main,
    title(`Trajectories of ${ctx.space}`, "Agent runs exactly as inserted, with what Cairn derived from them."),
    trajectories.length
      ? h(
          "div",
          { class: "scroll" },
          h(
            "table",
            { id: "manifest" },
            h("caption", {}, "Manifest"),
            h(
              "thead",
              {},
              h("tr", {}, ["Id", "Goal", "Outcome", "Steps", "URLs", "Recorded"].map((c) => h("th", { scope: "col" }, c))),
            ),
            h("tbody", {}, rows),
          ),
        )
      : h("p", { class: "muted" }, "No trajectories in this space."),
  );
}

async function renderTrajectory(main, ctx) {
  const [rec, derived] = await Promise.all([
    api("GET", sp(ctx.space, "trajectories", ctx.id)),
    api("GET", sp(ctx.space, "trajectories", ctx.id, "units")),
  ]);
  const t = rec.trajectory;
  const units = derived.units;
  const n = t.states.length;
  const viewer = h("section", { class: "state", id: "state", "aria-live": "polite" });
  const slider = h("input", { id: "state-index", type: "range", min: "0", max: String(n - 1), step: "1", value: "0" });
  const show = (i) => {
    const s = t.states[i];
    const covering = units.filter((u) => u.provenance.states && u.provenance.states[0] <= i && i < u.provenance.states[1]);
    fill(
      viewer,
      h("h2", {}, `State ${i + 1} of ${n}`),
      h(
        "dl",
        { class: "facts" },
        h("dt", {}, "URL"),
        h("dd", {}, h("code", { id: "state-url" }, s.url || "–")),
        h("dt", {}, "Action"),
        h("dd", { id: "state-action" }, s.action || "–"),
        h("dt", {}, "Thought"),
        h("dd", { id: "state-thought" }, s.thought || "–"),
      ),
      h("h3", {}, "Observation"),
      h("pre", { class: "observation", id: "state-observation", tabindex: "0" }, s.observation || "(none)"),
      h("h3", {}, "Derived from this state"),
      h("ul", { class: "derived" }, covering.map(unitItem)),
    );
  };
  slider.addEventListener("input", () => show(Number(slider.value)));
  const step = (d) => {
    slider.value = String(Math.min(n - 1, Math.max(0, Number(slider.value) + d)));
    show(Number(slider.value));
  };
  const byKind = (k) => units.filter((u) => u.kind === k);
  const pool = (k, label) =>
    h("section", {}, h("h2", {}, `${label} (${byKind(k).length})`), h("ul", { class: "derived wide", id: `pool-${k}` }, byKind(k).map(unitItem)));
  fill(
    main,
    title(`Trajectory ${t.id}`),
    h("p", {}, h("a", { href: ctx.link(ctx.space, "trajectories") }, "← Manifest")),
    h(
      "dl",
      { class: "facts" },
      h("dt", {}, "Goal"),
      h("dd", {}, t.goal),
      h("dt", {}, "Outcome"),
      h("dd", {}, typeof t.outcome === "string" ? t.outcome : JSON.stringify(t.outcome)),
      t.domain ? [h("dt", {}, "Domain"), h("dd", {}, t.domain)] : null,
      h("dt", {}, "Recorded"),
      h("dd", {}, fmtTime(rec.recorded_at)),
    ),
    h(
      "div",
      { class: "stepper" },
      h("button", { onclick: () => step(-1), "aria-label": "Previous state" }, "◀"),
      h("label", { for: "state-index" }, "State"),
      slider,
      h("button", { onclick: () => step(1), "aria-label": "Next state", id: "next-state" }, "▶"),
    ),
    viewer,
    pool("note", "Notes"),
    pool("event", "Events"),
    pool("slice", "Slices"),
  );
  show(0);
}

function unitItem(u) {
  const states = u.provenance.states;
  return h(
    "li",
    { class: "unit", dataset: { unit: u.id } },
    h(
      "div",
      { class: "unit-head" },
      kind(u.kind),
      h("code", {}, u.id),
      states ? h("span", { class: "muted" }, states[1] > states[0] + 1 ? ` states ${states[0]}–${states[1] - 1}` : ` state ${states[0]}`) : null,
    ),
    h("p", { class: "clip" }, u.text),
  );
}
