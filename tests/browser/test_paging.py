"""A long timeline paged: the rows past the first page skip their rendering while out of view
(the 5,000-row hub of bench/explorer.py pages without a long frame), and still read and find
like any other row."""

from __future__ import annotations

from pathlib import Path

from playwright.sync_api import Browser, expect

from tests.api.served import serve
from tests.browser.conftest import watching, write_hub


def test_rows_out_of_view_skip_rendering_once_the_list_is_long(
    browser: Browser, tmp_path: Path
) -> None:
    vault = write_hub(tmp_path / "vault", 120)
    with serve(vault, tmp_path) as base, watching(browser, base) as explorer:
        page = explorer.open("/?entity=people/hub")
        rows = page.locator("ol.timeline > li")
        rows.nth(49).wait_for()
        visibility = "el => getComputedStyle(el).contentVisibility"
        assert rows.last.evaluate(visibility) == "visible"  # one page: drawn as it is
        page.get_by_role("button", name="Load more").click()
        rows.nth(99).wait_for()
        assert page.locator("ol.timeline.long").count() == 1
        assert {rows.nth(i).evaluate(visibility) for i in (0, 60, 99)} == {"auto"}
        # A row far out of view keeps its text and its link (for find, copy, screen readers);
        # it is drawn once scrolled to.
        far = rows.nth(98)
        assert far.inner_text() == ""  # not rendered while out of view
        assert "Meeting 98" in (far.text_content() or "")
        expect(far.get_by_role("link", name="Meeting 98")).to_have_count(1)
        far.scroll_into_view_if_needed()
        expect(far).to_contain_text("Meeting 98", use_inner_text=True)
        expect(far.get_by_role("link", name="Meeting 98")).to_be_visible()
        assert page.evaluate("document.documentElement.scrollWidth") <= 1280
