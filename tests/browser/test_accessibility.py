"""Every view of the explorer audited by axe-core (vendored under tests/browser/vendor, MPL-2.0):
the WCAG 2.0/2.1/2.2 A and AA rules (colour contrast, labels, roles, names) and axe's best
practices (landmarks, headings), at 1280x800 and at 390 px wide, in the light scheme and the
dark one, with the validation-issues panel shown.

axe is put into the page through Playwright's `evaluate` (the DevTools protocol), which the
page's Content-Security-Policy does not govern; the page itself keeps its strict policy, and
a script tag added the usual way is refused (checked below), so the audit runs on the page as
users get it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, Error, Page

from tests.api.served import serve
from tests.browser.conftest import copy_demo, watching

AXE = Path(__file__).parent / "vendor" / "axe-core" / "axe.min.js"
TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa", "best-practice"]
# No rule is turned off.
RUN = """async (tags) => {
  const results = await axe.run(document, {
    runOnly: { type: "tag", values: tags },
    resultTypes: ["violations", "incomplete"],
  });
  const brief = (r) => ({ rule: r.id, nodes: r.nodes.map((n) => [n.target.join(" "),
    n.failureSummary || n.any.map((c) => c.message).join("; ")]) });
  return { violations: results.violations.map(brief), undecided: results.incomplete.map(brief),
           passed: results.passes.map((r) => r.id) };
}"""
# Each view, and what shows it is drawn (the audit runs on the finished view).
VIEWS = {
    "home": ("/", "ul.counts"),
    "find: candidates": ("/?q=Sam", "ul.candidates"),
    "find: keyword hits": ("/?q=postgis", "ol.hits"),
    "entity timeline": ("/?entity=people/ada-lopez", "ol.timeline > li"),
    "entity, group SOURCE": ("/?entity=projects/atlas&group=SOURCE", ".claims"),
    "chronicle day": ("/?day=2026-03-23&tz=Europe/Berlin", "ol.timeline > li"),
    "chronicle week": ("/?day=2026-03-23&tz=Europe/Berlin&week=1", "ol.timeline > li"),
    "graph, an edge open": (
        "/?entity=people/ada-lopez&view=graph&relations=works_at,reports_to",
        "svg.graph .edge",
    ),
    "graph, fan-out cut": ("/?entity=people/ada-lopez&view=graph&fanOut=3&hops=2", ".ledger"),
    "paths": (
        "/?from=people/jonas-weber&to=orgs/lumen-analytics&relations=works_at,reports_to",
        ".path-list li",
    ),
}


@pytest.fixture(scope="module")
def audited_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The demo vault and one note with a validation issue: every view shows the issues panel."""
    root = tmp_path_factory.mktemp("browser-audit")
    vault = copy_demo(root / "vault")
    (vault / "meetings" / "Broken date.md").write_text(
        "---\ntype: meeting\ntitle: Broken date\noccurred_at: someday\n---\nNo date.\n", "utf-8"
    )
    with serve(vault, root) as base:
        yield base


def audit(page: Page) -> dict[str, Any]:
    if not page.evaluate("typeof axe !== 'undefined'"):
        page.evaluate(AXE.read_text("utf-8") + "\n;0")
    result: dict[str, Any] = page.evaluate(RUN, TAGS)
    return result


@pytest.mark.parametrize(
    ("width", "scheme"), [(1280, "light"), (390, "light"), (1280, "dark")], ids=str
)
def test_every_view_passes_the_wcag_audit(
    browser: Browser, audited_server: str, width: int, scheme: str
) -> None:
    found: dict[str, Any] = {}
    checked: set[str] = set()
    viewport = {"width": width, "height": 800}
    with watching(browser, audited_server, viewport=viewport, color_scheme=scheme) as explorer:
        page = explorer.page
        explorer.open("/")
        paper = page.evaluate("getComputedStyle(document.documentElement).backgroundColor")
        assert paper == {"light": "rgb(255, 255, 255)", "dark": "rgb(15, 20, 25)"}[scheme]
        for name, (path, ready) in VIEWS.items():
            explorer.open(path)
            page.locator(ready).first.wait_for()
            page.get_by_label("Validation issues").wait_for()
            if name == "graph, an edge open":
                page.locator("svg.graph .edge").first.click()
                page.locator(".details pre.excerpt").wait_for()
            page.wait_for_load_state("networkidle")
            result = audit(page)
            checked.update(result["passed"])
            if result["violations"] or result["undecided"]:
                found[name] = {k: v for k, v in result.items() if k != "passed"}
    assert not found, json.dumps(found, indent=1, ensure_ascii=False)
    # The audit looked at what matters here (a rule passes only where it found something).
    assert {"color-contrast", "label", "landmark-one-main", "region", "nested-interactive"} <= (
        checked
    )
    assert {"label-content-name-mismatch", "aria-allowed-role"} <= checked


def test_the_pages_policy_holds_while_audited(browser: Browser, audited_server: str) -> None:
    with watching(browser, audited_server) as explorer:
        page = explorer.open("/?entity=people/ada-lopez")
        page.locator("ol.timeline > li").first.wait_for()
        policy = page.request.get(explorer.base + "/").headers["content-security-policy"]
        assert "script-src 'self';" in policy and "'unsafe-inline'" not in policy
        with pytest.raises(Error, match="Content Security Policy"):
            page.add_script_tag(path=str(AXE))
        assert page.evaluate("typeof axe") == "undefined"
        assert audit(page)["violations"] == []  # injected past the policy, not through it
        refused = [e for e in explorer.errors if "Content Security Policy" in e]
        assert refused, "the refused script tag left no console error"
        explorer.errors[:] = [e for e in explorer.errors if e not in refused]
