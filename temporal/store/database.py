from __future__ import annotations

import contextlib
import os
import sqlite3
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import sqlite_utils

from almanac.temporal.store.bulk import Bulk
from almanac.temporal.store.reader import Reader
from almanac.temporal.store.sql import sqlite_error
from almanac.temporal.store.tables import (
    FINGERPRINT,
    MIGRATIONS,
    PROJECTION_DDL,
    PROJECTION_INDEXES,
    PROJECTION_TABLES,
    SEARCH_TABLES,
    SEARCH_TRIGGERS,
    search_table,
    search_triggers,
)
from almanac.vault import IndexUnavailable

__all__ = ["Store"]

_BUSY_MS = 10_000
_MMAP_BYTES = 1 << 30
_AUTOCHECKPOINT = 1000  # pages: SQLite's default
# Read connections kept open between reads, at most: each holds its own page cache (2 MB) and
# statement cache, so a burst of concurrent reads must not leave that many behind for good.
IDLE_READERS = 8


class Store:
    """The state database: one SQLite file in WAL mode, one writer, many readers.

    Projection tables are rebuilt when the fingerprint changes; safeguard
    tables are created and changed only by migrations and reconciles.
    """

    def __init__(self, path: Path, conn: sqlite3.Connection, fingerprint: str) -> None:
        self.path = path
        self.conn = conn
        self.fingerprint = fingerprint
        self._readers: list[sqlite3.Connection] = []
        self._lock = threading.Lock()
        self._watching: sqlite3.Connection | None = None  # `version()`'s own, never in a read
        self._watch_lock = threading.Lock()
        self._checkpointer: threading.Thread | None = None

    @classmethod
    def open(cls, path: str | os.PathLike[str], *, fingerprint: str = FINGERPRINT) -> Store:
        """Open (creating if needed) the state database and rebuild stale projections.

        Raises:
            IndexUnavailable: the file cannot be opened or is not a database.
        """
        db_path = Path(path)
        try:
            db_path.parent.mkdir(parents=True, exist_ok=True)
            conn = _connect(db_path)
            conn.execute("PRAGMA journal_mode = WAL")
            MIGRATIONS.apply(sqlite_utils.Database(conn))
            store = cls(db_path, conn, fingerprint)
            store._ensure_projections()
        except (sqlite3.Error, OSError) as exc:
            raise IndexUnavailable(f"State database {str(db_path)!r} is unusable: {exc}") from exc
        return store

    def close(self) -> None:
        """Close every connection (once a background checkpoint is done)."""
        self.settle()
        with self._lock:
            for reader in self._readers:
                reader.close()
            self._readers.clear()
        with self._watch_lock:
            if self._watching is not None:
                self._watching.close()
                self._watching = None
        self.conn.close()

    def files(self) -> list[str]:
        """The files a commit writes: the database and its write-ahead log (which WAL mode
        keeps while a connection is open, as this store's writer is)."""
        return [str(self.path), f"{self.path}-wal"]

    def version(self) -> int:
        """A number that changes whenever a commit lands, by any connection of any process
        (this process's writer too): SQLite's `data_version` of a connection kept for it. The
        same number twice means the database held the same committed state all along.

        Raises:
            IndexUnavailable: the database cannot be read.
        """
        with self._watch_lock:
            try:
                return int(self._watcher().execute("PRAGMA data_version").fetchone()[0])
            except sqlite3.Error as exc:
                raise sqlite_error(exc) from exc

    def version_at_rest(self) -> int | None:
        """`version`, read while no write transaction is under way: between holding SQLite's
        write lock for an instant (`BEGIN IMMEDIATE`, then `ROLLBACK`). None when a writer,
        of this process or another, holds it: its commit may have written the log and not yet
        made it visible, so the version read now may be moving.

        Raises:
            IndexUnavailable: the database cannot be read.
        """
        with self._watch_lock:
            try:
                conn = self._watcher()
                conn.execute("PRAGMA busy_timeout = 0")
                try:
                    conn.execute("BEGIN IMMEDIATE")
                except sqlite3.OperationalError as exc:
                    # SQLITE_BUSY, or an extended form of it (BUSY_SNAPSHOT: a commit landed
                    # between the snapshot and the lock): a writer is, or just was, under way.
                    if getattr(exc, "sqlite_errorcode", 0) & 0xFF == sqlite3.SQLITE_BUSY:
                        return None
                    raise
                finally:
                    conn.execute(f"PRAGMA busy_timeout = {_BUSY_MS}")
                try:
                    return int(conn.execute("PRAGMA data_version").fetchone()[0])
                finally:
                    conn.execute("ROLLBACK")
            except sqlite3.Error as exc:
                raise sqlite_error(exc) from exc

    def _watcher(self) -> sqlite3.Connection:
        """The connection `version` reads on (under `_watch_lock`), opened on first use."""
        if self._watching is None:
            self._watching = _connect(self.path, mapped=False)
        return self._watching

    @contextlib.contextmanager
    def write(self, *, checkpoint_later: bool = False) -> Iterator[sqlite3.Connection]:
        """One write transaction (`BEGIN IMMEDIATE`), committed on success, rolled back on error.

        Args:
            checkpoint_later: For a big write: its commit (durable once the log is synced)
                does not also copy the log into the database file; a background thread
                does that afterwards (`settle()` waits for it).
        """
        try:
            self.conn.execute("BEGIN IMMEDIATE")
        except sqlite3.Error as exc:
            raise IndexUnavailable(f"Cannot start a write: {exc}") from exc
        try:
            yield self.conn
            if checkpoint_later:
                self.conn.execute("PRAGMA wal_autocheckpoint = 0")
            try:
                self.conn.execute("COMMIT")
            finally:
                if checkpoint_later:
                    self.conn.execute(f"PRAGMA wal_autocheckpoint = {_AUTOCHECKPOINT}")
        except BaseException:
            if self.conn.in_transaction:
                self.conn.execute("ROLLBACK")
            raise
        if checkpoint_later:
            self.settle()
            self._checkpointer = threading.Thread(
                target=_checkpoint, args=(self.path,), name="almanac-checkpoint", daemon=True
            )
            self._checkpointer.start()

    def unmap(self) -> None:
        """Let go of the pages the writer read through its map (a server, after each
        reconcile). They are the page cache's, clean and shared, but every page a process maps
        counts in its resident size: a server's grew by the ~90-500 MB of the file its
        reconciles had touched (100,000 notes). A new limit makes SQLite unmap the file; the
        next transaction maps it again as it reads."""
        with contextlib.suppress(sqlite3.Error):
            self.conn.execute("PRAGMA mmap_size = 0")
            self.conn.execute(f"PRAGMA mmap_size = {_MMAP_BYTES}")

    def settle(self) -> None:
        """Wait for the background checkpoint of the last big write, if one runs."""
        if self._checkpointer is not None:
            self._checkpointer.join()
            self._checkpointer = None

    @contextlib.contextmanager
    def bulk(self, conn: sqlite3.Connection, *, active: bool = True) -> Iterator[Bulk]:
        """Inside a write: drop the secondary indexes, and build them again after the block.

        Building an index once over sorted keys is several times faster than
        keeping it up to date row by row, which is what a first reconcile needs. The block
        says which rows are written (`Bulk`), and their indexes are built in the background
        meanwhile; the rest at the end. Inactive, the block's `Bulk` does nothing, and the
        indexes stay.
        """
        if not active:
            yield Bulk(conn, active=False)
            _drop_empty_scopes(conn)
            return
        for statement in PROJECTION_INDEXES:
            conn.execute("DROP INDEX IF EXISTS " + statement.split(" ON ")[0].split()[-1])
        for name in _triggers(conn):
            conn.execute(f"DROP TRIGGER IF EXISTS {name}")
        bulk = Bulk(conn, active=True)
        try:
            yield bulk
            bulk.index(*PROJECTION_TABLES)
            bulk.wait()
        except BaseException:
            bulk.stop()
            raise
        _drop_empty_scopes(conn)
        _create_triggers(conn)

    @contextlib.contextmanager
    def read(self, *, deadline: float | None = None) -> Iterator[Reader]:
        """One read transaction: every query inside sees the same committed snapshot."""
        with self._lock:
            conn = self._readers.pop() if self._readers else _connect(self.path, mapped=False)
        try:
            conn.execute("BEGIN")
            if deadline is not None:
                conn.set_progress_handler(lambda: int(time.monotonic() > deadline), 10_000)
            yield Reader(conn, self.fingerprint)
        except sqlite3.Error as exc:
            raise sqlite_error(exc) from exc
        finally:
            conn.set_progress_handler(None, 0)
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            with self._lock:
                kept = len(self._readers) < IDLE_READERS
                if kept:
                    self._readers.append(conn)
            if not kept:  # one more than the pool keeps: its caches go with it
                conn.close()

    @property
    def idle_readers(self) -> int:
        """How many read connections are open and waiting for a read (at most
        `IDLE_READERS`)."""
        return len(self._readers)

    def _ensure_projections(self) -> None:
        tables = {
            r[0] for r in self.conn.execute("SELECT name FROM sqlite_master WHERE type='table'")
        }
        current = None
        if "meta" in tables:
            row = self.conn.execute("SELECT value FROM meta WHERE key = 'fingerprint'").fetchone()
            current = row[0] if row else None
        wanted = {*PROJECTION_TABLES, *SEARCH_TABLES}
        if current == self.fingerprint and wanted <= tables:
            scopes = self.conn.execute("SELECT scope FROM search_scopes").fetchall()
            if {search_table(scope) for (scope,) in scopes} <= tables:
                return
        with self.write() as conn:
            # Whatever an older version made of these names (a table or a view) goes, and every
            # full-text index (an FTS5 table takes its shadow tables with it) and its view.
            names = {*PROJECTION_TABLES, *SEARCH_TABLES, "edges", "search", "search_text"}
            found = conn.execute(
                "SELECT type, name, sql FROM sqlite_master WHERE type IN ('table', 'view')"
                " ORDER BY sql LIKE 'CREATE VIRTUAL TABLE%' DESC"
            ).fetchall()
            for kind, name, sql in found:
                virtual = (sql or "").startswith("CREATE VIRTUAL TABLE")
                if name in names or virtual or (kind == "view" and name.startswith("search_")):
                    conn.execute(f"DROP {kind.upper()} IF EXISTS {name}")
            for statement in PROJECTION_DDL.split(";"):
                if statement.strip():
                    conn.execute(statement)
            for statement in PROJECTION_INDEXES:
                conn.execute(statement)
            _create_triggers(conn)
            conn.execute("INSERT INTO meta VALUES ('fingerprint', ?)", (self.fingerprint,))


def _checkpoint(path: Path) -> None:
    """Copy the write-ahead log into the database file, from a connection of its own."""
    conn = None
    try:
        conn = _connect(path)
        conn.execute("PRAGMA wal_checkpoint(PASSIVE)")
    except (sqlite3.Error, OSError):
        pass  # the next commit's automatic checkpoint copies what this did not
    finally:
        if conn is not None:
            conn.close()


def _triggers(conn: sqlite3.Connection) -> dict[str, str]:
    """Every trigger of the full-text indexes: name -> body."""
    found = dict(SEARCH_TRIGGERS)
    for (scope,) in conn.execute("SELECT scope FROM search_scopes ORDER BY scope").fetchall():
        found.update(search_triggers(scope))
    return found


def _create_triggers(conn: sqlite3.Connection) -> None:
    for name, body in _triggers(conn).items():
        conn.execute(f"CREATE TRIGGER {name} {body}")


def _drop_empty_scopes(conn: sqlite3.Connection) -> None:
    """Drop the full-text index of every scope that holds no note any more (its triggers too)."""
    for (scope,) in conn.execute("SELECT scope FROM search_scopes ORDER BY scope").fetchall():
        table = search_table(scope)
        # A row of the docsize shadow table per indexed note: none left, no note of the scope.
        if conn.execute(f"SELECT 1 FROM {table}_docsize LIMIT 1").fetchone() is None:
            for name in search_triggers(scope):
                conn.execute(f"DROP TRIGGER IF EXISTS {name}")
            conn.execute(f"DROP TABLE {table}")
            conn.execute(f"DROP VIEW {table}_text")
            conn.execute("DELETE FROM search_scopes WHERE scope = ?", [scope])


def _connect(path: Path, *, mapped: bool = True) -> sqlite3.Connection:
    """A connection; `mapped` reads the database file through a memory map (the writer's).

    Read connections read through their own page cache instead: SQLite unmaps a connection's
    map whenever another connection has committed since its last transaction, so under edits
    a reader's mapped pages came and went every commit (0-5 MB each at 2,000 notes, the
    server's resident size swinging by up to 8 %), and a hub's timeline now reads one
    clustered range (`associations`), no faster mapped (measured at 100,000 notes).
    """
    conn = sqlite3.connect(
        path, isolation_level=None, check_same_thread=False, timeout=_BUSY_MS / 1000
    )
    conn.execute(f"PRAGMA busy_timeout = {_BUSY_MS}")
    conn.execute("PRAGMA synchronous = FULL")
    conn.execute("PRAGMA foreign_keys = OFF")
    if mapped:
        # The writer reads the file through a memory map (address space, not memory): the
        # reconcile reads many pages at random, and its own commits never unmap it. The file
        # never shrinks (no VACUUM, no auto-vacuum), which is what makes a map safe.
        conn.execute(f"PRAGMA mmap_size = {_MMAP_BYTES}")
    return conn
