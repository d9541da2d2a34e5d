// Spaces: what each space holds (counts per kind, disk, last recorded), with export.
import { api, sp } from "./api.js";
import { errorBox, fill, fmtBytes, fmtTime, h, title } from "./dom.js";

/** Downloads a space's export (JSONL) through the API with the signed-in key. */
export async function exportSpace(space, status) {
  try {
    const r = await api("GET", sp(space, "export"), undefined, { raw: true });
    const blob = await r.blob();
    const url = URL.createObjectURL(blob);
    const a = h("a", { href: url, download: `${space}.jsonl` });
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 10_000);
    fill(status, `Exported ${space} (${fmtBytes(blob.size)}).`);
  } catch (e) {
    fill(status, errorBox(e));
  }
}

export async function render(main, ctx) {
  const stats = (await api("GET", "/v1/stats")).spaces;
  const status = h("p", { class: "status", role: "status", "aria-live": "polite" });
  const kinds = [...new Set(stats.flatMap((s) => Object.keys(s.units_by_kind)))].sort();
  const rows = stats.map((s) =>
    h(
      "tr",
      { dataset: { space: s.space } },
      h("th", { scope: "row" }, h("a", { href: ctx.link(s.space, "sessions") }, s.space)),
      h("td", {}, s.sessions),
      h("td", {}, s.messages),
      h("td", {}, s.trajectories),
      h("td", {}, s.units),
      kinds.map((k) => h("td", {}, s.units_by_kind[k] || 0)),
      h("td", {}, fmtBytes(s.disk_bytes)),
      h("td", {}, s.last_recorded_at ? fmtTime(s.last_recorded_at) : "–"),
      h(
        "td",
        { class: "actions" },
        h(
          "button",
          { class: "small", onclick: () => exportSpace(s.space, status), "aria-label": `Export ${s.space}` },
          "Export",
        ),
      ),
    ),
  );
  const table = h(
    "div",
    { class: "scroll" },
    h(
      "table",
      { id: "spaces" },
      h("caption", {}, "Spaces this key sees"),
      h(
        "thead",
        {},
        h(
          "tr",
          {},
          h("th", { scope: "col" }, "Space"),
          h("th", { scope: "col" }, "Sessions"),
          h("th", { scope: "col" }, "Messages"),
          h("th", { scope: "col" }, "Trajectories"),
          h("th", { scope: "col" }, "Units"),
          kinds.map((k) => h("th", { scope: "col" }, k)),
          h("th", { scope: "col" }, "Disk (est.)"),
          h("th", { scope: "col" }, "Last recorded"),
          h("th", { scope: "col", class: "actions" }, h("span", { class: "sr" }, "Actions")),
        ),
      ),
      h("tbody", {}, rows),
    ),
  );
  const empty = stats.length ? null : h("p", { class: "muted" }, "No spaces yet: nothing this key sees holds data.");
  fill(main, title("Spaces", `Signed in as ${ctx.me.label || ctx.me.key_id}.`), empty, stats.length ? table : null, status);
}
