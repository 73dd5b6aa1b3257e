"""The store's own rules, called directly: the SQL toolkit, the read connections."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

import temporal
from temporal.store import chunks, marks, run
from vault import InvalidInput


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
