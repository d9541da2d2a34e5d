// Profiles: what the space shows about each speaker (style, roles, skills, topics, and
// what they said of themself), each role, skill and fact with the message that shows it.
import { api, sp } from "./api.js";
import { facts, fill, fmtTime, h, num, title } from "./dom.js";

export async function render(main, ctx) {
  const { speakers } = await api("GET", sp(ctx.space, "speakers"));
  const detail = h("section", { id: "profile", "aria-live": "polite" });
  fill(
    main,
    title(`Profiles in ${ctx.space}`, "Computed from per-session statistics; every role and skill cites its message."),
    speakers.length ? null : h("p", { class: "muted" }, "No speakers in this space."),
    h(
      "div",
      { class: "split" },
      h(
        "nav",
        { "aria-label": "Speakers" },
        h(
          "ul",
          { class: "list", id: "speakers" },
          speakers.map((s) =>
            h("li", {}, h("a", { href: ctx.link(ctx.space, "profiles", s), "aria-current": s === ctx.id ? "true" : false }, s)),
          ),
        ),
      ),
      detail,
    ),
  );
  const chosen = ctx.id || speakers[0];
  if (chosen) await renderProfile(detail, ctx, chosen);
}

function evidence(ctx, items, label) {
  if (!items.length) return h("p", { class: "muted" }, `No ${label} found.`);
  return h(
    "ul",
    { class: "evidence" },
    items.map((e) =>
      h(
        "li",
        {},
        h("strong", {}, e.what),
        " — ",
        h("a", { href: ctx.link(ctx.space, "sessions", e.session_id) }, `session ${e.session_id}, message ${e.message_id}`),
      ),
    ),
  );
}

async function renderProfile(detail, ctx, speaker) {
  const p = await api("GET", sp(ctx.space, "profiles", speaker));
  const st = p.style;
  fill(
    detail,
    h("h2", {}, p.speaker),
    p.summary ? h("p", { class: "summary" }, p.summary) : null,
    facts([
      ["Messages", String(p.messages)],
      ["Groups", p.groups.join(", ")],
      ["First seen", fmtTime(p.first_seen)],
      ["Last seen", fmtTime(p.last_seen)],
    ]),
    h("h3", {}, "Style"),
    facts([
      ["Traits", st.traits.join(", ") || "–"],
      ["Words per message", num(st.avg_words, 1)],
      ["Questions", num(st.question_rate, 2)],
      ["Exclamations", num(st.exclamation_rate, 2)],
      ["Emoji", num(st.emoji_rate, 2)],
      ["Formality", num(st.formality, 2)],
      ["Directive", num(st.directive_rate, 2)],
      ["Collaborative", num(st.collaborative_rate, 2)],
      ["Reply time", st.avg_reply_seconds ? `${Math.round(st.avg_reply_seconds)} s` : "–"],
    ]),
    h("h3", {}, "Roles"),
    evidence(ctx, p.roles, "roles"),
    h("h3", {}, "Skills"),
    evidence(ctx, p.skills, "skills"),
    h("h3", {}, "Said of themself"),
    evidence(
      ctx,
      (p.facts || []).map((f) => ({ ...f, what: `${f.attribute}: ${f.negated ? "not " : ""}${f.value}` })),
      "personal facts",
    ),
    h("h3", {}, "Topics"),
    p.topics.length ? h("ul", { class: "chips" }, p.topics.map((t) => h("li", {}, t))) : h("p", { class: "muted" }, "No topics."),
  );
}
