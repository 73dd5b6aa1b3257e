// DOM helpers: elements built from data (never HTML strings), dates, links and the meta panel.
import { graphiqlHref } from "./api.js";

export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (key.startsWith("on")) el.addEventListener(key.slice(2), value);
    else if (key === "class") el.className = value;
    else if (value === true) el.setAttribute(key, "");
    else el.setAttribute(key, String(value));
  }
  append(el, children);
  return el;
}

export function append(el, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}

/** A URL of this page with the given parameters (empty values dropped). */
export function href(params) {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) {
    if (value !== null && value !== undefined && value !== "" && value !== false) {
      search.set(key, value === true ? "1" : String(value));
    }
  }
  const text = search.toString();
  return text ? `/?${text}` : "/";
}

export function entityLink(ref, extra = {}) {
  if (!ref) return null;
  return h("a", { href: href({ entity: ref.id, ...extra }), "data-id": ref.id }, ref.title || ref.id);
}

export function locatorText(locator) {
  if (!locator) return "";
  const lines =
    locator.startLine === locator.endLine
      ? `line ${locator.startLine}`
      : `lines ${locator.startLine}–${locator.endLine}`;
  return `${locator.path}, ${lines}`;
}

export function browserZone() {
  return Intl.DateTimeFormat().resolvedOptions().timeZone || "UTC";
}

export function zones() {
  const all = typeof Intl.supportedValuesOf === "function" ? Intl.supportedValuesOf("timeZone") : [];
  return ["UTC", ...all.filter((z) => z !== "UTC")];
}

const formats = new Map();

/** An instant as a wall-clock time in `tz`, with the zone named. */
export function zoned(instant, tz) {
  const key = tz;
  if (!formats.has(key)) {
    formats.set(
      key,
      new Intl.DateTimeFormat("en-GB", {
        timeZone: tz,
        weekday: "short",
        year: "numeric",
        month: "short",
        day: "numeric",
        hour: "2-digit",
        minute: "2-digit",
        timeZoneName: "short",
      }),
    );
  }
  return `${formats.get(key).format(new Date(instant))} (${tz})`;
}

const PRECISION = { DAY: "date only", MONTH: "month only", YEAR: "year only" };

/** The date cell of a timeline row: as written, and (for instants and occurrences) in `tz`. */
export function dateCell(date, occurrence, tz) {
  const cell = h("div", { class: "when" });
  if (occurrence) {
    cell.append(
      h("time", { datetime: occurrence.start, class: "local" }, zoned(occurrence.start, tz)),
      h("span", { class: "occurrence" }, ` occurrence #${occurrence.index}`),
    );
    if (date) cell.append(h("div", { class: "written" }, `series from ${date.text}`));
    return cell;
  }
  if (!date) return append(cell, [h("span", { class: "undated" }, "undated")]);
  if (date.precision === "INSTANT") {
    cell.append(
      h("time", { datetime: date.start, class: "local" }, zoned(date.start, tz)),
      h("div", { class: "written" }, `as written: ${date.text}`),
    );
  } else {
    const machine = /^\d{4}(-\d\d){0,2}$/.test(date.text) ? date.text : date.start.slice(0, 10);
    cell.append(
      h("time", { datetime: machine, class: "local" }, date.text),
      h("span", { class: "precision" }, ` (${PRECISION[date.precision] || date.precision})`),
    );
  }
  return cell;
}

export function badge(clock, count) {
  const text = clock.replace("_", " ");
  return h("span", { class: `badge clock-${clock.toLowerCase()}` }, count === undefined ? text : `${text} ${count}`);
}

export function queryLink(query, variables) {
  return h("a", { class: "show-query", href: graphiqlHref(query, variables), target: "_blank", rel: "noopener" }, "show query");
}

const DEGRADED = {
  index_stale: "the vault could not be read again just now: this answer comes from the last good snapshot",
  graph_stale: "the graph projection lags the index: relations may be out of date",
};

/** The meta panel: snapshot, freshness, degraded reasons and validation issues. */
export function renderMeta(meta) {
  const panel = document.getElementById("meta");
  panel.replaceChildren();
  if (!meta) return;
  const fresh = meta.freshness;
  const facts = h(
    "dl",
    { class: "facts" },
    h("dt", {}, "Snapshot"),
    h("dd", { id: "snapshot" }, h("code", {}, meta.snapshot)),
    h("dt", {}, "Vault scanned"),
    h("dd", {}, h("time", { datetime: fresh.scannedAt }, fresh.scannedAt)),
    h("dt", {}, "Indexed"),
    h("dd", {}, h("time", { datetime: fresh.indexedAt }, fresh.indexedAt)),
    h("dt", {}, "Coverage"),
    h("dd", {}, meta.coverage.complete ? "complete: no validation issues" : `${meta.coverage.issueCount} validation issues`),
  );
  panel.append(facts);
  if (meta.degraded.length) {
    panel.append(
      h("section", { class: "degraded", role: "alert" },
        h("h2", {}, "Degraded answer"),
        h("ul", {}, meta.degraded.map((d) => h("li", {}, DEGRADED[d] || d.replaceAll("_", " ")))),
      ),
    );
  }
  if (!meta.coverage.complete) {
    const issues = meta.coverage.issues;
    panel.append(
      h("section", { class: "issues", "aria-label": "Validation issues" },
        h("h2", {}, `Validation issues (${meta.coverage.issueCount})`),
        h("ul", {}, issues.map((i) => h("li", {}, h("code", {}, `${i.path}:${i.line ?? ""} ${i.code}`), ` ${i.message}`))),
        issues.length < meta.coverage.issueCount ? h("p", {}, `First ${issues.length} shown.`) : null,
      ),
    );
  }
}

export function errorBox(error) {
  return h("p", { class: "error", role: "alert" }, `Error${error.code ? ` (${error.code})` : ""}: ${error.message}`);
}
