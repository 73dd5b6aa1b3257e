"""The occurrence projection: one row per occurrence interval, so time queries use an index.

Every note has an anchor row (`idx = -1`); with `occurred_at`, it holds the occurrence interval
`[occurred_at.start, max(ends_at.end, occurred_at.end))`. A recurring record also has one row
per occurrence of its recurrence set (`idx` = the occurrence index), materialised up to
`PER_RECORD` occurrences; the last row of a set that goes on past them says so (`more = 1`).
Closed-range queries read the occurrence rows of recurring records and the anchors of the
others; open-ended queries read anchors only (SPEC "Recurrence").

An overlap test `start < hi AND stop > lo` cannot use one B-tree index by itself. Rows are
therefore split into tiers by their width: within a tier every row is at most `TIER_WIDTHS[t]`
long, so `start > lo - width` bounds the index range scanned. The last tier (longer than a
year, rare) is scanned by `start` alone.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from almanac.temporal.calendar import DatePrecision, DateValue, RecurrenceSet
from almanac.temporal.store import TIER_WIDTHS
from almanac.vault import AlmanacError, Note

__all__ = ["PER_RECORD", "span_rows", "tier_of"]

_DAY_US = 86_400_000_000
PER_RECORD = 2_000


def tier_of(start_us: int, stop_us: int) -> int:
    """The tier of an interval: the first whose width bound holds it."""
    width = stop_us - start_us
    for tier, bound in enumerate(TIER_WIDTHS):
        if bound is None or width <= bound:
            return tier
    raise AssertionError("the last tier is unbounded")


def span_rows(
    path: str,
    note: Note,
    dates: Mapping[str, DateValue],
    tz: str | None,
    *,
    scope: str,
    eligible: bool,
) -> Iterator[tuple[object, ...]]:
    """The rows of one note, in the column order of the `spans` table.

    Every note has an anchor row (`idx = -1`; `start` NULL without `occurred_at`); a
    recurring one also a row per materialised occurrence. `start`/`vend`/`text`/`precision`
    are the value a row shows (the anchor as written, or an occurrence's start and local
    text) and `[start, stop)` the interval it occupies. The record's identity, filters and
    what its clock relation reads (deadline, state, occurrence and validity intervals) are
    repeated on each row, so a time query reads this table alone.
    """
    record: tuple[object, ...] = (
        note.id, scope, note.type, note.lifecycle, int(eligible), int(note.source_event),
        *_clock_columns(note, dates),
    )  # fmt: skip
    anchor = dates.get("occurred_at")
    if anchor is None:
        yield (path, -1, None, None, None, None, None, -1, 0, 0, *record)
        return
    ends = dates.get("ends_at")
    stop = max(ends.end_us, anchor.end_us) if ends is not None else anchor.end_us
    occurrences = None
    if note.recurrence is not None or note.rdates:
        try:
            recurrence = RecurrenceSet.of(
                anchor=anchor,
                rule=note.recurrence,
                exdates=note.exdates,
                rdates=note.rdates,
                tz=tz,
                ends=ends,
            )
            occurrences, more = recurrence.first(PER_RECORD)
        except AlmanacError:
            occurrences = None  # reported as invalid_recurrence: the anchor alone stands
    recurring = int(occurrences is not None)
    precision = anchor.precision.value
    yield (path, -1, anchor.start_us, anchor.end_us, stop, anchor.text, precision,
           tier_of(anchor.start_us, stop), recurring, 0, *record)  # fmt: skip
    if occurrences is None:
        return
    kind = DatePrecision.DAY.value if anchor.precision is DatePrecision.DAY else "instant"
    last = len(occurrences) - 1
    for i, occ in enumerate(occurrences):
        vend = occ.start_us + _DAY_US if occ.floating else occ.start_us
        yield (path, occ.index, occ.start_us, vend, occ.end_us, occ.local, kind,
               tier_of(occ.start_us, occ.end_us), 1, int(more and i == last),
               *record)  # fmt: skip


def _clock_columns(note: Note, dates: Mapping[str, DateValue]) -> tuple[object, ...]:
    """`(due_start, due_end, due_instant, open, occ_start, occ_stop, occ_floating, valid_from,
    valid_until)`.

    The deadline and whether the note is still open (state open or absent), the occurrence
    interval when there is an `ends_at` (floating when `occurred_at` is a date: it then holds
    dates, not instants), and the validity bounds as written.
    """
    due, ends = dates.get("due_at"), dates.get("ends_at")
    occurred = dates.get("occurred_at")
    since, until = dates.get("valid_from"), dates.get("valid_until")
    occ: tuple[int | None, int | None, int | None] = (None, None, None)
    if ends is not None and occurred is not None:
        floating = int(occurred.precision is not DatePrecision.INSTANT)
        occ = (occurred.start_us, max(ends.end_us, occurred.end_us), floating)
    return (
        due.start_us if due else None,
        due.end_us if due else None,
        int(due.precision is DatePrecision.INSTANT) if due else None,
        int(note.state in (None, "open")),
        *occ,
        since.start_us if since else None,
        until.start_us if until else None,
    )
