"""Bulk loading: statements in a second thread while the writer works on, and index builds
staged as each table's rows go in."""

from __future__ import annotations

import contextlib
import sqlite3
import threading
from collections.abc import Iterable, Sequence

from almanac.temporal.store.tables import (
    PROJECTION_INDEXES,
    PROJECTION_TABLES,
    SEARCH_KEYS_FILL,
    SEARCH_TABLES,
    search_fill,
    search_objects,
    search_triggers,
)

__all__ = ["Background", "Bulk"]


class Background:
    """Statements run in a second thread, over the connection of a write in progress.

    SQLite releases the GIL while a statement runs, so Python work goes on meanwhile: the
    caller must not touch the connection between `start()` and `wait()`. Statements started
    while earlier ones run follow them, in order (each start is a thread waiting for the one
    before). Each thread says when it is done with an event of its own: a Ctrl-C that lands in
    `Thread.join` makes CPython before 3.13 mark the joined thread stopped while it still runs
    (gh-90882), so `is_alive()` cannot tell `stop()` what still runs.
    """

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        self._threads: list[threading.Thread] = []
        self._done: list[threading.Event] = []
        self._error: BaseException | None = None
        self._stopping = threading.Event()

    def start(self, statements: Sequence[str]) -> None:
        """Run these statements once those started before are done."""
        if not statements:
            return
        previous = self._done[-1] if self._done else None
        done = threading.Event()

        def run() -> None:
            try:
                if previous is not None:
                    previous.wait()
                self._run(statements)
            finally:
                done.set()

        thread = threading.Thread(target=run, name="almanac-bulk", daemon=True)
        # Before it starts: stop() must see it whatever happens.
        self._threads.append(thread)
        self._done.append(done)
        try:
            thread.start()
        except BaseException:
            done.set()  # it never ran: nothing to wait for (and the next one may go)
            raise

    def wait(self) -> None:
        """Wait for every statement started; raise what one of them raised."""
        try:
            for done in self._done:
                done.wait()
            for thread in self._threads:
                thread.join()  # done already: only the thread's own end is waited for
        except BaseException:
            self.stop()  # interrupted (Ctrl-C): the statements must not outlive the transaction
            raise
        self._threads, self._done = [], []
        if self._error is not None:
            raise self._error

    def stop(self) -> None:
        """Interrupt the statements and wait until every thread is done; raise nothing."""
        self._stopping.set()  # no statement starts from now on
        while running := [done for done in self._done if not done.is_set()]:
            # The running statement fails; one just starting may have missed it: again shortly.
            self.conn.interrupt()
            with contextlib.suppress(BaseException):
                running[0].wait(0.05)
        for thread in self._threads:
            if thread.ident is not None:  # started
                with contextlib.suppress(BaseException):
                    thread.join()
        self._threads, self._done = [], []

    def _run(self, statements: Sequence[str]) -> None:
        try:
            for statement in statements:
                if self._stopping.is_set() or self._error is not None:
                    break
                self.conn.execute(statement)
        except BaseException as exc:  # handed to wait()
            self._error = exc


class Bulk:
    """A bulk write's index builds, run in the background as the writer says rows are in.

    Each step is taken once; `index` of the notes fills the full-text index first. The writer
    must not touch the connection between a step and `wait()`.
    """

    def __init__(self, conn: sqlite3.Connection, *, active: bool) -> None:
        self._active = active
        self._background = Background(conn)
        self._done: set[str] = set()
        self._scopes: list[str] | None = None  # every scope with a full-text index

    def scopes(self, scopes: Iterable[str]) -> None:
        """Before notes of these scopes are written: give each scope without one its full-text
        index (with its triggers, unless a bulk write fills the indexes in one pass)."""
        conn = self._background.conn
        known = {scope for (scope,) in conn.execute("SELECT scope FROM search_scopes")}
        for scope in sorted(set(scopes) - known):
            for statement in search_objects(scope):
                conn.execute(statement)
            conn.execute("INSERT INTO search_scopes VALUES (?)", [scope])
            if not self._active:
                for name, body in search_triggers(scope).items():
                    conn.execute(f"CREATE TRIGGER {name} {body}")
        self._scopes = sorted(known | set(scopes))

    def search(self) -> None:
        """Every note row is in (eligibility aside): fill each scope's full-text index."""
        assert self._scopes is not None or not self._active, "scopes() comes first"
        self._start("search", [s for scope in self._scopes or () for s in search_fill(scope)])

    def index(self, *tables: str) -> None:
        """The rows of these tables are final: build their indexes."""
        for table in tables:
            if table == "notes":
                self.search()
                self._start("search_keys", (*SEARCH_KEYS_FILL, *_INDEXES["search_keys"]))
            self._start(table, _INDEXES[table])

    def wait(self) -> None:
        """Wait for the steps started; raise what failed."""
        self._background.wait()

    def stop(self) -> None:
        """Interrupt the steps started and wait until they are done."""
        self._background.stop()

    def _start(self, step: str, statements: Sequence[str]) -> None:
        if self._active and step not in self._done:
            self._done.add(step)
            self._background.start(statements)


def _indexed_table(statement: str) -> str:
    return statement.split(" ON ")[1].split()[0]


# Each table's secondary indexes, for a bulk write to build once the table's rows are in.
_INDEXES = {
    table: tuple(s for s in PROJECTION_INDEXES if _indexed_table(s) == table)
    for table in (*PROJECTION_TABLES, *SEARCH_TABLES)
}
