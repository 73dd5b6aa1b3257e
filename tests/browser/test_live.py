"""The page with the server's other faces: an edit noticed while the page is open (without a
watcher too), tokens, ids with spaces, validation issues, GraphiQL opened by "show query"."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, WebSocketRoute, expect

from tests.api.served import serve
from tests.browser.conftest import Watched, copy_demo, watching, write_hub

TOKEN = "browser-test-token"


@pytest.fixture
def unwatched(browser: Browser, tmp_path: Path) -> Iterator[tuple[Watched, Path]]:
    vault = copy_demo(tmp_path / "vault")
    with serve(vault, tmp_path, "--no-watch") as base, watching(browser, base) as explorer:
        yield explorer, vault


def test_an_edit_is_noticed_and_refresh_keeps_the_place(unwatched: tuple[Watched, Path]) -> None:
    explorer, vault = unwatched
    sockets: list[str] = []
    explorer.page.on("websocket", lambda socket: sockets.append(socket.url))
    page = explorer.open("/?entity=people/ada-lopez")
    page.locator("ol.timeline > li").nth(20).wait_for()
    before = page.locator("#snapshot").inner_text()
    page.mouse.wheel(0, 600)
    page.wait_for_function("window.scrollY >= 500")
    note = vault / "people" / "ada-lopez.md"
    note.write_text(note.read_text("utf-8") + "\nAda now also leads Delta.\n", "utf-8")
    notice = page.locator("#live")
    expect(notice).to_be_visible(timeout=5_000)  # an event within ~1 s; slack for a loaded CI
    assert "The vault changed" in notice.inner_text()
    assert sockets == [explorer.base.replace("http:", "ws:") + "/graphql"]  # the subscription
    notice.get_by_role("button", name="Refresh").click()
    expect(notice).to_be_hidden()
    expect(page.locator("#snapshot")).not_to_have_text(before)
    assert page.evaluate("window.scrollY") >= 500
    assert page.get_by_role("heading", level=1).inner_text() == "Ada Lopez"


def test_without_a_subscription_the_page_polls(unwatched: tuple[Watched, Path]) -> None:
    explorer, vault = unwatched
    refused: list[str] = []

    def refuse(socket: WebSocketRoute) -> None:
        refused.append(socket.url)
        socket.close()

    explorer.page.route_web_socket("**/graphql", refuse)
    page = explorer.open("/?entity=people/ada-lopez")
    page.locator("ol.timeline > li").first.wait_for()
    note = vault / "people" / "ada-lopez.md"
    note.write_text(note.read_text("utf-8") + "\nAda now also leads Delta.\n", "utf-8")
    expect(page.locator("#live")).to_be_visible(timeout=6_000)  # `status` every 2 s
    assert refused, "the page never tried the subscription"


def test_a_changed_snapshot_reloads_the_list_in_place(browser: Browser, tmp_path: Path) -> None:
    vault = write_hub(tmp_path / "vault", 120)
    with serve(vault, tmp_path, "--no-watch") as base, watching(browser, base) as explorer:
        _reload_in_place(explorer, vault)


def _reload_in_place(explorer: Watched, vault: Path) -> None:
    page = explorer.open("/?entity=people/hub")
    page.locator("ol.timeline > li").nth(49).wait_for()
    page.get_by_role("button", name="Load more").click()
    page.locator("ol.timeline > li").nth(99).wait_for()
    note = vault / "meetings" / "m00001.md"
    note.write_text(note.read_text("utf-8") + "\nA new paragraph.\n", "utf-8")
    page.get_by_role("button", name="Load more").click()
    page.get_by_text("The vault changed while you were paging").wait_for()
    rows = page.locator("ol.timeline > li")
    expect(rows).to_have_count(50)  # the first page again, never old and new rows mixed
    assert re.match(r"50 of \d+ rows", page.locator(".paged > p.small[role=status]").inner_text())


def test_a_token_is_asked_for_kept_in_the_tab_and_never_in_a_url(
    browser: Browser, tmp_path: Path
) -> None:
    config = tmp_path / "almanac.toml"
    digest = hashlib.sha256(TOKEN.encode()).hexdigest()
    config.write_text(f'[[tokens]]\nsha256 = "{digest}"\nscopes = ["default"]\n', "utf-8")
    vault = copy_demo(tmp_path / "vault")
    with (
        serve(vault, tmp_path, "--config", str(config)) as base,
        watching(browser, base) as explorer,
    ):
        page = explorer.page
        bearers: list[str | None] = []
        page.on(
            "request",
            lambda r: (
                bearers.append(r.headers.get("authorization"))
                if r.url.endswith("/graphql")
                else None
            ),
        )
        explorer.open("/?entity=people/ada-lopez")
        dialog = page.get_by_role("dialog")
        expect(dialog).to_be_visible()
        page.get_by_label("Token", exact=True).fill("wrong")
        page.get_by_role("button", name="Use token").click()
        expect(page.get_by_text("That token was refused.")).to_be_visible()
        page.get_by_label("Token", exact=True).fill(TOKEN)
        page.get_by_role("button", name="Use token").click()
        page.get_by_role("heading", level=1, name="Ada Lopez").wait_for()
        assert page.evaluate("sessionStorage.getItem('almanac.token')") == TOKEN
        assert f"Bearer {TOKEN}" in bearers
        assert not any(TOKEN in url for url in explorer.requests)
        # The server's 401 answers are the only console errors ("Failed to load resource").
        explorer.errors[:] = [e for e in explorer.errors if "401" not in e]


def test_ids_with_spaces_and_validation_issues(browser: Browser, tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    (vault / "team notes").mkdir(parents=True)
    (vault / "team notes" / "Mary Jane.md").write_text(
        "---\ntype: person\ntitle: Mary Jane\n---\nMary.\n", "utf-8"
    )
    (vault / "team notes" / "Kick off.md").write_text(
        "---\ntype: meeting\ntitle: Kick off\noccurred_at: 2026-03-02T10:00:00Z\n"
        'entities: ["[[Mary Jane]]"]\n---\nWith [[Mary Jane]].\n',
        "utf-8",
    )
    (vault / "team notes" / "Broken.md").write_text(
        "---\ntype: meeting\ntitle: Broken\noccurred_at: someday\n---\nNo date.\n", "utf-8"
    )
    with serve(vault, tmp_path) as base, watching(browser, base) as explorer:
        page = explorer.open("/")
        page.get_by_label("Search").fill("Mary Jane")
        page.get_by_label("Search").press("Enter")
        page.get_by_role("heading", level=1, name="Mary Jane").wait_for()
        assert "entity=team+notes%2FMary+Jane" in page.url
        page.get_by_role("link", name="Kick off").click()
        page.get_by_role("heading", level=1, name="Kick off").wait_for()
        issues = page.get_by_label("Validation issues")
        expect(issues).to_be_visible()
        assert re.search(r"team notes/Broken\.md:\d+ \w+", issues.inner_text())


def test_show_query_opens_graphiql_with_the_views_document(explorer: Watched) -> None:
    page = explorer.open("/?day=2026-03-23&tz=Europe/Berlin&week=1")
    link = page.get_by_role("link", name="show query")
    href = link.get_attribute("href")
    assert href is not None and href.startswith("/graphql#")
    page.goto(explorer.base + href)
    editor = page.locator(".graphiql-query-editor")
    editor.get_by_text("chronicleDay").first.wait_for()
    page.locator(".graphiql-execute-button").click()
    response = page.locator(".graphiql-response")
    response.get_by_text('"chronicleDay"').wait_for()
    assert '"localDate": "2026-03-23"' in response.inner_text()
