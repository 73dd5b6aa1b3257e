"""One `epoll_wait` says whether the vault or the state files may have changed: an unchanged
poll then costs one system call for its freshness check and its tag's version together, and
every change, by this process or another, is still seen by the next request."""

from __future__ import annotations

import asyncio
import os
import select
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from almanac.api.app import create_app
from almanac.api.changes import Readiness
from almanac.api.services import Services, now_us
from almanac.api.settings import Settings
from almanac.vault.watcher import FileWatch
from tests.api.helpers import LocalClient

STATUS = "{ status { snapshot recordCount } }"
# Another process committing when told to (a line on stdin), and saying so once each COMMIT
# has returned: with `synchronous = FULL` the log is written (the event) milliseconds before
# the commit is visible.
WRITER = """
import os, sqlite3, sys
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
conn.execute("PRAGMA synchronous = FULL")
conn.execute("CREATE TABLE IF NOT EXISTS probe (x)")
os.write(1, b"c")
for line in sys.stdin:
    conn.execute("BEGIN IMMEDIATE")
    conn.execute("INSERT INTO probe VALUES (?)", (os.urandom(3000),))
    conn.execute("COMMIT")
    os.write(1, b"c")
"""


@pytest.fixture
def served(demo_vault: Path, tmp_path: Path) -> Iterator[TestClient]:
    """The demo copy watched, served in process."""
    settings = Settings.build(vault=demo_vault, state=tmp_path / "state.db", watch="on")
    with LocalClient(create_app(settings)) as client:
        yield client


def _poll(client: TestClient, tag: str | None = None) -> Any:
    headers = {"If-None-Match": tag} if tag else {}
    return client.get("/graphql", params={"query": STATUS}, headers=headers)


def _services(client: TestClient) -> Any:
    return client.app.state.services  # type: ignore[attr-defined]


def test_an_unchanged_poll_reads_neither_the_watcher_nor_the_version(served: TestClient) -> None:
    tag = _poll(served).headers["etag"]
    services = _services(served)
    drains, reads = services.watcher.drains, services.state_version.reads
    for _ in range(5):
        assert _poll(served, tag).status_code == 304
    assert (services.watcher.drains, services.state_version.reads) == (drains, reads)


def test_an_edit_is_drained_and_seen_by_the_next_poll(served: TestClient, demo_vault: Path) -> None:
    first = _poll(served)
    services = _services(served)
    drains = services.watcher.drains
    (demo_vault / "people" / "zora-new.md").write_text("---\ntype: person\n---\nZora.\n", "utf-8")
    polled = _poll(served, first.headers["etag"])
    assert polled.status_code == 200 and polled.headers["etag"] != first.headers["etag"]
    assert polled.json()["data"]["status"]["recordCount"] == 89
    assert services.watcher.drains > drains


def test_a_commit_by_another_connection_is_read_by_the_next_poll(
    served: TestClient, tmp_path: Path
) -> None:
    """A write the vault watcher never sees (another process's commit): the version is read
    again, the tag worked out again (the same, since what it reads did not change)."""
    tag = _poll(served).headers["etag"]
    services = _services(served)
    answers = served.app.state.graphql.answers  # type: ignore[attr-defined]
    reads, worked_out = services.state_version.reads, answers.worked_out
    with sqlite3.connect(tmp_path / "state.db") as other:
        other.execute("CREATE TABLE probe (x)")
    polled = _poll(served, tag)
    assert polled.status_code == 304 and polled.headers["etag"] == tag
    assert services.state_version.reads == reads + 1
    assert answers.worked_out == worked_out + 1
    assert _poll(served, tag).status_code == 304
    assert services.state_version.reads == reads + 1  # quiet again


def test_state_files_moved_away_are_read_at_every_poll(served: TestClient, tmp_path: Path) -> None:
    """Once a watched file is moved, no event says when the file at its name is written: every
    poll reads the version again, and still answers."""
    tag = _poll(served).headers["etag"]
    services = _services(served)
    state = tmp_path / "state.db"
    os.rename(state, tmp_path / "moved.db")
    os.rename(tmp_path / "moved.db", state)
    reads = services.state_version.reads
    for count in range(1, 4):
        assert _poll(served, tag).status_code == 304
        assert services.state_version.reads == reads + count


def test_readiness_says_which_descriptors_have_something_to_read() -> None:
    readiness = Readiness()
    first, first_in = os.pipe()
    second, second_in = os.pipe()
    try:
        readiness.add(first)
        readiness.add(second)
        assert readiness.ready() == set()
        os.write(second_in, b"x")
        assert readiness.ready() == {second}
        assert readiness.ready() == {second}  # until it is read
        os.read(second, 1)
        assert readiness.ready() == set()
        os.write(first_in, b"y")
        os.close(first)  # closed by its owner: out of the set
        assert readiness.ready() == set()
    finally:
        readiness.close()
        for fileno in (first_in, second, second_in):
            os.close(fileno)


def test_a_file_watch_is_readable_after_a_write_and_broken_after_a_move(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    path.write_bytes(b"a")
    watch = FileWatch([str(path)])
    try:
        with path.open("ab") as file:
            file.write(b"b")
        assert select.select([watch.fileno()], [], [], 0)[0]  # what `Readiness` asks
        watch.drain()
        assert not select.select([watch.fileno()], [], [], 0)[0]
        assert not watch.broken
        path.rename(tmp_path / "moved.db")
        watch.drain()
        assert watch.broken
    finally:
        watch.close()


def test_a_reconcile_of_this_process_is_read_at_once(demo_vault: Path, tmp_path: Path) -> None:
    """Its commit is read by the very next `read`, with no freshness check between."""
    settings = Settings.build(vault=demo_vault, state=tmp_path / "state.db", watch="on")
    services = Services.open(settings, now_us=now_us(), graph=False)
    try:
        before = services.state_version.read()
        assert services.state_version.read() == before
        note = demo_vault / "people" / "zora-new.md"
        note.write_text("---\ntype: person\n---\nZora.\n", "utf-8")
        services.reconcile_now(now_us=now_us())
        assert services.state_version.read() != before
    finally:
        services.close()


def test_a_watcher_that_breaks_leaves_every_check_to_scan(
    served: TestClient, demo_vault: Path
) -> None:
    """A symlink in the vault: the watcher cannot follow it, and every request scans (and still
    sees every change)."""
    first = _poll(served)
    services = _services(served)
    (demo_vault / "link.md").symlink_to(demo_vault / "people" / "ada-lopez.md")
    _poll(served)
    _poll(served)  # the first drain saw the symlink; the reconcile after it let the watcher go
    assert services.watch_mode == "scan"
    (demo_vault / "people" / "zora-new.md").write_text("---\ntype: person\n---\nZora.\n", "utf-8")
    polled = _poll(served, first.headers["etag"])
    assert polled.status_code == 200
    assert polled.json()["data"]["status"]["recordCount"] == 90  # the link's note, and Zora


def test_a_commit_under_way_is_never_remembered(tmp_path: Path) -> None:
    """Polls keep checking freshness and reading the version while another process commits,
    100 times: every read made after a commit returned sees it (a read between the log's write
    and the commit's being visible would otherwise be remembered, with no event to follow)."""
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "ada.md").write_text("---\ntype: person\n---\n# Ada\n", "utf-8")
    settings = Settings.build(vault=vault, state=tmp_path / "state.db", watch="on")
    services = Services.open(settings, now_us=now_us(), graph=False)
    version = services.state_version

    async def poll() -> int:
        await services.ensure_fresh(now_us=now_us())
        return version.read()

    async def run() -> list[int]:
        writer = subprocess.Popen(
            [sys.executable, "-c", WRITER, str(tmp_path / "state.db")],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            bufsize=0,
        )
        assert writer.stdin is not None and writer.stdout is not None
        stale: list[int] = []
        polling = True

        async def others() -> None:  # other clients' polls, as a busy server has
            while polling:
                await poll()
                await asyncio.sleep(0)

        try:
            await asyncio.to_thread(writer.stdout.read, 1)  # its table made
            task = asyncio.create_task(others())
            for index in range(100):
                writer.stdin.write(b"go\n")
                await asyncio.to_thread(writer.stdout.read, 1)  # that commit returned
                if await poll() != services.store.version():
                    stale.append(index)
            polling = False
            await task
        finally:
            writer.stdin.close()
            writer.wait(10)
            writer.stdout.close()
        return stale

    try:
        assert asyncio.run(run()) == []
    finally:
        services.close()
