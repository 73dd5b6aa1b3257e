"""The context bundle of SPEC 5 (Context): the evidence for one turn inside one budget.

Candidates come in the order the rules give them (pinned records, then the dated rows of the
entities the query names, then search hits), each a compact whole-line view of one record.
The bundle is the longest prefix of that order that fits the budget: an item that does not fit
ends the fill, and it and every later candidate are left out and counted. A prefix makes a
larger budget's items a superset of a smaller one's (an agent that asks again with more room
never loses what it had), at the price of one large early item shutting out small later ones;
the order is the priority.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import Enum

from almanac import temporal

__all__ = [
    "MAX_BUDGET",
    "MIN_BUDGET",
    "Bundle",
    "ContextPart",
    "Item",
    "PartCount",
    "nearest_first",
    "pack",
    "pin_text",
    "recall_text",
    "time_text",
]

MIN_BUDGET = 200
MAX_BUDGET = 100_000


class ContextPart(Enum):
    """Which rule brought an item: pinned, dated near `asOf`, or recalled by search."""

    PIN = "pin"
    TIME = "time"
    RECALL = "recall"


@dataclass(frozen=True, slots=True)
class Item:
    """One record as it counts against the budget (`text`, in Unicode code points)."""

    part: ContextPart
    record: temporal.RecordRef
    text: str
    locator: temporal.Locator
    date: temporal.DateValue | None
    clock: temporal.ClockRelation | None
    lifecycle: temporal.Lifecycle
    conflicted: bool

    @property
    def chars(self) -> int:
        return len(self.text)


@dataclass(frozen=True, slots=True)
class PartCount:
    """What retrieval found for a part (`returned`), and how much of it the budget took."""

    part: ContextPart
    returned: int
    included: int
    omitted: int


@dataclass(frozen=True, slots=True)
class Bundle:
    items: tuple[Item, ...]
    used: int
    parts: tuple[PartCount, ...]
    omitted: int


def pack(candidates: Sequence[Item], budget: int) -> Bundle:
    """The longest prefix of `candidates` whose texts fit in `budget` characters, with the
    counts per part (every part listed, in the order of `ContextPart`)."""
    used, taken = 0, 0
    for item in candidates:
        if used + item.chars > budget:
            break
        used += item.chars
        taken += 1
    items = tuple(candidates[:taken])
    parts = tuple(
        PartCount(
            part=part,
            returned=sum(1 for c in candidates if c.part is part),
            included=sum(1 for i in items if i.part is part),
            omitted=sum(1 for c in candidates[taken:] if c.part is part),
        )
        for part in ContextPart
    )
    return Bundle(items=items, used=used, parts=parts, omitted=len(candidates) - taken)


def nearest_first(
    entries: Iterable[tuple[temporal.TimeField, temporal.TimelineEntry]], as_of_us: int
) -> list[tuple[temporal.TimeField, temporal.TimelineEntry]]:
    """One row per record, the actionable first (OVERDUE, then TODAY), then by distance to
    `asOf`, then by start, field and id; a record's row is the first of its rows in that order."""

    def key(pair: tuple[temporal.TimeField, temporal.TimelineEntry]) -> tuple[int, int, int, str]:
        field, entry = pair
        rank = _ACTIONABLE.get(entry.clock, len(_ACTIONABLE))
        start = entry.date.start_us if entry.date is not None else as_of_us
        return (rank, _distance(entry.date, as_of_us), start, f"{entry.record.id}\0{field.value}")

    chosen: dict[str, tuple[temporal.TimeField, temporal.TimelineEntry]] = {}
    for pair in sorted(entries, key=key):
        chosen.setdefault(pair[1].record.id, pair)
    return list(chosen.values())


def pin_text(record: temporal.Record) -> str:
    """A pinned record: its name line, every date as written, lifecycle and state, locator."""
    dates = " · ".join(f"{name} {value.text}" for name, value in sorted(record.dates.items()))
    return _lines(
        _name_line(record.title, record.type, record.id),
        dates,
        _status_line(record.lifecycle, record.state),
        _locator_line(record.locator),
    )


def time_text(field: temporal.TimeField, entry: temporal.TimelineEntry) -> str:
    """A dated row: its name line, the field and date that placed it with its clock, its
    summary (whole lines), locator."""
    record = entry.record
    date = entry.date.text if entry.date is not None else ""
    return _lines(
        _name_line(record.title, record.type, record.id),
        f"{field.value} {date} {entry.clock.name}".strip(),
        entry.summary or "",
        _locator_line(entry.locator),
    )


def recall_text(hit: temporal.SearchHit, body: str | None) -> str:
    """A search hit: its name line, its locator, and the body lines its snippet touches, whole
    (`body` is the record's body, whose offsets the snippet's are)."""
    record = hit.record
    matched = ""
    if hit.snippet is not None and body is not None:
        start = body.rfind("\n", 0, hit.snippet.start) + 1
        end = body.find("\n", hit.snippet.end)
        matched = body[start : end if end != -1 else len(body)].strip("\n")
    return _lines(
        _name_line(record.title, record.type, record.id),
        f"matched {', '.join(hit.matches)}" if hit.matches else "",
        matched,
        _locator_line(hit.locator),
    )


_SHORT_REVISION = 12
_ACTIONABLE = {temporal.ClockRelation.OVERDUE: 0, temporal.ClockRelation.TODAY: 1}


def _distance(value: temporal.DateValue | None, as_of_us: int) -> int:
    if value is None:
        return 0
    if value.start_us <= as_of_us < value.end_us or value.start_us == as_of_us:
        return 0
    return min(abs(value.start_us - as_of_us), abs(value.end_us - as_of_us))


def _name_line(title: str, type_: str, record_id: str) -> str:
    return f"{title} ({type_}, {record_id})"


def _status_line(lifecycle: temporal.Lifecycle, state: str | None) -> str:
    parts = [] if lifecycle is temporal.Lifecycle.ACTIVE else [lifecycle.value]
    return " · ".join([*parts, *([f"state {state}"] if state else [])])


def _locator_line(locator: temporal.Locator) -> str:
    # The revision's first 12 hex digits, as git shortens a hash (the item's locator has it whole).
    at = f"{locator.path}:{locator.start_line}-{locator.end_line}"
    return f"{at} @{locator.revision[:_SHORT_REVISION]}"


def _lines(*lines: str) -> str:
    return "".join(f"{line}\n" for line in lines if line)
