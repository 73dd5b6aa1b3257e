"""The types of a time query and the entries of its page.

A time query is planned and its SQL written in temporal/queries/timeline.py (an entity's rows
are those of the paths associated with it, table `associations`; a day, week or range is one
index range per width tier of `spans`; another time field than `occurred_at` values the anchor
rows by `dates`, `BY_DATE`), listed by temporal/queries/listing.py (a hub's timeline holds
thousands of rows: they stay in SQLite or raw tuples, and only a page becomes
`temporal.store.Row`s), and its page made entries here (`build_entries`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date
from enum import Enum
from typing import Any

from almanac.temporal.calendar import ClockRelation, DateValue, Occurrence
from almanac.temporal.records import Locator, RecordRef, TimeField
from almanac.temporal.store import (
    SPAN_COLUMNS,
    Reader,
    Row,
    note_body,
    record_details,
    record_sources,
)

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


CLOCKS = {c.value: c for c in ClockRelation}


# Positions in a raw row (`ROW, clock`, and a NEAREST listing's distance): a hub's timeline is
# thousands of these; only the rows of the page shown (and the rare superseded ones) become
# `Row`s.
PATH, LIFECYCLE, SOURCE_EVENT, RECURRING, MORE, CLOCK, DISTANCE = 0, 5, 6, 7, 8, 9, 10


Raw = tuple[Any, ...]


def build_entries(reader: Reader, rows: Sequence[Row], query: TimelineQuery) -> list[TimelineEntry]:
    """The entries of a page of rows: records, sources, stand-ins' summaries and vias."""
    shown = [row.standing or row for row in rows]
    vias = [r.via.path for r in rows if r.via is not None]
    refs = record_details(reader, [r.path for r in rows] + [r.path for r in shown] + vias)
    sources = record_sources(reader, [r.path for r in shown]) if query.include_sources else {}
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
