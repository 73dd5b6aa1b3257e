"""The explorer on Obsidian-shaped vaults: ids with spaces and non-ASCII letters, nested folders,
`[[links|with aliases]]`, `[[links#to headings]]`, embeds and attachments, callouts, notes
without frontmatter.

Always on our own small vault (tests/fixtures/vaults/obsidian-like). The Obsidian Help vault
(https://github.com/obsidianmd/obsidian-help, which carries no licence and so is not copied
here) is checked the same way when ALMANAC_OBSIDIAN_HELP names its `en` folder.
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlencode

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.api.served import serve
from tests.browser.conftest import Watched, watching
from tests.browser.test_accessibility import audit

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "vaults" / "obsidian-like"
HELP = os.environ.get("ALMANAC_OBSIDIAN_HELP", "")


@dataclass(frozen=True)
class Case:
    """What to look for in one vault."""

    find: str  # typed into Search
    id: str  # the note it finds
    title: str
    edge: str  # the accessible name of an edge of its graph
    line: str  # text on that edge's evidence line
    paths: tuple[str, str]  # two notes whose ids hold spaces
    to_title: str


OURS = Case(
    find="First steps",
    id="Getting started/First steps",
    title="First steps",
    edge="First steps links_to Internal links",
    line="[[Internal links#Link to a heading|how headings are linked]]",
    paths=("Getting started/First steps", "Ideas/Deep/Straße und Weg"),
    to_title="Straße und Weg",
)
OBSIDIAN_HELP = Case(
    find="Internal links",
    id="Linking notes and files/Internal links",
    title="Internal links",
    edge="Callouts links_to Internal links",
    line="[[Internal links|Wikilinks]]",
    paths=("Editing and formatting/Callouts", "Linking notes and files/Embed files"),
    to_title="Embed files",
)


@pytest.fixture
def obsidian_like(browser: Browser, tmp_path: Path) -> Iterator[Watched]:
    vault = tmp_path / "vault"
    shutil.copytree(FIXTURE, vault)
    with serve(vault, tmp_path) as base, watching(browser, base) as explorer:
        yield explorer


@pytest.fixture
def obsidian_help(browser: Browser, tmp_path: Path) -> Iterator[Watched]:
    if not HELP:
        pytest.skip(
            "set ALMANAC_OBSIDIAN_HELP to the `en` folder of an obsidianmd/obsidian-help"
            " checkout to run the explorer on the Obsidian Help vault"
        )
    if not (Path(HELP) / "Home.md").is_file():
        pytest.fail(f"ALMANAC_OBSIDIAN_HELP={HELP} has no Home.md: not obsidian-help's `en`")
    vault = tmp_path / "vault"
    shutil.copytree(HELP, vault)  # the server may write nothing there, but it is not ours
    with serve(vault, tmp_path) as base, watching(browser, base) as explorer:
        yield explorer


def clean(page: Page) -> None:
    """The view passes the axe audit of test_accessibility.py."""
    page.wait_for_load_state("networkidle")
    result = audit(page)
    assert (result["violations"], result["undecided"]) == ([], []), result


def explore(explorer: Watched, case: Case) -> None:
    """Find a note by its spaced name, its record, its graph, an edge's lines, a paths URL."""
    page = explorer.open("/")
    page.get_by_label("Search").fill(case.find)
    page.get_by_label("Search").press("Enter")
    page.get_by_role("heading", level=1, name=case.title).wait_for()
    assert f"/?{urlencode({'entity': case.id})}" in page.url
    file = page.locator("dt", has_text="File").locator("xpath=following-sibling::dd[1]")
    assert file.inner_text().startswith(f"{case.id}.md, lines 1–")
    page.locator(".paged > p.small[role=status]").wait_for()  # the timeline, even if empty
    clean(page)

    page.get_by_role("link", name="Graph view").click()
    page.get_by_role("heading", level=1, name=f"Graph around {case.title}").wait_for()
    edge = page.get_by_role("button", name=case.edge, exact=True)
    edge.click()
    details = page.locator(".details")
    details.get_by_text("Edge: links_to").wait_for()
    assert re.search(r"Lines\s+\d+", details.inner_text())
    expect(details.locator("pre.excerpt")).to_contain_text(case.line)
    assert details.locator(".stale").count() == 0
    clean(page)

    start, end = case.paths
    explorer.open("/?" + urlencode({"from": start, "to": end}))
    heading = page.get_by_role("heading", level=1, name=re.compile("^Paths from"))
    heading.wait_for()
    assert heading.inner_text().endswith(f"to {case.to_title}")
    listed = page.locator(".path-list li").all_inner_texts()
    assert listed, "no path listed"
    assert all(text.endswith(case.to_title) for text in listed), listed
    assert page.locator("svg.graph .edge").count() >= 1
    clean(page)
    page.locator(".path-list li a", has_text=case.to_title).first.click()
    page.get_by_role("heading", level=1, name=f"Graph around {case.to_title}").wait_for()


def test_an_obsidian_shaped_vault(obsidian_like: Watched) -> None:
    explore(obsidian_like, OURS)
    page = obsidian_like.page
    # An alias finds its note (non-ASCII id); aliases and tags from frontmatter are shown.
    page.get_by_label("Search").fill("Coffee notes")
    page.get_by_label("Search").press("Enter")
    page.get_by_role("heading", level=1, name="Café notes").wait_for()
    assert f"/?{urlencode({'entity': 'Café Notes'})}" in page.url
    obsidian_like.open("/?" + urlencode({"entity": "Linking notes/Internal links"}))
    aliases = page.locator("dt", has_text="Aliases").locator("xpath=following-sibling::dd[1]")
    assert aliases.inner_text() == "Wikilinks, Internal link"
    assert page.locator("dd .tag").all_inner_texts() == ["linking", "reference"]
    assert page.get_by_label("Validation issues").count() == 0  # embeds, attachments: no issue


def test_the_obsidian_help_vault(obsidian_help: Watched) -> None:
    explore(obsidian_help, OBSIDIAN_HELP)
