// The inspector's shell: sign-in, the caller's spaces, navigation, and the views.
// Routes live in the URL hash: #/spaces, #/s/<space>/<view>[/<id>].
import { api, clearKey, enc, key, setKey } from "./api.js";
import { errorBox, fill, h, title } from "./dom.js";
import * as entities from "./entities.js";
import * as facts from "./facts.js";
import * as memories from "./memories.js";
import * as profiles from "./profiles.js";
import * as recall from "./recall.js";
import * as sessions from "./sessions.js";
import * as spaces from "./spaces.js";
import * as trajectories from "./trajectories.js";

const VIEWS = [
  ["memories", "Memories", memories],
  ["sessions", "Sessions", sessions],
  ["facts", "Facts", facts],
  ["profiles", "Profiles", profiles],
  ["entities", "Entities", entities],
  ["trajectories", "Trajectories", trajectories],
  ["recall", "Recall", recall],
];

const state = { me: null };

function parseRoute() {
  const parts = location.hash.replace(/^#\/?/, "").split("/").map(decodeURIComponent);
  if (parts[0] === "s" && parts[1]) {
    return { space: parts[1], view: parts[2] || "sessions", id: parts.slice(3).join("/") || null };
  }
  return { space: null, view: parts[0] || "spaces", id: null };
}

/** The hash of a view of a space (`id` optional). */
export function link(space, view, id) {
  const base = `#/s/${enc(space)}/${view}`;
  return id ? `${base}/${enc(id)}` : base;
}

function signIn(main, problem) {
  document.getElementById("nav").hidden = true;
  fill(document.getElementById("who"));
  const input = h("input", {
    id: "key",
    name: "key",
    type: "password",
    autocomplete: "off",
    required: true,
    spellcheck: "false",
    "aria-describedby": "key-help",
  });
  const form = h(
    "form",
    {
      class: "card signin",
      onsubmit: async (ev) => {
        ev.preventDefault();
        setKey(input.value.trim());
        location.hash = "#/spaces";
        await route();
      },
    },
    h("label", { for: "key" }, "API key"),
    input,
    h(
      "p",
      { id: "key-help", class: "muted" },
      "A key made by `cairn keys create`, or the server's admin key. It stays in this tab only " +
        "(sessionStorage) and goes to this server as a Bearer header.",
    ),
    h("button", { type: "submit", id: "sign-in" }, "Sign in"),
  );
  fill(main, title("Sign in"), problem ? errorBox(problem) : null, form);
  input.focus();
}

function header(space) {
  const me = state.me;
  const options = me.spaces.map((s) => h("option", { value: s, selected: s === space }, s));
  const picker = h(
    "select",
    {
      id: "space-picker",
      "aria-label": "Space",
      onchange: (ev) => {
        location.hash = link(ev.target.value, parseRoute().view === "spaces" ? "sessions" : parseRoute().view);
      },
    },
    space ? null : h("option", { value: "", selected: true }, "Choose a space"),
    options,
  );
  fill(
    document.getElementById("who"),
    h("span", { class: "key-id" }, me.label ? `${me.label} (${me.key_id})` : me.key_id),
    me.admin ? h("span", { class: "badge" }, "admin") : null,
    me.read_only ? h("span", { class: "badge", id: "read-only" }, "read-only") : null,
    picker,
    h(
      "button",
      {
        class: "link",
        id: "sign-out",
        onclick: () => {
          clearKey();
          state.me = null;
          location.hash = "#/signin";
        },
      },
      "Sign out",
    ),
  );
  const nav = document.getElementById("nav");
  nav.hidden = false;
  const current = parseRoute();
  const item = (href, label, on) => h("a", { href, "aria-current": on ? "page" : false }, label);
  fill(
    nav,
    item("#/spaces", "Spaces", current.view === "spaces" && !space),
    space ? VIEWS.map(([v, label]) => item(link(space, v), label, current.view === v)) : null,
  );
}

async function route() {
  // Each route renders into a <main> of its own: a view still waiting for an answer when
  // the route changes fills the one it was given, no longer in the page, instead of
  // overwriting the view that replaced it.
  const old = document.getElementById("main");
  const main = old.cloneNode(false);
  old.replaceWith(main);
  if (!key()) return signIn(main);
  try {
    state.me = state.me || (await api("GET", "/v1/me"));
  } catch (e) {
    clearKey();
    state.me = null;
    return signIn(main, e);
  }
  const r = parseRoute();
  if (r.view === "signin") {
    location.hash = "#/spaces";
    return;
  }
  header(r.space);
  const ctx = { me: state.me, space: r.space, id: r.id, link, readOnly: state.me.read_only };
  fill(main, h("p", { class: "muted" }, "Loading…"));
  try {
    if (!r.space) await spaces.render(main, ctx);
    else {
      const view = VIEWS.find(([v]) => v === r.view);
      if (!view) fill(main, errorBox(`no view ${r.view}`));
      else await view[2].render(main, ctx);
    }
  } catch (e) {
    if (e.status === 401) {
      clearKey();
      state.me = null;
      return signIn(main, e);
    }
    fill(main, errorBox(e));
  }
  const heading = main.querySelector("h1");
  if (heading) heading.focus({ preventScroll: true });
}

window.addEventListener("hashchange", route);
window.addEventListener("DOMContentLoaded", route);
