"""A burst of concurrent queries right after a vault change: every one sees it, few reconciles run.

`Services.ensure_fresh` promises strict freshness (a query sees every change that
finished before it arrived) and shared work (callers that arrive while a reconcile
runs share the next one). The change is written, and closed, before any request
of the burst is sent; so all of them must show it, and the reconciles that ran for
twenty requests must be at least one and at most a handful, with and without the
inotify watcher. The burst goes through one event loop either from coroutines
(httpx2 over ASGI) or from threads (Starlette's TestClient portal). A second test
holds a reconcile open (another writer holds the state database) while the change
lands and the burst arrives: the burst must not settle for that reconcile, and
shares the next one. The reconciles are counted by `Services.reconciles`. The last tests run
`almanac check` between two queries of a serving app (a second writer on the same
state file): the server must still answer from the vault as it is.
"""

from __future__ import annotations

import asyncio
import sqlite3
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx2
import pytest
from starlette.applications import Starlette

from almanac.api import cli
from almanac.api.app import create_app
from almanac.api.services import Services
from almanac.api.settings import Settings
from tests.api.helpers import DEMO_RECORDS, LocalClient

BURST = 20
MAX_RECONCILES = 3
QUERY = "query($id: ID!) { status { snapshot recordCount } record(id: $id) { title } }"


@dataclass(frozen=True)
class Change:
    """One vault change, and what every query sent after it must show."""

    apply: Callable[[Path], Any]
    record_id: str
    title: str | None
    count: int


CHANGES = {
    "add": Change(
        lambda v: (v / "people/zoe-new.md").write_text(
            "---\ntype: person\ntitle: Zoe New\n---\nJoined today.\n"
        ),
        "people/zoe-new",
        "Zoe New",
        DEMO_RECORDS + 1,
    ),
    "edit": Change(
        lambda v: (v / "people/ada-lopez.md").write_text(
            (v / "people/ada-lopez.md")
            .read_text()
            .replace("title: Ada Lopez", "title: Ada Lopez-Garcia")
        ),
        "people/ada-lopez",
        "Ada Lopez-Garcia",
        DEMO_RECORDS,
    ),
    "delete": Change(
        lambda v: (v / "topics/on-call.md").unlink(), "topics/on-call", None, DEMO_RECORDS - 1
    ),
}


def body(client_response: Any) -> dict[str, Any]:
    assert client_response.status_code == 200, client_response.text
    result: dict[str, Any] = client_response.json()
    assert "errors" not in result, result["errors"]
    return result


def asgi_run(app: Starlette, rid: str, then: Callable[[], int]) -> Any:
    """One query, then `then()` (the change), then the burst, all in one event loop.

    ASGITransport runs no lifespan, so this closes the services itself.
    """

    async def scenario() -> tuple[dict[str, Any], list[dict[str, Any]], int]:
        transport = httpx2.ASGITransport(app=app)
        async with httpx2.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:

            async def ask(record_id: str) -> dict[str, Any]:
                payload = {"query": QUERY, "variables": {"id": record_id}}
                return body(await client.post("/graphql", json=payload))

            before = await ask(rid)
            counted = then()
            answers = await asyncio.gather(*(ask(rid) for _ in range(BURST)))
            return before, list(answers), app.state.services.reconciles - counted

    try:
        return asyncio.run(scenario())
    finally:
        app.state.services.close()


def threads_run(app: Starlette, rid: str, then: Callable[[], int]) -> Any:
    """The same with TestClient (its lifespan closes the services): the burst from threads."""
    with LocalClient(app) as client:

        def ask(record_id: str) -> dict[str, Any]:
            payload = {"query": QUERY, "variables": {"id": record_id}}
            return body(client.post("/graphql", json=payload))

        before = ask(rid)
        counted = then()
        start = threading.Barrier(BURST)

        def one(_: int) -> dict[str, Any]:
            start.wait(timeout=30)
            return ask(rid)

        with ThreadPoolExecutor(BURST) as pool:
            answers = list(pool.map(one, range(BURST)))
        return before, answers, app.state.services.reconciles - counted


TRANSPORTS = {"asgi": asgi_run, "threads": threads_run}


@pytest.mark.parametrize("transport", TRANSPORTS)
@pytest.mark.parametrize("watch", [False, True], ids=["scan", "inotify"])
@pytest.mark.parametrize("change", CHANGES)
def test_burst_after_a_change_sees_it_with_few_reconciles(
    change: str,
    watch: bool,
    transport: str,
    demo_vault: Path,
    tmp_path: Path,
) -> None:
    settings = Settings.build(vault=demo_vault, state=tmp_path / "state.db", watch=watch)
    app = create_app(settings)
    services: Services = app.state.services
    watching = services.watcher is not None
    expected = CHANGES[change]

    def then() -> int:
        """Write the change, then start counting (`Services.reconciles`, the reconciles begun):
        the burst is sent only after this returns."""
        expected.apply(demo_vault)
        return services.reconciles

    before, answers, reconciles = TRANSPORTS[transport](app, expected.record_id, then)
    assert watching == watch, "inotify watcher did not start"
    old = before["data"]["status"]["snapshot"]
    assert len(answers) == BURST
    for answer in answers:
        assert answer["data"]["status"]["recordCount"] == expected.count
        found = answer["data"]["record"]
        assert (found["title"] if found else None) == expected.title
    snapshots = {answer["data"]["status"]["snapshot"] for answer in answers}
    assert len(snapshots) == 1 and old not in snapshots
    assert 1 <= reconciles <= MAX_RECONCILES, reconciles


def wait_until(condition: Callable[[], bool], timeout: float = 30.0) -> bool:
    """Poll `condition` (a public counter moved by another thread) until it holds."""
    limit = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > limit:
            return False
        time.sleep(0.001)
    return True


@pytest.mark.parametrize("watch", [False, True], ids=["scan", "inotify"])
def test_burst_during_a_reconcile_sees_a_change_made_meanwhile(
    watch: bool, demo_vault: Path, tmp_path: Path
) -> None:
    """A reconcile is running when the change lands and the burst arrives: not enough for them.

    Another writer (a connection of this test) holds the state database, so the reconcile R1
    that a query starts for an earlier edit cannot commit: it waits at its `BEGIN IMMEDIATE`
    (the busy timeout is 10 s). Then a note is added and the burst is sent; every request of
    it has arrived (`Services.arrivals`) before the other writer lets go. R1 may have looked at
    the vault before the note existed (with the watcher it did: it reconciles only the paths
    drained before it started), so the burst must wait for a reconcile that starts after it
    arrived, and share it: two reconciles in all (`Services.reconciles`).
    """
    state = tmp_path / "state.db"
    settings = Settings.build(vault=demo_vault, state=state, watch=watch)
    app = create_app(settings)
    services: Services = app.state.services
    added = CHANGES["add"]
    begun, arrived = services.reconciles, services.arrivals
    other = sqlite3.connect(state, isolation_level=None)

    async def scenario() -> tuple[dict[str, Any], list[dict[str, Any]]]:
        transport = httpx2.ASGITransport(app=app)
        async with httpx2.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:

            async def ask(record_id: str) -> dict[str, Any]:
                payload = {"query": QUERY, "variables": {"id": record_id}}
                return body(await client.post("/graphql", json=payload))

            other.execute("BEGIN IMMEDIATE")
            try:
                CHANGES["edit"].apply(demo_vault)
                first = asyncio.create_task(ask("people/ada-lopez"))
                assert await asyncio.to_thread(wait_until, lambda: services.reconciles > begun), (
                    "the first query did not reconcile"
                )
                added.apply(demo_vault)
                burst = [asyncio.create_task(ask(added.record_id)) for _ in range(BURST)]
                for _ in range(100_000):  # let every request of the burst reach ensure_fresh
                    if services.arrivals == arrived + 1 + BURST:
                        break
                    await asyncio.sleep(0)
                assert services.arrivals == arrived + 1 + BURST, "the burst did not arrive"
                assert services.reconciles == begun + 1  # R1 is still held by the other writer
            finally:
                other.execute("ROLLBACK")
            answers = await asyncio.gather(*burst)
            return await first, list(answers)

    try:
        before, answers = asyncio.run(scenario())
    finally:
        other.close()
        services.close()
    assert before["data"]["record"]["title"] == "Ada Lopez-Garcia"
    for answer in answers:
        assert answer["data"]["status"]["recordCount"] == added.count
        assert answer["data"]["record"] == {"title": added.title}
    assert len({answer["data"]["status"]["snapshot"] for answer in answers}) == 1
    assert services.reconciles == begun + 2


# A second writer: `almanac check` run while `almanac serve` is up, on the same vault and (by
# default, a per-vault cache file) the same state database. The server notices the other
# connection's commits (PRAGMA data_version) and plans again from what was committed.
CHECKED = "query($id: ID!) { record(id: $id) { title } status { snapshot recordCount"
CHECKED += " coverage { issues(first: 100) { code path } } } }"
ACTIVE_CLAIM = (
    "---\ntype: claim\ntitle: X launches in May\nsubject: projects/atlas\n---\nX launches in May.\n"
)


def cli_between_queries(
    vault: Path, state: Path, watch: bool, path: str, meanwhile: str, final: str
) -> tuple[dict[str, Any], dict[str, Any]]:
    """A query, `meanwhile` written and `almanac check` run, `final` written, a query.

    The CLI runs in this process but on its own Store and Reconciler, as another process
    would: the two share nothing but the state file.
    """
    settings = Settings.build(vault=vault, state=state, watch=watch)
    note = vault / path
    record_id = path.removesuffix(".md")
    with LocalClient(create_app(settings)) as client:

        def ask() -> dict[str, Any]:
            payload = {"query": CHECKED, "variables": {"id": record_id}}
            data: dict[str, Any] = body(client.post("/graphql", json=payload))["data"]
            return data

        before = ask()
        note.write_text(meanwhile)
        assert cli.main(["check", "--vault", str(vault), "--state", str(state)]) in (0, 1)
        note.write_text(final)  # before the server's next query
        return before, ask()


@pytest.mark.parametrize("watch", [False, True], ids=["scan", "inotify"])
def test_cli_reconcile_while_serving_then_undone_edit_shows(
    watch: bool, demo_vault: Path, tmp_path: Path
) -> None:
    """The edit the CLI indexed is undone: the server must serve the vault as it is again."""
    original = (demo_vault / "people/ada-lopez.md").read_text()
    edited = original.replace("title: Ada Lopez", "title: Ada Edited")
    before, after = cli_between_queries(
        demo_vault, tmp_path / "state.db", watch, "people/ada-lopez.md", edited, original
    )
    assert after == before  # found: title "Ada Edited", under the snapshot id of the original


@pytest.mark.parametrize("watch", [False, True], ids=["scan", "inotify"])
def test_cli_reconcile_while_serving_keeps_a_withdrawn_id_out(
    watch: bool, demo_vault: Path, tmp_path: Path
) -> None:
    """The CLI saw the claim withdrawn; an active edit without `reinstated_at` stays out (I2)."""
    path = "claims/x-launch-date.md"
    (demo_vault / path).write_text(ACTIVE_CLAIM)
    withdrawn = ACTIVE_CLAIM.replace("---\nX", "lifecycle: withdrawn\n---\nX")
    before, after = cli_between_queries(
        demo_vault, tmp_path / "state.db", watch, path, withdrawn, ACTIVE_CLAIM + "Still.\n"
    )
    assert before["record"] == {"title": "X launches in May"}
    assert after["record"] is None  # found: the claim back as an active record
    issues = after["status"]["coverage"]["issues"]
    assert {"code": "resurrection_blocked", "path": path} in issues
