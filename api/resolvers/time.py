from __future__ import annotations

import strawberry

from almanac import temporal
from almanac.api.args import (
    bound_us,
    decode_offset,
    decode_position,
    encode_cursor,
    optional_bound_us,
    page_size,
    source_grouping,
    time_range,
    zone,
)
from almanac.api.context import Context, Info
from almanac.api.types.common import PageInfo, RecordRef
from almanac.api.types.time import (
    ClockCount,
    LastSeenResult,
    Occurrence,
    OccurrenceResult,
    Order,
    TimelineEntry,
    TimelineResult,
)
from almanac.temporal import ClockRelation, Eligibility, TimeField, TimelineGroup
from almanac.vault import InvalidCursor

__all__ = ["chronicle_day", "chronicle_last_seen", "chronicle_since", "occurrences", "timeline"]


def timeline(
    info: Info,
    entity: strawberry.ID | None = None,
    kind: str | None = None,
    time_field: TimeField | None = TimeField.OCCURRED_AT,
    since: str | None = None,
    until: str | None = None,
    order: Order | None = Order.ASC,
    eligibility: Eligibility | None = Eligibility.ACTIVE,
    group: TimelineGroup | None = TimelineGroup.NONE,
    include_sources: bool | None = False,
    as_of: str | None = None,
    timezone: str | None = "UTC",
    clock: list[ClockRelation] | None = None,
    scope: str | None = None,
    first: int | None = 20,
    after: str | None = None,
) -> TimelineResult:
    """Dated records, optionally of one entity, grouped by source on request.

    Without `asOf`, clocks (and NEAREST's order) are computed at the request's time, and a
    cursor carries that time to the next pages, so that a row moving from FUTURE to TODAY
    between two pages is neither skipped nor repeated.
    """
    context = info.context
    size = page_size(first)
    tz = zone(timezone)
    since_us, until_us = time_range(since, until)
    as_of_us = optional_bound_us(as_of, name="asOf")
    field = time_field or TimeField.OCCURRED_AT
    grouping = group or TimelineGroup.NONE
    source_grouping(grouping, entity=entity, kind=kind, time_field=field)
    query = temporal.TimelineQuery(
        entity=str(entity) if entity is not None else None,
        kind=context.type_name(kind),
        time_field=field,
        since_us=since_us,
        until_us=until_us,
        descending=order is Order.DESC,
        eligibility=eligibility or Eligibility.ACTIVE,
        group=grouping,
        include_sources=bool(include_sources),
        as_of_us=as_of_us,
        tz=tz,
        nearest=order is Order.NEAREST,
        clocks=frozenset(clock) if clock is not None else None,
    )
    scopes = context.readable(scope)
    offset, now_us = 0, context.clock_us
    if after is not None:
        snapshot = context.snapshot(scopes)
        offset, issued = decode_position(after, snapshot=snapshot, query="timeline")
        if issued is not None and as_of_us is not None and issued != as_of_us:
            raise InvalidCursor(f"Cursor {after[:40]!r} was issued for another 'asOf'")
        now_us = issued if issued is not None else now_us
    found = temporal.timeline(
        context.reader(), query, scopes, now_us=now_us, first=size, offset=offset
    )
    return _result(context, scopes, found, tz, offset, clocked=True, as_of_us=as_of_us)


def chronicle_day(
    info: Info,
    date: str,
    timezone: str | None = "UTC",
    week: bool | None = False,
    kind: str | None = None,
    include_partial: bool | None = False,
    scope: str | None = None,
    first: int | None = 20,
    after: str | None = None,
) -> TimelineResult:
    """Everything that occurred on one local day, or in its Monday-Sunday week."""
    context = info.context
    size = page_size(first)
    tz = zone(timezone)
    day = temporal.parse_local_date(date, name="date")
    span = temporal.week_of(day, tz) if week else temporal.local_day(day, tz)
    scopes = context.readable(scope)
    offset = _offset(context, scopes, after)
    found = temporal.chronicle_day(
        context.reader(),
        span,
        scopes,
        on=day,
        kind=context.type_name(kind),
        include_partial=bool(include_partial),
        tz=tz,
        now_us=context.clock_us,
        first=size,
        offset=offset,
    )
    return _result(context, scopes, found, tz, offset)


def chronicle_since(
    info: Info,
    since: str,
    until: str | None = None,
    kind: str | None = None,
    timezone: str | None = "UTC",
    scope: str | None = None,
    first: int | None = 20,
    after: str | None = None,
) -> TimelineResult:
    """Occurrence-time range, oldest first."""
    context = info.context
    size = page_size(first)
    tz = zone(timezone)
    since_us, until_us = time_range(since, until)
    assert since_us is not None
    scopes = context.readable(scope)
    offset = _offset(context, scopes, after)
    found = temporal.chronicle_since(
        context.reader(),
        since_us,
        until_us,
        scopes,
        kind=context.type_name(kind),
        tz=tz,
        now_us=context.clock_us,
        first=size,
        offset=offset,
    )
    return _result(context, scopes, found, tz, offset)


def chronicle_last_seen(
    info: Info,
    entity: strawberry.ID,
    occurred_on_or_before: str | None = None,
    timezone: str | None = "UTC",
    scope: str | None = None,
) -> LastSeenResult:
    """The latest dated record associated with an entity at or before a bound (default now)."""
    context = info.context
    tz = zone(timezone)
    bound = context.clock_us
    if occurred_on_or_before is not None:
        bound = bound_us(occurred_on_or_before, name="occurredOnOrBefore", upper=True)
    scopes = context.readable(scope)
    found = temporal.last_seen(
        context.reader(), str(entity), scopes, bound_us=bound, now_us=context.clock_us, tz=tz
    )
    entries, degraded = _entries(context, [found.entry] if found.entry is not None else [])
    return LastSeenResult(
        entry=entries[0] if entries else None,
        reason=found.reason,
        meta=context.meta(scopes, degraded),
    )


def occurrences(
    info: Info,
    id: strawberry.ID,
    since: str,
    until: str,
    timezone: str | None = "UTC",
    scope: str | None = None,
    first: int | None = 100,
    after: str | None = None,
) -> OccurrenceResult:
    """Expanded occurrences of one recurring record inside a closed range."""
    context = info.context
    size = page_size(first, default=100)
    tz = zone(timezone)
    since_us, until_us = time_range(since, until)
    assert since_us is not None and until_us is not None
    scopes = context.readable(scope)
    offset = _offset(context, scopes, after)
    found = temporal.occurrences(
        context.reader(), str(id), scopes, since_us=since_us, until_us=until_us, tz=tz
    )
    page = found.occurrences[offset : offset + size]
    last = offset + len(page)
    end = encode_cursor(context.snapshot(scopes), str(last)) if page else None
    return OccurrenceResult(
        record=RecordRef.from_domain(found.record) if found.record is not None else None,
        occurrences=[Occurrence.from_domain(o) for o in page],
        total=len(found.occurrences),
        page_info=PageInfo(has_next_page=last < len(found.occurrences), end_cursor=end),
        meta=context.meta(scopes, found.degraded),
    )


def _offset(context: Context, scopes: list[str], after: str | None) -> int:
    if after is None:
        return 0
    return decode_offset(after, snapshot=context.snapshot(scopes), query="time query")


def _entries(
    context: Context, found: list[temporal.TimelineEntry], *, as_of_us: int | None = None
) -> tuple[list[TimelineEntry], list[str]]:
    """Entries, each saying whether its record is in conflict (under `asOf`, when given: only
    claims valid then conflict), and `conflict` among the degraded reasons when one is."""
    conflicted = context.reader().conflicted((e.locator.path for e in found), as_of_us=as_of_us)
    entries = [TimelineEntry.from_domain(e, conflicted=e.locator.path in conflicted) for e in found]
    return entries, ["conflict"] if conflicted else []


def _result(
    context: Context,
    scopes: list[str],
    found: temporal.Timeline,
    tz: str,
    offset: int,
    *,
    clocked: bool = False,
    as_of_us: int | None = None,
) -> TimelineResult:
    """A page of a time query; a `clocked` one's cursor also holds the `asOf` of its clocks."""
    snapshot = context.snapshot(scopes)
    last = offset + len(found.entries)
    key = f"{last}@{found.as_of_us}" if clocked else str(last)
    end = encode_cursor(snapshot, key) if found.entries else None
    entries, degraded = _entries(context, found.entries, as_of_us=as_of_us)
    return TimelineResult(
        entries=entries,
        total=found.total,
        page_info=PageInfo(has_next_page=found.next_offset is not None, end_cursor=end),
        as_of=temporal.format_instant(found.as_of_us),
        timezone=tz,
        local_date=found.local_date.isoformat(),
        clock_counts=[ClockCount(clock=c, count=n) for c, n in found.clock_counts],
        meta=context.meta(scopes, [*found.degraded, *degraded]),
    )
