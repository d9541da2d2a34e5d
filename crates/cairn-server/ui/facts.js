// Facts: every subject's version chain on a timeline, each version with its validity
// interval and the message that stated it, and an as_of slider that asks the server
// for the chain as it was known at that moment.
import { api, ApiError, enc, sp } from "./api.js";
import { errorBox, fill, fmtDay, fmtTime, h, title } from "./dom.js";

const HOUR = 3600 * 1000;
const DAY = 24 * HOUR;

export async function render(main, ctx) {
  const { subjects } = await api("GET", sp(ctx.space, "subjects"));
  const list = h(
    "ul",
    { class: "list subjects", id: "subjects" },
    subjects.map((s) =>
      h(
        "li",
        {},
        h(
          "a",
          { href: ctx.link(ctx.space, "facts", s.subject), "aria-current": s.subject === ctx.id ? "true" : false },
          s.subject,
        ),
        h("span", { class: "muted" }, ` · ${s.versions} stated · now ${s.statement}`),
      ),
    ),
  );
  const detail = h("section", { class: "fact-detail", id: "fact-detail", "aria-live": "polite" });
  fill(
    main,
    title(`Facts of ${ctx.space}`, "Values stated about a subject; a later statement supersedes an earlier one, and both stay."),
    subjects.length ? null : h("p", { class: "muted" }, "No facts stated in this space."),
    h("div", { class: "split" }, h("nav", { "aria-label": "Subjects" }, list), detail),
  );
  const chosen = ctx.id || (subjects[0] && subjects[0].subject);
  if (chosen) await renderSubject(detail, ctx, chosen);
}

async function history(space, subject, asOf) {
  const q = `?subject=${enc(subject)}${asOf ? `&as_of=${enc(asOf)}` : ""}`;
  try {
    return await api("GET", `${sp(space, "history")}${q}`);
  } catch (e) {
    if (e instanceof ApiError && e.status === 404) return null;
    throw e;
  }
}

async function renderSubject(detail, ctx, subject) {
  const hist = await history(ctx.space, subject);
  if (!hist) {
    fill(detail, h("p", { class: "muted" }, `No fact about ${subject}.`));
    return;
  }
  const times = hist.versions.map((v) => Date.parse(v.valid_from)).filter((t) => !Number.isNaN(t));
  const first = times.length ? Math.min(...times) : Date.now();
  const last = times.length ? Math.max(...times) : Date.now();
  const span = Math.max(last - first, DAY);
  const lo = first - span * 0.1;
  const hi = last + span * 0.25;
  const pos = (t) => `${(((t - lo) / (hi - lo)) * 100).toFixed(2)}%`;
  const bars = hist.versions.map((v, i) =>
    h(
      "div",
      {
        class: `bar${v.valid_to ? "" : " current"}`,
        dataset: { version: String(i) },
        title: `${v.statement}: ${fmtTime(v.valid_from)} → ${v.valid_to ? fmtTime(v.valid_to) : "now"}`,
      },
      h("span", {}, v.statement),
    ),
  );
  // Positions are set through the CSSOM (the policy forbids inline style attributes).
  hist.versions.forEach((v, i) => {
    const from = Date.parse(v.valid_from) || lo;
    const to = v.valid_to ? Date.parse(v.valid_to) : hi;
    bars[i].style.left = pos(from);
    bars[i].style.width = `calc(${pos(to)} - ${pos(from)})`;
  });
  const marker = h("div", { class: "marker", "aria-hidden": "true" });
  const axis = h("div", { class: "axis" }, h("span", {}, fmtDay(lo)), h("span", {}, fmtDay(hi)));
  const timeline = h("div", { class: "timeline", id: "timeline", role: "img", "aria-label": `Timeline of ${hist.subject}` }, bars, marker);
  const value = h("strong", { id: "as-of-value" }, hist.versions[hist.versions.length - 1].statement);
  const when = h("output", { id: "as-of-date", for: "as-of" }, "now");
  // The slider moves by hours; its range is a whole number of them, so its end (now) is
  // a value it can take.
  const max = Math.ceil(hi);
  const min = max - Math.ceil((max - lo) / HOUR) * HOUR;
  const slider = h("input", {
    id: "as-of",
    type: "range",
    min: String(min),
    max: String(max),
    step: String(HOUR),
    value: String(max),
  });
  const cards = h(
    "ol",
    { class: "versions", id: "versions" },
    hist.versions.map((v, i) =>
      h(
        "li",
        { class: "version", dataset: { version: String(i) } },
        h("div", { class: "unit-head" }, h("strong", {}, v.statement), v.valid_to ? h("span", { class: "badge" }, "superseded") : h("span", { class: "badge ok" }, "current")),
        h("p", { class: "muted" }, `valid ${fmtTime(v.valid_from)} → ${v.valid_to ? fmtTime(v.valid_to) : "now"}`),
        h("blockquote", {}, v.text),
        h(
          "p",
          { class: "muted" },
          `stated by ${v.speaker || "unknown"}`,
          v.session_id
            ? [" in ", h("a", { href: ctx.link(ctx.space, "sessions", v.session_id) }, `session ${v.session_id}`), v.message_id ? `, message ${v.message_id}` : ""]
            : null,
          v.superseded_by ? ` · replaced by ${v.superseded_by}` : "",
        ),
      ),
    ),
  );
  const status = h("p", { class: "status", role: "status" });
  let pending = 0;
  const update = async () => {
    const t = Number(slider.value);
    marker.style.left = pos(t);
    const atEnd = t >= Number(slider.max);
    const asOf = atEnd ? null : new Date(t).toISOString();
    fill(when, atEnd ? "now" : fmtTime(asOf));
    const ticket = ++pending;
    try {
      const then = await history(ctx.space, hist.subject, asOf);
      if (ticket !== pending) return;
      const known = then ? then.versions.map((v) => v.unit_id) : [];
      fill(value, then ? then.versions[then.versions.length - 1].statement : "not stated yet");
      hist.versions.forEach((v, i) => {
        const on = known.includes(v.unit_id);
        bars[i].classList.toggle("unknown", !on);
        cards.children[i].classList.toggle("unknown", !on);
      });
      fill(status);
    } catch (e) {
      fill(status, errorBox(e));
    }
  };
  slider.addEventListener("input", update);
  fill(
    detail,
    h("h2", {}, hist.subject),
    h("div", { class: "timeline-wrap" }, timeline, axis),
    h(
      "div",
      { class: "as-of" },
      h("label", { for: "as-of" }, "As of"),
      slider,
      when,
      h("p", {}, "Value then: ", value),
    ),
    status,
    h("h3", {}, "Versions, oldest first"),
    cards,
  );
  marker.style.left = pos(Number(slider.value));
}
