"""Local days, Monday-Sunday weeks and clock relations in an IANA zone (SPEC "Dates", Timeline).

Instants are integer microseconds (UTC). A local day in a zone is the half-open UTC interval
from that date's local midnight to the next one, so it lasts 23 or 25 hours on a DST change;
a date-only value is a floating calendar date and belongs to that date in every zone.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date, timedelta
from enum import Enum
from string import Formatter

import pendulum

from almanac.temporal.calendar.dates import from_datetime, instant, timezone
from almanac.vault import InvalidDate

__all__ = [
    "ClockRelation",
    "LocalDay",
    "clock_params",
    "clock_sql",
    "distance",
    "distance_params",
    "distance_sql",
    "local_date",
    "local_day",
    "parse_local_date",
    "utc_date",
    "wall_us",
    "week_of",
]

_DAY = re.compile(r"\d{4}-\d{2}-\d{2}\Z", re.ASCII)
_DAY_US = 86_400_000_000


class ClockRelation(Enum):
    """Where a row stands relative to `asOf`; member names are the GraphQL values."""

    PAST = "past"
    TODAY = "today"
    CURRENT_PERIOD = "current_period"
    ONGOING = "ongoing"
    FUTURE = "future"
    OVERDUE = "overdue"
    UNDATED = "undated"


@dataclass(frozen=True, slots=True)
class LocalDay:
    """A local date (or week) in a zone: the UTC interval of its instants and of its dates.

    `start_us`/`end_us` bound the instants that fall on it in the zone; `floating_start_us`/
    `floating_end_us` are the UTC midnights of its first and past-last calendar dates, which
    is how floating (date-only) values are stored.
    """

    first: date
    last: date
    start_us: int
    end_us: int

    @property
    def floating_start_us(self) -> int:
        return _date_us(self.first)

    @property
    def floating_end_us(self) -> int:
        return _date_us(self.last) + _DAY_US


def parse_local_date(text: str, *, name: str = "date") -> date:
    """A strict `YYYY-MM-DD` calendar date.

    Raises:
        InvalidDate: anything else, naming the argument and the value.
    """
    if _DAY.match(text):
        try:
            return date.fromisoformat(text)
        except ValueError:
            pass
    raise InvalidDate(f"Argument {name!r} must be a real date YYYY-MM-DD, not {text!r}")


def local_day(day: date, tz: str, *, days: int = 1) -> LocalDay:
    """The local day `day` (or `days` days from it) in zone `tz`."""
    zone = timezone(tz)
    try:
        last = day + timedelta(days=days - 1)
        after = last + timedelta(days=1)
        start = pendulum.datetime(day.year, day.month, day.day, tz=zone)
        end = pendulum.datetime(after.year, after.month, after.day, tz=zone)
    except (OverflowError, ValueError) as exc:
        raise InvalidDate(f"The days from {day.isoformat()} run past year 9999") from exc
    return LocalDay(day, last, from_datetime(start), from_datetime(end))


def week_of(day: date, tz: str) -> LocalDay:
    """The Monday-Sunday week containing `day`, in zone `tz`."""
    return local_day(day - timedelta(days=day.weekday()), tz, days=7)


def local_date(us: int, tz: str) -> date:
    """The calendar date an instant falls on in zone `tz`.

    Raises:
        InvalidDate: in `tz`, the instant falls before year 1 or after year 9999.
    """
    try:
        return instant(us).astimezone(timezone(tz)).date()
    except OverflowError as exc:
        raise InvalidDate(f"In {tz} that instant falls outside the years 1-9999") from exc


# The clock relation of a row (see `clock_sql`), with `{name}` for each value it compares with.
_CLOCK = (
    "CASE WHEN c.start IS NULL THEN 'undated'"
    " WHEN c.open = 1 AND c.due_start IS NOT NULL"
    " AND (c.due_instant = 1 AND c.due_start < {a} OR c.due_instant = 0 AND c.due_end <= {t})"
    " THEN 'overdue'"
    " WHEN c.precision = 'instant' AND c.start >= {day_start} AND c.start < {day_end}"
    " THEN 'today'"
    " WHEN c.precision = 'day' AND c.start <= {t} AND {t} < c.vend THEN 'today'"
    " WHEN c.precision <> 'instant' AND c.start <= {t} AND {t} < c.vend"
    " THEN 'current_period'"
    # A floating occurrence (dates) contains today's date; an instant one contains asOf.
    " WHEN c.occ_stop IS NOT NULL"
    " AND CASE WHEN c.idx >= 0 THEN c.start ELSE c.occ_start END"
    " <= CASE WHEN c.occ_floating = 1 THEN {t} ELSE {a} END"
    " AND CASE WHEN c.occ_floating = 1 THEN {t} ELSE {a} END"
    " < CASE WHEN c.idx >= 0 THEN c.stop ELSE c.occ_stop END"
    " THEN 'ongoing'"
    " WHEN (c.valid_from IS NOT NULL OR c.valid_until IS NOT NULL)"
    " AND coalesce(c.valid_from <= {a}, 1) AND coalesce({a} < c.valid_until, 1)"
    " THEN 'ongoing'"
    " WHEN c.precision = 'instant' AND c.start < {a} OR c.precision <> 'instant'"
    " AND c.vend <= {t} THEN 'past'"
    " ELSE 'future' END"
)

# `distance` of a row read as alias `c` (see `distance_sql`).
_DISTANCE = (
    "max(0, c.start - (CASE WHEN c.precision = 'instant' THEN {a} ELSE {wall} END),"
    " (CASE WHEN c.precision = 'instant' THEN {a} ELSE {wall} END)"
    " - max(c.start, coalesce(c.stop, c.vend, c.start) - 1))"
)


def clock_sql(as_of_us: int, today: LocalDay) -> str:
    """The clock relation of a row at `as_of_us` as one SQL `CASE` (SPEC "Timeline").

    `today` is the local date of `as_of_us` in the requested zone. The expression reads a
    row of `spans` (or one shaped like it) as alias `c`: its value (`start`, `vend`,
    `precision`, and `idx`/`stop` of an occurrence; `start` NULL when undated) and its
    record's deadline, state, occurrence and validity columns. The first rule that applies
    wins: undated, overdue, today, current period, ongoing, then past or future. Instants
    compare as instants; day, month and year values compare their calendar period with
    `today`, whose UTC midnight is how a floating date is stored. Only integers we computed
    are spliced into the text; queries bind them instead (`clock_params`).
    """
    return _CLOCK.format_map(_clock_values(as_of_us, today))


def clock_params(as_of_us: int, today: LocalDay) -> tuple[str, tuple[int, ...]]:
    """`clock_sql` with a `?` placeholder for each value, and the values in their order: the
    text is the same at every `asOf`, so a statement holding it is prepared once."""
    return _bind(_CLOCK, _clock_values(as_of_us, today))


def _clock_values(as_of_us: int, today: LocalDay) -> dict[str, int]:
    return {
        "a": int(as_of_us),
        "t": int(today.floating_start_us),
        "day_start": int(today.start_us),
        "day_end": int(today.end_us),
    }


def _bind(template: str, values: Mapping[str, int]) -> tuple[str, tuple[int, ...]]:
    """`template` with each `{name}` a `?` placeholder, and the values in placeholder order."""
    parts: list[str] = []
    params: list[int] = []
    for text, name, _, _ in Formatter().parse(template):
        parts.append(text)
        if name is not None:
            parts.append("?")
            params.append(values[name])
    return "".join(parts), tuple(params)


def wall_us(as_of_us: int, tz: str) -> int:
    """`as_of_us` as the wall clock of zone `tz` reads it, counted as if it were UTC: where
    "now" is among floating (date-only) values, which are stored at their UTC midnights."""
    offset = instant(as_of_us).astimezone(timezone(tz)).utcoffset() or timedelta(0)
    return as_of_us + offset // timedelta(microseconds=1)


def distance(start_us: int, stop_us: int, *, floating: bool, as_of_us: int, wall: int) -> int:
    """How far a row's interval `[start_us, stop_us)` is from `asOf` (`order: NEAREST`), in
    microseconds: 0 when it contains `asOf` (an instant, when it is `asOf`), else the gap to
    its nearer end. A floating value is measured from `wall` (`wall_us`), so one that holds
    `asOf`'s local date is at 0, as its clock says TODAY or CURRENT_PERIOD. `distance_sql`
    is the same rule in SQL."""
    now = wall if floating else as_of_us
    last = max(start_us, stop_us - 1)  # the last instant inside a half-open interval
    return max(0, start_us - now, now - last)


def distance_sql(as_of_us: int, wall: int) -> str:
    """`distance` of a row read as alias `c` (`start`, `stop`, `precision`) as SQL."""
    return _DISTANCE.format(a=int(as_of_us), wall=int(wall))


def distance_params(as_of_us: int, wall: int) -> tuple[str, tuple[int, ...]]:
    """`distance_sql` with placeholders, and their values in order (as `clock_params`)."""
    return _bind(_DISTANCE, {"a": int(as_of_us), "wall": int(wall)})


def _date_us(day: date) -> int:
    return (day.toordinal() - 719_163) * _DAY_US


def utc_date(us: int) -> date:
    """The UTC calendar date of an instant: how a floating date is stored (its UTC midnight)."""
    # The exclusive end of year 9999 is past `date`'s range: its last day stands in for it.
    return date.fromordinal(min(us // _DAY_US + 719_163, date.max.toordinal()))
