// The explorer: one page, one view per URL (see README "The explorer"), back and forward.
import { gql, onTokenNeeded, setToken, META } from "./api.js";
import { h, href, entityLink, locatorText, renderMeta, errorBox, queryLink, browserZone } from "./dom.js";
import { entityView, chronicleView } from "./timeline.js";
import { graphView, pathsView } from "./graph.js";
import { watchSnapshot } from "./live.js";

const main = document.getElementById("main");
const live = document.getElementById("live");
let shownSnapshot = null; // the snapshot the visible view was read from
let rendering = 0;

/** What every view gets: where to draw, how to move, how to report its answer. */
const page = {
  main,
  params: () => new URLSearchParams(window.location.search),
  navigate(url, { replace = false } = {}) {
    if (replace) window.history.replaceState(null, "", url);
    else window.history.pushState(null, "", url);
    render({ focus: true });
  },
  answered(meta) {
    if (meta) shownSnapshot = meta.snapshot;
    renderMeta(meta);
  },
  notice(text) {
    const box = h("p", { class: "notice", role: "status" }, text);
    main.prepend(box);
  },
};

async function render({ focus = false, keepPlace = false } = {}) {
  const ticket = ++rendering;
  const params = page.params();
  const scroll = window.scrollY;
  live.hidden = true;
  const q = params.get("q");
  document.getElementById("q").value = q || "";
  let view = homeView;
  if (params.get("from") && params.get("to")) view = pathsView;
  else if (params.get("entity") && params.get("view") === "graph") view = graphView;
  else if (params.get("entity")) view = entityView;
  else if (params.get("day")) view = chronicleView;
  else if (q) view = findView;
  try {
    const content = await view(page, params);
    if (ticket !== rendering) return; // a newer navigation won
    main.replaceChildren(...[content].flat());
  } catch (error) {
    if (ticket !== rendering) return;
    console.warn(error);
    main.replaceChildren(errorBox(error));
  }
  if (keepPlace) window.scrollTo(0, scroll);
  else if (focus) (main.querySelector("h1") || main).focus();
  document.title = `${main.querySelector("h1")?.textContent || "Explorer"} · Almanac`;
}

async function homeView(page) {
  const query = `query Home { status { recordCount countsByType { key count } watchMode snapshot freshness { queriedAt scannedAt indexedAt } coverage { complete issueCount issues(first: 50) { code path line message } } } }`;
  const data = await gql(query);
  const status = data.status;
  page.answered({ ...status, degraded: [] });
  const today = new Date().toLocaleDateString("en-CA", { timeZone: browserZone() });
  return h("section", {},
    h("h1", { tabindex: -1 }, "Almanac explorer"),
    h("p", {}, `${status.recordCount} records. Search for a person, a project or words above, or open `,
      h("a", { href: href({ day: today, tz: browserZone(), week: true }) }, "this week's chronicle"), "."),
    h("h2", {}, "Records by type"),
    h("ul", { class: "counts" }, status.countsByType.map((c) => h("li", {}, `${c.key}: ${c.count}`))),
    h("p", { class: "small" }, `The server learns of changes by ${status.watchMode}. `, queryLink(query, {})),
  );
}

const FIND = `query Find($q: String!) {
  lookup(name: $q) { status record { id kind type title } candidates { id kind type title } meta { ...Meta } }
}
${META}`;
const SEARCH = `query Search($q: String!, $first: Int!) {
  search(query: $q, first: $first) {
    total
    hits { record { id kind type title } via { id title } snippet { text startLine endLine } locator { path startLine endLine } }
  }
}`;

async function findView(page, params) {
  const q = params.get("q");
  const found = await gql(FIND, { q });
  page.answered(found.lookup.meta);
  if (found.lookup.status === "FOUND") {
    window.history.replaceState(null, "", href({ entity: found.lookup.record.id }));
    return entityView(page, page.params());
  }
  const parts = [h("h1", { tabindex: -1 }, `Results for “${q}”`)];
  if (found.lookup.status === "AMBIGUOUS") {
    parts.push(
      h("h2", {}, `“${q}” names ${found.lookup.candidates.length} records`),
      h("ul", { class: "candidates" }, found.lookup.candidates.map((c) => h("li", {}, entityLink(c), ` (${c.type})`))),
    );
  }
  let hits = null;
  try {
    hits = (await gql(SEARCH, { q, first: 20 })).search;
  } catch (error) {
    parts.push(errorBox(error));
  }
  if (hits) {
    parts.push(h("h2", {}, `${hits.total} keyword matches`));
    parts.push(
      h("ol", { class: "hits" }, hits.hits.map((hit) =>
        h("li", {},
          entityLink(hit.record), ` (${hit.record.type})`,
          hit.via ? h("span", { class: "small" }, ` via ${hit.via.title}`) : null,
          hit.snippet ? h("p", { class: "snippet" }, hit.snippet.text) : null,
          h("p", { class: "small" }, hit.snippet?.startLine ? locatorText({ path: hit.locator.path, startLine: hit.snippet.startLine, endLine: hit.snippet.endLine }) : locatorText(hit.locator)),
        ))),
    );
  }
  parts.push(h("p", { class: "small" }, queryLink(SEARCH, { q, first: 20 })));
  return parts;
}

// Links inside the page move without reloading it.
document.addEventListener("click", (event) => {
  const link = event.target.closest("a[href]");
  if (!link || link.target || event.defaultPrevented || event.button !== 0) return;
  if (event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
  const url = new URL(link.href);
  if (url.origin !== window.location.origin || url.pathname !== "/") return;
  event.preventDefault();
  page.navigate(url.pathname + url.search);
});

document.getElementById("find").addEventListener("submit", (event) => {
  event.preventDefault();
  const q = document.getElementById("q").value.trim();
  if (q) page.navigate(href({ q }));
});

window.addEventListener("popstate", () => render({ focus: true }));

// A token, when the server asks for one.
const dialog = document.getElementById("token-dialog");
let waiting = null;
onTokenNeeded((why) => {
  if (!waiting) {
    waiting = new Promise((resolve) => {
      document.getElementById("token-error").textContent = why;
      dialog.showModal();
      document.getElementById("token-form").addEventListener(
        "submit",
        () => {
          const field = document.getElementById("token");
          setToken(field.value.trim());
          field.value = "";
          waiting = null;
          resolve();
        },
        { once: true },
      );
    });
  }
  return waiting;
});

// Live: a changed vault is noticed within two seconds; refreshing keeps the reader's place.
watchSnapshot(
  () => shownSnapshot,
  () => {
    live.replaceChildren(
      h("span", {}, "The vault changed since this view was read. "),
      h("button", { type: "button", id: "refresh", onclick: () => render({ keepPlace: true }) }, "Refresh"),
    );
    live.hidden = false;
  },
);

const todayLink = document.getElementById("today");
todayLink.href = href({ day: new Date().toLocaleDateString("en-CA", { timeZone: browserZone() }), tz: browserZone() });

render();
