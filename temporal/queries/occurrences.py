"""The occurrences of one recurring record inside a closed range (`occurrences`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from almanac.temporal.calendar import (
    DatePrecision,
    DateValue,
    Occurrence,
    RecurrenceSet,
    instant,
    timezone,
)
from almanac.temporal.records import Record, RecordRef
from almanac.temporal.store import Reader
from almanac.vault import AlmanacError

__all__ = ["RESPONSE_OCCURRENCES", "Occurrences", "occurrences"]

# Occurrences one `occurrences` response expands (materialised ones: temporal.spans.PER_RECORD).
RESPONSE_OCCURRENCES = 10_000


@dataclass(frozen=True, slots=True)
class Occurrences:
    """The occurrences of one record inside a closed range."""

    record: RecordRef | None
    occurrences: list[Occurrence]
    degraded: tuple[str, ...]


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
