"""The graph and paths views: a drawing of exactly what the answer returned, evidence on an
edge, and a ledger of what the bounds left out."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from playwright.sync_api import Browser, Page

from tests.api.served import serve
from tests.browser.conftest import Watched, watching

WORKS_AT = ".edge[aria-label='Ada Lopez works_at Lumen Analytics']"


def answered_edges(page: Page, document: str, variables: dict[str, Any]) -> set[str]:
    result = page.evaluate(
        """async ([query, variables]) => {
            const r = await fetch('/graphql', {method: 'POST',
              headers: {'Content-Type': 'application/json'},
              body: JSON.stringify({query, variables})});
            return (await r.json()).data;
        }""",
        [document, variables],
    )
    answer = next(iter(result.values()))
    return {e["record"] for p in answer["paths"] for e in p["edges"]}


def test_clicking_an_edge_shows_its_evidence(explorer: Watched) -> None:
    page = explorer.open("/?entity=people/ada-lopez&view=graph&relations=works_at,reports_to")
    edge = page.locator(WORKS_AT)
    edge.wait_for()
    edge.click()
    details = page.locator(".details")
    details.get_by_text("Edge: works_at").wait_for()
    text = details.inner_text()
    assert "relationships/ada-works-at-lumen" in text
    assert "relationships/ada-works-at-lumen.md" in text
    assert re.search(r"Lines\s+1–\d+", text)
    assert re.search(r"Revision\s+[0-9a-f]{12}", text)
    details.locator(".validity", has_text="from 2024-02-01").wait_for()
    # The lines themselves, as the file reads now (the revision cited is current).
    lines = details.locator("pre.excerpt")
    lines.wait_for()
    assert "relation: works_at" in lines.inner_text()
    assert "valid_from: 2024-02-01" in lines.inner_text()
    assert details.locator(".stale").count() == 0
    assert "null" not in details.inner_text()
    # Every edge drawn is one the answer returned, and no more.
    drawn = set(
        page.locator("svg.graph .edge").evaluate_all("els => els.map(e => e.dataset.record)")
    )
    query = """query($s: ID!) { graph(seed: {id: $s}, relations: ["works_at", "reports_to"])
        { paths { edges { record } } } }"""
    assert drawn == answered_edges(page, query, {"s": "people/ada-lopez"})


def test_focusing_a_node_lights_its_edges_and_its_chain(explorer: Watched) -> None:
    page = explorer.open("/?entity=people/ada-lopez&view=graph&relations=works_at,reports_to")
    node = page.locator(".node[data-id='orgs/lumen-analytics']")
    node.wait_for()
    node.focus()
    assert page.locator("svg.graph.focusing").count() == 1
    assert page.locator(WORKS_AT).get_attribute("class") == "edge lit"
    assert page.locator(".edge:not(.lit)").count() > 0
    assert (
        "From the seed: Ada Lopez —works_at→ Lumen Analytics" in page.locator(".chain").inner_text()
    )


def test_a_fan_out_cut_is_marked_where_it_happened(explorer: Watched) -> None:
    page = explorer.open("/?entity=people/ada-lopez&view=graph&fanOut=3&hops=1")
    ledger = page.locator(".ledger.partial")
    ledger.wait_for()
    assert "Partial graph" in ledger.inner_text()
    seed = page.locator(".node.hop-0")
    cut = seed.locator(".cut").text_content()
    found = re.search(r"has (\d+) neighbours", ledger.inner_text())
    assert found is not None
    available = int(found.group(1))
    assert cut == f"+{available - 3} not shown"
    assert page.locator("svg.graph .edge").count() == 3
    # "expand from here" is the same view seeded at a node.
    page.locator(".node.hop-1").first.focus()
    page.get_by_role("link", name="expand from here").click()
    page.wait_for_url(re.compile(r"view=graph"))
    assert "ada-lopez" not in page.url


def test_a_paths_url_draws_and_lists_the_paths(explorer: Watched) -> None:
    page = explorer.open(
        "/?from=people/jonas-weber&to=orgs/lumen-analytics&relations=works_at,reports_to"
    )
    page.get_by_role("heading", level=1, name=re.compile("^Paths from")).wait_for()
    listed = page.locator(".path-list li").all_inner_texts()
    assert listed, "no path listed"
    assert all(text.endswith("Lumen Analytics") for text in listed)
    assert page.locator("svg.graph .edge").count() >= 1
    assert (page.locator("a.show-query").get_attribute("href") or "").startswith("/graphql#query=")


def test_bounds_beyond_the_servers_are_drawn_at_its_bounds(explorer: Watched) -> None:
    page = explorer.open("/?entity=people/ada-lopez&view=graph&hops=6&fanOut=500")
    page.get_by_role("heading", level=1, name="Graph around Ada Lopez").wait_for()
    assert page.get_by_label("Hops").input_value() == "3"
    assert page.get_by_label("Fan-out").input_value() == "100"
    assert page.locator("svg.graph .edge").count() > 0
    assert page.locator("main .error").count() == 0


OVERLAPS = """() => {
  const boxes = [...document.querySelectorAll("svg.graph .edge-label span")].map((s) =>
    s.getBoundingClientRect());
  let overlaps = 0;
  boxes.forEach((a, i) => boxes.slice(i + 1).forEach((b) => {
    if (a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom) overlaps++;
  }));
  return [boxes.length, overlaps];
}"""


def test_no_edge_label_covers_another(browser: Browser, tmp_path: Path) -> None:
    # The four paths S-X-Y-T: between the X and Y columns, two edges cross at their middles.
    vault = tmp_path / "vault"
    vault.mkdir()
    notes = {"S": "[[X1]] [[X2]]", "X1": "[[Y1]] [[Y2]]", "X2": "[[Y1]] [[Y2]]"}
    notes |= {"Y1": "[[T]]", "Y2": "[[T]]", "T": ""}
    for name, body in notes.items():
        (vault / f"{name}.md").write_text(f"# {name}\n\n{body}\n", "utf-8")
    with serve(vault, tmp_path) as base, watching(browser, base) as explorer:
        page = explorer.open("/?from=S&to=T&hops=3")
        page.locator("svg.graph .edge").first.wait_for()
        assert page.locator(".path-list li").count() == 4
        assert page.evaluate(OVERLAPS) == [8, 0]
