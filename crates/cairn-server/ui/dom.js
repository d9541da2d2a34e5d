// Small DOM helpers. Text from the memory is untrusted: it only ever becomes text
// nodes (never HTML), so nothing a conversation says can run in the inspector.

/** Creates an element: `h("a", {href: "#/x", class: "y"}, "text", child)`. */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith("on") && typeof v === "function") {
      el.addEventListener(k.slice(2), v);
    } else if (k === "dataset") {
      Object.assign(el.dataset, v);
    } else if (v === true) {
      el.setAttribute(k, "");
    } else {
      el.setAttribute(k, String(v));
    }
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const c of children) {
    if (c === undefined || c === null || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
}

/** Replaces an element's content. */
export function fill(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

export function fmtTime(t) {
  if (!t) return "undated";
  const d = new Date(t);
  if (Number.isNaN(d.getTime())) return String(t);
  return d.toISOString().replace("T", " ").slice(0, 16) + " UTC";
}

export function fmtDay(t) {
  return t ? new Date(t).toISOString().slice(0, 10) : "undated";
}

export function fmtBytes(n) {
  if (n === undefined || n === null) return "–";
  const units = ["B", "KiB", "MiB", "GiB", "TiB"];
  let i = 0;
  let x = n;
  while (x >= 1024 && i < units.length - 1) {
    x /= 1024;
    i += 1;
  }
  return `${i ? x.toFixed(1) : x} ${units[i]}`;
}

export function num(x, digits = 3) {
  return typeof x === "number" ? x.toFixed(digits) : "–";
}

/** An error box for a failed call. */
export function errorBox(e) {
  const code = e && e.code ? ` (${e.code})` : "";
  return h("p", { class: "error", role: "alert" }, `${e && e.message ? e.message : e}${code}`);
}

/**
 * Asks before something that cannot be undone; resolves to true when confirmed. `details`:
 * lines shown under the question (what exactly goes), as text.
 */
export function confirmAction(text, button = "Forget", details = []) {
  const dialog = document.getElementById("confirm");
  document.getElementById("confirm-text").textContent = text;
  fill(document.getElementById("confirm-details"), details.map((d) => h("li", {}, d)));
  document.getElementById("confirm-ok").textContent = button;
  return new Promise((resolve) => {
    const done = () => {
      dialog.removeEventListener("close", done);
      resolve(dialog.returnValue === "ok");
    };
    dialog.addEventListener("close", done);
    dialog.returnValue = "cancel";
    dialog.showModal();
    document.getElementById("confirm-cancel").focus();
  });
}

/** A heading that takes focus, so keyboard and screen-reader users land on new views. */
export function title(text, sub) {
  return h("div", { class: "title" }, h("h1", { tabindex: "-1" }, text), sub ? h("p", { class: "muted" }, sub) : null);
}

/** A labelled definition list from [label, value] pairs (values may be nodes). */
export function facts(pairs) {
  return h(
    "dl",
    { class: "facts" },
    pairs.filter(([, v]) => v !== undefined && v !== null && v !== "").map(([k, v]) => [h("dt", {}, k), h("dd", {}, v)]),
  );
}

/** A kind badge. */
export function kind(k) {
  return h("span", { class: `kind kind-${k}` }, k);
}
