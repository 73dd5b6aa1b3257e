"""The rows of time queries: candidate queries over `spans`, the filters every row passes, and
the compact rows that order, count and filter a result before its page is shown.

An entity's rows are those of the paths associated with it (table `associations`); a day, week
or range is one index range per width tier of `spans` (`window_sql`); another time field than
`occurred_at` values the anchor rows by `dates` (`BY_DATE`). A hub's timeline holds thousands of
rows: they stay in SQLite or raw tuples (temporal/queries/listing.py), and only a page
becomes `Row`s.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import date
from enum import Enum
from typing import Any

from temporal.calendar import ClockRelation, DatePrecision, DateValue, Occurrence
from temporal.records import Locator, RecordKind, RecordRef, TimeField
from temporal.store import SPAN_COLUMNS, SPANS, TIER_WIDTHS, Reader, marks
from vault import NotFound

__all__ = ["Eligibility", "Timeline", "TimelineEntry", "TimelineGroup", "TimelineQuery"]


class Eligibility(Enum):
    """Which lifecycles a timeline shows; member names are the GraphQL values."""

    ACTIVE = "active"
    INCLUDE_INACTIVE = "include_inactive"


class TimelineGroup(Enum):
    """How timeline rows are grouped; member names are the GraphQL values."""

    NONE = "none"
    SOURCE = "source"


@dataclass(frozen=True, slots=True)
class TimelineEntry:
    """One timeline row."""

    record: RecordRef
    date: DateValue | None
    occurrence: Occurrence | None
    clock: ClockRelation
    locator: Locator
    summary: str | None = None
    via: RecordRef | None = None
    source: RecordRef | None = None
    note: RecordRef | None = None
    claims: int | None = None
    links: tuple[RecordRef, ...] = ()
    sources: tuple[RecordRef, ...] = ()


@dataclass(frozen=True, slots=True)
class Timeline:
    """One page of a time query, with what describes the whole result."""

    entries: list[TimelineEntry]
    total: int
    next_offset: int | None
    as_of_us: int
    local_date: date
    clock_counts: tuple[tuple[ClockRelation, int], ...]
    degraded: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class TimelineQuery:
    """The arguments of `timeline`, parsed (bounds in microseconds, inclusive)."""

    entity: str | None = None
    kind: str | None = None
    time_field: TimeField = TimeField.OCCURRED_AT
    since_us: int | None = None
    until_us: int | None = None
    descending: bool = False
    eligibility: Eligibility = Eligibility.ACTIVE
    group: TimelineGroup = TimelineGroup.NONE
    include_sources: bool = False
    as_of_us: int | None = None  # the validity filter, when given
    tz: str = "UTC"
    nearest: bool = False  # closest to asOf first (`descending` then plays no part)
    clocks: frozenset[ClockRelation] | None = None  # only rows of these (counts: every row)


# The anchor row `a` valued by a `dates` row `d` (another time field than occurred_at).
BY_DATE = (
    'SELECT a.path, -1 AS idx, d.start, d."end" AS vend, d."end" AS stop, d.text, d.precision, '
    + ", ".join(f"a.{name}" for name, _ in SPAN_COLUMNS[7:])
)


ROW = "c.path, c.idx, c.start, c.id, c.scope, c.lifecycle, c.source_event, c.recurring, c.more"

# A row valid at an instant (the `asOf` validity filter), bound twice.
VALID_AT = "coalesce(c.valid_from <= ?, 1) AND coalesce(? < c.valid_until, 1)"


@dataclass(frozen=True, slots=True)
class Expr:
    """SQL text and the values of its `?` placeholders, in order.

    Values that change from one request to the next (`now`, bounds) are bound, never spliced:
    a query's text is then the same at every `now`, so each reader prepares it once instead of
    filling its statement cache (128 entries) with statements that are never used again.
    """

    sql: str
    params: tuple[object, ...] = ()

    @classmethod
    def of(cls, expr: Expr | str) -> Expr:
        """`expr`, or SQL text without placeholders (`clock_sql`, say) as one."""
        return expr if isinstance(expr, Expr) else cls(expr)


@dataclass(frozen=True, slots=True)
class Sql:
    """A candidate query (the columns of `spans`), its parameters and the field it values."""

    sql: str
    params: list[object]
    field: TimeField = TimeField.OCCURRED_AT


@dataclass(frozen=True, slots=True)
class Scan:
    """Candidates and the filters every row of a query passes."""

    candidates: Sql
    scopes: Sequence[str]
    lifecycles: Sequence[str]
    kind: str | None = None
    valid_at: int | None = None  # the asOf validity filter

    def sql(self, select: Expr | str) -> tuple[str, list[object]]:
        """`SELECT {select}` over the candidates (alias `c`) that pass the filters."""
        select = Expr.of(select)
        where = [
            "c.eligible = 1",
            f"c.scope IN ({marks(self.scopes)})",
            f"c.lifecycle IN ({marks(self.lifecycles)})",
        ]
        params = [*select.params, *self.candidates.params, *self.scopes, *self.lifecycles]
        if self.kind is not None:
            where.append("c.type = ?")
            params.append(self.kind)
        if self.valid_at is not None:
            where.append(VALID_AT)
            params += [self.valid_at, self.valid_at]
        sql = f"SELECT {select.sql} FROM ({self.candidates.sql}) c WHERE {' AND '.join(where)}"
        return sql, params


@dataclass(slots=True)
class Row:
    """One row of a result: its place, its record, its clock relation; its value once shown.

    A hub's timeline holds thousands of rows, of which one page is shown: rows are made from
    the few columns that order, count and filter them, and `show_values` reads the rest for a page.
    """

    path: str
    idx: int
    start: int | None
    id: str
    scope: str
    lifecycle: str
    source_event: int
    recurring: int
    more: int
    clock: str  # a ClockRelation value: strings hash and count faster than members
    value: DateValue | None = None
    stop: int | None = None
    via: Row | None = None
    standing: Row | None = None  # a source_event claim shown in this row's place

    def key(self) -> tuple[int, str, int, str]:
        return (self.start or 0, self.id, self.idx, self.scope)

    def occurrence(self) -> Occurrence | None:
        if self.idx < 0 or self.value is None or self.stop is None:
            return None
        floating = self.value.precision is not DatePrecision.INSTANT
        return Occurrence(self.idx, self.value.start_us, self.stop, self.value.text, floating)


PRECISIONS = {p.value: p for p in DatePrecision}


CLOCKS = {c.value: c for c in ClockRelation}


# Positions in a raw row (`ROW, clock`, and a NEAREST listing's distance): a hub's timeline is
# thousands of these; only the rows of the page shown (and the rare superseded ones) become
# `Row`s.
PATH, LIFECYCLE, SOURCE_EVENT, RECURRING, MORE, CLOCK, DISTANCE = 0, 5, 6, 7, 8, 9, 10


Raw = tuple[Any, ...]


def fetch_rows(reader: Reader, scan: Scan, clock: Expr) -> list[Row]:
    """Every row of a (small) scan, ordered, with its value."""
    columns = f"{ROW}, {clock.sql}, c.vend, c.stop, c.text, c.precision"
    sql, params = scan.sql(Expr(columns, clock.params))
    sql += " ORDER BY c.start, c.id, c.idx, c.scope"
    rows = []
    for r in reader.run(sql, params):
        row = Row(*r[:10])
        if r[2] is not None:
            row.value = DateValue(r[12], PRECISIONS[r[13]], r[2], r[10])
            row.stop = r[11]
        rows.append(row)
    return rows


def show_values(reader: Reader, candidates: Sql, rows: Sequence[Row]) -> None:
    """Read the values of `rows` (a page's worth): `spans` rows, or the `dates` of the field."""
    wanted = [r for r in rows if r.value is None and r.start is not None]
    if not wanted:
        return
    keys = json.dumps([[r.path, r.idx] for r in wanted])
    if candidates.field is TimeField.OCCURRED_AT:
        sql = (
            "SELECT s.path, s.idx, s.vend, s.stop, s.text, s.precision FROM json_each(?) k"
            " JOIN spans s ON s.path = k.value ->> 0 AND s.idx = k.value ->> 1"
        )
        params: list[object] = [keys]
    else:
        sql = (
            'SELECT d.path, -1, d."end", d."end", d.text, d.precision FROM json_each(?) k'
            " JOIN dates d ON d.path = k.value ->> 0 AND d.field = ?"
        )
        params = [keys, candidates.field.value]
    found = {(r[0], r[1]): r[2:] for r in reader.run(sql, params)}
    for row in wanted:
        vend, stop, text, precision = found[(row.path, row.idx)]
        assert row.start is not None
        row.value = DateValue(text, PRECISIONS[precision], row.start, vend)
        row.stop = stop


def window_sql(lo: int | None, hi: int | None, exact: Expr) -> Sql:
    """Spans passing `exact` inside `[lo, hi]`: one index range per width tier.

    Within a tier a row is at most `width` long, so a row overlapping `[lo, hi]` starts after
    `lo - width`; the last tier (over a year) has no such bound.
    """
    parts: list[str] = []
    params: list[object] = []
    for tier, width in enumerate(TIER_WIDTHS):
        where = [f"tier = {tier}"]
        if hi is not None:
            where.append("start <= ?")
            params.append(int(hi))
        if lo is not None and width is not None:
            where.append("start >= ?")
            params.append(int(lo) - width)
        parts.append(f"SELECT {SPANS} FROM spans WHERE {' AND '.join(where)}")
    sql = f"SELECT * FROM ({' UNION ALL '.join(parts)}) c WHERE {exact.sql}"
    return Sql(sql, [*params, *exact.params])


def candidate_sql(query: TimelineQuery, entities: Sequence[str] | None) -> Sql:
    """Rows with a value in the time field, inside the query's range, of the entity if any."""
    since, until = query.since_us, query.until_us
    if query.time_field is TimeField.OCCURRED_AT:
        # A closed range expands recurrences; an open one reads anchors (SPEC "Recurrence").
        closed = since is not None and until is not None
        rows = " AND (c.recurring = 0 OR c.idx >= 0)" if closed else " AND c.idx = -1"
        overlap = overlap_sql(since, until)
        exact = Expr(overlap.sql + rows, overlap.params)
        if entities is None:
            return window_sql(since, until, exact)
        found = entity_rows(entities, expand=closed)
        return Sql(
            f"SELECT * FROM ({found.sql}) c WHERE {exact.sql} AND c.start IS NOT NULL",
            [*found.params, *exact.params],
        )
    exact = overlap_sql(since, until)
    assoc, head = association_sql(entities) if entities is not None else ("", [])
    source = f"{BY_DATE} FROM dates d JOIN spans a ON a.path = d.path AND a.idx = -1"
    source += " WHERE d.field = ?"
    if entities is not None:
        source += f" AND d.path IN ({assoc})"
    return Sql(
        f"SELECT * FROM ({source}) c WHERE {exact.sql}",
        [query.time_field.value, *head, *exact.params],
        query.time_field,
    )


def overlap_sql(since: int | None, until: int | None) -> Expr:
    """Overlap with the inclusive range `[since, until]`; an instant matches itself."""
    clauses = ["1"]
    params: list[object] = []
    if since is not None:
        clauses.append("(c.stop > ? OR c.stop = c.start AND c.start >= ?)")
        params += [int(since), int(since)]
    if until is not None:
        clauses.append("c.start <= ?")
        params.append(int(until))
    return Expr(" AND ".join(clauses), tuple(params))


def anchor_sql(paths: Iterable[str], field: TimeField = TimeField.OCCURRED_AT) -> Sql:
    """The anchor row of each path, valued by `field` (NULL start when it has none)."""
    wanted = json.dumps(sorted(set(paths)))
    if field is TimeField.OCCURRED_AT:
        sql = f"SELECT {SPANS} FROM spans WHERE path IN (SELECT value FROM json_each(?))"
        return Sql(sql + " AND idx = -1", [wanted])
    return Sql(
        f"{BY_DATE} FROM spans a LEFT JOIN dates d ON d.path = a.path AND d.field = ?"
        " WHERE a.path IN (SELECT value FROM json_each(?)) AND a.idx = -1",
        [field.value, wanted],
        field,
    )


def entity_paths(
    reader: Reader, entity: str, scopes: Sequence[str], *, strict: bool = True
) -> list[str]:
    """The eligible records with id `entity` in the readable scopes.

    Raises:
        NotFound: there is none (when `strict`).
    """
    sql = (
        f"SELECT path FROM notes WHERE id = ? AND +eligible = 1 AND +scope IN ({marks(scopes)})"
        " ORDER BY scope"
    )
    paths = [r[0] for r in reader.run(sql, [entity, *scopes])]
    if not paths and strict:
        raise NotFound(f"No record {entity!r} in the readable scopes")
    return paths


def association_sql(entities: Sequence[str]) -> tuple[str, list[object]]:
    """A subquery of the paths associated with the entities (`tables.ASSOCIATE`), and its
    parameters; never the entities themselves."""
    among = marks(entities)
    sql = f"SELECT path FROM associations WHERE entity IN ({among}) AND path NOT IN ({among})"
    return sql, [*entities, *entities]


def entity_rows(entities: Sequence[str], *, expand: bool) -> Sql:
    """The rows of the paths associated with the entities: their anchors (one range of
    `associations`), and with `expand` the materialised occurrences of recurring ones."""
    anchors = entity_anchors(entities)
    sql, params = anchors.sql, anchors.params
    if expand:
        assoc, more = association_sql(entities)
        sql += (
            f" UNION ALL SELECT {SPANS} FROM spans WHERE path IN ({assoc} AND recurring = 1)"
            " AND idx >= 0"
        )
        params = [*params, *more]
    return Sql(sql, params)


def entity_anchors(entities: Sequence[str]) -> Sql:
    """The anchor rows of the paths associated with the entities, each once."""
    among = marks(entities)
    unique = "DISTINCT " if len(entities) > 1 else ""  # a path associated with several
    return Sql(
        f"SELECT {unique}{SPANS} FROM associations"
        f" WHERE entity IN ({among}) AND path NOT IN ({among})",
        [*entities, *entities],
    )


def build_entries(reader: Reader, rows: Sequence[Row], query: TimelineQuery) -> list[TimelineEntry]:
    shown = [row.standing or row for row in rows]
    vias = [r.via.path for r in rows if r.via is not None]
    refs = record_details(reader, [r.path for r in rows] + [r.path for r in shown] + vias)
    sources = record_sources(reader, shown) if query.include_sources else {}
    entries = []
    for row, record in zip(rows, shown, strict=True):
        source = refs[row.path][0] if row.standing is not None else None
        extra = sources.get(record.path, ())
        if source is not None and source not in extra:
            extra = (source, *extra)
        ref, locator = refs[record.path]
        entries.append(
            TimelineEntry(
                record=ref,
                date=row.value,
                occurrence=row.occurrence(),
                clock=CLOCKS[row.clock],
                locator=locator,
                summary=note_body(reader, record.path) if row.standing is not None else None,
                via=refs[row.via.path][0] if row.via is not None else None,
                source=source,
                sources=extra if query.include_sources else (),
            )
        )
    return entries


def record_details(reader: Reader, paths: Iterable[str]) -> dict[str, tuple[RecordRef, Locator]]:
    """Identity and locator of each note (a page's worth)."""
    out = {}
    for path, rid, kind, rtype, title, line_count, revision in reader.run(
        "SELECT path, id, kind, type, title, line_count, revision FROM notes"
        " WHERE path IN (SELECT value FROM json_each(?))",
        [json.dumps(sorted(set(paths)))],
    ):
        out[path] = (
            RecordRef(rid, RecordKind(kind), rtype, title),
            Locator(path, 1, line_count, revision),
        )
    return out


def record_sources(reader: Reader, rows: Iterable[Row]) -> dict[str, tuple[RecordRef, ...]]:
    """The resolved, eligible `source` of each row's record."""
    found: dict[str, list[RecordRef]] = {}
    # CROSS JOIN keeps the page's paths first: left to the planner, it once read every
    # eligible note and probed its targets (~300 ms at 100,000 notes).
    sql = (
        "SELECT t.path, n.id, n.kind, n.type, n.title FROM json_each(?) k"
        " CROSS JOIN targets t ON t.path = k.value AND t.field = 'source'"
        " JOIN notes n ON n.path = t.resolved_path AND n.eligible = 1"
        " ORDER BY t.path, n.id"
    )
    for path, rid, kind, rtype, title in reader.run(
        sql, [json.dumps(sorted({r.path for r in rows}))]
    ):
        ref = RecordRef(rid, RecordKind(kind), rtype, title)
        if ref not in found.setdefault(path, []):
            found[path].append(ref)
    return {p: tuple(refs) for p, refs in found.items()}


def note_body(reader: Reader, path: str) -> str | None:
    row = reader.run("SELECT body FROM notes WHERE path = ?", [path]).fetchone()
    return row[0].strip() if row else None
