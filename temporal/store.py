from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import threading
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import sqlite_utils

from temporal.dates import DatePrecision, DateValue, parse_query_bound
from temporal.records import (
    Lifecycle,
    LifecycleFilter,
    LinkRef,
    Locator,
    Record,
    RecordKind,
    RecordRef,
    TimeField,
)
from temporal.tables import (
    FINGERPRINT,
    MIGRATIONS,
    PROJECTION_DDL,
    PROJECTION_INDEXES,
    PROJECTION_TABLES,
    SEARCH_KEYS_FILL,
    SEARCH_TABLES,
    SEARCH_TRIGGERS,
    search_fill,
    search_objects,
    search_table,
    search_triggers,
)
from vault import IndexUnavailable, InvalidInput, Issue, QueryTooComplex

__all__ = [
    "Background",
    "Bulk",
    "Count",
    "RecordFilter",
    "Reader",
    "StatusCounts",
    "Store",
    "marks",
]

_BUSY_MS = 10_000
_MMAP_BYTES = 1 << 30
_AUTOCHECKPOINT = 1000  # pages: SQLite's default
_TIME_FIELDS = ("occurred_at", "recorded_at", "updated_at", "due_at")


@dataclass(frozen=True, slots=True)
class RecordFilter:
    """Filters of the `records` inventory; `since`/`until` are query-bound texts."""

    kind: RecordKind | None = None
    type: str | None = None
    tag: str | None = None
    lifecycle: LifecycleFilter = LifecycleFilter.ACTIVE
    scope: str | None = None
    time_field: TimeField = TimeField.OCCURRED_AT
    since: str | None = None
    until: str | None = None


@dataclass(frozen=True, slots=True)
class Count:
    """One key of a count table."""

    key: str
    count: int


@dataclass(frozen=True, slots=True)
class StatusCounts:
    """Counts of the eligible records of the readable scopes."""

    records: int
    by_kind: tuple[Count, ...]
    by_type: tuple[Count, ...]


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
        self.conn.close()

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
        except sqlite3.OperationalError as exc:
            if "interrupted" in str(exc):
                raise QueryTooComplex("The query ran past its time limit") from exc
            raise IndexUnavailable(f"State database error: {exc}") from exc
        finally:
            conn.set_progress_handler(None, 0)
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            with self._lock:
                self._readers.append(conn)

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


class Reader:
    """Queries over one read transaction; returns dataclasses, never rows."""

    def __init__(self, conn: sqlite3.Connection, fingerprint: str) -> None:
        self.conn = conn
        self.fingerprint = fingerprint

    def run(self, sql: str, params: Sequence[object] = ()) -> sqlite3.Cursor:
        """Execute one statement in this read transaction."""
        try:
            return self.conn.execute(sql, params)
        except UnicodeEncodeError as exc:
            raise InvalidInput("Text arguments must be valid Unicode (no lone surrogates)") from exc

    def digests(self) -> dict[str, int]:
        """Per-scope content digests of this snapshot."""
        row = self.run("SELECT value FROM meta WHERE key = 'digests'").fetchone()
        return {k: int(v, 16) for k, v in json.loads(row[0]).items()} if row else {}

    def record(self, record_id: str, scopes: Sequence[str]) -> Record | None:
        """The eligible record with this id in the readable scopes, or None."""
        found = self._records(
            # `+column`: not an index choice, so the planner takes notes_id (see refs).
            f"SELECT * FROM notes WHERE id = ? AND +eligible = 1 AND +scope IN ({marks(scopes)})",
            [record_id, *scopes],
        )
        return found[0] if found else None

    def records(
        self, flt: RecordFilter, scopes: Sequence[str], *, first: int, after: str | None
    ) -> tuple[list[Record], int]:
        """One page of the inventory, ordered by (id, scope), and the total.

        Args:
            after: The `page_key` of the last record of the previous page.
        """
        where, params = self._filter(flt, scopes)
        total = self.run(f"SELECT count(*) FROM notes n WHERE {where}", params).fetchone()[0]
        page_where, page_params = where, list(params)
        if after is not None:
            # Ids are unique per scope: two scopes may each hold a record with one id.
            last_id, _, last_scope = after.partition("\x00")
            page_where += " AND (n.id > ? OR (n.id = ? AND n.scope > ?))"
            page_params += [last_id, last_id, last_scope]
        sql = f"SELECT n.* FROM notes n WHERE {page_where} ORDER BY n.id, n.scope LIMIT ?"
        return self._records(sql, [*page_params, first]), total

    @staticmethod
    def page_key(record: Record) -> str:
        """Where a page of `records` ended, for the next page's `after`."""
        return f"{record.id}\x00{record.scope}"

    def refs(self, ids: Iterable[str], scopes: Sequence[str]) -> dict[str, RecordRef]:
        """Compact identities of the eligible records among `ids`."""
        wanted = sorted(set(ids))
        found: dict[str, RecordRef] = {}
        for i in range(0, len(wanted), 500):
            chunk = wanted[i : i + 500]
            sql = (
                # Without statistics SQLite would pick notes_kind (eligible, scope) and read
                # every note; the unary + keeps those terms out of the index choice.
                "SELECT id, kind, type, title FROM notes WHERE +eligible = 1"
                f" AND id IN ({marks(chunk)}) AND +scope IN ({marks(scopes)})"
            )
            for rid, kind, rtype, title in self.run(sql, [*chunk, *scopes]):
                found[rid] = RecordRef(rid, RecordKind(kind), rtype, title)
        return found

    def lookup(self, name: str, scopes: Sequence[str], key: str) -> list[RecordRef]:
        """Eligible records whose id or slug is `name`, or whose title/alias key is `key`."""
        # One indexed look-up per rule, united: an OR across them would scan every note.
        sql = (
            "SELECT DISTINCT n.id, n.kind, n.type, n.title FROM notes n WHERE +n.eligible = 1"
            f" AND +n.scope IN ({marks(scopes)}) AND n.path IN ("
            " SELECT path FROM notes WHERE id = ? UNION SELECT path FROM notes WHERE slug = ?"
            " UNION SELECT path FROM names WHERE key = ?) ORDER BY n.id"
        )
        rows = self.run(sql, [*scopes, name, name, key])
        return [RecordRef(r[0], RecordKind(r[1]), r[2], r[3]) for r in rows]

    def counts(self, scopes: Sequence[str]) -> StatusCounts:
        """Record counts per kind and per type."""
        base = f"FROM notes WHERE eligible = 1 AND scope IN ({marks(scopes)})"
        total = self.run(f"SELECT count(*) {base}", scopes).fetchone()[0]
        kinds = self.run(f"SELECT kind, count(*) {base} GROUP BY kind ORDER BY kind", scopes)
        types = self.run(f"SELECT type, count(*) {base} GROUP BY type ORDER BY type", scopes)
        return StatusCounts(
            total, tuple(Count(k, c) for k, c in kinds), tuple(Count(k, c) for k, c in types)
        )

    def issue_count(self, scopes: Sequence[str]) -> int:
        """How many validation issues the readable scopes have."""
        sql = f"SELECT count(*) FROM issues WHERE scope IN ({marks(scopes)})"
        return int(self.run(sql, scopes).fetchone()[0])

    def issues(self, scopes: Sequence[str], *, limit: int = -1) -> list[Issue]:
        """Validation issues of the readable scopes, ordered by path, line and code."""
        rows = self.run(
            "SELECT path, line, field, code, message, record_id FROM issues"
            f" WHERE scope IN ({marks(scopes)})"
            " ORDER BY path, coalesce(line, 0), code, message LIMIT ?",
            [*scopes, limit],
        )
        return [Issue(*row) for row in rows]

    def _filter(self, flt: RecordFilter, scopes: Sequence[str]) -> tuple[str, list[object]]:
        chosen = [s for s in scopes if flt.scope is None or s == flt.scope]
        clauses = ["n.eligible = 1", f"n.scope IN ({marks(chosen)})"]
        params: list[object] = [*chosen]
        if flt.lifecycle is not LifecycleFilter.ALL:
            clauses.append("n.lifecycle = ?")
            params.append(flt.lifecycle.value)
        if flt.kind is not None:
            clauses.append("n.kind = ?")
            params.append(flt.kind.value)
        if flt.type is not None:
            clauses.append("n.type = ?")
            params.append(flt.type)
        if flt.tag is not None:
            clauses.append("EXISTS (SELECT 1 FROM json_each(n.tags) WHERE value = ?)")
            params.append(flt.tag)
        if flt.since is not None or flt.until is not None:
            since = parse_query_bound(flt.since) if flt.since else None
            until = parse_query_bound(flt.until, upper=True) if flt.until else None
            # A record occupies [occurred_at.start, ends_at.end) (SPEC "Occurrence interval");
            # other fields their own interval. Bounds are inclusive; an instant matches itself.
            stop = 'd."end"'
            clause = "EXISTS (SELECT 1 FROM dates d"
            if flt.time_field is TimeField.OCCURRED_AT:
                clause += " LEFT JOIN dates e ON e.path = d.path AND e.field = 'ends_at'"
                stop = 'max(coalesce(e."end", d."end"), d."end")'
            clause += " WHERE d.path = n.path AND d.field = ?"
            params.append(flt.time_field.value)
            if since is not None:
                clause += f" AND ({stop} > ? OR ({stop} = d.start AND d.start >= ?))"
                params += [since, since]
            if until is not None:
                clause += " AND d.start <= ?"
                params.append(until)
            clauses.append(clause + ")")
        return " AND ".join(clauses), params

    def _records(self, sql: str, params: Sequence[object]) -> list[Record]:
        self.conn.row_factory = sqlite3.Row
        try:
            rows = self.run(sql, params).fetchall()
        finally:
            self.conn.row_factory = None
        if not rows:
            return []
        paths = [r["path"] for r in rows]
        dates: dict[str, dict[str, DateValue]] = {p: {} for p in paths}
        targets: dict[str, list[tuple[str, int, str, int | None, str | None]]] = {
            p: [] for p in paths
        }
        among = marks(paths)
        for path, fld, text, precision, start, end in self.run(
            f'SELECT path, field, text, precision, start, "end" FROM dates WHERE path IN ({among})',
            paths,
        ):
            dates[path][fld] = DateValue(text, DatePrecision(precision), start, end)
        for path, fld, ord_, text, line, resolved in self.run(
            f"SELECT path, field, ord, text, line, resolved FROM targets WHERE path IN ({among})"
            " ORDER BY path, field, ord",
            paths,
        ):
            targets[path].append((fld, ord_, text, line, resolved))
        wanted = {t[4] for ts in targets.values() for t in ts if t[4]}
        scope_rows = {r["scope"] for r in rows}
        refs = self.refs(wanted, sorted(scope_rows))
        return [_record(row, dates[row["path"]], targets[row["path"]], refs) for row in rows]


def _record(
    row: sqlite3.Row,
    dates: Mapping[str, DateValue],
    targets: list[tuple[str, int, str, int | None, str | None]],
    refs: Mapping[str, RecordRef],
) -> Record:
    entities: list[RecordRef] = []
    named: dict[str, RecordRef] = {}
    links: list[LinkRef] = []
    for fld, _ord, text, line, resolved in targets:
        ref = refs.get(resolved) if resolved else None
        if fld == "link":
            links.append(LinkRef(text, line or 0, ref))
        elif ref is None:
            continue
        elif fld == "entities":
            if ref not in entities:
                entities.append(ref)
        else:
            named[fld] = ref
    links.sort(key=lambda link: link.line)
    return Record(
        id=row["id"],
        scope=row["scope"],
        kind=RecordKind(row["kind"]),
        type=row["type"],
        title=row["title"],
        aliases=tuple(json.loads(row["aliases"])),
        tags=tuple(json.loads(row["tags"])),
        lifecycle=Lifecycle(row["lifecycle"]),
        superseded_by=named["superseded_by"].id
        if "superseded_by" in named
        else row["superseded_by"],
        body=row["body"],
        locator=Locator(row["path"], 1, row["line_count"], row["revision"]),
        entities=tuple(entities),
        refs=named,
        relation=row["relation"],
        weight=row["weight"],
        source_event=bool(row["source_event"]),
        dates=dates,
        timezone=row["timezone"],
        recurrence=row["recurrence"],
        exdates=tuple(json.loads(row["exdates"])),
        rdates=tuple(json.loads(row["rdates"])),
        state=row["state"],
        links=tuple(links),
        extra=json.loads(row["extra"]),
    )


def _indexed_table(statement: str) -> str:
    return statement.split(" ON ")[1].split()[0]


# Each table's secondary indexes, for a bulk write to build once the table's rows are in.
_INDEXES = {
    table: tuple(s for s in PROJECTION_INDEXES if _indexed_table(s) == table)
    for table in (*PROJECTION_TABLES, *SEARCH_TABLES)
}


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


def marks(items: Sequence[object]) -> str:
    """SQL placeholders for `items` (`NULL` for none, so `IN (NULL)` matches nothing)."""
    return ",".join("?" * len(items)) or "NULL"
