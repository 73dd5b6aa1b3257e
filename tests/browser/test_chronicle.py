"""The chronicle view: a week with the recurring stand-up across the change to summer time."""

from __future__ import annotations

import re

from playwright.sync_api import Page

from tests.browser.conftest import Watched


def standups(page: Page) -> list[tuple[str | None, str]]:
    rows = page.locator("ol.timeline > li", has_text="Platform stand-up")
    rows.first.wait_for()
    return [
        (
            row.locator("time").first.get_attribute("datetime"),
            row.locator("time").first.inner_text(),
        )
        for row in rows.all()
    ]


def test_a_week_steps_across_the_dst_change_at_the_same_local_time(explorer: Watched) -> None:
    page = explorer.open("/?day=2026-03-23&tz=Europe/Berlin&week=1")
    page.get_by_role("heading", level=1, name="Chronicle: The week of 2026-03-23").wait_for()
    before = standups(page)
    assert [d for d, _ in before] == ["2026-03-23T08:30:00Z", "2026-03-25T08:30:00Z"]
    assert all("09:30" in text and "CET" in text for _, text in before)
    assert page.locator(".occurrence").first.inner_text().startswith(" occurrence #")
    page.get_by_role("link", name="next week →").click()
    page.wait_for_url(re.compile("day=2026-03-30"))
    page.get_by_role("heading", level=1, name="Chronicle: The week of 2026-03-30").wait_for()
    after = standups(page)
    assert [d for d, _ in after] == ["2026-03-30T07:30:00Z", "2026-04-01T07:30:00Z"]
    assert all("09:30" in text and "CEST" in text for _, text in after)
    page.go_back()
    page.get_by_role("heading", level=1, name="Chronicle: The week of 2026-03-23").wait_for()


def test_month_values_show_only_behind_the_partial_switch(explorer: Watched) -> None:
    page = explorer.open("/?day=2026-09-15&tz=Europe/Berlin")
    page.get_by_role("heading", level=1, name="Chronicle: 2026-09-15").wait_for()
    assert page.locator(".precision", has_text="month only").count() == 0
    page.get_by_label("include partial (month and year) dates").check()
    page.wait_for_url(re.compile("partial=1"))
    page.locator(".precision", has_text="month only").first.wait_for()
    month = page.locator("time", has_text=re.compile(r"^2026-09$")).first
    assert month.get_attribute("datetime") == "2026-09"
