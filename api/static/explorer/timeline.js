// The entity view (record and timeline) and the chronicle view (a day or a week).
import { gql, META, GraphQLFailure } from "./api.js";
import { h, href, entityLink, locatorText, dateCell, badge, queryLink, browserZone, zones, errorBox } from "./dom.js";

const PAGE = 50;

const ENTRY = `fragment Entry on TimelineEntry {
  record { id kind type title }
  date { text precision start end }
  occurrence { index start local }
  clock summary claims
  locator { path startLine endLine revision }
  via { id title } source { id title } note { id title }
  links { id title }
}`;
const RESULT = `total asOf timezone localDate
    clockCounts { clock count }
    pageInfo { hasNextPage endCursor }
    entries { ...Entry }
    meta { ...Meta }`;

const TIMELINE = `query Timeline($entity: ID!, $timezone: String!, $asOf: String, $kind: String, $order: Order!, $group: TimelineGroup!, $eligibility: Eligibility!, $first: Int!, $after: String) {
  timeline(entity: $entity, timezone: $timezone, asOf: $asOf, kind: $kind, order: $order, group: $group, eligibility: $eligibility, first: $first, after: $after) {
    ${RESULT}
  }
}
${ENTRY}
${META}`;
const RECORD = `query Record($id: ID!) {
  record(id: $id) {
    id kind type title aliases tags lifecycle supersededBy timezone recurrence
    locator { path startLine endLine revision }
  }
  status { countsByType { key } }
}`;
const CHRONICLE = `query Chronicle($date: String!, $timezone: String!, $week: Boolean!, $includePartial: Boolean!, $first: Int!, $after: String) {
  chronicleDay(date: $date, timezone: $timezone, week: $week, includePartial: $includePartial, first: $first, after: $after) {
    ${RESULT}
  }
}
${ENTRY}
${META}`;

function zoneSelect(current, onchange) {
  const id = "tz";
  const options = zones();
  if (!options.includes(current)) options.unshift(current);
  return h("span", { class: "control" },
    h("label", { for: id }, "Time zone"),
    h("select", { id, onchange: (e) => onchange(e.target.value) },
      options.map((z) => h("option", { value: z, selected: z === current }, z))),
  );
}

function checkbox(id, label, checked, onchange) {
  return h("span", { class: "control" },
    h("input", { type: "checkbox", id, checked, onchange: (e) => onchange(e.target.checked) }),
    h("label", { for: id }, label),
  );
}

function row(entry, tz, linkParams) {
  const parts = [
    dateCell(entry.date, entry.occurrence, tz),
    h("div", { class: "what" },
      badge(entry.clock), " ",
      entityLink(entry.record, linkParams), h("span", { class: "type" }, ` ${entry.record.type}`),
      entry.via ? h("span", { class: "small" }, " via ", entityLink(entry.via, linkParams)) : null,
      entry.source ? h("span", { class: "small" }, " source ", entityLink(entry.source, linkParams)) : null,
      h("div", { class: "small locator" }, locatorText(entry.locator)),
    ),
  ];
  if (entry.summary !== null || entry.claims !== null) {
    parts.push(h("div", { class: "group" },
      entry.summary ? h("p", { class: "summary" }, entry.summary) : null,
      entry.claims !== null ? h("span", { class: "claims" }, `${entry.claims} claims`) : null,
      entry.links.length ? h("span", { class: "links" }, " links: ", entry.links.map((l, i) => [i ? ", " : "", entityLink(l, linkParams)])) : null,
    ));
  }
  return h("li", { class: "row" }, parts);
}

/** A paged list: first page now, "Load more" after; a changed snapshot reloads it in place. */
async function pagedList(page, query, variables, tz, linkParams) {
  const first = await gql(query, { ...variables, first: PAGE, after: null });
  const result = Object.values(first)[0];
  page.answered(result.meta);
  const list = h("ol", { class: "timeline", "aria-label": "Timeline" });
  const counter = h("p", { class: "small", role: "status" });
  const more = h("button", { type: "button", class: "more" }, "Load more");
  const box = h("div", { class: "paged" });
  let cursor = null;
  let shown = 0;
  function show(res, replace) {
    if (replace) {
      list.replaceChildren();
      shown = 0;
    }
    const fragment = document.createDocumentFragment();
    for (const entry of res.entries) fragment.append(row(entry, tz, linkParams));
    list.append(fragment);
    shown += res.entries.length;
    cursor = res.pageInfo.endCursor;
    counter.textContent = `${shown} of ${res.total} rows`;
    more.hidden = !res.pageInfo.hasNextPage;
  }
  more.addEventListener("click", async () => {
    more.disabled = true;
    try {
      const next = Object.values(await gql(query, { ...variables, first: PAGE, after: cursor }))[0];
      show(next, false);
    } catch (error) {
      if (error instanceof GraphQLFailure && error.code === "SNAPSHOT_CHANGED") {
        const fresh = Object.values(await gql(query, { ...variables, first: PAGE, after: null }))[0];
        show(fresh, true);
        page.answered(fresh.meta);
        box.prepend(h("p", { class: "notice", role: "status" }, "The vault changed while you were paging: the list was reloaded from its start, read from the new snapshot."));
      } else {
        box.append(errorBox(error));
      }
    } finally {
      more.disabled = false;
    }
  });
  show(result, true);
  const counts = h("p", { class: "clocks" }, h("span", { class: "small" }, "Rows by clock: "), result.clockCounts.map((c) => [badge(c.clock, c.count), " "]));
  const zoneNote = h("p", { class: "small" }, `Times in ${result.timezone}; clock as of `, h("time", { datetime: result.asOf }, result.asOf), ` (local date ${result.localDate}).`);
  box.append(counts, zoneNote, list, counter, more);
  return box;
}

export async function entityView(page, params) {
  const id = params.get("entity");
  const tz = params.get("tz") || browserZone();
  const state = {
    kind: params.get("kind") || "",
    order: params.get("order") === "DESC" ? "DESC" : "ASC",
    group: params.get("group") === "SOURCE" ? "SOURCE" : "NONE",
    eligibility: params.get("eligibility") === "INCLUDE_INACTIVE" ? "INCLUDE_INACTIVE" : "ACTIVE",
    asOf: params.get("asOf") || "",
  };
  const { record, status } = await gql(RECORD, { id });
  if (!record) {
    return [h("h1", { tabindex: -1 }, "No such record"), h("p", {}, `Nothing readable has the id “${id}”.`)];
  }
  const go = (change) => page.navigate(href({ entity: id, tz, ...state, order: state.order === "ASC" ? "" : state.order, group: state.group === "NONE" ? "" : state.group, eligibility: state.eligibility === "ACTIVE" ? "" : state.eligibility, ...change }));
  const variables = { entity: id, timezone: tz, asOf: state.asOf ? toInstant(state.asOf) : null, kind: state.kind || null, order: state.order, group: state.group, eligibility: state.eligibility };
  const header = [
    h("h1", { tabindex: -1 }, record.title),
    h("dl", { class: "record" },
      h("dt", {}, "Type"), h("dd", {}, `${record.type} (${record.kind.toLowerCase()})`),
      h("dt", {}, "Id"), h("dd", {}, h("code", {}, record.id)),
      record.aliases.length ? [h("dt", {}, "Aliases"), h("dd", {}, record.aliases.join(", "))] : null,
      record.tags.length ? [h("dt", {}, "Tags"), h("dd", {}, record.tags.map((t) => h("span", { class: "tag" }, t)))] : null,
      h("dt", {}, "Lifecycle"),
      h("dd", {}, record.lifecycle.toLowerCase(), record.supersededBy ? [" by ", entityLink({ id: record.supersededBy, title: record.supersededBy })] : null),
      h("dt", {}, "File"), h("dd", {}, locatorText(record.locator), h("span", { class: "small" }, ` revision ${record.locator.revision.slice(0, 12)}`)),
      record.recurrence ? [h("dt", {}, "Recurs"), h("dd", {}, `${record.recurrence}${record.timezone ? ` (${record.timezone})` : ""}`)] : null,
    ),
    h("p", { class: "views" }, h("a", { href: href({ entity: id, view: "graph" }) }, "Graph view"), " · ", queryLink(TIMELINE, { ...variables, first: PAGE, after: null })),
  ];
  const controls = h("form", { class: "controls", "aria-label": "Timeline options", onsubmit: (e) => e.preventDefault() },
    h("span", { class: "control" },
      h("label", { for: "kind" }, "Kind"),
      h("select", { id: "kind", onchange: (e) => go({ kind: e.target.value }) },
        h("option", { value: "" }, "all"),
        status.countsByType.map((c) => h("option", { value: c.key, selected: c.key === state.kind }, c.key)))),
    h("span", { class: "control" },
      h("label", { for: "order" }, "Order"),
      h("select", { id: "order", onchange: (e) => go({ order: e.target.value === "ASC" ? "" : e.target.value }) },
        h("option", { value: "ASC", selected: state.order === "ASC" }, "oldest first"),
        h("option", { value: "DESC", selected: state.order === "DESC" }, "newest first"))),
    checkbox("group", "group: SOURCE", state.group === "SOURCE", (on) => go({ group: on ? "SOURCE" : "" })),
    checkbox("inactive", "include superseded and withdrawn", state.eligibility !== "ACTIVE", (on) => go({ eligibility: on ? "INCLUDE_INACTIVE" : "" })),
    h("span", { class: "control" },
      h("label", { for: "asof" }, "As of (UTC)"),
      h("input", { type: "datetime-local", id: "asof", value: state.asOf, onchange: (e) => go({ asOf: e.target.value }) })),
    zoneSelect(tz, (zone) => go({ tz: zone })),
  );
  const list = await pagedList(page, TIMELINE, variables, tz, { tz });
  return [...header, controls, list];
}

/** A `datetime-local` value read as UTC. */
function toInstant(local) {
  return local.length === 16 ? `${local}:00Z` : `${local}Z`;
}

function shiftDay(day, days) {
  const date = new Date(`${day}T00:00:00Z`);
  date.setUTCDate(date.getUTCDate() + days);
  return date.toISOString().slice(0, 10);
}

export async function chronicleView(page, params) {
  const day = params.get("day");
  const tz = params.get("tz") || browserZone();
  const week = params.get("week") === "1";
  const partial = params.get("partial") === "1";
  const at = (change) => href({ day, tz, week, partial, ...change });
  const step = week ? 7 : 1;
  const variables = { date: day, timezone: tz, week, includePartial: partial };
  const title = week ? `The week of ${day}` : `${day}`;
  const header = [
    h("h1", { tabindex: -1 }, `Chronicle: ${title}`),
    h("nav", { class: "steps", "aria-label": "Days" },
      h("a", { href: at({ day: shiftDay(day, -step) }), rel: "prev" }, week ? "← previous week" : "← previous day"), " ",
      h("a", { href: at({ day: shiftDay(day, step) }), rel: "next" }, week ? "next week →" : "next day →"), " ",
      h("a", { href: at({ week: !week }) }, week ? "just this day" : "its Monday–Sunday week"),
    ),
    h("form", { class: "controls", "aria-label": "Chronicle options", onsubmit: (e) => e.preventDefault() },
      checkbox("partial", "include partial (month and year) dates", partial, (on) => page.navigate(at({ partial: on }))),
      zoneSelect(tz, (zone) => page.navigate(at({ tz: zone }))),
    ),
    h("p", { class: "small" }, queryLink(CHRONICLE, { ...variables, first: PAGE, after: null })),
  ];
  const list = await pagedList(page, CHRONICLE, variables, tz, { tz });
  return [...header, list];
}
