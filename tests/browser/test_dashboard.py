"""The README's dashboard example (`api/static/examples/dashboard.html`) in Chromium: it shows
a project's overdue tasks and the latest meetings, and reads them again on each event of its
subscription, without being reloaded."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, expect

from tests.api.served import serve
from tests.browser.conftest import Watched, copy_demo, watching

DASHBOARD = "/static/examples/dashboard.html?project=projects/atlas"


@pytest.fixture
def served(browser: Browser, tmp_path: Path) -> Iterator[tuple[Watched, Path]]:
    vault = copy_demo(tmp_path / "vault")
    with serve(vault, tmp_path) as base, watching(browser, base) as page:
        yield page, vault


def test_the_dashboard_shows_overdue_tasks_and_follows_edits(
    served: tuple[Watched, Path],
) -> None:
    dashboard, vault = served
    sockets: list[str] = []
    dashboard.page.on("websocket", lambda socket: sockets.append(socket.url))
    page = dashboard.open(DASHBOARD)
    overdue = page.locator("#overdue li")
    expect(overdue.first).to_have_text("Write the Atlas benchmark report 2026-11-20")
    expect(page.locator("#meetings li")).to_have_count(5)
    expect(page.locator("#project")).to_have_text("Atlas")
    # A task of the project falls due in the past: the list grows without a reload.
    (vault / "tasks" / "file-atlas-expenses.md").write_text(
        "---\ntype: task\ntitle: File the Atlas expenses\nentities: [projects/atlas]\n"
        "due_at: 2026-01-15\nstate: open\n---\nReceipts.\n",
        "utf-8",
    )
    expect(overdue).to_have_count(2, timeout=5_000)
    expect(overdue.nth(1)).to_have_text("File the Atlas expenses 2026-01-15")  # due longest ago
    assert page.evaluate("performance.getEntriesByType('navigation').length") == 1
    assert sockets == [dashboard.base.replace("http:", "ws:") + "/graphql"]


def test_the_dashboard_runs_under_its_own_strict_policy(served: tuple[Watched, Path]) -> None:
    dashboard, _ = served
    response = dashboard.page.request.get(dashboard.base + DASHBOARD)
    policy = response.headers["content-security-policy"]
    assert "'unsafe-inline'" not in policy
    assert "script-src 'sha256-" in policy
