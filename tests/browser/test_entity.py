"""Find and the entity view: a name opens its record and timeline, zones and grouping."""

from __future__ import annotations

import re

from tests.browser.conftest import Watched


def test_a_name_opens_the_persons_timeline(explorer: Watched) -> None:
    page = explorer.open("/")
    page.get_by_label("Search").fill("Ada Lopez")
    page.get_by_label("Search").press("Enter")
    page.get_by_role("heading", level=1, name="Ada Lopez").wait_for()
    assert "entity=people%2Fada-lopez" in page.url
    rows = page.locator("ol.timeline > li")
    assert rows.count() >= 10
    assert "Lisbon offsite 2025" in rows.first.inner_text()
    # Dates as written and in the zone, named; date-only values get no invented time.
    first = rows.first.locator("time").first
    assert first.get_attribute("datetime") == "2025-11-20T09:00:00Z"
    assert "10:00" in first.inner_text() and "(Europe/Berlin)" in first.inner_text()
    date_only = page.locator("time", has_text=re.compile(r"^2026-01-14$"))
    assert date_only.first.get_attribute("datetime") == "2026-01-14"
    assert "(date only)" in date_only.first.locator("xpath=..").inner_text()
    assert page.locator(".clocks .badge", has_text="PAST").count() == 1


def test_switching_the_zone_changes_the_local_times(explorer: Watched) -> None:
    page = explorer.open("/?entity=people/ada-lopez")
    first = page.locator("ol.timeline > li time").first
    assert "10:00" in first.inner_text()
    page.get_by_label("Time zone").select_option("America/New_York")
    page.wait_for_url(re.compile(r"tz=America%2FNew_York"))
    first = page.locator("ol.timeline > li time").first
    first.filter(has_text="(America/New_York)").wait_for()
    assert "04:00" in first.inner_text()
    assert first.get_attribute("datetime") == "2025-11-20T09:00:00Z"
    page.go_back()
    page.locator("ol.timeline > li time").first.filter(has_text="(Europe/Berlin)").wait_for()


def test_group_source_shows_summaries_claims_and_links(explorer: Watched) -> None:
    page = explorer.open("/?entity=projects/atlas")
    assert page.locator(".claims").count() == 0
    page.get_by_label("group: SOURCE").check()
    page.wait_for_url(re.compile("group=SOURCE"))
    page.locator(".claims").first.wait_for()
    assert re.match(r"\d+ claims", page.locator(".claims").first.inner_text())
    assert page.locator(".group .links a").count() > 0
    assert page.get_by_label("group: SOURCE").is_checked()


def test_an_ambiguous_name_lists_its_candidates_by_keyboard_alone(explorer: Watched) -> None:
    page = explorer.open("/")
    page.locator("h1").wait_for()
    for _ in range(3):  # skip link, brand, search field
        page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.id") == "q"
    page.keyboard.type("Sam")
    page.keyboard.press("Enter")
    page.get_by_text("“Sam” names 2 records").wait_for()
    candidates = page.locator("ul.candidates a")
    assert candidates.all_inner_texts() == ["Samantha Reyes", "Samuel Okafor"]
    page.keyboard.press("Tab")  # focus starts at the heading
    while page.evaluate("document.activeElement.textContent") != "Samantha Reyes":
        page.keyboard.press("Tab")
    page.keyboard.press("Enter")
    page.get_by_role("heading", level=1, name="Samantha Reyes").wait_for()


def test_words_find_keyword_hits_with_snippets_and_lines(explorer: Watched) -> None:
    page = explorer.open("/?q=postgis")
    page.get_by_text("keyword matches").wait_for()
    hits = page.locator("ol.hits > li")
    assert hits.count() > 0
    assert re.search(r"\.md, lines? \d+", hits.first.inner_text())
    assert page.locator(".snippet").count() > 0


def test_a_superseded_record_links_its_replacement(explorer: Watched) -> None:
    page = explorer.open("/?entity=decisions/atlas-storage-postgis")
    page.locator("h1").wait_for()
    lifecycle = page.locator("dt", has_text="Lifecycle").locator("xpath=following-sibling::dd[1]")
    assert "superseded" in lifecycle.inner_text()
    lifecycle.locator("a").click()
    page.wait_for_url(re.compile("entity=decisions"))
    assert "atlas-storage-postgis" not in page.url


def test_readable_at_390_pixels_wide(explorer: Watched) -> None:
    page = explorer.page
    page.set_viewport_size({"width": 390, "height": 844})
    for path in ("/?entity=people/ada-lopez", "/?day=2026-03-23&tz=Europe/Berlin&week=1"):
        explorer.open(path)
        page.locator("ol.timeline > li").first.wait_for()
        assert page.evaluate("document.documentElement.scrollWidth") <= 390, path
