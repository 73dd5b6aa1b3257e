"""The explorer in Chromium: screenshots of each view, first-view time, a 5,000-row hub paged.

    python bench/explorer.py [--shots docs/screenshots] [--hub 5000] [--pages 99] [--runs 5]
                             [--compare]

Serves a copy of the demo vault (`almanac serve`, as tests/browser do), takes a PNG of each
view at 1280x800 and of the entity view at 390 px wide into --shots, and times the first view
(navigation start to the first timeline row drawn, warm server) --runs times. With --hub N > 0
it also serves a vault of one person named by N meetings and, --runs times, opens its timeline
and pages through --pages pages as a reader does (scrolled to "Load more", clicked), timing
each page until its rows are drawn and watching the main thread from before the page's first
script: its longest task and longest animation frame (a task with the style, layout and paint
it caused: a frozen page shows as one long frame) after the first row is drawn. --compare
pages alternately also without the rows' layout containment (see UNCONTAINED). Prints one
JSON object of medians (and the worst of all runs); figures go into bench/README.md by hand.
Needs Chromium (/usr/bin/chromium) and the `playwright` package (the test extra).
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from almanac.api.settings import DEMO_VAULT
from tests.api.served import serve
from tests.browser.conftest import CHROMIUM, write_hub

if TYPE_CHECKING:
    from playwright.sync_api import Page

ROOT = Path(__file__).resolve().parent.parent
VIEWS = {
    "home": "/",
    "find": "/?q=Sam",
    "entity": "/?entity=people/ada-lopez",
    "entity-grouped": "/?entity=projects/atlas&group=SOURCE",
    "chronicle-week": "/?day=2026-03-23&tz=Europe/Berlin&week=1",
    "graph": "/?entity=people/ada-lopez&view=graph&relations=works_at,reports_to,member_of",
    "paths": "/?from=people/jonas-weber&to=orgs/lumen-analytics",
    "graphiql": "/graphql",
}
# Installed before any script of the page runs: every long task and every long animation frame
# (a task and the style, layout and paint it caused: what a user sees as a freeze), [start,
# duration] in ms.
LONG_TASKS = """window.__tasks = []; window.__frames = [];
const kinds = [["longtask", window.__tasks], ["long-animation-frame", window.__frames]];
for (const [type, into] of kinds) {
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) into.push([e.startTime, e.duration]);
  }).observe({ type, buffered: true });
}"""

# Paging as a reader does, inside the page: the button scrolled into view and clicked, and the
# time (ms) until its rows are in the list and the next frame is drawn.
PAGING = """async (pages) => {
  const list = document.querySelector("ol.timeline");
  const more = document.querySelector("button.more");
  const frame = () => new Promise((done) => requestAnimationFrame(() => setTimeout(done, 0)));
  const times = [];
  for (let n = 1; n <= pages; n++) {
    more.scrollIntoView({ block: "end" });
    await frame();
    const start = performance.now();
    more.click();
    while (list.childElementCount < 50 * (n + 1)) await new Promise((done) => setTimeout(done, 2));
    await frame();
    times.push(performance.now() - start);
  }
  return times;
}"""
# --compare: explorer.css's `contain: layout style` on timeline rows turned off (a constructed
# style sheet, which the page's CSP allows), to weigh it side by side with the page as shipped.
UNCONTAINED = "ol.timeline > .row { contain: none !important; }"
ADOPT = """(css) => {
  const sheet = new CSSStyleSheet();
  sheet.replaceSync(css);
  document.adoptedStyleSheets = [sheet];
  return getComputedStyle(document.querySelector("ol.timeline > li")).contain;
}"""


def median(values: list[float]) -> float:
    return round(statistics.median(values), 3)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shots", type=Path, default=None, help="folder for the PNG files")
    parser.add_argument("--hub", type=int, default=0, help="meetings of the hub (0: skip)")
    parser.add_argument("--pages", type=int, default=99)
    parser.add_argument("--runs", type=int, default=5, help="first views and paging passes")
    parser.add_argument(
        "--compare",
        action="store_true",
        help="page the hub also without the rows' layout containment, alternately",
    )
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    figures: dict[str, object] = {}
    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as playwright:
        root = Path(tmp)
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        context = browser.new_context(timezone_id="Europe/Berlin", locale="en-GB")
        page = context.new_page()
        page.set_viewport_size({"width": 1280, "height": 800})
        shutil.copytree(DEMO_VAULT, root / "demo" / "vault")
        with serve(root / "demo" / "vault", root / "demo") as base:
            page.goto(base + VIEWS["entity"])  # warm: the server's first graph build, caches
            page.locator("ol.timeline > li").first.wait_for()
            firsts = []
            for _ in range(args.runs):
                start = time.perf_counter()
                page.goto(base + VIEWS["entity"])
                page.locator("ol.timeline > li").first.wait_for()
                firsts.append(time.perf_counter() - start)
            figures["first_view_median_s"] = median(firsts)
            figures["first_view_max_s"] = round(max(firsts), 3)
            if args.shots:
                args.shots.mkdir(parents=True, exist_ok=True)
                for name, path in VIEWS.items():
                    page.goto(base + path)
                    page.wait_for_load_state("networkidle")
                    if name == "graph":
                        page.locator(".edge").first.click()
                        page.locator(".validity").wait_for()
                    page.screenshot(path=str(args.shots / f"{name}.png"))
                page.set_viewport_size({"width": 390, "height": 844})
                page.goto(base + VIEWS["entity"])
                page.wait_for_load_state("networkidle")
                page.screenshot(path=str(args.shots / "entity-390.png"))
                page.set_viewport_size({"width": 1280, "height": 800})
        if args.hub:
            write_hub(root / "hub" / "vault", args.hub)
            # Reconciled beforehand: serving then starts within the harness's 20 s.
            reconcile = [sys.executable, "-m", "almanac", "reconcile", "--vault", str(root / "hub")]
            reconcile[-1] += "/vault"
            reconcile += ["--state", str(root / "hub" / "state.db")]
            subprocess.run(reconcile, check=True, capture_output=True, cwd=ROOT)
            with serve(root / "hub" / "vault", root / "hub") as base:
                context.add_init_script(LONG_TASKS)
                figures["hub_rows"] = args.hub
                figures.update(page_hub(page, base, args.pages, args.runs, args.compare))
        browser.close()
    print(json.dumps(figures, indent=2))


def page_hub(page: Page, base: str, pages: int, runs: int, compare: bool) -> dict[str, object]:
    """Open the hub's timeline `runs` times, each time paging `pages` times; with `compare`,
    each run once as shipped and once with the rows' layout containment turned off."""
    variants = {"shipped": ""} | ({"rows_not_contained": UNCONTAINED} if compare else {})
    seen: dict[str, dict[str, list[float]]] = {
        name: {"page": [], "deep": [], "task": [], "frame": [], "frames_over_100": []}
        for name in variants
    }
    for _ in range(runs):
        for name, css in variants.items():
            page.goto(base + "/?entity=people/hub")
            page.locator("ol.timeline > li").first.wait_for()
            contain = page.evaluate(ADOPT, css)
            assert contain == ("none" if css else "layout style"), contain
            drawn = page.evaluate("performance.now()")
            times = page.evaluate(PAGING, pages)
            tasks = [d for s, d in page.evaluate("window.__tasks") if s >= drawn]
            frames = [d for s, d in page.evaluate("window.__frames") if s >= drawn]
            into = seen[name]
            into["page"] += times
            into["deep"].append(statistics.median(times[-20:]))
            into["task"].append(max(tasks, default=0.0))
            into["frame"].append(max(frames, default=0.0))
            into["frames_over_100"].append(sum(1 for d in frames if d > 100))
    rows = page.locator("ol.timeline > li").count()
    figures: dict[str, object] = {"hub_rows_shown": rows}
    for name, into in seen.items():
        figures[f"hub_{name}"] = {
            "load_more_median_ms": median(into["page"]),
            "load_more_max_ms": round(max(into["page"]), 1),
            "load_more_last_20_pages_median_ms": median(into["deep"]),
            "longest_task_ms": {"median": median(into["task"]), "max": max(into["task"])},
            "longest_frame_ms": {"median": median(into["frame"]), "max": max(into["frame"])},
            "frames_over_100_ms_per_run": median(into["frames_over_100"]),
        }
    return figures


if __name__ == "__main__":
    main()
