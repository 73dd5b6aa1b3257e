"""The reader: queries over one read transaction, returned as dataclasses, never rows."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass

from almanac.temporal.calendar import DatePrecision, DateValue
from almanac.temporal.records import (
    Lifecycle,
    LifecycleFilter,
    LinkRef,
    Locator,
    Record,
    RecordKind,
    RecordRef,
    TimeField,
    supersession_chain,
)
from almanac.temporal.store.conflicts import conflicted_paths, conflicting_paths
from almanac.temporal.store.names import NameRule, designate
from almanac.temporal.store.sql import chunks, marks, run
from almanac.vault import Issue

__all__ = ["ChainStep", "Count", "Reader", "RecordFilter", "StatusCounts"]

_SUCCESSOR = (
    "SELECT t.resolved_path, m.lifecycle, m.eligible FROM targets t"
    " JOIN notes m ON m.path = t.resolved_path"
    " WHERE t.path = ? AND t.field = 'superseded_by' AND t.status = 'resolved'"
)
# The rows each rule finds a name's key in, as (path, key); `Reader.named` adds the rest.
_NAMED = {
    NameRule.ID: "SELECT path, id AS key FROM notes WHERE id",
    NameRule.SLUG: "SELECT path, slug AS key FROM notes WHERE slug",
    NameRule.TITLE: "SELECT path, key FROM names WHERE key",
}


@dataclass(frozen=True, slots=True)
class RecordFilter:
    """Filters of the `records` inventory; `since_us`/`until_us` are inclusive bounds."""

    kind: RecordKind | None = None
    type: str | None = None
    tag: str | None = None
    lifecycle: LifecycleFilter = LifecycleFilter.ACTIVE
    scope: str | None = None
    time_field: TimeField = TimeField.OCCURRED_AT
    since_us: int | None = None
    until_us: int | None = None


@dataclass(frozen=True, slots=True)
class ChainStep:
    """One record along a `superseded_by` chain."""

    path: str
    lifecycle: str
    eligible: bool


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


class Reader:
    """Queries over one read transaction; returns dataclasses, never rows."""

    def __init__(self, conn: sqlite3.Connection, fingerprint: str) -> None:
        self.conn = conn
        self.fingerprint = fingerprint

    def run(self, sql: str, params: Sequence[object] = ()) -> sqlite3.Cursor:
        """Execute one statement in this read transaction."""
        return run(self.conn, sql, params)

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

    def knows_note_file(self, path: str) -> bool:
        """Whether the last reconcile listed `path` (vault-relative) as a note file, whether or
        not it makes a record."""
        return self.run("SELECT 1 FROM files WHERE path = ?", [path]).fetchone() is not None

    def record_at(self, path: str, scopes: Sequence[str]) -> RecordRef | None:
        """The eligible record the note file at `path` makes in the readable scopes, if any."""
        row = self.run(
            "SELECT id, kind, type, title FROM notes WHERE path = ? AND eligible = 1"
            f" AND scope IN ({marks(scopes)})",
            [path, *scopes],
        ).fetchone()
        return RecordRef(row[0], RecordKind(row[1]), row[2], row[3]) if row else None

    def refs(self, ids: Iterable[str], scopes: Sequence[str]) -> dict[str, RecordRef]:
        """Compact identities of the eligible records among `ids`."""
        wanted = sorted(set(ids))
        found: dict[str, RecordRef] = {}
        for chunk in chunks(wanted):
            sql = (
                # Without statistics SQLite would pick notes_kind (eligible, scope) and read
                # every note; the unary + keeps those terms out of the index choice.
                "SELECT id, kind, type, title FROM notes WHERE +eligible = 1"
                f" AND id IN ({marks(chunk)}) AND +scope IN ({marks(scopes)})"
            )
            for rid, kind, rtype, title in self.run(sql, [*chunk, *scopes]):
                found[rid] = RecordRef(rid, RecordKind(kind), rtype, title)
        return found

    def conflicts(
        self, paths: Iterable[str], *, as_of_us: int | None = None
    ) -> dict[str, tuple[RecordRef, ...]]:
        """The claims each of `paths` conflicts with, sorted by id (only paths that have some).

        Args:
            as_of_us: Only claims valid at this instant take part; None: any validity.
        """
        return self._conflict_refs(conflicting_paths(self.run, set(paths), as_of_us=as_of_us))

    def _conflict_refs(self, found: Mapping[str, set[str]]) -> dict[str, tuple[RecordRef, ...]]:
        """`conflicting_paths` with the conflicting records as their references, by id."""
        others = sorted({p for ps in found.values() for p in ps})
        refs: dict[str, RecordRef] = {}
        for chunk in chunks(others):
            sql = f"SELECT path, id, kind, type, title FROM notes WHERE path IN ({marks(chunk)})"
            for path, rid, kind, rtype, title in self.run(sql, chunk):
                refs[path] = RecordRef(rid, RecordKind(kind), rtype, title)
        return {
            path: tuple(sorted((refs[p] for p in ps), key=lambda r: r.id))
            for path, ps in found.items()
        }

    def conflicted(self, paths: Iterable[str], *, as_of_us: int | None = None) -> set[str]:
        """Those of `paths` that conflict, directly or through `derived_from` (three steps)."""
        return conflicted_paths(self.run, set(paths), as_of_us=as_of_us)

    def chain(self, path: str) -> Iterator[ChainStep]:
        """Each record after the note at `path` along its `superseded_by` chain, in order, each
        once (`supersession_chain`): the chain ends where a `superseded_by` resolves to nothing
        or would visit a record again."""
        steps: dict[str, ChainStep] = {}

        def successor(of: str) -> str | None:
            found = self.run(_SUCCESSOR, [of]).fetchone()
            if found is None:
                return None
            steps[found[0]] = ChainStep(found[0], found[1], bool(found[2]))
            return str(found[0])

        for later in supersession_chain(path, successor):
            yield steps[later]

    def designated(
        self, name: str, scopes: Sequence[str], *, rules: Sequence[NameRule]
    ) -> list[tuple[str, RecordRef]]:
        """The eligible records of `scopes` that `name` designates by `rules`, every rule's
        matches counting together (`temporal.store.designate`).

        Returns:
            [(scope, record)], ordered by (record id, scope).
        """
        found = designate(
            name,
            lambda rule, key: self.named(rule, [key], scopes).get(key, ()),
            rules=rules,
            first=False,
        ).found
        return sorted(found, key=lambda item: (item[1].id, item[0]))

    def named(
        self, rule: NameRule, keys: Collection[str], scopes: Sequence[str]
    ) -> dict[str, list[tuple[str, RecordRef]]]:
        """The eligible records of `scopes` that `rule` finds under each of `keys` (the rule's
        keys of names: `NameRule.key`); the file-name rule is for links alone.

        Returns:
            key -> [(scope, record)], ordered by (record id, scope).
        """
        found: dict[str, list[tuple[str, RecordRef]]] = {}
        for chunk in chunks(sorted(set(keys))):
            sql = (
                "SELECT k.key, n.scope, n.id, n.kind, n.type, n.title"
                f" FROM ({_NAMED[rule]} IN ({marks(chunk)})) k JOIN notes n ON n.path = k.path"
                f" WHERE +n.eligible = 1 AND +n.scope IN ({marks(scopes)}) ORDER BY n.id, n.scope"
            )
            for key, scope, rid, kind, rtype, title in self.run(sql, [*chunk, *scopes]):
                found.setdefault(key, []).append(
                    (scope, RecordRef(rid, RecordKind(kind), rtype, title))
                )
        return found

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
        since, until = flt.since_us, flt.until_us
        if since is not None or until is not None:
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
        targets: dict[str, list[_Target]] = {p: [] for p in paths}
        among = marks(paths)
        for path, fld, text, precision, start, end in self.run(
            f'SELECT path, field, text, precision, start, "end" FROM dates WHERE path IN ({among})',
            paths,
        ):
            dates[path][fld] = DateValue(text, DatePrecision(precision), start, end)
        for path, fld, ord_, text, line, resolved, file in self.run(
            "SELECT path, field, ord, text, line, resolved,"
            " CASE status WHEN 'file' THEN resolved_path END"
            f" FROM targets WHERE path IN ({among}) ORDER BY path, field, ord",
            paths,
        ):
            targets[path].append((fld, ord_, text, line, resolved, file))
        wanted = {t[4] for ts in targets.values() for t in ts if t[4]}
        scope_rows = {r["scope"] for r in rows}
        refs = self.refs(wanted, sorted(scope_rows))
        direct = conflicting_paths(self.run, set(paths))
        conflicts = self._conflict_refs(direct)
        conflicted = conflicted_paths(self.run, set(paths), known=direct)
        return [
            _record(
                row,
                dates[row["path"]],
                targets[row["path"]],
                refs,
                conflicts.get(row["path"], ()),
                row["path"] in conflicted,
            )
            for row in rows
        ]


# A `targets` row as a record reads it: field, ord, text, line, resolved id, attachment path.
_Target = tuple[str, int, str, int | None, str | None, str | None]


def _record(
    row: sqlite3.Row,
    dates: Mapping[str, DateValue],
    targets: list[_Target],
    refs: Mapping[str, RecordRef],
    conflicts: tuple[RecordRef, ...],
    conflicted: bool,
) -> Record:
    entities: list[RecordRef] = []
    derived: list[RecordRef] = []
    named: dict[str, RecordRef] = {}
    links: list[LinkRef] = []
    for fld, _ord, text, line, resolved, file in targets:
        ref = refs.get(resolved) if resolved else None
        if fld == "link":
            links.append(LinkRef(text, line or 0, ref, file))
        elif ref is None:
            continue
        elif fld in ("entities", "derived_from"):
            listed = entities if fld == "entities" else derived
            if ref not in listed:
                listed.append(ref)
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
        fact_key=row["fact_key"],
        derived_from=tuple(derived),
        conflicts=conflicts,
        conflicted=conflicted,
    )
