"""What happened, when: timelines, chronicle days and ranges, last-seen, over one read transaction.

A time query is a *candidate* query over `spans` (occurrence time; `dates` joined with the
anchor row for the other time fields), through an index: a width tier and a start range, or
the paths associated with an entity. A `spans` row carries its record's filters and clock
inputs, so one pass returns every matching row, compact and ordered, with its clock relation
computed by SQLite; Python counts them, applies two rare replacements (a `source_event` claim
stands for its source meeting; an `ACTIVE` query that matches a superseded record lists its
current record after the direct matches) and builds full entries for one page only.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from datetime import date
from enum import Enum
from typing import Any

from temporal.clock import Clock, LocalDay, clock_sql, local_date, local_day
from temporal.dates import DatePrecision, DateValue, instant, timezone
from temporal.records import Locator, Record, RecordKind, RecordRef, TimeField
from temporal.recurrence import Occurrence, RecurrenceSet
from temporal.spans import TIER_WIDTHS
from temporal.store import Reader, marks
from vault import AlmanacError, NotFound

__all__ = [
    "RESPONSE_OCCURRENCES",
    "Eligibility",
    "Entry",
    "Group",
    "LastSeen",
    "Occurrences",
    "Timeline",
    "TimelineQuery",
    "chronicle_day",
    "chronicle_since",
    "last_seen",
    "occurrences",
    "timeline",
]

# Occurrences one `occurrences` response expands (materialised ones: temporal.spans.PER_RECORD).
RESPONSE_OCCURRENCES = 10_000
_DAY_US = 86_400_000_000
_ASSOCIATING = ("entities", "owner", "from", "to", "subject")


class Eligibility(Enum):
    """Which lifecycles a timeline shows; member names are the GraphQL values."""

    ACTIVE = "active"
    INCLUDE_INACTIVE = "include_inactive"


class Group(Enum):
    """How timeline rows are grouped; member names are the GraphQL values."""

    NONE = "none"
    SOURCE = "source"


@dataclass(frozen=True, slots=True)
class Entry:
    """One timeline row."""

    record: RecordRef
    date: DateValue | None
    occurrence: Occurrence | None
    clock: Clock
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

    entries: list[Entry]
    total: int
    next_offset: int | None
    as_of_us: int
    local_date: date
    clock_counts: tuple[tuple[Clock, int], ...]
    degraded: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class LastSeen:
    """The latest dated association of an entity, or why there is none."""

    entry: Entry | None
    reason: str | None


@dataclass(frozen=True, slots=True)
class Occurrences:
    """The occurrences of one record inside a closed range."""

    record: RecordRef | None
    occurrences: list[Occurrence]
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
    group: Group = Group.NONE
    include_sources: bool = False
    as_of_us: int | None = None  # the validity filter, when given
    tz: str = "UTC"


# -- SQL pieces -----------------------------------------------------------------------------

# The columns of `spans` (temporal/tables.py); every candidate query yields them.
_SPANS = (
    "path, idx, start, vend, stop, text, precision, tier, recurring, more, id, scope, type,"
    " lifecycle, eligible, source_event, due_start, due_end, due_instant, open, occ_start,"
    " occ_stop, occ_floating, valid_from, valid_until"
)
# The anchor row `a` valued by a `dates` row `d` (another time field than occurred_at).
_BY_DATE = (
    'SELECT a.path, -1 AS idx, d.start, d."end" AS vend, d."end" AS stop, d.text, d.precision, '
    + ", ".join(f"a.{column.strip()}" for column in _SPANS.split(",")[7:])
)
_ROW = "c.path, c.idx, c.start, c.id, c.scope, c.lifecycle, c.source_event, c.recurring, c.more"


@dataclass(frozen=True, slots=True)
class _Sql:
    """A candidate query (the columns of `spans`), its parameters and the field it values."""

    sql: str
    params: list[object]
    field: TimeField = TimeField.OCCURRED_AT


@dataclass(frozen=True, slots=True)
class _Scan:
    """Candidates and the filters every row of a query passes."""

    candidates: _Sql
    scopes: Sequence[str]
    lifecycles: Sequence[str]
    kind: str | None = None
    valid_at: int | None = None  # the asOf validity filter

    def sql(self, select: str) -> tuple[str, list[object]]:
        """`SELECT {select}` over the candidates (alias `c`) that pass the filters."""
        where = [
            "c.eligible = 1",
            f"c.scope IN ({marks(self.scopes)})",
            f"c.lifecycle IN ({marks(self.lifecycles)})",
        ]
        params: list[object] = [*self.candidates.params, *self.scopes, *self.lifecycles]
        if self.kind is not None:
            where.append("c.type = ?")
            params.append(self.kind)
        if self.valid_at is not None:
            a = int(self.valid_at)
            where.append(f"coalesce(c.valid_from <= {a}, 1) AND coalesce({a} < c.valid_until, 1)")
        sql = f"SELECT {select} FROM ({self.candidates.sql}) c WHERE {' AND '.join(where)}"
        return sql, params


@dataclass(slots=True)
class _Row:
    """One row of a result: its place, its record, its clock relation; its value once shown.

    A hub's timeline holds thousands of rows, of which one page is shown: rows are made from
    the few columns that order, count and filter them, and `_show` reads the rest for a page.
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
    clock: str  # a Clock value: strings hash and count faster than members
    value: DateValue | None = None
    stop: int | None = None
    via: _Row | None = None
    standing: _Row | None = None  # a source_event claim shown in this row's place

    def key(self) -> tuple[int, str, int, str]:
        return (self.start or 0, self.id, self.idx, self.scope)

    def occurrence(self) -> Occurrence | None:
        if self.idx < 0 or self.value is None or self.stop is None:
            return None
        floating = self.value.precision is not DatePrecision.INSTANT
        return Occurrence(self.idx, self.value.start_us, self.stop, self.value.text, floating)


_PRECISIONS = {p.value: p for p in DatePrecision}
_CLOCKS = {c.value: c for c in Clock}


# Positions in a raw row (`_ROW, clock`): a hub's timeline is thousands of these; only the rows
# of the page shown (and the rare superseded ones) become `_Row`s.
_PATH, _LIFECYCLE, _SOURCE_EVENT, _RECURRING, _MORE, _CLOCK = 0, 5, 6, 7, 8, 9
Raw = tuple[Any, ...]


def _raw(reader: Reader, scan: _Scan, clock: str, *, descending: bool = False) -> list[Raw]:
    """Every row of a scan, raw, ordered by (start, id, index, scope)."""
    sql, params = scan.sql(f"{_ROW}, {clock}")
    way = "DESC" if descending else "ASC"
    sql += f" ORDER BY c.start {way}, c.id {way}, c.idx {way}, c.scope {way}"
    return reader.run(sql, params).fetchall()


def _fetch(reader: Reader, scan: _Scan, clock: str) -> list[_Row]:
    """Every row of a (small) scan, ordered, with its value."""
    sql, params = scan.sql(f"{_ROW}, {clock}, c.vend, c.stop, c.text, c.precision")
    sql += " ORDER BY c.start, c.id, c.idx, c.scope"
    rows = []
    for r in reader.run(sql, params):
        row = _Row(*r[:10])
        if r[2] is not None:
            row.value = DateValue(r[12], _PRECISIONS[r[13]], r[2], r[10])
            row.stop = r[11]
        rows.append(row)
    return rows


def _show(reader: Reader, candidates: _Sql, rows: Sequence[_Row]) -> None:
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
        row.value = DateValue(text, _PRECISIONS[precision], row.start, vend)
        row.stop = stop


# -- queries --------------------------------------------------------------------------------


def timeline(
    reader: Reader,
    query: TimelineQuery,
    scopes: Sequence[str],
    *,
    now_us: int,
    first: int,
    offset: int = 0,
) -> Timeline:
    """`timeline` of SPEC section 5: dated records, of one entity if asked, in order."""
    as_of = query.as_of_us if query.as_of_us is not None else now_us
    clock = clock_sql(as_of, local_day(local_date(as_of, query.tz), query.tz))
    entities = _entity_paths(reader, query.entity, scopes) if query.entity is not None else None
    if query.group is Group.SOURCE:
        assert entities is not None, "checked by the caller"
        return _by_source(reader, query, scopes, entities, as_of, clock, first, offset)
    active = query.eligibility is Eligibility.ACTIVE
    scan = _Scan(
        _candidates(query, entities),
        scopes,
        ["active", "superseded"],
        query.kind,
        valid_at=query.as_of_us if active else None,
    )
    raw = _raw(reader, scan, clock, descending=query.descending)
    occurrence_time = query.time_field is TimeField.OCCURRED_AT
    # A stand-in is a claim: a query for one type (a meeting, say) keeps its own records.
    stand_in = occurrence_time and query.kind is None
    valid_at = scan.valid_at
    if stand_in:
        raw = _drop_standing(reader, raw, scopes, entities or (), valid_at)
    direct, after = _replace_superseded(reader, raw, scan, clock, query, active)
    bounds = (query.since_us, query.until_us) if occurrence_time else None
    degraded = _recurrence_degraded(reader, direct, scan, bounds, entities)
    page = _page(direct, after, offset, first)
    _show(reader, scan.candidates, page)
    if stand_in:
        _stand_in(reader, page, scopes, entities or (), valid_at, clock)
    local = local_date(as_of, query.tz)
    return _result(reader, direct, after, page, query, as_of, local, offset, degraded)


def chronicle_day(
    reader: Reader,
    day: LocalDay,
    scopes: Sequence[str],
    *,
    on: date,
    kind: str | None,
    include_partial: bool,
    tz: str,
    now_us: int,
    first: int,
    offset: int = 0,
) -> Timeline:
    """Everything that occurred on a local day (or week), recurrences expanded.

    Instants match the zone's local day; date-only values match their calendar dates (the
    same in every zone); month and year values only with `include_partial`. `on` is the date
    asked for (any day of the week), echoed as the result's local date.
    """
    lo, hi = min(day.start_us, day.floating_start_us), max(day.end_us, day.floating_end_us)
    exact = (
        "(c.recurring = 0 OR c.idx >= 0) AND ("
        f"c.precision = 'instant' AND c.start < {day.end_us} AND (c.stop > {day.start_us}"
        f" OR c.stop = c.start AND c.start >= {day.start_us})"
        f" OR c.precision <> 'instant' AND c.start < {day.floating_end_us}"
        f" AND c.stop > {day.floating_start_us}"
        f" AND (c.precision = 'day' OR {int(include_partial)}))"
    )
    query = TimelineQuery(kind=kind, tz=tz)
    candidates = _window(lo, hi, exact)
    return _chronicle(reader, candidates, query, scopes, on, (lo, hi), now_us, first, offset)


def chronicle_since(
    reader: Reader,
    since_us: int,
    until_us: int | None,
    scopes: Sequence[str],
    *,
    kind: str | None,
    tz: str,
    now_us: int,
    first: int,
    offset: int = 0,
) -> Timeline:
    """Occurrence-time range, oldest first, compared in UTC with inclusive bounds."""
    query = TimelineQuery(kind=kind, since_us=since_us, until_us=until_us, tz=tz)
    candidates = _candidates(query, None)
    today = local_date(now_us, tz)
    bounds = (since_us, until_us)
    return _chronicle(reader, candidates, query, scopes, today, bounds, now_us, first, offset)


def last_seen(
    reader: Reader, entity: str, scopes: Sequence[str], *, bound_us: int, now_us: int, tz: str
) -> LastSeen:
    """The latest occurrence at or before `bound_us` of a record associated with `entity`.

    Ties go to the greatest record id. An entity that is not an eligible record here is
    `entity_missing`; one with nothing dated is `no_dated_association`.
    """
    paths = _entity_paths(reader, entity, scopes, strict=False)
    if not paths:
        return LastSeen(None, "entity_missing")
    # Occurrences of recurring records (as far as materialised) and anchors of the others.
    assoc, params = _associated(paths)
    candidates = _Sql(
        f"SELECT {_SPANS} FROM spans WHERE path IN ({assoc}) AND start <= {int(bound_us)}"
        " AND (recurring = 0 OR idx >= 0)",
        params,
    )
    clock = clock_sql(now_us, local_day(local_date(now_us, tz), tz))
    scan = _Scan(candidates, scopes, ["active"])
    raw = _drop_standing(reader, _raw(reader, scan, clock, descending=True), scopes, paths, None)
    if not raw:
        return LastSeen(None, "no_dated_association")
    rows = [_Row(*raw[0])]
    _stand_in(reader, rows, scopes, paths, None, clock)
    _show(reader, candidates, rows)
    query = TimelineQuery(entity=entity, include_sources=True, tz=tz)
    return LastSeen(_entries(reader, rows[:1], query)[0], None)


def occurrences(
    reader: Reader, record_id: str, scopes: Sequence[str], *, since_us: int, until_us: int, tz: str
) -> Occurrences:
    """The occurrences of a record overlapping `[since_us, until_us]`, expanded in its zone.

    A record without a recurrence has one occurrence, its own; one without `occurred_at` none.
    `local` is in the record's zone, or in `tz` when the record has none.
    """
    record = reader.record(record_id, scopes)
    if record is None:
        return Occurrences(None, [], ())
    ref = RecordRef(record.id, record.kind, record.type, record.title)
    anchor = record.dates.get("occurred_at")
    if anchor is None:
        return Occurrences(ref, [], ())
    found, truncated = _expand(record, anchor, since_us, until_us)
    zone = timezone(record.timezone or tz)
    found = [
        o
        if o.floating or (o.local and record.timezone)
        else replace(o, local=instant(o.start_us).astimezone(zone).isoformat())
        for o in found
    ]
    return Occurrences(ref, found, ("recurrence_truncated",) if truncated else ())


def _expand(
    record: Record, anchor: DateValue, since_us: int, until_us: int
) -> tuple[list[Occurrence], bool]:
    """The record's occurrences in range: its recurrence set, or its own interval alone."""
    ends = record.dates.get("ends_at")
    if record.recurrence is not None or record.rdates:
        try:
            return RecurrenceSet.of(
                anchor=anchor,
                rule=record.recurrence,
                exdates=record.exdates,
                rdates=record.rdates,
                tz=record.timezone,
                ends=ends,
            ).between(since_us, until_us, limit=RESPONSE_OCCURRENCES)
        except AlmanacError:
            pass  # reported as invalid_recurrence at reconcile: the anchor alone stands
    stop = max(ends.end_us, anchor.end_us) if ends is not None else anchor.end_us
    if anchor.start_us > until_us or not (stop > since_us or anchor.start_us >= since_us):
        return [], False
    floating = anchor.precision is not DatePrecision.INSTANT
    local = anchor.text[:10] if floating else ""
    return [Occurrence(0, anchor.start_us, stop, local, floating)], False


# -- candidates -----------------------------------------------------------------------------


def _window(lo: int | None, hi: int | None, exact: str) -> _Sql:
    """Spans passing `exact` inside `[lo, hi]`: one index range per width tier.

    Within a tier a row is at most `width` long, so a row overlapping `[lo, hi]` starts after
    `lo - width`; the last tier (over a year) has no such bound.
    """
    parts: list[str] = []
    for tier, width in enumerate(TIER_WIDTHS):
        where = [f"tier = {tier}"]
        if hi is not None:
            where.append(f"start <= {int(hi)}")
        if lo is not None and width is not None:
            where.append(f"start >= {int(lo) - width}")
        parts.append(f"SELECT {_SPANS} FROM spans WHERE {' AND '.join(where)}")
    return _Sql(f"SELECT * FROM ({' UNION ALL '.join(parts)}) c WHERE {exact}", [])


def _candidates(query: TimelineQuery, entities: Sequence[str] | None) -> _Sql:
    """Rows with a value in the time field, inside the query's range, of the entity if any."""
    since, until = query.since_us, query.until_us
    exact = _overlap(since, until)
    assoc, params = _associated(entities) if entities is not None else ("", [])
    if query.time_field is TimeField.OCCURRED_AT:
        # A closed range expands recurrences; an open one reads anchors (SPEC "Recurrence").
        closed = since is not None and until is not None
        exact += " AND (c.recurring = 0 OR c.idx >= 0)" if closed else " AND c.idx = -1"
        if entities is None:
            return _window(since, until, exact)
        sql = f"SELECT * FROM (SELECT {_SPANS} FROM spans WHERE path IN ({assoc})) c"
        return _Sql(f"{sql} WHERE {exact} AND c.start IS NOT NULL", params)
    source = f"{_BY_DATE} FROM dates d JOIN spans a ON a.path = d.path AND a.idx = -1"
    source += " WHERE d.field = ?"
    head: list[object] = [query.time_field.value]
    if entities is not None:
        source += f" AND d.path IN ({assoc})"
        head += params
    return _Sql(f"SELECT * FROM ({source}) c WHERE {exact}", head, query.time_field)


def _overlap(since: int | None, until: int | None) -> str:
    """Overlap with the inclusive range `[since, until]`; an instant matches itself."""
    clauses = ["1"]
    if since is not None:
        clauses.append(f"(c.stop > {int(since)} OR c.stop = c.start AND c.start >= {int(since)})")
    if until is not None:
        clauses.append(f"c.start <= {int(until)}")
    return " AND ".join(clauses)


def _anchors(paths: Iterable[str], field: TimeField = TimeField.OCCURRED_AT) -> _Sql:
    """The anchor row of each path, valued by `field` (NULL start when it has none)."""
    wanted = json.dumps(sorted(set(paths)))
    if field is TimeField.OCCURRED_AT:
        sql = f"SELECT {_SPANS} FROM spans WHERE path IN (SELECT value FROM json_each(?))"
        return _Sql(sql + " AND idx = -1", [wanted])
    return _Sql(
        f"{_BY_DATE} FROM spans a LEFT JOIN dates d ON d.path = a.path AND d.field = ?"
        " WHERE a.path IN (SELECT value FROM json_each(?)) AND a.idx = -1",
        [field.value, wanted],
        field,
    )


def _entity_paths(
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


def _associated(entities: Sequence[str]) -> tuple[str, list[object]]:
    """A subquery of the paths associated with the entities, and its parameters.

    `entities`, `owner`, relationship endpoints and claim subjects that resolve to an entity,
    and the sources of its eligible claims and relationships (table `sources`); never body
    links (co-mentions), never the entity itself.
    """
    among = marks(entities)
    # UNION ALL: the IN (...) that reads this subquery keeps each path once anyway.
    sql = (
        f"SELECT path FROM targets WHERE resolved_path IN ({among})"
        " AND field IN ('entities', 'owner', 'from', 'to', 'subject')"
        f" AND path NOT IN ({among})"
        " UNION ALL SELECT source FROM sources"
        f" WHERE entity IN ({among}) AND eligible = 1 AND source NOT IN ({among})"
    )
    return sql, [*entities, *entities, *entities, *entities]


# -- replacements ---------------------------------------------------------------------------


def _drop_standing(
    reader: Reader,
    rows: list[Raw],
    scopes: Sequence[str],
    entities: Sequence[str],
    valid_at: int | None,
) -> list[Raw]:
    """Rows without the `source_event` claims that stand for a source in the result."""
    claims = [r[_PATH] for r in rows if r[_SOURCE_EVENT]]
    if not claims:
        return rows
    sources = {
        r[0]
        for r in reader.run(
            "SELECT resolved_path FROM targets WHERE field = 'source'"
            " AND path IN (SELECT value FROM json_each(?))",
            [json.dumps(claims)],
        )
    }
    found = sources & {r[_PATH] for r in rows}
    gone = set(_chosen(reader, found, scopes, entities, valid_at).values())
    return [r for r in rows if r[_PATH] not in gone] if gone else rows


def _stand_in(
    reader: Reader,
    page: Sequence[_Row],
    scopes: Sequence[str],
    entities: Sequence[str],
    valid_at: int | None,
    clock: str,
) -> None:
    """Let `source_event` claims stand for the source meetings of a page (SPEC "Timeline")."""
    chosen = _chosen(reader, {r.path for r in page}, scopes, entities, valid_at)
    if not chosen:
        return
    scan = _Scan(_anchors(chosen.values()), scopes, ["active"], valid_at=valid_at)
    claims = {r.path: r for r in _fetch(reader, scan, clock)}
    for row in page:
        row.standing = claims.get(chosen.get(row.path, ""))


def _chosen(
    reader: Reader,
    sources: set[str],
    scopes: Sequence[str],
    entities: Sequence[str],
    valid_at: int | None,
) -> dict[str, str]:
    """The `source_event` claim standing for each of `sources` that has one.

    Several claims for one source: the one about the entity, then the smallest id. Under an
    `asOf` validity filter, only claims valid then stand in.
    """
    if not sources:
        return {}
    about = set()
    if entities:
        about = {
            r[0]
            for r in reader.run(
                "SELECT path FROM targets WHERE field = 'subject'"
                f" AND resolved_path IN ({marks(entities)})",
                list(entities),
            )
        }
    sql = (
        "SELECT s.resolved_path, s.path, a.id FROM targets s"
        " JOIN spans a ON a.path = s.path AND a.idx = -1"
        " WHERE s.field = 'source' AND s.resolved_path IN (SELECT value FROM json_each(?))"
        " AND a.source_event = 1 AND a.eligible = 1 AND a.lifecycle = 'active'"
        f" AND a.scope IN ({marks(scopes)})"
    )
    if valid_at is not None:
        a = int(valid_at)
        sql += f" AND coalesce(a.valid_from <= {a}, 1) AND coalesce({a} < a.valid_until, 1)"
    found: dict[str, list[tuple[int, str, str]]] = {}
    for source, path, claim_id in reader.run(sql, [json.dumps(sorted(sources)), *scopes]):
        found.setdefault(source, []).append((int(path not in about), claim_id, path))
    return {source: min(options)[2] for source, options in found.items()}


def _replace_superseded(
    reader: Reader,
    rows: list[Raw],
    scan: _Scan,
    clock: str,
    query: TimelineQuery,
    active: bool,
) -> tuple[list[Raw], list[_Row]]:
    """The direct matches, and after them the current records of superseded matches.

    Only an `ACTIVE` query replaces (each current record once); one that includes inactive
    records lists superseded ones among the direct matches. A chain that reaches a missing,
    withdrawn or filtered-out record, or loops, gives nothing; a current record that is a
    direct match is not listed twice (SPEC section 3).
    """
    if not active:
        return rows, []
    superseded = [_Row(*r) for r in rows if r[_LIFECYCLE] != "active"]
    if not superseded:
        return rows, []
    direct = [r for r in rows if r[_LIFECYCLE] == "active"]
    listed = {r[_PATH] for r in direct}
    out: list[_Row] = []
    for row in superseded:
        current = _follow(reader, row.path, scan, clock, query.time_field)
        if current is None or current.path in listed:
            continue
        listed.add(current.path)
        current.via = row
        out.append(current)
    return direct, out


def _page(direct: list[Raw], after: list[_Row], offset: int, first: int) -> list[_Row]:
    """Rows `offset` to `offset + first` of the direct matches followed by the replacements."""
    page = [_Row(*r) for r in direct[offset : offset + first]]
    start = max(0, offset - len(direct))
    return page + after[start : start + first - len(page)]


def _follow(reader: Reader, path: str, scan: _Scan, clock: str, field: TimeField) -> _Row | None:
    """The active record at the end of `path`'s `superseded_by` chain, if it passes `scan`."""
    seen = {path}
    while True:
        found = reader.run(
            "SELECT resolved_path FROM targets WHERE path = ? AND field = 'superseded_by'",
            [path],
        ).fetchone()
        if found is None or found[0] is None or found[0] in seen:
            return None
        path = found[0]
        seen.add(path)
        step = replace(scan, candidates=_anchors([path], field))
        rows = _fetch(reader, step, clock)
        if not rows:
            return None
        if rows[0].lifecycle == "active":
            # Rows are records with a value in the time field: one without none stands in.
            return rows[0] if rows[0].start is not None else None


# -- results --------------------------------------------------------------------------------


def _chronicle(
    reader: Reader,
    candidates: _Sql,
    query: TimelineQuery,
    scopes: Sequence[str],
    on: date,
    bounds: tuple[int | None, int | None],
    now_us: int,
    first: int,
    offset: int,
) -> Timeline:
    clock = clock_sql(now_us, local_day(local_date(now_us, query.tz), query.tz))
    scan = _Scan(candidates, scopes, ["active", "superseded"], query.kind)
    raw = _raw(reader, scan, clock)
    if query.kind is None:
        raw = _drop_standing(reader, raw, scopes, (), None)
    direct, after = _replace_superseded(reader, raw, scan, clock, query, True)
    degraded = _recurrence_degraded(reader, direct, scan, bounds, None)
    page = _page(direct, after, offset, first)
    _show(reader, scan.candidates, page)
    if query.kind is None:
        _stand_in(reader, page, scopes, (), None, clock)
    return _result(reader, direct, after, page, query, now_us, on, offset, degraded)


def _result(
    reader: Reader,
    direct: list[Raw],
    after: list[_Row],
    page: list[_Row],
    query: TimelineQuery,
    as_of: int,
    on: date,
    offset: int,
    degraded: set[str],
) -> Timeline:
    counts = Counter(r[_CLOCK] for r in direct)
    counts.update(r.clock for r in after)
    total = len(direct) + len(after)
    end = offset + len(page)
    return Timeline(
        entries=_entries(reader, page, query),
        total=total,
        next_offset=end if end < total else None,
        as_of_us=as_of,
        local_date=on,
        clock_counts=tuple((c, counts.get(c.value, 0)) for c in Clock),
        degraded=tuple(sorted(degraded)),
    )


def _recurrence_degraded(
    reader: Reader,
    rows: Sequence[Raw],
    scan: _Scan,
    bounds: tuple[int | None, int | None] | None,
    entities: Sequence[str] | None,
) -> set[str]:
    """`recurrence_unbounded` / `recurrence_truncated` of an occurrence-time result.

    Truncated: a recurring record in the query's reach goes on past its materialised
    occurrences (`PER_RECORD`) before the range ends.
    """
    if bounds is None or bounds == (None, None):
        return set()  # an unbounded query returns the anchors, as it says it does
    since, until = bounds
    if since is None or until is None:
        return {"recurrence_unbounded"} if any(r[_RECURRING] for r in rows) else set()
    if any(r[_MORE] for r in rows):
        return {"recurrence_truncated"}
    # Sets that go on past their materialised occurrences are rare: find them by the partial
    # index first, then check they are within the query's reach.
    sql = (
        "SELECT path FROM spans WHERE more = 1 AND start <= ? AND eligible = 1"
        f" AND scope IN ({marks(scan.scopes)})"
    )
    params: list[object] = [until, *scan.scopes]
    if scan.kind is not None:
        sql += " AND type = ?"
        params.append(scan.kind)
    cut = {r[0] for r in reader.run(sql, params)}
    if cut and entities is not None:
        assoc, assoc_params = _associated(entities)
        cut &= {r[0] for r in reader.run(assoc, assoc_params)}
    return {"recurrence_truncated"} if cut else set()


def _entries(reader: Reader, rows: Sequence[_Row], query: TimelineQuery) -> list[Entry]:
    shown = [row.standing or row for row in rows]
    vias = [r.via.path for r in rows if r.via is not None]
    refs = _details(reader, [r.path for r in rows] + [r.path for r in shown] + vias)
    sources = _sources(reader, shown) if query.include_sources else {}
    entries = []
    for row, record in zip(rows, shown, strict=True):
        source = refs[row.path][0] if row.standing is not None else None
        extra = sources.get(record.path, ())
        if source is not None and source not in extra:
            extra = (source, *extra)
        ref, locator = refs[record.path]
        entries.append(
            Entry(
                record=ref,
                date=row.value,
                occurrence=row.occurrence(),
                clock=_CLOCKS[row.clock],
                locator=locator,
                summary=_body(reader, record.path) if row.standing is not None else None,
                via=refs[row.via.path][0] if row.via is not None else None,
                source=source,
                sources=extra if query.include_sources else (),
            )
        )
    return entries


def _details(reader: Reader, paths: Iterable[str]) -> dict[str, tuple[RecordRef, Locator]]:
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


def _sources(reader: Reader, rows: Iterable[_Row]) -> dict[str, tuple[RecordRef, ...]]:
    """The resolved, eligible `source` of each row's record."""
    found: dict[str, list[RecordRef]] = {}
    sql = (
        "SELECT t.path, n.id, n.kind, n.type, n.title FROM targets t"
        " JOIN notes n ON n.path = t.resolved_path AND n.eligible = 1"
        " WHERE t.field = 'source' AND t.path IN (SELECT value FROM json_each(?))"
        " ORDER BY t.path, n.id"
    )
    for path, rid, kind, rtype, title in reader.run(
        sql, [json.dumps(sorted({r.path for r in rows}))]
    ):
        ref = RecordRef(rid, RecordKind(kind), rtype, title)
        if ref not in found.setdefault(path, []):
            found[path].append(ref)
    return {p: tuple(refs) for p, refs in found.items()}


def _body(reader: Reader, path: str) -> str | None:
    row = reader.run("SELECT body FROM notes WHERE path = ?", [path]).fetchone()
    return row[0].strip() if row else None


# -- group: SOURCE --------------------------------------------------------------------------


def _by_source(
    reader: Reader,
    query: TimelineQuery,
    scopes: Sequence[str],
    entities: Sequence[str],
    as_of: int,
    clock: str,
    first: int,
    offset: int,
) -> Timeline:
    """`group: SOURCE`: one row per dated source of the entity's claims and relationships.

    Records that name the entity directly (`entities`, `owner`) are sources of their own.
    A claim without a dated source, or dated on another local day than its source, keeps its
    own row; undated claims come last. Sources are read at their anchors.
    """
    data = json.dumps(list(entities))
    active = query.eligibility is Eligibility.ACTIVE
    lifecycles = ["active"] if active else ["active", "superseded"]
    # The entity's claims and relationships (a record's kind follows from its type).
    evidence = reader.run(
        "SELECT t.path, n.type, n.source_event, s.resolved_path FROM targets t"
        " JOIN spans n ON n.path = t.path AND n.idx = -1 AND n.eligible = 1"
        f" AND n.lifecycle IN ({marks(lifecycles)}) AND n.scope IN ({marks(scopes)})"
        " AND n.type IN ('claim', 'relationship')"
        " LEFT JOIN targets s ON s.path = t.path AND s.field = 'source'"
        " WHERE t.resolved_path IN (SELECT value FROM json_each(?))"
        " AND t.field IN ('from', 'to', 'subject') ORDER BY t.path",
        [*lifecycles, *scopes, data],
    ).fetchall()
    direct = {
        r[0]
        for r in reader.run(
            "SELECT path FROM targets WHERE resolved_path IN (SELECT value FROM json_each(?))"
            " AND field IN ('entities', 'owner')",
            [data],
        )
    }
    # Every path these name is associated with the entity: read the anchors by that subquery.
    assoc, params = _associated(entities)
    anchors = _Sql(f"SELECT {_SPANS} FROM spans WHERE path IN ({assoc}) AND idx = -1", params)
    scan = _Scan(anchors, scopes, lifecycles, valid_at=query.as_of_us if active else None)
    rows = {r.path: r for r in _fetch(reader, scan, clock)}
    by_source = {p: rows[p] for p in sorted(direct) if p in rows and rows[p].value is not None}
    notes: dict[str, list[str]] = {}
    events: dict[str, list[str]] = {}
    claims: Counter[str] = Counter()
    own: list[_Row] = []
    for path, kind, source_event, source in evidence:
        row, src = rows.get(path), rows.get(source) if source else None
        if row is None:
            continue
        if src is None or src.value is None or not _same_days(row, src, query.tz):
            if kind == "claim" or row.value is not None:
                own.append(row)
            continue
        by_source[src.path] = src
        if kind == "relationship":
            notes.setdefault(src.path, []).append(path)
        else:
            claims[src.path] += 1
            if source_event:
                events.setdefault(src.path, []).append(path)
    listed = [r for r in by_source.values() if _in_range(r, query)]
    listed += [r for r in own if r.value is not None and _in_range(r, query)]
    listed.sort(key=_Row.key, reverse=query.descending)
    listed += sorted((r for r in own if r.value is None), key=lambda r: (r.id, r.scope))
    total = len(listed)
    page = listed[offset : offset + first]
    plain = _entries(reader, page, query)
    entries = []
    for row, entry in zip(page, plain, strict=True):
        if row.path not in by_source:
            entries.append(entry)
            continue
        note = min(notes.get(row.path, []), key=lambda p: rows[p].id, default=None)
        event = min(events.get(row.path, []), key=lambda p: rows[p].id, default=None)
        summary = note or event
        entries.append(
            replace(
                entry,
                summary=_body(reader, summary) if summary else None,
                source=entry.record,
                note=_details(reader, [note])[note][0] if note else None,
                claims=claims[row.path],
                links=_links(reader, summary) if summary else (),
                sources=(entry.record,) if query.include_sources else (),
            )
        )
    counts = Counter(r.clock for r in listed)
    return Timeline(
        entries=entries,
        total=total,
        next_offset=offset + first if offset + first < total else None,
        as_of_us=as_of,
        local_date=local_date(as_of, query.tz),
        clock_counts=tuple((c, counts.get(c.value, 0)) for c in Clock),
        degraded=(),
    )


def _same_days(row: _Row, source: _Row, tz: str) -> bool:
    """Whether a claim dated by itself falls within its source's local dates (undated: yes)."""
    if row.value is None:
        return True
    assert source.value is not None
    first, last = _local_dates(source.value, source.stop or source.value.end_us, tz)
    mine = _local_dates(row.value, row.stop or row.value.end_us, tz)
    return first <= mine[0] and mine[1] <= last


def _local_dates(value: DateValue, stop: int, tz: str) -> tuple[date, date]:
    """The first and last local dates of `[value.start, stop)` (floating dates as written)."""
    last_us = max(stop - 1, value.start_us)
    if value.precision is DatePrecision.INSTANT:
        return local_date(value.start_us, tz), local_date(last_us, tz)
    return _utc_date(value.start_us), _utc_date(last_us)


def _utc_date(us: int) -> date:
    return date.fromordinal(min(us // _DAY_US + 719_163, date.max.toordinal()))


def _in_range(row: _Row, query: TimelineQuery) -> bool:
    if row.value is None:
        return False
    start, stop = row.value.start_us, row.stop if row.stop is not None else row.value.end_us
    if query.until_us is not None and start > query.until_us:
        return False
    return query.since_us is None or stop > query.since_us or start == stop >= query.since_us


def _links(reader: Reader, path: str) -> tuple[RecordRef, ...]:
    """The body links of `path` that resolve to an eligible record of its own scope."""
    rows = reader.run(
        "SELECT n.id, n.kind, n.type, n.title FROM targets t"
        " JOIN notes o ON o.path = t.path"
        " JOIN notes n ON n.path = t.resolved_path AND n.eligible = 1 AND n.scope = o.scope"
        " WHERE t.path = ? AND t.field = 'link' ORDER BY t.line, t.ord",
        [path],
    )
    out: list[RecordRef] = []
    for rid, kind, rtype, title in rows:
        ref = RecordRef(rid, RecordKind(kind), rtype, title)
        if ref not in out:
            out.append(ref)
    return tuple(out)
