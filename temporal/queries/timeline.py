"""What happened, when: timelines, chronicle days and ranges, last-seen, over one read transaction.

A time query is a *candidate* query over `spans` (occurrence time; `dates` joined with the
anchor row for the other time fields), through an index: a width tier and a start range, or
the paths associated with an entity. A `spans` row carries its record's filters and clock
inputs, so SQLite computes each row's clock relation, counts the rows and reads one page of
them (temporal/queries/listing.py); the rare rows read whole are those of two replacements (a
`source_event` claim stands for its source meeting; an `ACTIVE` query that matches a superseded
record lists its current record after the direct matches). Full entries are built for the page.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import date

from temporal.calendar import (
    ClockRelation,
    DatePrecision,
    DateValue,
    LocalDay,
    Occurrence,
    RecurrenceSet,
    clock_params,
    distance_params,
    instant,
    local_date,
    local_day,
    timezone,
    wall_us,
)
from temporal.queries.grouping import by_source
from temporal.queries.listing import Listing, first_standing, listing, stand_in
from temporal.queries.rows import (
    Eligibility,
    Expr,
    Scan,
    Sql,
    Timeline,
    TimelineEntry,
    TimelineGroup,
    TimelineQuery,
    association_sql,
    build_entries,
    candidate_sql,
    entity_paths,
    entity_rows,
    show_values,
    window_sql,
)
from temporal.records import Record, RecordRef, TimeField
from temporal.store import Reader, marks
from vault import AlmanacError

__all__ = [
    "RESPONSE_OCCURRENCES",
    "LastSeen",
    "Occurrences",
    "chronicle_day",
    "chronicle_since",
    "last_seen",
    "occurrences",
    "timeline",
]

# Occurrences one `occurrences` response expands (materialised ones: temporal.spans.PER_RECORD).
RESPONSE_OCCURRENCES = 10_000


@dataclass(frozen=True, slots=True)
class LastSeen:
    """The latest dated association of an entity, or why there is none."""

    entry: TimelineEntry | None
    reason: str | None


@dataclass(frozen=True, slots=True)
class Occurrences:
    """The occurrences of one record inside a closed range."""

    record: RecordRef | None
    occurrences: list[Occurrence]
    degraded: tuple[str, ...]


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
    """`timeline` of SPEC section 5: dated records, of one entity if asked, in order.

    The rows are those of every clock relation, ordered (by start, or for `nearest` by their
    distance to `asOf`, then start); `query.clocks` then keeps those of some relations, and the
    clock counts still count every row.
    """
    as_of = query.as_of_us if query.as_of_us is not None else now_us
    clock = _clock(as_of, query.tz)
    entities = entity_paths(reader, query.entity, scopes) if query.entity is not None else None
    if query.group is TimelineGroup.SOURCE:
        assert entities is not None, "checked by the caller"
        return by_source(reader, query, scopes, entities, as_of, clock, first, offset)
    keep = {c.value for c in query.clocks} if query.clocks is not None else None
    nearness = Expr(*distance_params(as_of, wall_us(as_of, query.tz))) if query.nearest else None
    active = query.eligibility is Eligibility.ACTIVE
    scan = Scan(
        candidate_sql(query, entities),
        scopes,
        ["active", "superseded"],
        query.kind,
        valid_at=query.as_of_us if active else None,
    )
    occurrence_time = query.time_field is TimeField.OCCURRED_AT
    # A stand-in is a claim: a query for one type (a meeting, say) keeps its own records.
    stand_ins = occurrence_time and query.kind is None
    found = listing(
        reader,
        scan,
        clock,
        descending=query.descending and not query.nearest,
        stand_ins=stand_ins,
        active=active,
        entities=entities or (),
        field=query.time_field,
        keep=keep,
        nearness=nearness,
    )
    bounds = (query.since_us, query.until_us) if occurrence_time else None
    local = local_date(as_of, query.tz)
    return _result(reader, found, query, stand_ins, entities, bounds, as_of, local, offset, first)


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
    exact = Expr(
        "(c.recurring = 0 OR c.idx >= 0) AND ("
        "c.precision = 'instant' AND c.start < ? AND (c.stop > ?"
        " OR c.stop = c.start AND c.start >= ?)"
        " OR c.precision <> 'instant' AND c.start < ? AND c.stop > ?"
        " AND (c.precision = 'day' OR ?))",
        (
            day.end_us,
            day.start_us,
            day.start_us,
            day.floating_end_us,
            day.floating_start_us,
            int(include_partial),
        ),
    )
    query = TimelineQuery(kind=kind, tz=tz)
    candidates = window_sql(lo, hi, exact)
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
    candidates = candidate_sql(query, None)
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
    paths = entity_paths(reader, entity, scopes, strict=False)
    if not paths:
        return LastSeen(None, "entity_missing")
    # Occurrences of recurring records (as far as materialised) and anchors of the others.
    found = entity_rows(paths, expand=True)
    candidates = Sql(
        f"SELECT * FROM ({found.sql}) c WHERE c.start <= ? AND (c.recurring = 0 OR c.idx >= 0)",
        [*found.params, int(bound_us)],
    )
    clock = _clock(now_us, tz)
    scan = Scan(candidates, scopes, ["active"])
    latest = first_standing(reader, scan, clock, paths)
    if latest is None:
        return LastSeen(None, "no_dated_association")
    rows = [latest]
    stand_in(reader, rows, scopes, paths, None, clock)
    show_values(reader, candidates, rows)
    query = TimelineQuery(entity=entity, include_sources=True, tz=tz)
    return LastSeen(build_entries(reader, rows[:1], query)[0], None)


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


# -- results --------------------------------------------------------------------------------


def _chronicle(
    reader: Reader,
    candidates: Sql,
    query: TimelineQuery,
    scopes: Sequence[str],
    on: date,
    bounds: tuple[int | None, int | None],
    now_us: int,
    first: int,
    offset: int,
) -> Timeline:
    clock = _clock(now_us, query.tz)
    scan = Scan(candidates, scopes, ["active", "superseded"], query.kind)
    stand_ins = query.kind is None
    found = listing(reader, scan, clock, stand_ins=stand_ins, active=True)
    return _result(reader, found, query, stand_ins, None, bounds, now_us, on, offset, first)


def _clock(as_of_us: int, tz: str) -> Expr:
    """The clock relation of a row at `as_of_us` in zone `tz` (`clock_params`), bound."""
    return Expr(*clock_params(as_of_us, local_day(local_date(as_of_us, tz), tz)))


def _result(
    reader: Reader,
    found: Listing,
    query: TimelineQuery,
    stand_ins: bool,
    entities: Sequence[str] | None,
    bounds: tuple[int | None, int | None] | None,
    as_of: int,
    on: date,
    offset: int,
    first: int,
) -> Timeline:
    """One page of a listing with its values and stand-ins, and what describes the whole."""
    degraded = _recurrence_degraded(reader, found, bounds, entities)
    page = found.page(offset, first)
    scan = found.scan
    show_values(reader, scan.candidates, page)
    if stand_ins:
        stand_in(reader, page, scan.scopes, entities or (), scan.valid_at, found.clock)
    counts, total = found.counts, found.total
    end = offset + len(page)
    return Timeline(
        entries=build_entries(reader, page, query),
        total=total,
        next_offset=end if end < total else None,
        as_of_us=as_of,
        local_date=on,
        clock_counts=tuple((c, counts.get(c.value, 0)) for c in ClockRelation),
        degraded=tuple(sorted(degraded)),
    )


def _recurrence_degraded(
    reader: Reader,
    found: Listing,
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
        return {"recurrence_unbounded"} if found.recurring else set()
    if found.more:
        return {"recurrence_truncated"}
    # Sets that go on past their materialised occurrences are rare: find them by the partial
    # index first, then check they are within the query's reach.
    scan = found.scan
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
        assoc, assoc_params = association_sql(entities)
        cut &= {r[0] for r in reader.run(assoc, assoc_params)}
    return {"recurrence_truncated"} if cut else set()
