from __future__ import annotations

from enum import Enum
from typing import Self

import strawberry

from almanac import temporal
from almanac.api.types.common import DateValue, Locator, PageInfo, RecordRef, ResultMeta
from almanac.temporal import ClockRelation, Eligibility, TimelineGroup

__all__ = [
    "ClockCount",
    "LastSeenResult",
    "Occurrence",
    "OccurrenceResult",
    "Order",
    "TimelineEntry",
    "TimelineResult",
]

strawberry.enum(ClockRelation)
strawberry.enum(Eligibility)
strawberry.enum(TimelineGroup)


@strawberry.enum
class Order(Enum):
    ASC = "asc"
    DESC = "desc"
    NEAREST = strawberry.enum_value(
        "nearest",
        description=(
            "Closest to asOf first: distance 0 when the interval contains asOf;"
            " ties by start, then id."
        ),
    )


@strawberry.type
class Occurrence:
    index: int
    start: str
    end: str | None
    local: str

    @classmethod
    def from_domain(cls, occ: temporal.Occurrence) -> Self:
        if occ.floating:
            # A floating date is the same calendar date everywhere: no instant stands for it.
            day = occ.local[:10]
            last = temporal.instant(max(occ.end_us - 1, occ.start_us)).date().isoformat()
            return cls(index=occ.index, start=day, end=last if last != day else None, local=day)
        end = temporal.format_instant(occ.end_us) if occ.end_us != occ.start_us else None
        return cls(
            index=occ.index, start=temporal.format_instant(occ.start_us), end=end, local=occ.local
        )


@strawberry.type
class TimelineEntry:
    record: RecordRef
    date: DateValue | None
    occurrence: Occurrence | None
    clock: ClockRelation
    summary: str | None
    locator: Locator
    conflicted: bool = strawberry.field(
        description="The record is in conflict (Record.conflicts), directly or through derivedFrom."
    )
    via: RecordRef | None
    source: RecordRef | None
    note: RecordRef | None
    claims: int | None
    links: list[RecordRef]
    sources: list[RecordRef]

    @classmethod
    def from_domain(cls, e: temporal.TimelineEntry, *, conflicted: bool = False) -> Self:
        return cls(
            record=RecordRef.from_domain(e.record),
            date=DateValue.from_domain(e.date) if e.date is not None else None,
            occurrence=Occurrence.from_domain(e.occurrence) if e.occurrence else None,
            clock=e.clock,
            summary=e.summary,
            locator=Locator.from_domain(e.locator),
            conflicted=conflicted,
            via=RecordRef.from_domain(e.via) if e.via else None,
            source=RecordRef.from_domain(e.source) if e.source else None,
            note=RecordRef.from_domain(e.note) if e.note else None,
            claims=e.claims,
            links=[RecordRef.from_domain(r) for r in e.links],
            sources=[RecordRef.from_domain(r) for r in e.sources],
        )


@strawberry.type
class ClockCount:
    clock: ClockRelation
    count: int


@strawberry.type
class TimelineResult:
    entries: list[TimelineEntry]
    total: int
    page_info: PageInfo
    as_of: str
    timezone: str
    local_date: str
    clock_counts: list[ClockCount]
    meta: ResultMeta


@strawberry.type
class LastSeenResult:
    entry: TimelineEntry | None
    reason: str | None = strawberry.field(
        description="Why entry is null: no_dated_association, entity_missing, ..."
    )
    meta: ResultMeta


@strawberry.type
class OccurrenceResult:
    record: RecordRef | None
    occurrences: list[Occurrence]
    total: int
    meta: ResultMeta
    page_info: PageInfo
