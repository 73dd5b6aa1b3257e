"""Date texts, their precision and the UTC interval they cover (SPEC "Dates").

Instants are carried as integer microseconds since the Unix epoch (UTC):
that is what the state store indexes and sorts, and it costs nothing to
compare. `instant()` turns one into a pendulum `DateTime` in UTC and
`format_instant()` is the only place that writes instant text.
"""

from __future__ import annotations

import calendar
import functools
import re
import zoneinfo
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from enum import Enum

import pendulum

from almanac.vault import AmbiguousTime, InvalidDate, UnknownTimezone

__all__ = [
    "DatePrecision",
    "DateValue",
    "format_instant",
    "from_datetime",
    "instant",
    "parse_date_value",
    "parse_query_bound",
    "timezone",
]

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_YEAR = re.compile(r"(\d{4})\Z", re.ASCII)
_MONTH = re.compile(r"(\d{4})-(\d{2})\Z", re.ASCII)
_DAY = re.compile(r"(\d{4})-(\d{2})-(\d{2})\Z", re.ASCII)
_TIME = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|[+-]\d{2}:\d{2})?\Z",
    re.ASCII,
)
_STRICT_INSTANT = re.compile(
    r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})\Z", re.ASCII
)


class DatePrecision(Enum):
    """How much of a date was written; member names are the GraphQL values."""

    YEAR = "year"
    MONTH = "month"
    DAY = "day"
    INSTANT = "instant"


@dataclass(frozen=True, slots=True)
class DateValue:
    """A date as written, with its precision and the UTC interval `[start_us, end_us)`.

    An instant has `start_us == end_us`. Day, month and year values cover their
    whole UTC period; a day value is also a floating calendar date (`day`).
    """

    text: str
    precision: DatePrecision
    start_us: int
    end_us: int

    @property
    def start(self) -> pendulum.DateTime:
        """UTC start of the covered interval."""
        return instant(self.start_us)

    @property
    def end(self) -> pendulum.DateTime:
        """UTC exclusive end of the covered interval (equals start for an instant)."""
        return instant(self.end_us)


@functools.cache
def _zone_names() -> frozenset[str]:
    # Not the host's own `localtime` link (or tzcode's helpers): the same query must mean the
    # same zone on every machine.
    names = frozenset(zoneinfo.available_timezones()) - {"localtime", "posixrules", "Factory"}
    return names | {"UTC"}


@functools.cache
def timezone(name: str) -> zoneinfo.ZoneInfo:
    """The IANA zone called `name`.

    Raises:
        UnknownTimezone: `name` is not an IANA zone name.
    """
    if name not in _zone_names():
        raise UnknownTimezone(f"Unknown timezone {name!r}")
    return zoneinfo.ZoneInfo(name)


def parse_date_value(text: str, *, tz: str | None = None) -> DateValue:
    """Read a date text as written in a note (SPEC "Dates").

    Args:
        text: `2031`, `2031-04`, `2031-04-12`, an instant with `Z` or an offset, or
            a local time without zone (`2031-04-12T10:00`) when `tz` is given.
        tz: The record's IANA zone, used only for local times without zone.

    Raises:
        AmbiguousTime: a local time without zone and no `tz`.
        InvalidDate: the text is none of the accepted forms, or names an impossible date.
    """
    try:
        if match := _DAY.match(text):
            day = date(int(match[1]), int(match[2]), int(match[3]))
            start = _day_us(day)
            return DateValue(text, DatePrecision.DAY, start, start + 86_400_000_000)
        if match := _TIME.match(text):
            return _instant_value(text, match, tz)
        if match := _MONTH.match(text):
            year, month = int(match[1]), int(match[2])
            first = date(year, month, 1)
            last = date(year, month, calendar.monthrange(year, month)[1])
            end = _day_us(last) + 86_400_000_000
            return DateValue(text, DatePrecision.MONTH, _day_us(first), end)
        if match := _YEAR.match(text):
            year = int(match[1])
            end = _day_us(date(year, 12, 31)) + 86_400_000_000
            return DateValue(text, DatePrecision.YEAR, _day_us(date(year, 1, 1)), end)
    except (ValueError, OverflowError) as exc:
        raise InvalidDate(f"Impossible date {text!r}: {exc}") from exc
    raise InvalidDate(f"Date {text!r} is not YYYY, YYYY-MM, YYYY-MM-DD or an ISO 8601 instant")


def parse_query_bound(text: str, *, upper: bool = False) -> int:
    """A `since`/`until` bound in microseconds: a real `YYYY-MM-DD` or a zoned instant.

    A date-only upper bound includes its whole UTC day, so it yields the last
    microsecond of that day. Bounds are inclusive.

    Raises:
        InvalidDate: anything else, naming the value.
    """
    if _DAY.match(text) or _STRICT_INSTANT.match(text):
        value = parse_date_value(text)
        return (
            value.end_us - 1 if upper and value.precision is DatePrecision.DAY else value.start_us
        )
    raise InvalidDate(
        f"Bound {text!r} must be YYYY-MM-DD or an ISO 8601 timestamp with seconds and a zone"
    )


def instant(us: int) -> pendulum.DateTime:
    """The UTC `DateTime` of a microsecond count (the end of year 9999 is its last instant)."""
    return pendulum.instance(_EPOCH + timedelta(microseconds=min(us, _END_OF_TIME - 1)))


def from_datetime(value: datetime) -> int:
    """Microseconds since the epoch of an aware `datetime`."""
    delta = value - _EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


def format_instant(value: datetime | int) -> str:
    """ISO 8601 UTC text ending in `Z`; fractional seconds only when there are some."""
    if isinstance(value, int) and value >= _END_OF_TIME:
        return "10000-01-01T00:00:00Z"  # the exclusive end of year 9999, past datetime's range
    moment = _EPOCH + timedelta(microseconds=value) if isinstance(value, int) else value
    moment = moment.astimezone(UTC)
    text = f"{moment:%Y-%m-%dT%H:%M:%S}"
    if moment.microsecond:
        text += f".{moment.microsecond:06d}".rstrip("0")
    return text + "Z"


def _day_us(day: date) -> int:
    return (day.toordinal() - 719_163) * 86_400_000_000


_END_OF_TIME = _day_us(date(9999, 12, 31)) + 86_400_000_000


def _instant_value(text: str, match: re.Match[str], tz: str | None) -> DateValue:
    fraction = (match[7] or "0")[:6].ljust(6, "0")
    year, month, day, hour, minute = (int(match[i]) for i in range(1, 6))
    local = datetime(year, month, day, hour, minute, int(match[6] or 0), int(fraction))
    offset = match[8]
    if offset is None:
        if tz is None:
            raise AmbiguousTime(f"Local time {text!r} has no zone and the record no timezone")
        aware = local.replace(tzinfo=timezone(tz))
    elif offset == "Z":
        aware = local.replace(tzinfo=UTC)
    else:
        sign = 1 if offset[0] == "+" else -1
        hours, minutes = int(offset[1:3]), int(offset[4:6])
        if hours > 23 or minutes > 59:
            raise ValueError(f"offset {offset} out of range")
        aware = local - sign * timedelta(hours=hours, minutes=minutes)
        aware = aware.replace(tzinfo=UTC)
    us = from_datetime(aware)
    return DateValue(text, DatePrecision.INSTANT, us, us)
