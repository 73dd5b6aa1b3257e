"""A long timeline paged: each row contains its own layout, so a page appended to a long list
does not lay the whole list out again (bench/explorer.py pages a 5,000-row hub; figures in
bench/README.md); the rows still read, find and copy like any other text."""

from __future__ import annotations

from pathlib import Path

from playwright.sync_api import Browser, expect

from tests.api.served import serve
from tests.browser.conftest import watching, write_hub


def test_a_long_list_pages_with_each_row_laid_out_alone(browser: Browser, tmp_path: Path) -> None:
    vault = write_hub(tmp_path / "vault", 120)
    with serve(vault, tmp_path) as base, watching(browser, base) as explorer:
        page = explorer.open("/?entity=people/hub")
        rows = page.locator("ol.timeline > li")
        rows.nth(49).wait_for()
        page.get_by_role("button", name="Load more").click()
        rows.nth(99).wait_for()
        contained = rows.evaluate_all("els => els.map((el) => getComputedStyle(el).contain)")
        assert set(contained) == {"layout style"}
        far = rows.nth(98)
        assert "Meeting 98" in far.inner_text()
        far.scroll_into_view_if_needed()
        expect(far.get_by_role("link", name="Meeting 98")).to_be_visible()
        assert page.evaluate("document.documentElement.scrollWidth") <= 1280
        assert page.locator(".paged > p.small[role=status]").inner_text() == "100 of 120 rows"
