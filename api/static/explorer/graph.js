// The graph view (`?entity=<id>&view=graph`) and paths (`?from=<id>&to=<id>`): a layered
// drawing (column = hop from the seed, dagre orders each column) beside the same paths as text,
// with a ledger of everything the bounds left out.
import dagre from "/static/vendor/dagre/dagre.esm.js";
import { gql, META } from "./api.js";
import { h, href, entityLink, locatorText, queryLink, errorBox } from "./dom.js";

const SVG = "http://www.w3.org/2000/svg";
const NODE_W = 180;
const NODE_H = 44;
const COLUMN = 280;
// The server's bounds (api/args.py traversal_limits): a larger value is drawn at the bound.
const MAX_HOPS = 3;
const MAX_FAN_OUT = 100;

const RESULT = `status seeds { id title } candidates { id title type }
    nodes { id kind type title hop }
    paths { nodes edges { relation from to direction record locator { path startLine endLine revision } } }
    limits { reason nodeId available }
    meta { ...Meta }`;
const GRAPH = `query Graph($seed: ID!, $hops: Int!, $direction: Direction!, $relations: [String!], $fanOut: Int!, $history: Boolean!, $asOf: String) {
  graph(seed: { id: $seed }, hops: $hops, direction: $direction, relations: $relations, fanOut: $fanOut, history: $history, asOf: $asOf) {
    ${RESULT}
  }
}
${META}`;
const PATHS = `query Paths($from: ID!, $to: ID!, $hops: Int!, $direction: Direction!, $relations: [String!], $fanOut: Int!, $history: Boolean!, $asOf: String) {
  paths(from: $from, to: $to, maxHops: $hops, direction: $direction, relations: $relations, fanOut: $fanOut, history: $history, asOf: $asOf) {
    ${RESULT}
  }
}
${META}`;
const EVIDENCE = `query Evidence($id: ID!) {
  record(id: $id) { id title type validFrom { text } validUntil { text } lifecycle locator { path startLine endLine revision } }
}`;
const LINES = `query Lines($path: String!, $start: Int!, $end: Int!, $revision: String!) {
  excerpt(path: $path, startLine: $start, endLine: $end, revision: $revision) { current revision lines { number text } }
}`;

function svg(tag, attrs = {}) {
  const el = document.createElementNS(SVG, tag);
  for (const [key, value] of Object.entries(attrs)) el.setAttribute(key, String(value));
  return el;
}

/** A one-line label centred in a box of the drawing, as HTML (so its colours are checked like
 * the page's: a contrast checker cannot read SVG text over lines). */
function htmlLabel(x, y, width, cls, text) {
  const box = svg("foreignObject", { x, y, width, height: 16, class: cls });
  box.append(h("div", {}, h("span", {}, text)));
  return box;
}

/** Where an edge's label goes: on its curve (a cubic Bézier through `points`), above the point
 * nearest the middle whose box (`width` x 16) overlaps no label placed before (crossing edges
 * share their middles); the middle when every place is taken. */
function labelPlace(placed, width, [p0, p1, p2, p3]) {
  const on = (t) => {
    const u = 1 - t;
    const x = u * u * u * p0.x + 3 * u * u * t * p1.x + 3 * u * t * t * p2.x + t * t * t * p3.x;
    const y = u * u * u * p0.y + 3 * u * u * t * p1.y + 3 * u * t * t * p2.y + t * t * t * p3.y;
    return { x, y: y - 17 };
  };
  const free = (c) => placed.every((o) => Math.abs(o.x - c.x) * 2 >= o.width + width || Math.abs(o.y - c.y) >= 16);
  const tries = [0.5, 0.4, 0.6, 0.3, 0.7, 0.2, 0.8, 0.15, 0.85].map(on);
  const at = tries.find(free) || tries[0];
  placed.push({ ...at, width });
  return at;
}

function settings(params) {
  const int = (name, fallback, low, high) => {
    const value = Number.parseInt(params.get(name) || "", 10);
    return Number.isFinite(value) ? Math.min(high, Math.max(low, value)) : fallback;
  };
  const direction = ["OUT", "IN", "BOTH"].includes(params.get("direction")) ? params.get("direction") : "BOTH";
  const relations = (params.get("relations") || "").split(",").map((r) => r.trim()).filter(Boolean);
  return {
    hops: int("hops", 2, 1, MAX_HOPS),
    fanOut: int("fanOut", 25, 1, MAX_FAN_OUT),
    direction,
    relations,
    history: params.get("history") === "1",
    asOf: params.get("asOf") || "",
  };
}

function controls(page, s, base) {
  const go = (change) => page.navigate(href({ ...base, hops: s.hops, fanOut: s.fanOut, direction: s.direction === "BOTH" ? "" : s.direction, relations: s.relations.join(","), history: s.history, asOf: s.asOf, ...change }));
  const number = (id, label, value, key) => h("span", { class: "control" },
    h("label", { for: id }, label),
    h("input", { type: "number", id, min: 1, max: key === "hops" ? MAX_HOPS : MAX_FAN_OUT, value, onchange: (e) => go({ [key]: e.target.value }) }));
  return h("form", { class: "controls", "aria-label": "Traversal options", onsubmit: (e) => e.preventDefault() },
    number("hops", "Hops", s.hops, "hops"),
    number("fanout", "Fan-out", s.fanOut, "fanOut"),
    h("span", { class: "control" }, h("label", { for: "direction" }, "Direction"),
      h("select", { id: "direction", onchange: (e) => go({ direction: e.target.value === "BOTH" ? "" : e.target.value }) },
        ["BOTH", "OUT", "IN"].map((d) => h("option", { value: d, selected: d === s.direction }, d.toLowerCase())))),
    h("span", { class: "control" }, h("label", { for: "relations" }, "Relations"),
      h("input", { type: "text", id: "relations", value: s.relations.join(","), placeholder: "all (or works_at,reports_to)", onchange: (e) => go({ relations: e.target.value }) })),
    h("span", { class: "control" }, h("input", { type: "checkbox", id: "history", checked: s.history, onchange: (e) => go({ history: e.target.checked }) }), h("label", { for: "history" }, "history (ended relations too)")),
    h("span", { class: "control" }, h("label", { for: "asof" }, "As of (UTC)"),
      h("input", { type: "datetime-local", id: "asof", value: s.asOf, onchange: (e) => go({ asOf: e.target.value }) })),
  );
}

function variablesOf(s) {
  return {
    hops: s.hops, direction: s.direction, relations: s.relations.length ? s.relations : null,
    fanOut: s.fanOut, history: s.history, asOf: s.asOf ? (s.asOf.length === 16 ? `${s.asOf}:00Z` : `${s.asOf}Z`) : null,
  };
}

export async function graphView(page, params) {
  const seed = params.get("entity");
  const s = settings(params);
  const variables = { seed, ...variablesOf(s) };
  const result = (await gql(GRAPH, variables)).graph;
  page.answered(result.meta);
  return drawing(page, result, s, variables, GRAPH, { entity: seed, view: "graph" }, `Graph around ${result.seeds[0]?.title || seed}`);
}

export async function pathsView(page, params) {
  const s = settings(params);
  const variables = { from: params.get("from"), to: params.get("to"), ...variablesOf(s) };
  const result = (await gql(PATHS, variables)).paths;
  page.answered(result.meta);
  const target = result.nodes.find((n) => n.id === variables.to);
  const title = `Paths from ${result.seeds[0]?.title || variables.from} to ${target?.title || variables.to}`;
  return drawing(page, result, s, variables, PATHS, { from: variables.from, to: variables.to }, title);
}

function edgeKey(e) {
  return `${e.from}\u0000${e.to}\u0000${e.relation}\u0000${e.record}`;
}

function drawing(page, result, s, variables, query, base, title) {
  const parts = [h("h1", { tabindex: -1 }, title), controls(page, s, base),
    h("p", { class: "small" }, queryLink(query, variables), s.asOf ? ` · Relations valid at ${variables.asOf}.` : " · Relations valid now.")];
  if (result.status !== "FOUND") {
    parts.push(h("p", { role: "alert" }, `The seed was ${result.status.toLowerCase()}.`));
    if (result.candidates.length) parts.push(h("ul", {}, result.candidates.map((c) => h("li", {}, entityLink(c, { view: "graph" })))));
    return parts;
  }
  const nodes = new Map(result.nodes.map((n) => [n.id, n]));
  const edges = new Map();
  for (const path of result.paths) for (const e of path.edges) edges.set(edgeKey(e), e);
  const fanCut = new Map(result.limits.filter((l) => l.reason === "fan_out_limit").map((l) => [l.nodeId, l.available]));
  const hopHit = result.limits.filter((l) => l.reason === "hop_limit");
  const pathHit = result.limits.find((l) => l.reason === "path_limit");
  const maxHop = Math.max(0, ...result.nodes.map((n) => n.hop));
  const frontier = new Set(hopHit.length ? (hopHit.some((l) => l.nodeId) ? hopHit.map((l) => l.nodeId) : result.nodes.filter((n) => n.hop === maxHop).map((n) => n.id)) : []);

  // Ledger: what was left out, before the picture.
  const ledger = [];
  for (const [id, available] of fanCut) ledger.push(`fan-out: ${nodes.get(id)?.title || id} has ${available} neighbours, ${Math.max(0, available - s.fanOut)} not shown`);
  if (hopHit.length) ledger.push(`hop limit ${s.hops}: ${frontier.size} node(s) at the edge have more beyond`);
  if (pathHit) ledger.push(`path limit: more paths existed${pathHit.available ? ` (${pathHit.available})` : ""}`);
  parts.push(h("section", { class: ledger.length ? "ledger partial" : "ledger", "aria-label": "What was left out" },
    ledger.length ? [h("strong", {}, "Partial graph. "), h("ul", {}, ledger.map((l) => h("li", {}, l)))] : h("p", {}, "Complete within these bounds: nothing was left out."),
  ));

  // Layout: dagre orders each column; the column is the hop distance.
  const g = new dagre.graphlib.Graph({ multigraph: true });
  g.setGraph({ rankdir: "LR", nodesep: 24, ranksep: COLUMN - NODE_W, marginx: 20, marginy: 20 });
  g.setDefaultEdgeLabel(() => ({}));
  const ordered = [...result.nodes].sort((a, b) => a.hop - b.hop || a.title.localeCompare(b.title) || a.id.localeCompare(b.id));
  for (const n of ordered) g.setNode(n.id, { width: NODE_W, height: NODE_H + (fanCut.has(n.id) || frontier.has(n.id) ? 18 : 0) });
  for (const e of edges.values()) {
    const [a, b] = nodes.get(e.from).hop <= nodes.get(e.to).hop ? [e.from, e.to] : [e.to, e.from];
    if (nodes.get(a).hop < nodes.get(b).hop) g.setEdge(a, b, { minlen: nodes.get(b).hop - nodes.get(a).hop }, edgeKey(e));
  }
  dagre.layout(g);
  const pos = new Map(ordered.map((n) => [n.id, { x: 20 + NODE_W / 2 + n.hop * COLUMN, y: g.node(n.id).y, h: g.node(n.id).height }]));
  const width = 40 + NODE_W + maxHop * COLUMN;
  const height = Math.max(...[...pos.values()].map((p) => p.y + p.h / 2)) + 20;

  const picture = svg("svg", { viewBox: `0 0 ${width} ${height}`, width, height, role: "group", "aria-label": "Graph drawing", class: "graph" });
  const defs = svg("defs");
  const marker = svg("marker", { id: "arrow", viewBox: "0 0 10 10", refX: 10, refY: 5, markerWidth: 8, markerHeight: 8, orient: "auto-start-reverse" });
  marker.append(svg("path", { d: "M0,0 L10,5 L0,10 z", class: "arrowhead" }));
  defs.append(marker);
  picture.append(defs);
  const details = h("section", { class: "details", "aria-live": "polite", "aria-label": "Details" }, h("p", { class: "small" }, "Focus a node or an edge (Tab) or click it for details."));
  const edgeEls = new Map();
  const columnLabels = svg("g", { class: "columns" });
  for (let hop = 0; hop <= maxHop; hop++) {
    columnLabels.append(htmlLabel(20 + hop * COLUMN, 0, NODE_W, "column-label", hop === 0 ? "seed" : `hop ${hop}`));
  }
  picture.append(columnLabels);
  // Edge labels go above every line (no line crosses a label) and let clicks through to the
  // edges; each edge's accessible name already says its relation.
  const edgeLabels = svg("g", { class: "edge-labels", "aria-hidden": "true" });
  const placed = []; // the label boxes drawn so far
  for (const e of edges.values()) {
    const a = pos.get(e.from);
    const b = pos.get(e.to);
    const start = { x: a.x + (b.x >= a.x ? NODE_W / 2 : -NODE_W / 2), y: a.y };
    const end = { x: b.x + (b.x > a.x ? -NODE_W / 2 : NODE_W / 2), y: b.y };
    if (a.x === b.x) { start.x = a.x + NODE_W / 2; end.x = b.x + NODE_W / 2; }
    const bend = a.x === b.x ? 60 : (end.x - start.x) / 2;
    const d = `M${start.x},${start.y} C${start.x + bend},${start.y} ${end.x - (a.x === b.x ? -60 : bend)},${end.y} ${end.x},${end.y}`;
    const group = svg("g", { class: "edge", tabindex: 0, role: "button", "aria-label": `${nodes.get(e.from).title} ${e.relation} ${nodes.get(e.to).title}`, "data-record": e.record });
    group.append(svg("path", { d, class: "hit" }), svg("path", { d, class: "line", "marker-end": "url(#arrow)" }));
    const width = 7 * e.relation.length + 8;
    const at = labelPlace(placed, width, [start, { x: start.x + bend, y: start.y }, { x: end.x - (a.x === b.x ? -60 : bend), y: end.y }, end]);
    edgeLabels.append(htmlLabel(at.x - width / 2, at.y, width, "edge-label", e.relation));
    // Under its label, a clickable area of the edge (and a box: a straight edge has no height).
    group.append(svg("rect", { x: at.x - width / 2, y: at.y, width, height: 16, class: "hit" }));
    const open = () => showEdge(details, e, nodes);
    group.addEventListener("click", open);
    group.addEventListener("keydown", (ev) => { if (ev.key === "Enter" || ev.key === " ") { ev.preventDefault(); open(); } });
    edgeEls.set(edgeKey(e), group);
    picture.append(group);
  }
  picture.append(edgeLabels);
  const chains = new Map(result.paths.map((p) => [p.nodes[p.nodes.length - 1], p]));
  for (const n of ordered) {
    const p = pos.get(n.id);
    const group = svg("g", { class: `node hop-${n.hop}`, tabindex: 0, role: "button", "data-id": n.id, transform: `translate(${p.x - NODE_W / 2},${p.y - p.h / 2})` });
    const notes = [];
    if (fanCut.has(n.id)) notes.push(`+${Math.max(0, fanCut.get(n.id) - s.fanOut)} not shown`);
    if (frontier.has(n.id)) notes.push("hop limit");
    // The label is HTML (CSS cuts a long title with an ellipsis), so the whole title is the
    // node's text and its accessible name starts with what is seen (WCAG 2.5.3).
    group.setAttribute("aria-label", `${n.title} ${n.type}${notes.length ? ` ${notes.join(" · ")}` : ""}, hop ${n.hop}`);
    const label = svg("foreignObject", { x: 0, y: 0, width: NODE_W, height: p.h });
    label.append(h("div", { class: "label" },
      h("span", { class: "title" }, n.title), " ",
      h("span", { class: "sub" }, n.type),
      notes.length ? [" ", h("span", { class: "cut" }, notes.join(" · "))] : null));
    group.append(label);
    const focus = () => {
      picture.classList.add("focusing");
      const chain = chains.get(n.id);
      const chainKeys = new Set(chain ? chain.edges.map(edgeKey) : []);
      for (const [key, el] of edgeEls) {
        const [from, to] = key.split("\u0000");
        el.classList.toggle("lit", from === n.id || to === n.id || chainKeys.has(key));
      }
      showNode(details, n, chain, nodes, base, fanCut.has(n.id) ? Math.max(0, fanCut.get(n.id) - s.fanOut) : 0, frontier.has(n.id));
    };
    group.addEventListener("focus", focus);
    group.addEventListener("click", () => group.focus());
    group.addEventListener("blur", () => picture.classList.remove("focusing"));
    picture.append(group);
  }

  const text = h("section", { class: "path-list", "aria-label": "Paths as text" },
    h("h2", {}, `${result.paths.length} paths`),
    result.paths.length ? h("ol", {}, result.paths.map((p) => h("li", {}, p.nodes.map((id, i) => [
      i ? h("span", { class: "rel" }, ` —${p.edges[i - 1].relation}${p.edges[i - 1].direction === "IN" ? " (in)" : ""}→ `) : null,
      entityLink(nodes.get(id) || { id, title: id }, { view: "graph" }),
    ])))) : h("p", {}, "No paths within these bounds."));
  const canvas = h("div", { class: "canvas" }, picture);
  // Bring the seed into view when its column is taller than the canvas.
  const seedY = pos.get(ordered[0].id).y;
  window.requestAnimationFrame(() => { canvas.scrollTop = Math.max(0, seedY - canvas.clientHeight / 2); });
  parts.push(h("div", { class: "graph-layout" }, canvas, h("div", { class: "side" }, details, text)));
  return parts;
}

function showNode(details, n, chain, nodes, base, hidden, atFrontier) {
  const title = (id) => nodes.get(id)?.title || id;
  details.replaceChildren(
    h("h2", {}, n.title),
    h("p", {}, `${n.type}, hop ${n.hop}. `, entityLink(n, {}), " (timeline)"),
    chain && chain.edges.length ? h("p", { class: "chain" }, "From the seed: ", chain.nodes.map((id, i) => [i ? ` —${chain.edges[i - 1].relation}→ ` : "", title(id)])) : null,
    hidden ? h("p", {}, `+${hidden} not shown (fan-out). `) : null,
    atFrontier ? h("p", {}, "At the hop limit: there is more beyond.") : null,
    n.hop > 0 || hidden || atFrontier ? h("p", {}, h("a", { href: href({ entity: n.id, view: "graph" }) }, "expand from here")) : null,
  );
}

async function showEdge(details, e, nodes) {
  const title = (id) => nodes.get(id)?.title || id;
  const lines = e.locator.startLine === e.locator.endLine ? `${e.locator.startLine}` : `${e.locator.startLine}–${e.locator.endLine}`;
  const facts = h("dl", { class: "evidence" },
    h("dt", {}, "Relation"), h("dd", {}, e.relation),
    h("dt", {}, "Stored as"), h("dd", {}, `${title(e.from)} → ${title(e.to)}`),
    h("dt", {}, "Followed"), h("dd", {}, e.direction === "OUT" ? "forward (OUT)" : "backward (IN)"),
    h("dt", {}, "Evidence"), h("dd", {}, entityLink({ id: e.record, title: e.record })),
    h("dt", {}, "File"), h("dd", {}, h("code", {}, e.locator.path)),
    h("dt", {}, "Lines"), h("dd", {}, lines),
    h("dt", {}, "Revision"), h("dd", {}, h("code", {}, e.locator.revision)),
  );
  details.replaceChildren(h("h2", {}, `Edge: ${e.relation}`), facts);
  try {
    const { record } = await gql(EVIDENCE, { id: e.record });
    if (record) {
      facts.append(
        h("dt", {}, "Valid"),
        h("dd", { class: "validity" }, `${record.validFrom ? `from ${record.validFrom.text}` : "from the start"} ${record.validUntil ? `until ${record.validUntil.text}` : "with no end"}`),
      );
    }
    const at = e.locator;
    const { excerpt } = await gql(LINES, { path: at.path, start: at.startLine, end: at.endLine, revision: at.revision });
    const stale = excerpt.current ? [] : [h("p", { class: "stale", role: "status" }, "The file has changed since this edge was read: these are its lines now.")];
    details.append(
      h("h3", {}, "The lines"),
      ...stale,
      h("figure", { class: "excerpt" },
        h("figcaption", { class: "small" }, `${at.path}, lines ${lines}`),
        h("pre", { class: "excerpt" },
          excerpt.lines.map((line) => h("span", { class: "line" }, h("span", { class: "number", "aria-hidden": "true" }, `${line.number} `), `${line.text}\n`)))),
    );
  } catch (error) {
    details.append(errorBox(error));
  }
}
