"""The store's own rules, called directly: the SQL toolkit, the read connections."""

from __future__ import annotations

import contextlib
import sqlite3
import time
from pathlib import Path

import pytest

from almanac import temporal
from almanac.temporal.store import chunks, marks, run
from almanac.temporal.store.database import IDLE_READERS
from almanac.vault import IndexUnavailable, InvalidInput, QueryTooComplex


@pytest.mark.parametrize(("items", "expected"), [([], "NULL"), ([1], "?"), (["a", "b"], "?,?")])
def test_marks_are_one_placeholder_per_item_and_null_for_none(
    items: list[object], expected: str
) -> None:
    assert marks(items) == expected


def test_an_empty_list_matches_nothing() -> None:
    conn = sqlite3.connect(":memory:")
    assert conn.execute(f"SELECT 1 WHERE 1 IN ({marks([])})").fetchall() == []


@pytest.mark.parametrize("size", [1, 2, 3, 500])
def test_chunks_keep_every_item_in_order_within_the_size(size: int) -> None:
    items = list(range(1001))
    parts = list(chunks(items, size))
    assert [x for part in parts for x in part] == items
    assert all(1 <= len(part) <= size for part in parts)


def test_text_sqlite_cannot_take_is_the_callers_invalid_input() -> None:
    conn = sqlite3.connect(":memory:")
    with pytest.raises(InvalidInput, match="valid Unicode"):
        run(conn, "SELECT ?", ["\ud800"])


@pytest.mark.skipif(not Path("/proc/self/maps").exists(), reason="reads /proc/self/maps (Linux)")
def test_read_connections_do_not_map_the_database_file(tmp_path: Path) -> None:
    # SQLite drops a connection's map of the file whenever another one has committed, so
    # mapped readers' resident pages come and go with every edit (the soak's RSS swung by up
    # to 8 %): only the writer maps the file.
    path = tmp_path / "state.db"
    store = temporal.Store.open(path)
    store.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # pages read from the file, not the log
    try:
        with store.read() as first, store.read() as second:
            for reader in (first, second):
                assert reader.run("SELECT count(*) FROM sqlite_master").fetchone()[0] > 0
            maps = Path("/proc/self/maps").read_text(encoding="ascii", errors="replace")
            mapped = [line for line in maps.splitlines() if line.endswith(str(path))]
        assert len(mapped) <= 1, mapped
    finally:
        store.close()


def test_a_burst_of_concurrent_reads_leaves_at_most_the_idle_bound_open(tmp_path: Path) -> None:
    # Each read connection keeps its own page cache and statements: a burst of concurrent
    # reads (sixteen clients' requests) must not leave sixteen connections behind for good.
    store = temporal.Store.open(tmp_path / "state.db")
    try:
        with contextlib.ExitStack() as burst:
            readers = [burst.enter_context(store.read()) for _ in range(IDLE_READERS + 4)]
            assert all(r.run("SELECT 1").fetchone() == (1,) for r in readers)
        assert store.idle_readers == IDLE_READERS
        with store.read() as reader:  # a kept connection reads on
            assert reader.run("SELECT count(*) FROM sqlite_master").fetchone()[0] > 0
        assert store.idle_readers == IDLE_READERS
    finally:
        store.close()


def test_the_reader_knows_the_note_files_of_the_last_reconcile(tmp_path: Path) -> None:
    """`excerpt` opens only what this says the last reconcile listed as a note file."""
    root = tmp_path / "vault"
    (root / "team").mkdir(parents=True)
    (root / "team" / "a.md").write_text("# A\n")
    (root / "team" / "gone.md").write_text("---\nlifecycle: withdrawn\n---\n")
    (root / "team" / "latin1.md").write_bytes(b"caf\xe9\n")  # a note file, no record
    (root / "team" / "x.txt").write_text("not a note\n")
    (root / ".trash").mkdir()
    (root / ".trash" / "old.md").write_text("# Old\n")
    (root / "out.md").symlink_to(tmp_path / "elsewhere.md")
    (tmp_path / "elsewhere.md").write_text("# Elsewhere\n")
    store = temporal.Store.open(tmp_path / "state.db")
    config = temporal.VaultConfig(scopes={"team": "team/"})
    reconciler = temporal.Reconciler(store, root, config)
    reconciler.reconcile(now_us=0)
    try:
        with store.read() as reader:
            known = {
                p: reader.knows_note_file(p)
                for p in ("team/a.md", "team/gone.md", "team/latin1.md", "team/x.txt")
            } | {p: reader.knows_note_file(p) for p in (".trash/old.md", "out.md", "../x.md")}
            assert known == {
                "team/a.md": True,
                "team/gone.md": True,
                "team/latin1.md": True,
                "team/x.txt": False,
                ".trash/old.md": False,
                "out.md": False,
                "../x.md": False,
            }
            assert reader.record_at("team/a.md", ["team"]) == temporal.RecordRef(
                "team/a", temporal.RecordKind.PAGE, "note", "A"
            )
            assert reader.record_at("team/a.md", ["default"]) is None
            assert reader.record_at("team/gone.md", ["team"]) is None
            assert reader.record_at("team/latin1.md", ["team"]) is None
        (root / "team" / "a.md").unlink()
        reconciler.reconcile(now_us=1)
        with store.read() as reader:
            assert not reader.knows_note_file("team/a.md")
    finally:
        store.close()


def test_a_statement_past_the_reads_deadline_is_query_too_complex(tmp_path: Path) -> None:
    # The read's progress handler interrupts a statement once its deadline has passed: the
    # caller gets the project's error, not SQLite's.
    store = temporal.Store.open(tmp_path / "state.db")
    heavy = "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) SELECT max(i) FROM n"
    with (
        pytest.raises(QueryTooComplex, match="time limit"),
        store.read(deadline=time.monotonic() - 1) as reader,
    ):
        reader.run(heavy).fetchone()
    store.close()


@pytest.mark.parametrize(
    ("error", "expected"),
    [
        (sqlite3.OperationalError("interrupted"), QueryTooComplex),
        (sqlite3.OperationalError("database is locked"), IndexUnavailable),
        (sqlite3.DatabaseError("database disk image is malformed"), IndexUnavailable),
    ],
)
def test_sqlite_errors_are_the_projects(error: sqlite3.Error, expected: type) -> None:
    assert type(temporal.sqlite_error(error)) is expected
    conn = sqlite3.connect(":memory:")
    conn.set_progress_handler(lambda: 1, 1)  # every statement is interrupted
    with pytest.raises(QueryTooComplex):
        run(conn, "SELECT 1")


def _mapped(path: Path) -> list[str]:
    """The lines of this process's memory map that map `path`."""
    with open("/proc/self/maps", encoding="utf-8") as maps:
        return [line for line in maps if line.rstrip("\n").endswith(str(path))]


@pytest.mark.skipif(not Path("/proc/self/maps").exists(), reason="Linux's /proc")
def test_the_writer_lets_go_of_the_pages_it_read_through_the_map(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    store = temporal.Store.open(path)
    rows = [(n, "x" * 200) for n in range(20_000)]
    try:
        with store.write() as conn:
            conn.execute("CREATE TABLE filler (n INTEGER, text TEXT)")
            conn.executemany("INSERT INTO filler VALUES (?, ?)", rows)
        with store.write() as conn:
            assert conn.execute("SELECT sum(length(text)) FROM filler").fetchone()[0] == 4_000_000
            assert _mapped(path)  # read through the map inside the write
        store.unmap()
        assert not _mapped(path)
        assert store.conn.execute("SELECT count(*) FROM filler").fetchone()[0] == 20_000
    finally:
        store.close()
