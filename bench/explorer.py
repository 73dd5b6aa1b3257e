"""The explorer in Chromium: screenshots of each view, first-view time, a 5,000-row hub paged.

    python bench/explorer.py [--shots docs/screenshots] [--hub 5000] [--pages 20] [--runs 5]

Serves a copy of the demo vault (`almanac serve`, as tests/browser do), takes a PNG of each
view at 1280x800 and of the entity view at 390 px wide into --shots, and times the first view
(navigation start to the first timeline row drawn, warm server) --runs times. With --hub N > 0
it also serves a vault of one person named by N meetings and, --runs times, opens its timeline
and pages through --pages pages, timing each "Load more" and watching the main thread's long
tasks (a frozen page shows as one long task) from before the page's first script: those while
the view loads, and those after its first row is drawn (paging). Prints one JSON object of
medians (and the worst of all runs); figures go into bench/README.md by hand. Needs Chromium
(/usr/bin/chromium) and the `playwright` package (the test extra).
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

from api.settings import DEMO_VAULT
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
# Installed before any script of the page runs: every long task, [start, duration] in ms.
LONG_TASKS = """window.__tasks = []; new PerformanceObserver((list) => {
  for (const e of list.getEntries()) window.__tasks.push([e.startTime, e.duration]);
}).observe({ type: "longtask", buffered: true });"""


def median(values: list[float]) -> float:
    return round(statistics.median(values), 3)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shots", type=Path, default=None, help="folder for the PNG files")
    parser.add_argument("--hub", type=int, default=0, help="meetings of the hub (0: skip)")
    parser.add_argument("--pages", type=int, default=20)
    parser.add_argument("--runs", type=int, default=5, help="first views and paging passes")
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
            reconcile = [sys.executable, "-m", "api", "reconcile", "--vault", str(root / "hub")]
            reconcile[-1] += "/vault"
            reconcile += ["--state", str(root / "hub" / "state.db")]
            subprocess.run(reconcile, check=True, capture_output=True, cwd=ROOT)
            with serve(root / "hub" / "vault", root / "hub") as base:
                context.add_init_script(LONG_TASKS)
                figures.update(page_hub(page, base, args.hub, args.pages, args.runs))
        browser.close()
    print(json.dumps(figures, indent=2))


def page_hub(page: Page, base: str, hub: int, pages: int, runs: int) -> dict[str, object]:
    """Open the hub's timeline `runs` times, each time paging `pages` times."""
    clicks: list[float] = []
    loading: list[float] = []  # the longest task of each run while the view loads
    paging: list[float] = []  # ... and after its first row is drawn
    for _ in range(runs):
        page.goto(base + "/?entity=people/hub")
        page.locator("ol.timeline > li").first.wait_for()
        drawn = page.evaluate("performance.now()")
        for n in range(1, pages + 1):
            start = time.perf_counter()
            page.get_by_role("button", name="Load more").click()
            page.locator("ol.timeline > li").nth(50 * (n + 1) - 1).wait_for()
            clicks.append(time.perf_counter() - start)
        tasks = page.evaluate("window.__tasks")
        loading.append(max([d for s, d in tasks if s < drawn], default=0.0))
        paging.append(max([d for s, d in tasks if s >= drawn], default=0.0))
    return {
        "hub_rows": hub,
        "hub_rows_shown": page.locator("ol.timeline > li").count(),
        "hub_load_more_median_s": median(clicks),
        "hub_load_more_max_s": round(max(clicks), 3),
        "hub_longest_task_loading_ms": {"median": median(loading), "max": max(loading)},
        "hub_longest_task_paging_ms": {"median": median(paging), "max": max(paging)},
    }


if __name__ == "__main__":
    main()
