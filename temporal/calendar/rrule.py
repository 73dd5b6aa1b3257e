"""RRULE text (RFC 5545 3.3.10), parsed and checked strictly into the options dateutil takes.

dateutil accepts parts RFC 5545 does not have (BYEASTER) and combinations it forbids (COUNT
with UNTIL, a numbered BYDAY in a WEEKLY rule, hours on a date-only rule): `parse_rule`
refuses them, naming the part, before anything is expanded.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from typing import Any

from dateutil import rrule as _rr

from almanac.vault import InvalidRecurrence

__all__ = ["Rule", "check_matches", "explicit_options", "naive_us", "parse_rule", "period_start"]

_EPOCH = datetime(1970, 1, 1)


_FREQS = {
    "YEARLY": _rr.YEARLY,
    "MONTHLY": _rr.MONTHLY,
    "WEEKLY": _rr.WEEKLY,
    "DAILY": _rr.DAILY,
    "HOURLY": _rr.HOURLY,
    "MINUTELY": _rr.MINUTELY,
    "SECONDLY": _rr.SECONDLY,
}


_DAYS = {"MO": 0, "TU": 1, "WE": 2, "TH": 3, "FR": 4, "SA": 5, "SU": 6}


_INTEGER_LISTS = {
    # part: (low, high, signed)
    "BYSECOND": (0, 59, False),
    "BYMINUTE": (0, 59, False),
    "BYHOUR": (0, 23, False),
    "BYMONTHDAY": (1, 31, True),
    "BYYEARDAY": (1, 366, True),
    "BYWEEKNO": (1, 53, True),
    "BYMONTH": (1, 12, False),
    "BYSETPOS": (1, 366, True),
}


_PARTS = {"FREQ", "UNTIL", "COUNT", "INTERVAL", "BYDAY", "WKST", *_INTEGER_LISTS}


_BYDAY = re.compile(r"([+-]?)(\d{1,2})?(MO|TU|WE|TH|FR|SA|SU)\Z")


_INTEGER = re.compile(r"([+-]?)(\d{1,4})\Z")


_UNTIL = re.compile(r"(\d{4})(\d{2})(\d{2})(?:T(\d{2})(\d{2})(\d{2})(Z?))?\Z")


_Fail = Callable[[str], InvalidRecurrence]


@dataclass(frozen=True, slots=True)
class Rule:
    """A checked RRULE: dateutil's keyword arguments plus what we apply ourselves."""

    freq: Any  # Any: one of dateutil's frequency constants, typed as a Literal there
    interval: int
    count: int | None
    until_us: int | None  # a UTC UNTIL, compared as an instant
    until_wall: datetime | None  # a local or date-only UNTIL, compared as a wall time
    options: dict[str, Any]  # Any: dateutil's rrule keyword arguments are untyped lists


def parse_rule(text: str, *, floating: bool) -> Rule:
    """Check an RRULE against RFC 5545 3.3.10 and turn it into dateutil arguments.

    Raises:
        InvalidRecurrence: naming the offending part.
    """

    def fail(why: str) -> InvalidRecurrence:
        return InvalidRecurrence(f"Recurrence {text!r} is not an RFC 5545 RRULE: {why}")

    body = text.strip()
    if body.upper().startswith("RRULE:"):
        body = body[6:]
    parts: dict[str, str] = {}
    for part in body.upper().split(";"):
        name, eq, value = part.partition("=")
        if not eq or not value:
            raise fail(f"{part!r} is not NAME=VALUE")
        if name not in _PARTS:
            raise fail(f"unknown part {name}")
        if name in parts:
            raise fail(f"{name} appears twice")
        parts[name] = value
    if "FREQ" not in parts:
        raise fail("FREQ is required")
    if parts["FREQ"] not in _FREQS:
        raise fail(f"FREQ={parts['FREQ']} is not a frequency")
    freq_name = parts["FREQ"]
    freq = _FREQS[freq_name]
    if "COUNT" in parts and "UNTIL" in parts:
        raise fail("COUNT and UNTIL must not both be given")
    options: dict[str, Any] = {}
    for name, (low, high, signed) in _INTEGER_LISTS.items():
        if name in parts:
            numbers = [_integer(v, low, high, signed, name, fail) for v in parts[name].split(",")]
            options[name.lower()] = numbers
    if "BYDAY" in parts:
        options["byweekday"] = [
            _weekday(v, freq_name, "BYWEEKNO" in parts, fail) for v in parts["BYDAY"].split(",")
        ]
    if "BYWEEKNO" in parts and freq_name != "YEARLY":
        raise fail("BYWEEKNO needs FREQ=YEARLY")
    if "BYYEARDAY" in parts and freq_name in ("DAILY", "WEEKLY", "MONTHLY"):
        raise fail(f"BYYEARDAY is not allowed with FREQ={freq_name}")
    if "BYMONTHDAY" in parts and freq_name == "WEEKLY":
        raise fail("BYMONTHDAY is not allowed with FREQ=WEEKLY")
    if "BYSETPOS" in parts and len([n for n in parts if n.startswith("BY")]) < 2:
        raise fail("BYSETPOS needs another BYxxx part")
    if floating and freq_name in ("HOURLY", "MINUTELY", "SECONDLY"):
        raise fail("a date-only anchor recurs by day at most (no hours, minutes or seconds)")
    if floating:
        # RFC 5545 3.3.10: with a DATE anchor these parts "MUST be ignored".
        for name in ("byhour", "byminute", "bysecond"):
            options.pop(name, None)
    if "bymonthday" in options:
        lengths = [
            (31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)[m - 1]
            for m in options.get("bymonth", range(1, 13))
        ]
        if not any(abs(day) <= n for day in options["bymonthday"] for n in lengths):
            raise fail("no BYMONTHDAY exists in the months it may fall in")
    if "WKST" in parts:
        if parts["WKST"] not in _DAYS:
            raise fail(f"WKST={parts['WKST']} is not a weekday")
        options["wkst"] = _DAYS[parts["WKST"]]
    interval = _integer(parts.get("INTERVAL", "1"), 1, 100_000, False, "INTERVAL", fail)
    count = None
    if "COUNT" in parts:
        count = _integer(parts["COUNT"], 1, 10**9, False, "COUNT", fail)
    until_us = until_wall = None
    if "UNTIL" in parts:
        match = _UNTIL.match(parts["UNTIL"])
        if match is None:
            raise fail(f"UNTIL={parts['UNTIL']} is not YYYYMMDD or YYYYMMDDTHHMMSS[Z]")
        try:
            day = date(int(match[1]), int(match[2]), int(match[3]))
            if match[4] is None:
                until_wall = datetime.combine(day, time(23, 59, 59, 999_999))
            else:
                clock = time(int(match[4]), int(match[5]), int(match[6]))
                moment = datetime.combine(day, clock)
                if match[7] and not floating:
                    until_us = naive_us(moment)
                elif match[7]:
                    until_wall = datetime.combine(moment.date(), time(23, 59, 59, 999_999))
                else:
                    until_wall = moment
        except ValueError as exc:
            raise fail(f"UNTIL={parts['UNTIL']}: {exc}") from exc
    return Rule(freq, interval, count, until_us, until_wall, options)


def _integer(text: str, low: int, high: int, signed: bool, name: str, fail: _Fail) -> int:
    match = _INTEGER.match(text)
    if match is None or (match[1] and not signed):
        raise fail(f"{name}={text} is not a number in range")
    value = int(match[2])
    if not low <= value <= high:
        raise fail(f"{name}={text} is out of range {low}..{high}")
    return -value if match[1] == "-" else value


def _weekday(text: str, freq: str, weekno: bool, fail: _Fail) -> _rr.weekday:
    match = _BYDAY.match(text)
    if match is None:
        raise fail(f"BYDAY {text!r} is not a weekday like MO, 1MO or -1FR")
    day = _DAYS[match[3]]
    if match[2] is None:
        if match[1]:
            raise fail(f"BYDAY {text!r} has a sign without a number")
        return _rr.weekday(day)
    number = int(match[2])
    if freq not in ("MONTHLY", "YEARLY") or (freq == "YEARLY" and weekno):
        raise fail(
            f"BYDAY {text!r}: a numbered weekday needs FREQ=MONTHLY or YEARLY without BYWEEKNO"
        )
    if not 1 <= number <= (5 if freq == "MONTHLY" else 53):
        raise fail(f"BYDAY {text!r} is out of range")
    return _rr.weekday(day, -number if match[1] == "-" else number)


def naive_us(wall: datetime) -> int:
    """Microseconds of a naive wall time since the naive epoch (a UTC reading of it)."""
    delta = wall - _EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


def check_matches(start: datetime, rule: Rule, text: str) -> None:
    """Refuse a rule that can never produce an instance after its anchor.

    dateutil would walk such a rule period by period to year 9999 (seconds of
    work on every expansion); these are the impossible combinations one can
    see without walking. dateutil's own refusals (HOURLY;INTERVAL=24;BYHOUR=11)
    are turned into `InvalidRecurrence` here too, not at expansion.

    Raises:
        InvalidRecurrence: naming the reason.
    """
    options = explicit_options(start, rule)
    why = None
    if "bysetpos" in rule.options:
        # An upper bound of the instances in one period; a BYSETPOS beyond it never picks.
        days = {_rr.YEARLY: 366, _rr.MONTHLY: 31, _rr.WEEKLY: 7}.get(rule.freq, 1)
        if "bymonthday" in options and rule.freq == _rr.MONTHLY:
            days = min(days, len(options["bymonthday"]))
        if "bymonthday" in options and rule.freq == _rr.YEARLY:
            days = min(days, len(options["bymonthday"]) * len(options.get("bymonth", range(12))))
        if "byweekday" in options and rule.freq == _rr.WEEKLY:
            days = min(days, len(options["byweekday"]))
        size = days
        for name, full in (("byhour", 24), ("byminute", 60), ("bysecond", 60)):
            size *= len(options.get(name, range(full)))
        if min(abs(p) for p in rule.options["bysetpos"]) > size:
            why = "every BYSETPOS is beyond the instances a period can have"
    weekdays = {d if isinstance(d, int) else d.weekday for d in options.get("byweekday", [])}
    if (
        rule.freq == _rr.DAILY
        and rule.interval % 7 == 0
        and weekdays - {start.weekday()} == weekdays
    ):
        why = "every INTERVAL-th day falls on a weekday BYDAY excludes"
    if rule.freq == _rr.MONTHLY and "bymonth" in options:
        reachable = {(start.month - 1 + n * rule.interval) % 12 + 1 for n in range(12)}
        if not reachable & set(options["bymonth"]):
            why = "every INTERVAL-th month falls outside BYMONTH"
    if why is None:
        try:
            _rr.rrule(rule.freq, dtstart=start, interval=rule.interval, **options)
        except ValueError as exc:
            why = str(exc)
    if why is not None:
        raise InvalidRecurrence(f"Recurrence {text!r} never matches: {why}")


def explicit_options(start: datetime, rule: Rule) -> dict[str, Any]:
    """dateutil's options with the defaults it would take from DTSTART made explicit."""
    options = dict(rule.options)
    freq = rule.freq
    if not {"byweekno", "byyearday", "bymonthday", "byweekday"} & options.keys():
        if freq == _rr.YEARLY:
            options.setdefault("bymonth", [start.month])
            options["bymonthday"] = [start.day]
        elif freq == _rr.MONTHLY:
            options["bymonthday"] = [start.day]
        elif freq == _rr.WEEKLY:
            options["byweekday"] = [start.weekday()]
    if freq < _rr.HOURLY:
        options.setdefault("byhour", [start.hour])
    if freq < _rr.MINUTELY:
        options.setdefault("byminute", [start.minute])
    if freq < _rr.SECONDLY:
        options.setdefault("bysecond", [start.second])
    return options


def period_start(start: datetime, rule: Rule) -> datetime:
    """The start of the period (year, month, week, ...) the rule's anchor falls in."""
    freq = rule.freq
    day = datetime(start.year, start.month, start.day)
    if freq == _rr.YEARLY:
        return day.replace(month=1, day=1)
    if freq == _rr.MONTHLY:
        return day.replace(day=1)
    if freq == _rr.WEEKLY:
        wkst = rule.options.get("wkst", 0)
        return day - timedelta(days=(day.weekday() - wkst) % 7)
    if freq == _rr.DAILY:
        return day
    if freq == _rr.HOURLY:
        return start.replace(minute=0, second=0, microsecond=0)
    if freq == _rr.MINUTELY:
        return start.replace(second=0, microsecond=0)
    return start.replace(microsecond=0)
