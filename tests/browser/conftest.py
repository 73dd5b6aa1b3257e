"""Chromium, driven by Playwright, against a real `almanac serve` on a copy of the demo vault.

Without Chromium (or the `playwright` package) these tests are skipped, saying how to get it.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import shutil
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import pytest

from almanac.api.settings import DEMO_VAULT
from tests.api.served import serve

START = datetime(2020, 1, 1, tzinfo=UTC)
CHROMIUM = os.environ.get("ALMANAC_CHROMIUM", "/usr/bin/chromium")
HOW = (
    "needs Chromium at /usr/bin/chromium (or ALMANAC_CHROMIUM) and the `playwright` package:"
    " `apt-get install chromium` and `pip install -e '.[test]' -c tests/constraints.txt`"
)

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page


@dataclass
class Watched:
    """A page and what it did: console errors, and every URL it requested."""

    page: Page
    base: str
    errors: list[str] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)

    def open(self, path: str) -> Page:
        self.page.goto(self.base + path)
        return self.page

    def check(self) -> None:
        """No console error, and no request left the server's origin."""
        origin = urlsplit(self.base)
        away = [
            url
            for url in self.requests
            if not url.startswith(("data:", "blob:"))
            and (urlsplit(url).scheme, urlsplit(url).netloc) != (origin.scheme, origin.netloc)
        ]
        assert not away, f"requests left the origin: {away}"
        assert not self.errors, f"console errors: {self.errors}"


def copy_demo(target: Path) -> Path:
    shutil.copytree(DEMO_VAULT, target)
    return target


@pytest.fixture(scope="session")
def browser() -> Iterator[Browser]:
    if not Path(CHROMIUM).exists() or importlib.util.find_spec("playwright") is None:
        pytest.skip(HOW)  # pragma: no cover - depends on the machine
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield chromium
        chromium.close()


@pytest.fixture(scope="session")
def demo_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """One server for the tests that only read: a copy of the demo vault."""
    root = tmp_path_factory.mktemp("browser-demo")
    with serve(copy_demo(root / "vault"), root) as base:
        yield base


def watch(browser: Browser, base: str, **context: Any) -> Iterator[Watched]:
    """A fresh page (Berlin time unless told) that records console errors and requests."""
    options: dict[str, Any] = {"timezone_id": "Europe/Berlin", "locale": "en-GB"}
    options.update(context)
    ctx = browser.new_context(**options)
    ctx.set_default_timeout(10_000)
    page = ctx.new_page()
    watched = Watched(page, base)
    page.on(
        "console",
        lambda message: watched.errors.append(message.text) if message.type == "error" else None,
    )
    page.on("pageerror", lambda error: watched.errors.append(str(error)))
    page.on("request", lambda request: watched.requests.append(request.url))
    try:
        yield watched
        watched.check()
    finally:
        ctx.close()


watching = contextlib.contextmanager(watch)


@pytest.fixture
def explorer(browser: Browser, demo_server: str) -> Iterator[Watched]:
    yield from watch(browser, demo_server)


def write_hub(vault: Path, meetings: int) -> Path:
    """A vault of one person named by `meetings` meetings, 7 hours apart from 2020-01-01."""
    (vault / "people").mkdir(parents=True)
    (vault / "meetings").mkdir()
    (vault / "people" / "hub.md").write_text(
        "---\ntype: person\ntitle: Hub Person\n---\nThe hub.\n", "utf-8"
    )
    for i in range(meetings):
        stamp = (START + timedelta(hours=7 * i)).strftime("%Y-%m-%dT%H:%M:%SZ")
        (vault / "meetings" / f"m{i:05d}.md").write_text(
            f"---\ntype: meeting\ntitle: Meeting {i}\noccurred_at: {stamp}\n"
            f'entities: ["[[Hub Person]]"]\n---\nNotes {i}.\n',
            "utf-8",
        )
    return vault
