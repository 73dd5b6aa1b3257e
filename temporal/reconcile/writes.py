"""The rows a change set writes, in the caller's transaction."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Iterator, Mapping
from typing import TypeVar

from almanac.temporal.reconcile.derived import derived_issues
from almanac.temporal.reconcile.intake import committed_seen
from almanac.temporal.reconcile.memory import Guard, NoteState
from almanac.temporal.reconcile.plan import Plan
from almanac.temporal.reconcile.resolution import resolve_links, run
from almanac.temporal.reconcile.spans import span_rows
from almanac.temporal.store import ASSOCIATE, INSERT_NOTE, TARGET_COLUMNS, Bulk, marks

__all__ = ["write"]

T = TypeVar("T")
# Where a `targets` row (see resolution) keeps its field and what it resolved to.
_TARGET_NAMES = [name for name, _ in TARGET_COLUMNS]
_FIELD = _TARGET_NAMES.index("field")
_RESOLVED_PATH = _TARGET_NAMES.index("resolved_path")


def write(plan: Plan, conn: sqlite3.Connection, bulk: Bulk) -> None:
    """Replace the rows of every changed and affected note, in the caller's transaction.

    A first load runs the plan itself, once its notes are written; any other plan must
    have run before (it reads committed rows, through indexes a bulk write drops).
    A bulk write's indexes are built in the background (`bulk`) as the rows they index
    go in; meanwhile this works out the next rows without touching the connection.
    """
    removed = [p for p, _ in plan.undo]
    bulk.scopes({plan.entries[p].scope for p in plan.notes})
    if plan.first_load:
        # Every row to replace is of a file taken. The notes go in before `run`, with the
        # eligibility they have unless their references say otherwise, so that their
        # full-text index fills meanwhile; the notes that differ are updated after.
        _delete(plan, conn, removed, removed, removed)
        plan.seen_before = committed_seen(plan)
        fact_keys = _fact_keys(plan, {})
        conn.executemany(INSERT_NOTE, _note_rows(plan, provisional=True))
        bulk.search()
        own = _meanwhile(bulk, lambda: _run_and_own_rows(plan))
        flipped = [
            (int(e.eligible), p)
            for p in sorted(plan.notes)
            if (e := plan.entries[p]).eligible != _provisional(e)
        ]
        conn.executemany("UPDATE notes SET eligible = ? WHERE path = ?", flipped)
        _insert(conn, own)
        bulk.index("notes", *own)
        derived = rederived(plan, removed)
        rows = _meanwhile(bulk, lambda: _linked_rows(plan, derived, fact_keys))
        unwritten: list[tuple[int, str]] = []
        associated = set(derived)
    else:
        rewrite = sorted(set(plan.rows) | set(removed))
        derived = rederived(plan, removed)
        # Whose associations may change: every path rewritten or re-derived, and the
        # sources their claims and relationships name, before (read here) and after.
        associated = set(derived) | _sources_of(conn, derived)
        _delete(plan, conn, removed, rewrite, derived)
        conn.executemany(INSERT_NOTE, _note_rows(plan))
        # Notes whose rows stay, but whose eligibility was worked out again.
        unwritten = [
            (int(plan.entries[p].eligible), p)
            for p in derived
            if p in plan.entries and p not in plan.notes
        ]
        conn.executemany("UPDATE notes SET eligible = ? WHERE path = ?", unwritten)
        plan.lines_before = _committed_lines(conn, [p for _, p in unwritten])
        fact_keys = _fact_keys(plan, _committed_fact_keys(conn, plan))
        bulk.index("notes")
        rows = _meanwhile(
            bulk, lambda: {**_own_rows(plan), **_linked_rows(plan, derived, fact_keys)}
        )
    _insert(conn, rows)
    conn.executemany("UPDATE spans SET eligible = ? WHERE path = ?", unwritten)
    conn.executemany("UPDATE sources SET eligible = ? WHERE path = ?", unwritten)
    again = json.dumps(sorted(associated | _sources_of(conn, derived)))
    conn.execute("DELETE FROM associations WHERE path IN (SELECT value FROM json_each(?))", [again])
    conn.execute(ASSOCIATE, {"paths": again})
    conn.executemany("INSERT OR IGNORE INTO seen VALUES (?, ?)", plan.seen)
    conn.executemany(
        "INSERT OR REPLACE INTO guards VALUES (?, ?, ?, ?)",
        [
            (k, g.lifecycle, g.seen_at, json.dumps(sorted(g.hashes)))
            for k, g in sorted(plan.guards.changes.items())
            if isinstance(g, Guard)
        ],
    )


def rederived(plan: Plan, removed: list[str]) -> list[str]:
    """Paths whose derived issues (and associations) are made again: those derived, taken
    or resolved again."""
    return sorted(plan.derived | set(removed) | set(plan.rows))


def _delete(
    plan: Plan, conn: sqlite3.Connection, removed: list[str], rewrite: list[str], derived: list[str]
) -> None:
    """Delete the committed rows about to be replaced: those of the files taken
    (`removed`), the links of the notes resolved again, the issues derived again."""
    committed = plan.memory.keys
    if not committed:
        return
    for table, paths, where in (
        ("notes", removed, ""),
        ("dates", removed, ""),
        ("spans", removed, ""),
        ("names", removed, ""),
        ("issues", removed, " AND origin = 'file'"),
        ("targets", rewrite, ""),
        ("sources", rewrite, ""),
        ("facts", rewrite, ""),
        ("issues", derived, " AND origin = 'derived'"),
    ):
        listed = [p for p in paths if p in committed]
        if listed:
            sql = f"DELETE FROM {table} WHERE path IN (SELECT value FROM json_each(?)){where}"
            conn.execute(sql, [json.dumps(listed)])


def _run_and_own_rows(plan: Plan) -> dict[str, list[tuple[object, ...]]]:
    run(plan)
    return _own_rows(plan)


def _own_rows(plan: Plan) -> dict[str, list[tuple[object, ...]]]:
    """The rows each changed note makes on its own (spans carry its eligibility)."""
    return {
        "dates": list(_date_rows(plan)),
        "spans": list(_span_rows(plan)),
        "names": list(_name_rows(plan)),
    }


def _linked_rows(
    plan: Plan, derived: list[str], fact_keys: Mapping[str, str]
) -> dict[str, list[tuple[object, ...]]]:
    """The rows that depend on other notes: links, sources, facts, issues (file, then
    derived)."""
    resolve_links(plan)
    scope_of = plan.scope_of
    return {
        "targets": [row for p in sorted(plan.rows) for row in plan.rows[p]],
        "sources": list(_source_rows(plan)),
        "facts": list(_fact_rows(plan, fact_keys)),
        "issues": [
            (i.path, i.line, i.field, i.code, i.message, i.record_id, "file", scope)
            for p in sorted(plan.file_issues)
            for i in plan.file_issues[p]
            for scope in (scope_of(i.path),)
        ]
        + [
            (*row, "derived", scope_of(p))
            for p in derived
            if p in plan.entries
            for row in derived_issues(plan, p)
        ],
    }


def _note_rows(plan: Plan, *, provisional: bool = False) -> Iterator[tuple[object, ...]]:
    """The notes rows, eligible as worked out, or as `_provisional` (before `run`)."""
    for path in sorted(plan.notes):
        e = plan.entries[path]
        yield (*plan.note_rows[path], int(_provisional(e) if provisional else e.eligible))


def _date_rows(plan: Plan) -> Iterator[tuple[object, ...]]:
    for path in sorted(plan.dates):
        for fld, value in sorted(plan.dates[path].items()):
            yield (path, fld, value.text, value.precision.value, value.start_us, value.end_us)


def _span_rows(plan: Plan) -> Iterator[tuple[object, ...]]:
    for path in sorted(plan.notes):
        e = plan.entries[path]
        yield from span_rows(
            path,
            plan.notes[path],
            plan.dates[path],
            plan.zones[path],
            scope=e.scope,
            eligible=e.eligible,
        )


def _source_rows(plan: Plan) -> Iterator[tuple[str, str, str, int]]:
    """(claim or relationship, entity it is about, its source): timelines' source links."""
    for path in sorted(plan.rows):
        state = plan.entries.get(path)
        if state is None or state.kind == "page":
            continue
        rows = plan.rows[path]
        about = sorted(
            {
                str(r[_RESOLVED_PATH])
                for r in rows
                if r[_FIELD] in ("from", "to", "subject") and r[_RESOLVED_PATH]
            }
        )
        sources = sorted(
            {str(r[_RESOLVED_PATH]) for r in rows if r[_FIELD] == "source" and r[_RESOLVED_PATH]}
        )
        for entity in about:
            for source in sources:
                yield (path, entity, source, int(state.eligible))


def _fact_rows(plan: Plan, fact_keys: Mapping[str, str]) -> Iterator[tuple[str, str, str]]:
    """(claim, subject it resolves to, fact_key): the claims that may conflict (eligibility,
    lifecycle, validity and body are read with them, from their own rows, when asked)."""
    for path in sorted(plan.rows):
        key = fact_keys.get(path)
        state = plan.entries.get(path)
        if key is None or state is None or state.kind != "claim":
            continue
        for row in plan.rows[path]:
            if row[_FIELD] == "subject" and row[_RESOLVED_PATH]:
                yield (path, str(row[_RESOLVED_PATH]), key)


def _fact_keys(plan: Plan, committed: Mapping[str, str]) -> dict[str, str]:
    """The fact_key of each claim resolved again: as taken, else as committed."""
    found = {p: n.fact_key for p, n in plan.notes.items() if n.fact_key is not None}
    found.update((p, k) for p, k in committed.items() if p not in plan.notes)
    return found


def _committed_fact_keys(conn: sqlite3.Connection, plan: Plan) -> dict[str, str]:
    """The committed fact_keys of the claims resolved again but not taken (their rows stay)."""
    paths = [p for p in plan.rows if p not in plan.notes]
    sql = (
        "SELECT path, fact_key FROM notes WHERE path IN (SELECT value FROM json_each(?))"
        " AND fact_key IS NOT NULL"
    )
    return dict(conn.execute(sql, [json.dumps(paths)]).fetchall())


def _name_rows(plan: Plan) -> Iterator[tuple[str, str, str]]:
    for path in sorted(plan.notes):
        for key, source in plan.names_of.get(path, ()):
            yield (path, key, source)


def _provisional(state: NoteState) -> bool:
    """A note's eligibility unless its references or id say otherwise (as most do not)."""
    return state.valid and state.lifecycle != "withdrawn"


def _meanwhile(bulk: Bulk, work: Callable[[], T]) -> T:
    """Do `work` while the bulk's background statements run, then wait for them."""
    try:
        result = work()
    except BaseException:
        bulk.stop()
        raise
    bulk.wait()
    return result


def _insert(conn: sqlite3.Connection, rows: Mapping[str, list[tuple[object, ...]]]) -> None:
    for table, items in rows.items():
        if items:
            conn.executemany(f"INSERT INTO {table} VALUES ({marks(items[0])})", items)


def _committed_lines(conn: sqlite3.Connection, paths: list[str]) -> dict[str, Mapping[str, int]]:
    """The field lines of committed notes (what their derived issues point at)."""
    sql = "SELECT path, lines FROM notes WHERE path IN (SELECT value FROM json_each(?))"
    return {path: json.loads(lines) for path, lines in conn.execute(sql, [json.dumps(paths)])}


def _sources_of(conn: sqlite3.Connection, paths: list[str]) -> set[str]:
    """The sources named by the claims and relationships among `paths` (table `sources`)."""
    sql = "SELECT source FROM sources WHERE path IN (SELECT value FROM json_each(?))"
    return {r[0] for r in conn.execute(sql, [json.dumps(paths)])}
