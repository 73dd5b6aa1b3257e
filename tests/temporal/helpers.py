"""Shared parts of the temporal tests: the state database's schema and full-text indexes, a
committed state to read."""

from __future__ import annotations

import contextlib
import functools
import sqlite3
import tempfile
from collections.abc import Iterator
from pathlib import Path

from almanac import temporal
from almanac.temporal.store import search_objects, search_table, search_triggers

NOW = 1_800_000_000_000_000
KEYS = "rowid, path, id, scope, kind, type, tags, lifecycle, eligible"


def schema(conn: sqlite3.Connection) -> list[tuple[str, str, str | None]]:
    """Every table, view, index and trigger of a state database, with its SQL."""
    return sorted(conn.execute("SELECT type, name, sql FROM sqlite_master"), key=repr)


@functools.cache
def fresh_schema(scopes: tuple[str, ...] = ()) -> list[tuple[str, str, str | None]]:
    """The schema of a new state database whose notes are in these scopes: each scope's
    full-text index as `temporal.tables` declares it, with its triggers."""
    with tempfile.TemporaryDirectory() as tmp:
        temporal.Store.open(Path(tmp) / "fresh.db").close()
        with contextlib.closing(sqlite3.connect(Path(tmp) / "fresh.db")) as conn:
            for scope in scopes:
                for statement in search_objects(scope):
                    conn.execute(statement)
                for name, body in search_triggers(scope).items():
                    conn.execute(f"CREATE TRIGGER {name} {body}")
            return schema(conn)


def check_search(conn: sqlite3.Connection) -> None:
    """The schema is a fresh one with an index per scope of the notes, and no other; each
    index passes FTS5's integrity check (against its scope's notes) and holds exactly them;
    `search_keys` is the notes' filter columns."""
    scopes = tuple(r[0] for r in conn.execute("SELECT DISTINCT scope FROM notes ORDER BY scope"))
    assert schema(conn) == fresh_schema(scopes)
    assert [r[0] for r in conn.execute("SELECT scope FROM search_scopes ORDER BY scope")] == [
        *scopes
    ]
    for scope in scopes:
        table = search_table(scope)
        conn.execute(f"INSERT INTO {table} ({table}) VALUES ('integrity-check')")
        # One docsize row per indexed note.
        assert sorted(conn.execute(f"SELECT id FROM {table}_docsize")) == sorted(
            conn.execute("SELECT rowid FROM notes WHERE scope = ?", [scope])
        )
    assert sorted(conn.execute(f"SELECT {KEYS} FROM notes")) == sorted(
        conn.execute(f"SELECT {KEYS} FROM search_keys")
    )


@contextlib.contextmanager
def committed(
    root: Path, db: Path, config: temporal.VaultConfig | None = None
) -> Iterator[temporal.Reader]:
    """A read transaction over the state of `root` reconciled once (at NOW) into `db`."""
    store = temporal.Store.open(db)
    try:
        temporal.Reconciler(store, root, config or temporal.VaultConfig()).reconcile(now_us=NOW)
        with store.read() as reader:
            yield reader
    finally:
        store.close()
