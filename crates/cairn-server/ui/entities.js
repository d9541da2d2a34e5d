// Entities: the people, places, organizations and things the space's messages name
// (searchable), and one of them with its aliases, relations and mentions in time order.
import { api, enc, sp } from "./api.js";
import { facts, fill, fmtTime, h, title } from "./dom.js";

export async function render(main, ctx, q = "") {
  const query = h("input", { id: "entity-query", type: "search", placeholder: "Search names", "aria-label": "Search entities", value: q });
  const listing = await api("GET", `${sp(ctx.space, "entities")}${q ? `?q=${enc(q)}` : ""}`);
  const detail = h("section", { id: "entity", "aria-live": "polite" });
  fill(
    main,
    title(`Entities in ${ctx.space}`, "Derived from the messages with no model: speakers, and the names they write."),
    h(
      "form",
      {
        class: "row",
        role: "search",
        onsubmit: (ev) => {
          ev.preventDefault();
          render(main, ctx, query.value.trim());
        },
      },
      query,
      h("button", { type: "submit", id: "entity-search" }, "Search"),
    ),
    h(
      "div",
      { class: "split" },
      h(
        "nav",
        { "aria-label": "Entities" },
        listing.entities.length ? null : h("p", { class: "muted" }, "No entities."),
        h(
          "ul",
          { class: "list", id: "entities" },
          listing.entities.map((e) =>
            h(
              "li",
              {},
              h("a", { href: ctx.link(ctx.space, "entities", e.name), "aria-current": e.name === ctx.id ? "true" : false }, e.name),
              h("span", { class: "muted" }, ` · ${e.kind} · ${e.mention_count} mentions`),
            ),
          ),
        ),
      ),
      detail,
    ),
  );
  const chosen = ctx.id || (listing.entities[0] && listing.entities[0].name);
  if (chosen) await renderEntity(detail, ctx, chosen);
}

async function renderEntity(detail, ctx, name) {
  const e = await api("GET", sp(ctx.space, "entities", name));
  fill(
    detail,
    h("h2", {}, e.name),
    facts([
      ["Kind", e.kind],
      ["Also written", e.aliases.join(", ")],
      ["Mentions", String(e.mention_count)],
      ["Sessions", String(e.sessions)],
      ["First seen", fmtTime(e.first_seen)],
      ["Last seen", fmtTime(e.last_seen)],
    ]),
    h("h3", {}, "Appears with"),
    e.relations.length
      ? h(
          "ul",
          { class: "chips", id: "relations" },
          e.relations.slice(0, 20).map((r) => h("li", {}, h("a", { href: ctx.link(ctx.space, "entities", r.name) }, r.name), ` (${r.sessions})`)),
        )
      : h("p", { class: "muted" }, "Nothing else."),
    h("h3", {}, "Mentions, oldest first"),
    h(
      "ol",
      { class: "list", id: "mentions" },
      e.mentions.map((m) =>
        h(
          "li",
          {},
          h("time", {}, fmtTime(m.occurred_at)),
          ` · ${m.edge} “${m.surface}” · `,
          m.session_id
            ? h("a", { href: `${ctx.link(ctx.space, "sessions", m.session_id)}` }, `session ${m.session_id}, messages ${m.message_ids.join(", ")}`)
            : h("code", {}, m.unit_id),
        ),
      ),
    ),
  );
}
