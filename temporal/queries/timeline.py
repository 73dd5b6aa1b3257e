"""What happened, when: timelines, chronicle days and ranges, last-seen, over one read transaction.

Each query is one straight path: its plan and its SQL here, its rows listed and read
(temporal/queries/listing.py, through the store), its page made entries
(temporal/queries/rows.py) or grouped by source (temporal/queries/grouping.py).

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
from dataclasses import dataclass
from datetime import date

from almanac.temporal.calendar import (
    ClockRelation,
    LocalDay,
    clock_params,
    distance_params,
    local_date,
    local_day,
    wall_us,
)
from almanac.temporal.queries.grouping import by_source
from almanac.temporal.queries.listing import Page, latest, listing_page
from almanac.temporal.queries.rows import (
    BY_DATE,
    Eligibility,
    Expr,
    Scan,
    Sql,
    Timeline,
    TimelineEntry,
    TimelineGroup,
    TimelineQuery,
    build_entries,
)
from almanac.temporal.records import TimeField
from almanac.temporal.store import SPANS, TIER_WIDTHS, Reader, marks
from almanac.vault import NotFound

__all__ = [
    "LastSeen",
    "association_sql",
    "chronicle_day",
    "chronicle_since",
    "entity_paths",
    "entity_rows",
    "last_seen",
    "timeline",
]


@dataclass(frozen=True, slots=True)
class LastSeen:
    """The latest dated association of an entity, or why there is none."""

    entry: TimelineEntry | None
    reason: str | None


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
        anchors = entity_anchors(entities)
        return by_source(reader, query, scopes, entities, anchors, as_of, clock, first, offset)
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
    found = listing_page(
        reader,
        scan,
        clock,
        offset=offset,
        first=first,
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
    return _result(reader, found, scan, query, entities, bounds, as_of, local, offset, first)


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
    row = latest(reader, scan, clock, paths)
    if row is None:
        return LastSeen(None, "no_dated_association")
    query = TimelineQuery(entity=entity, include_sources=True, tz=tz)
    return LastSeen(build_entries(reader, [row], query)[0], None)


# -- SQL -----------------------------------------------------------------------------------


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
    found = listing_page(
        reader, scan, clock, offset=offset, first=first, stand_ins=stand_ins, active=True
    )
    return _result(reader, found, scan, query, None, bounds, now_us, on, offset, first)


def _clock(as_of_us: int, tz: str) -> Expr:
    """The clock relation of a row at `as_of_us` in zone `tz` (`clock_params`), bound."""
    return Expr(*clock_params(as_of_us, local_day(local_date(as_of_us, tz), tz)))


def _result(
    reader: Reader,
    found: Page,
    scan: Scan,
    query: TimelineQuery,
    entities: Sequence[str] | None,
    bounds: tuple[int | None, int | None] | None,
    as_of: int,
    on: date,
    offset: int,
    first: int,
) -> Timeline:
    """One page of a listing made entries, and what describes the whole."""
    degraded = _recurrence_degraded(reader, found, scan, bounds, entities)
    counts, total = found.counts, found.total
    end = offset + len(found.rows)
    return Timeline(
        entries=build_entries(reader, found.rows, query),
        total=total,
        next_offset=end if end < total else None,
        as_of_us=as_of,
        local_date=on,
        clock_counts=tuple((c, counts.get(c.value, 0)) for c in ClockRelation),
        degraded=tuple(sorted(degraded)),
    )


def _recurrence_degraded(
    reader: Reader,
    found: Page,
    scan: Scan,
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
