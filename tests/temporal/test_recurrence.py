from __future__ import annotations

import itertools
from datetime import UTC, date, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from dateutil import rrule as dateutil_rrule
from hypothesis import given, settings, strategies as st

from almanac.temporal import Occurrence
from almanac.temporal.calendar import RecurrenceSet, Walk, parse_date_value
from almanac.temporal.calendar.recurrence import MAX_STEPS, _dateutil_walls, _simple_walls
from almanac.temporal.calendar.rrule import _DAYS, parse_rule
from almanac.temporal.reconcile import note_dates
from almanac.vault import InvalidRecurrence, parse_note

NY = "America/New_York"
DAY_US = 86_400_000_000
HOUR_US = 3_600_000_000


def build(anchor: str, rule: str, tz: str = NY, **kwargs: Any) -> RecurrenceSet:
    return RecurrenceSet.of(anchor=parse_date_value(anchor, tz=tz), rule=rule, tz=tz, **kwargs)


def walls(occurrences: list[Occurrence]) -> list[str]:
    return [o.local[:16] for o in occurrences]


def days(first: str, last: str, clock: str = "09:00", step: int = 1) -> list[str]:
    day, end = date.fromisoformat(first), date.fromisoformat(last)
    found = []
    while day <= end:
        found.append(f"{day}T{clock}")
        day += timedelta(days=step)
    return found


def dates(text: str, clock: str = "09:00") -> list[str]:
    return [f"{d}T{clock}" for d in text.split()]


def on(*pairs: str, clock: str = "09:00") -> list[str]:
    return [f"{p}T{clock}" for p in pairs]


# RFC 5545 section 3.8.5.3, every example; DTSTART;TZID=America/New_York.
# (id, DTSTART local, RRULE, EXDATE, expected local starts; a rule without COUNT/UNTIL is
# checked on its first len(expected) members and must have more)
RFC_EXAMPLES = [
    ("daily-10", "1997-09-02T09:00", "FREQ=DAILY;COUNT=10", (), days("1997-09-02", "1997-09-11")),
    (
        "daily-until",
        "1997-09-02T09:00",
        "FREQ=DAILY;UNTIL=19971224T000000Z",
        (),
        days("1997-09-02", "1997-12-23"),
    ),
    (
        "every-other-day",
        "1997-09-02T09:00",
        "FREQ=DAILY;INTERVAL=2",
        (),
        days("1997-09-02", "1997-10-10", step=2),
    ),
    (
        "every-10-days-5",
        "1997-09-02T09:00",
        "FREQ=DAILY;INTERVAL=10;COUNT=5",
        (),
        on("1997-09-02", "1997-09-12", "1997-09-22", "1997-10-02", "1997-10-12"),
    ),
    (
        "january-3-years-yearly",
        "1998-01-01T09:00",
        "FREQ=YEARLY;UNTIL=20000131T140000Z;BYMONTH=1;BYDAY=SU,MO,TU,WE,TH,FR,SA",
        (),
        days("1998-01-01", "1998-01-31")
        + days("1999-01-01", "1999-01-31")
        + days("2000-01-01", "2000-01-31"),
    ),
    (
        "january-3-years-daily",
        "1998-01-01T09:00",
        "FREQ=DAILY;UNTIL=20000131T140000Z;BYMONTH=1",
        (),
        days("1998-01-01", "1998-01-31")
        + days("1999-01-01", "1999-01-31")
        + days("2000-01-01", "2000-01-31"),
    ),
    (
        "weekly-10",
        "1997-09-02T09:00",
        "FREQ=WEEKLY;COUNT=10",
        (),
        days("1997-09-02", "1997-11-04", step=7),
    ),
    (
        "weekly-until",
        "1997-09-02T09:00",
        "FREQ=WEEKLY;UNTIL=19971224T000000Z",
        (),
        days("1997-09-02", "1997-12-23", step=7),
    ),
    (
        "every-other-week",
        "1997-09-02T09:00",
        "FREQ=WEEKLY;INTERVAL=2;WKST=SU",
        (),
        days("1997-09-02", "1998-02-17", step=14),
    ),
    (
        "tue-thu-5-weeks-until",
        "1997-09-02T09:00",
        "FREQ=WEEKLY;UNTIL=19971007T000000Z;WKST=SU;BYDAY=TU,TH",
        (),
        dates(
            "1997-09-02 1997-09-04 1997-09-09 1997-09-11 1997-09-16 1997-09-18 1997-09-23 "
            "1997-09-25 1997-09-30 1997-10-02"
        ),
    ),
    (
        "tue-thu-5-weeks-count",
        "1997-09-02T09:00",
        "FREQ=WEEKLY;COUNT=10;WKST=SU;BYDAY=TU,TH",
        (),
        dates(
            "1997-09-02 1997-09-04 1997-09-09 1997-09-11 1997-09-16 1997-09-18 1997-09-23 "
            "1997-09-25 1997-09-30 1997-10-02"
        ),
    ),
    (
        "every-other-week-mo-we-fr",
        "1997-09-01T09:00",
        "FREQ=WEEKLY;INTERVAL=2;UNTIL=19971224T000000Z;WKST=SU;BYDAY=MO,WE,FR",
        (),
        dates(
            "1997-09-01 1997-09-03 1997-09-05 1997-09-15 1997-09-17 1997-09-19 1997-09-29 "
            "1997-10-01 1997-10-03 1997-10-13 1997-10-15 1997-10-17 1997-10-27 1997-10-29 "
            "1997-10-31 1997-11-10 1997-11-12 1997-11-14 1997-11-24 1997-11-26 1997-11-28 "
            "1997-12-08 1997-12-10 1997-12-12 1997-12-22"
        ),
    ),
    (
        "every-other-week-tu-th-8",
        "1997-09-02T09:00",
        "FREQ=WEEKLY;INTERVAL=2;COUNT=8;WKST=SU;BYDAY=TU,TH",
        (),
        dates(
            "1997-09-02 1997-09-04 1997-09-16 1997-09-18 1997-09-30 1997-10-02 1997-10-14 "
            "1997-10-16"
        ),
    ),
    (
        "first-friday-10",
        "1997-09-05T09:00",
        "FREQ=MONTHLY;COUNT=10;BYDAY=1FR",
        (),
        dates(
            "1997-09-05 1997-10-03 1997-11-07 1997-12-05 1998-01-02 1998-02-06 1998-03-06 "
            "1998-04-03 1998-05-01 1998-06-05"
        ),
    ),
    (
        "first-friday-until",
        "1997-09-05T09:00",
        "FREQ=MONTHLY;UNTIL=19971224T000000Z;BYDAY=1FR",
        (),
        on("1997-09-05", "1997-10-03", "1997-11-07", "1997-12-05"),
    ),
    (
        "first-last-sunday-every-other-month",
        "1997-09-07T09:00",
        "FREQ=MONTHLY;INTERVAL=2;COUNT=10;BYDAY=1SU,-1SU",
        (),
        dates(
            "1997-09-07 1997-09-28 1997-11-02 1997-11-30 1998-01-04 1998-01-25 1998-03-01 "
            "1998-03-29 1998-05-03 1998-05-31"
        ),
    ),
    (
        "second-to-last-monday",
        "1997-09-22T09:00",
        "FREQ=MONTHLY;COUNT=6;BYDAY=-2MO",
        (),
        dates("1997-09-22 1997-10-20 1997-11-17 1997-12-22 1998-01-19 1998-02-16"),
    ),
    (
        "third-to-last-day",
        "1997-09-28T09:00",
        "FREQ=MONTHLY;BYMONTHDAY=-3",
        (),
        on("1997-09-28", "1997-10-29", "1997-11-28", "1997-12-29", "1998-01-29", "1998-02-26"),
    ),
    (
        "2nd-and-15th",
        "1997-09-02T09:00",
        "FREQ=MONTHLY;COUNT=10;BYMONTHDAY=2,15",
        (),
        dates(
            "1997-09-02 1997-09-15 1997-10-02 1997-10-15 1997-11-02 1997-11-15 1997-12-02 "
            "1997-12-15 1998-01-02 1998-01-15"
        ),
    ),
    (
        "first-and-last-day",
        "1997-09-30T09:00",
        "FREQ=MONTHLY;COUNT=10;BYMONTHDAY=1,-1",
        (),
        dates(
            "1997-09-30 1997-10-01 1997-10-31 1997-11-01 1997-11-30 1997-12-01 1997-12-31 "
            "1998-01-01 1998-01-31 1998-02-01"
        ),
    ),
    (
        "every-18-months-10th-to-15th",
        "1997-09-10T09:00",
        "FREQ=MONTHLY;INTERVAL=18;COUNT=10;BYMONTHDAY=10,11,12,13,14,15",
        (),
        days("1997-09-10", "1997-09-15") + days("1999-03-10", "1999-03-13"),
    ),
    (
        "every-tuesday-every-other-month",
        "1997-09-02T09:00",
        "FREQ=MONTHLY;INTERVAL=2;BYDAY=TU",
        (),
        days("1997-09-02", "1997-09-30", step=7)
        + days("1997-11-04", "1997-11-25", step=7)
        + days("1998-01-06", "1998-01-27", step=7)
        + days("1998-03-03", "1998-03-31", step=7),
    ),
    (
        "june-july-10",
        "1997-06-10T09:00",
        "FREQ=YEARLY;COUNT=10;BYMONTH=6,7",
        (),
        on(*[f"{y}-{m}-10" for y in range(1997, 2002) for m in ("06", "07")]),
    ),
    (
        "every-other-year-jan-feb-mar",
        "1997-03-10T09:00",
        "FREQ=YEARLY;INTERVAL=2;COUNT=10;BYMONTH=1,2,3",
        (),
        on("1997-03-10", *[f"{y}-{m}-10" for y in (1999, 2001, 2003) for m in ("01", "02", "03")]),
    ),
    (
        "every-third-year-yeardays",
        "1997-01-01T09:00",
        "FREQ=YEARLY;INTERVAL=3;COUNT=10;BYYEARDAY=1,100,200",
        (),
        dates(
            "1997-01-01 1997-04-10 1997-07-19 2000-01-01 2000-04-09 2000-07-18 2003-01-01 "
            "2003-04-10 2003-07-19 2006-01-01"
        ),
    ),
    (
        "20th-monday",
        "1997-05-19T09:00",
        "FREQ=YEARLY;BYDAY=20MO",
        (),
        on("1997-05-19", "1998-05-18", "1999-05-17"),
    ),
    (
        "monday-of-week-20",
        "1997-05-12T09:00",
        "FREQ=YEARLY;BYWEEKNO=20;BYDAY=MO",
        (),
        on("1997-05-12", "1998-05-11", "1999-05-17"),
    ),
    (
        "thursdays-in-march",
        "1997-03-13T09:00",
        "FREQ=YEARLY;BYMONTH=3;BYDAY=TH",
        (),
        dates(
            "1997-03-13 1997-03-20 1997-03-27 1998-03-05 1998-03-12 1998-03-19 1998-03-26 "
            "1999-03-04 1999-03-11 1999-03-18 1999-03-25"
        ),
    ),
    (
        "thursdays-in-summer",
        "1997-06-05T09:00",
        "FREQ=YEARLY;BYDAY=TH;BYMONTH=6,7,8",
        (),
        days("1997-06-05", "1997-08-28", step=7)
        + days("1998-06-04", "1998-08-27", step=7)
        + days("1999-06-03", "1999-08-26", step=7),
    ),
    (
        "friday-13th",
        "1997-09-02T09:00",
        "FREQ=MONTHLY;BYDAY=FR;BYMONTHDAY=13",
        ("1997-09-02T09:00",),
        on("1998-02-13", "1998-03-13", "1998-11-13", "1999-08-13", "2000-10-13"),
    ),
    (
        "saturday-after-first-sunday",
        "1997-09-13T09:00",
        "FREQ=MONTHLY;BYDAY=SA;BYMONTHDAY=7,8,9,10,11,12,13",
        (),
        dates(
            "1997-09-13 1997-10-11 1997-11-08 1997-12-13 1998-01-10 1998-02-07 1998-03-07 "
            "1998-04-11 1998-05-09 1998-06-13"
        ),
    ),
    (
        "election-day",
        "1996-11-05T09:00",
        "FREQ=YEARLY;INTERVAL=4;BYMONTH=11;BYDAY=TU;BYMONTHDAY=2,3,4,5,6,7,8",
        (),
        on("1996-11-05", "2000-11-07", "2004-11-02"),
    ),
    (
        "third-tu-we-th",
        "1997-09-04T09:00",
        "FREQ=MONTHLY;COUNT=3;BYDAY=TU,WE,TH;BYSETPOS=3",
        (),
        on("1997-09-04", "1997-10-07", "1997-11-06"),
    ),
    (
        "second-to-last-weekday",
        "1997-09-29T09:00",
        "FREQ=MONTHLY;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=-2",
        (),
        dates("1997-09-29 1997-10-30 1997-11-27 1997-12-30 1998-01-29 1998-02-26 1998-03-30"),
    ),
    (
        "every-3-hours",
        "1997-09-02T09:00",
        "FREQ=HOURLY;INTERVAL=3;UNTIL=19970902T170000Z",
        (),
        ["1997-09-02T09:00", "1997-09-02T12:00"],
    ),
    (
        "every-15-minutes-6",
        "1997-09-02T09:00",
        "FREQ=MINUTELY;INTERVAL=15;COUNT=6",
        (),
        on("1997-09-02", clock="09:00")
        + ["1997-09-02T09:15", "1997-09-02T09:30", "1997-09-02T09:45", "1997-09-02T10:00"]
        + ["1997-09-02T10:15"],
    ),
    (
        "every-90-minutes-4",
        "1997-09-02T09:00",
        "FREQ=MINUTELY;INTERVAL=90;COUNT=4",
        (),
        ["1997-09-02T09:00", "1997-09-02T10:30", "1997-09-02T12:00", "1997-09-02T13:30"],
    ),
    (
        "every-20-minutes-9-to-1640-daily",
        "1997-09-02T09:00",
        "FREQ=DAILY;BYHOUR=9,10,11,12,13,14,15,16;BYMINUTE=0,20,40",
        (),
        [
            f"1997-09-0{d}T{h:02d}:{m:02d}"
            for d in (2, 3)
            for h in range(9, 17)
            for m in (0, 20, 40)
        ],
    ),
    (
        "every-20-minutes-9-to-1640-minutely",
        "1997-09-02T09:00",
        "FREQ=MINUTELY;INTERVAL=20;BYHOUR=9,10,11,12,13,14,15,16",
        (),
        [
            f"1997-09-0{d}T{h:02d}:{m:02d}"
            for d in (2, 3)
            for h in range(9, 17)
            for m in (0, 20, 40)
        ],
    ),
    (
        "wkst-mo",
        "1997-08-05T09:00",
        "FREQ=WEEKLY;INTERVAL=2;COUNT=4;BYDAY=TU,SU;WKST=MO",
        (),
        on("1997-08-05", "1997-08-10", "1997-08-19", "1997-08-24"),
    ),
    (
        "wkst-su",
        "1997-08-05T09:00",
        "FREQ=WEEKLY;INTERVAL=2;COUNT=4;BYDAY=TU,SU;WKST=SU",
        (),
        on("1997-08-05", "1997-08-17", "1997-08-19", "1997-08-31"),
    ),
    (
        "invalid-dates-ignored",
        "2007-01-15T09:00",
        "FREQ=MONTHLY;BYMONTHDAY=15,30;COUNT=5",
        (),
        on("2007-01-15", "2007-01-30", "2007-02-15", "2007-03-15", "2007-03-30"),
    ),
]


@pytest.mark.parametrize(
    ("anchor", "rule", "exdates", "expected"),
    [pytest.param(*case[1:], id=case[0]) for case in RFC_EXAMPLES],
)
def test_rfc5545_examples(anchor, rule, exdates, expected):
    bounded = "COUNT=" in rule or "UNTIL=" in rule
    found, more = build(anchor, rule, exdates=exdates).first(len(expected) + (0 if bounded else 0))
    assert walls(found) == expected
    if bounded:
        assert build(anchor, rule, exdates=exdates).first(len(expected) + 5) == (found, False)
    else:
        assert more
    zone = ZoneInfo(NY)
    for index, occurrence in enumerate(found):
        local = datetime.fromisoformat(occurrence.local)
        assert local.utcoffset() == local.replace(tzinfo=zone).utcoffset()
        assert occurrence.start_us == occurrence.end_us == _us(local)
        assert (occurrence.index, occurrence.floating) == (index, False)


def _us(moment: datetime) -> int:
    delta = moment - datetime(1970, 1, 1, tzinfo=UTC)
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


def test_dateutil_cuts_a_first_week_for_bysetpos_and_we_do_not():
    # RFC 5545: BYSETPOS picks within the whole week (MO 30 Mar, WE 1 Apr, FR 3 Apr), so the
    # 2nd is WE 1 Apr; dateutil alone starts the first week at DTSTART and picks FR 3 Apr.
    rule = "FREQ=WEEKLY;BYDAY=MO,WE,FR;BYSETPOS=2;COUNT=3"
    raw = dateutil_rrule.rrulestr(f"RRULE:{rule}", dtstart=datetime(2026, 4, 1, 10))
    assert list(raw)[0] == datetime(2026, 4, 3, 10)
    found, more = build("2026-04-01T10:00", rule, tz="Europe/Berlin").first(10)
    assert walls(found) == on("2026-04-01", "2026-04-08", "2026-04-15", clock="10:00")
    assert not more


@pytest.mark.parametrize(
    ("tz", "anchor", "expected"),
    [
        pytest.param(
            "Europe/Berlin",
            "2026-03-27T09:30",
            [
                "2026-03-27T09:30:00+01:00",
                "2026-03-28T09:30:00+01:00",
                "2026-03-29T09:30:00+02:00",
                "2026-03-30T09:30:00+02:00",
            ],
            id="dst-spring-forward-berlin-0930",
        ),
        pytest.param(
            "Europe/Berlin",
            "2026-03-27T02:30",
            [
                "2026-03-27T02:30:00+01:00",
                "2026-03-28T02:30:00+01:00",
                "2026-03-29T03:30:00+02:00",
                "2026-03-30T02:30:00+02:00",
            ],
            id="dst-gap-berlin-0230-offset-before-gap",
        ),
        pytest.param(
            "Europe/Berlin",
            "2026-10-23T09:30",
            [
                "2026-10-23T09:30:00+02:00",
                "2026-10-24T09:30:00+02:00",
                "2026-10-25T09:30:00+01:00",
                "2026-10-26T09:30:00+01:00",
            ],
            id="dst-fall-back-berlin-0930",
        ),
        pytest.param(
            "Europe/Berlin",
            "2026-10-23T02:30",
            [
                "2026-10-23T02:30:00+02:00",
                "2026-10-24T02:30:00+02:00",
                "2026-10-25T02:30:00+02:00",
                "2026-10-26T02:30:00+01:00",
            ],
            id="dst-fall-back-berlin-0230-first-of-repeated",
        ),
        pytest.param(
            NY,
            "2026-03-06T09:30",
            [
                "2026-03-06T09:30:00-05:00",
                "2026-03-07T09:30:00-05:00",
                "2026-03-08T09:30:00-04:00",
                "2026-03-09T09:30:00-04:00",
            ],
            id="dst-spring-forward-new-york-0930",
        ),
        pytest.param(
            NY,
            "2026-03-06T02:30",
            [
                "2026-03-06T02:30:00-05:00",
                "2026-03-07T02:30:00-05:00",
                "2026-03-08T03:30:00-04:00",
                "2026-03-09T02:30:00-04:00",
            ],
            id="dst-gap-new-york-0230-offset-before-gap",
        ),
        pytest.param(
            NY,
            "2026-10-30T01:30",
            [
                "2026-10-30T01:30:00-04:00",
                "2026-10-31T01:30:00-04:00",
                "2026-11-01T01:30:00-04:00",
                "2026-11-02T01:30:00-05:00",
            ],
            id="dst-fall-back-new-york-0130-first-of-repeated",
        ),
    ],
)
def test_wall_clock_is_kept_across_dst(tz, anchor, expected):
    found, more = build(anchor, "FREQ=DAILY", tz=tz).first(4)
    assert [o.local for o in found] == expected
    assert more
    assert [o.start_us for o in found] == [_us(datetime.fromisoformat(t)) for t in expected]


def test_anchor_inside_the_gap_keeps_its_written_wall_time():
    found, _ = build("2026-03-29T02:30", "FREQ=DAILY", tz="Europe/Berlin").first(2)
    assert [o.local for o in found] == ["2026-03-29T03:30:00+02:00", "2026-03-30T02:30:00+02:00"]
    assert found[0].start_us == parse_date_value("2026-03-29T01:30:00Z").start_us


def test_half_hourly_across_the_gap_collapses_and_stays_ordered():
    found, _ = build(
        "2026-03-29T00:00", "FREQ=MINUTELY;INTERVAL=30;COUNT=9", tz="Europe/Berlin"
    ).first(20)
    starts = [o.start_us for o in found]
    assert starts == sorted(set(starts))
    assert [o.local[11:16] for o in found] == [
        "00:00",
        "00:30",
        "01:00",
        "01:30",
        "03:00",
        "03:30",
        "04:00",
    ]


@pytest.mark.parametrize(
    ("rule", "last"),
    [
        pytest.param(
            "FREQ=DAILY;UNTIL=20260330T073000Z", "2026-03-30", id="utc-until-instant-equal"
        ),
        pytest.param(
            "FREQ=DAILY;UNTIL=20260330T072959Z", "2026-03-29", id="utc-until-instant-before"
        ),
        pytest.param("FREQ=DAILY;UNTIL=20260330T083000", "2026-03-29", id="local-until-wall-time"),
        pytest.param("FREQ=DAILY;UNTIL=20260330T093000", "2026-03-30", id="local-until-equal"),
        pytest.param("FREQ=DAILY;UNTIL=20260330", "2026-03-30", id="date-until-whole-day"),
    ],
)
def test_until(rule, last):
    # 09:30 Berlin on 2026-03-30 is 07:30Z (summer time since the 29th).
    found, more = build("2026-03-27T09:30", rule, tz="Europe/Berlin").first(10)
    assert found[-1].local[:10] == last
    assert not more


def test_until_in_utc_before_dst_change_is_an_instant():
    # In winter 09:30 local is 08:30Z: 08:00Z on the 28th excludes the 28th.
    found, _ = build(
        "2026-03-27T09:30", "FREQ=DAILY;UNTIL=20260328T080000Z", tz="Europe/Berlin"
    ).first(5)
    assert walls(found) == on("2026-03-27", clock="09:30")


WEEKLY = "FREQ=WEEKLY;BYDAY=MO;COUNT=5"


@pytest.mark.parametrize(
    ("exdates", "rdates", "expected"),
    [
        pytest.param((), (), ["01-05", "01-12", "01-19", "01-26", "02-02"], id="count-5"),
        pytest.param(
            ("2026-01-19T10:00",), (), ["01-05", "01-12", "01-26", "02-02"], id="exdate-after-count"
        ),
        pytest.param(("2026-01-19",), (), ["01-05", "01-12", "01-26", "02-02"], id="exdate-date"),
        pytest.param(
            ("2026-01-19T09:00:00Z",), (), ["01-05", "01-12", "01-26", "02-02"], id="exdate-utc"
        ),
        pytest.param(
            ("2026-01-19T11:00",),
            (),
            ["01-05", "01-12", "01-19", "01-26", "02-02"],
            id="exdate-other-time-keeps",
        ),
        pytest.param(
            ("2026-01-05T10:00",), (), ["01-12", "01-19", "01-26", "02-02"], id="exdate-anchor"
        ),
        pytest.param(
            (),
            ("2026-01-14T15:00",),
            ["01-05", "01-12", "01-14", "01-19", "01-26", "02-02"],
            id="rdate-adds",
        ),
        pytest.param(
            (),
            ("2026-01-12T10:00", "2026-01-12T09:00:00Z"),
            ["01-05", "01-12", "01-19", "01-26", "02-02"],
            id="rdate-equal-to-rule-instance",
        ),
        pytest.param(
            (),
            ("2026-03-01",),
            ["01-05", "01-12", "01-19", "01-26", "02-02", "03-01"],
            id="rdate-date-at-anchor-time",
        ),
        pytest.param(
            ("2026-01-14T15:00",),
            ("2026-01-14T15:00",),
            ["01-05", "01-12", "01-19", "01-26", "02-02"],
            id="exdate-removes-rdate",
        ),
        pytest.param(
            ("not a date",),
            ("2026-13-01",),
            ["01-05", "01-12", "01-19", "01-26", "02-02"],
            id="unreadable-items-skipped",
        ),
    ],
)
def test_exdates_and_rdates(exdates, rdates, expected):
    found, more = build(
        "2026-01-05T10:00", WEEKLY, tz="Europe/Berlin", exdates=exdates, rdates=rdates
    ).first(10)
    assert [o.local[5:10] for o in found] == expected
    assert [o.index for o in found] == list(range(len(expected)))
    assert all(o.local[11:] in ("10:00:00+01:00", "15:00:00+01:00") for o in found)
    assert not more


def test_anchor_is_the_first_instance_and_counts():
    # The anchor (a Tuesday) is not a Monday; it still counts as the first of COUNT.
    found, _ = build("2026-01-06T10:00", "FREQ=WEEKLY;BYDAY=MO;COUNT=3", tz="Europe/Berlin").first(
        9
    )
    assert [o.local[:10] for o in found] == ["2026-01-06", "2026-01-12", "2026-01-19"]


def test_rdates_only():
    found, more = RecurrenceSet.of(
        anchor=parse_date_value("2026-01-05T10:00:00Z"),
        rule=None,
        rdates=("2026-01-03T10:00:00Z", "2026-02-01T10:00:00Z"),
    ).first(5)
    assert [o.local for o in found] == [
        "2026-01-03T10:00:00+00:00",
        "2026-01-05T10:00:00+00:00",
        "2026-02-01T10:00:00+00:00",
    ]
    assert not more


@pytest.mark.parametrize(
    ("ends", "length"),
    [pytest.param(None, DAY_US, id="one-day"), pytest.param("2026-03-28", 2 * DAY_US, id="ends")],
)
def test_floating_dates(ends, length):
    recurrence = RecurrenceSet.of(
        anchor=parse_date_value("2026-03-27"),
        rule="FREQ=WEEKLY;COUNT=4",
        exdates=("2026-04-03",),
        rdates=("2026-04-05",),
        tz="Europe/Berlin",
        ends=None if ends is None else parse_date_value(ends),
    )
    assert recurrence.floating
    found, more = recurrence.first(10)
    assert [o.local for o in found] == ["2026-03-27", "2026-04-05", "2026-04-10", "2026-04-17"]
    assert all(o.floating for o in found)
    assert [o.start_us for o in found] == [parse_date_value(o.local).start_us for o in found]
    assert all(o.end_us - o.start_us == length for o in found)
    assert not more


@pytest.mark.parametrize(
    "parts", ["BYHOUR=10,12", "BYMINUTE=0,30", "BYSECOND=15", "BYHOUR=9;BYMINUTE=5;BYSECOND=1"]
)
def test_time_parts_on_a_date_anchor_are_ignored(parts):
    # RFC 5545 3.3.10: BYSECOND, BYMINUTE and BYHOUR "MUST be ignored" with a DATE DTSTART.
    recurrence = RecurrenceSet.of(
        anchor=parse_date_value("2024-10-18"), rule=f"FREQ=DAILY;COUNT=3;{parts}", tz="UTC"
    )
    found, more = recurrence.first(10)
    assert [o.local for o in found] == ["2024-10-18", "2024-10-19", "2024-10-20"]
    assert not more


def test_duration_from_ends_at():
    recurrence = RecurrenceSet.of(
        anchor=parse_date_value("2026-03-27T09:30", tz="Europe/Berlin"),
        rule="FREQ=DAILY",
        tz="Europe/Berlin",
        ends=parse_date_value("2026-03-27T10:15", tz="Europe/Berlin"),
    )
    found, _ = recurrence.first(3)
    assert all(o.end_us - o.start_us == 45 * 60_000_000 for o in found)


def test_offset_anchor_with_timezone_expands_in_the_zone():
    recurrence = RecurrenceSet.of(
        anchor=parse_date_value("2026-03-27T09:30:00+01:00"), rule="FREQ=DAILY", tz="Europe/Berlin"
    )
    found, _ = recurrence.first(3)
    assert [o.local for o in found][-1] == "2026-03-29T09:30:00+02:00"


@pytest.mark.parametrize(
    ("anchor", "tz", "rule", "exdates", "issue", "field"),
    [
        pytest.param(
            "2026-03-27T09:30:00+01:00",
            None,
            "FREQ=DAILY",
            (),
            "recurrence_needs_timezone",
            "recurrence",
            id="offset-anchor",
        ),
        pytest.param(
            "2026-03", None, "FREQ=DAILY", (), "invalid_recurrence", "recurrence", id="month-anchor"
        ),
        pytest.param(
            "2026-03-27",
            None,
            "FREQ=SOMETIMES",
            (),
            "invalid_recurrence",
            "recurrence",
            id="bad-freq",
        ),
        pytest.param(
            "2026-03-27",
            None,
            "every tuesday",
            (),
            "invalid_recurrence",
            "recurrence",
            id="not-an-rrule",
        ),
        pytest.param(
            "2026-03-27", None, "COUNT=3", (), "invalid_recurrence", "recurrence", id="no-freq"
        ),
        pytest.param(
            "2026-03-27",
            None,
            "FREQ=DAILY;FREQ=WEEKLY",
            (),
            "invalid_recurrence",
            "recurrence",
            id="twice",
        ),
        pytest.param(
            "2026-03-27",
            None,
            "FREQ=DAILY;COUNT=3;UNTIL=20260401",
            (),
            "invalid_recurrence",
            "recurrence",
            id="count-and-until",
        ),
        pytest.param(
            "2026-03-27",
            None,
            "FREQ=YEARLY;BYEASTER=0",
            (),
            "invalid_recurrence",
            "recurrence",
            id="byeaster-not-rfc",
        ),
        pytest.param(
            "2026-03-27",
            None,
            "FREQ=WEEKLY;BYDAY=1MO",
            (),
            "invalid_recurrence",
            "recurrence",
            id="numbered-weekday-in-weekly",
        ),
        pytest.param(
            "2026-03-27",
            None,
            "FREQ=WEEKLY;BYMONTHDAY=1",
            (),
            "invalid_recurrence",
            "recurrence",
            id="bymonthday-in-weekly",
        ),
        pytest.param(
            "2026-03-27",
            None,
            "FREQ=MONTHLY;BYWEEKNO=1",
            (),
            "invalid_recurrence",
            "recurrence",
            id="byweekno-not-yearly",
        ),
        pytest.param(
            "2026-03-27",
            None,
            "FREQ=MONTHLY;BYSETPOS=1",
            (),
            "invalid_recurrence",
            "recurrence",
            id="bysetpos-alone",
        ),
        pytest.param(
            "2026-03-27",
            None,
            "FREQ=MONTHLY;BYMONTHDAY=32",
            (),
            "invalid_recurrence",
            "recurrence",
            id="monthday-range",
        ),
        pytest.param(
            "2026-03-27",
            None,
            "FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=30",
            (),
            "invalid_recurrence",
            "recurrence",
            id="february-30-never",
        ),
        pytest.param(
            "2026-03-27",
            None,
            "FREQ=DAILY;INTERVAL=0",
            (),
            "invalid_recurrence",
            "recurrence",
            id="interval-0",
        ),
        pytest.param(
            "2026-03-27",
            None,
            "FREQ=DAILY;UNTIL=2026",
            (),
            "invalid_recurrence",
            "recurrence",
            id="until-form",
        ),
        pytest.param(
            "2026-03-27",
            None,
            "FREQ=HOURLY",
            (),
            "invalid_recurrence",
            "recurrence",
            id="hourly-on-date-anchor",
        ),
        pytest.param(
            "2026-03-27",
            None,
            "FREQ=DAILY",
            ("2026-04",),
            "invalid_recurrence",
            "exdates",
            id="month-exdate",
        ),
        pytest.param(
            "2026-03-27",
            None,
            "FREQ=DAILY",
            ("2026-04-01T10:00:00Z",),
            "invalid_recurrence",
            "exdates",
            id="timed-exdate-of-date-set",
        ),
        pytest.param(
            "2026-01-06T10:00:00Z",
            None,
            "FREQ=DAILY;INTERVAL=7;BYDAY=MO",
            (),
            "invalid_recurrence",
            "recurrence",
            id="never-daily-interval-weekday",
        ),
        pytest.param(
            "2026-01-06T10:00:00Z",
            None,
            "FREQ=WEEKLY;BYDAY=MO;BYSETPOS=2",
            (),
            "invalid_recurrence",
            "recurrence",
            id="never-bysetpos-beyond-period",
        ),
        pytest.param(
            "2026-01-06T10:00:00Z",
            None,
            "FREQ=MONTHLY;INTERVAL=12;BYMONTH=6",
            (),
            "invalid_recurrence",
            "recurrence",
            id="never-interval-months",
        ),
        pytest.param(
            "2026-01-06T10:00:00Z",
            None,
            "FREQ=HOURLY;INTERVAL=24;BYHOUR=11",
            (),
            "invalid_recurrence",
            "recurrence",
            id="never-dateutil-empty-set",
        ),
    ],
)
def test_refused(anchor, tz, rule, exdates, issue, field):
    with pytest.raises(InvalidRecurrence) as caught:
        RecurrenceSet.of(anchor=parse_date_value(anchor), rule=rule, tz=tz, exdates=exdates)
    assert (caught.value.issue, caught.value.field) == (issue, field)
    assert caught.value.code == "BAD_USER_INPUT"


@pytest.mark.parametrize(
    "rule",
    [
        "FREQ=WEEKLY;BYDAY=MO;COUNT=3",
        "RRULE:FREQ=WEEKLY;BYDAY=MO;COUNT=3",
        "freq=weekly;byday=mo;count=3",
    ],
)
def test_accepted_spellings(rule):
    assert len(build("2026-01-05T10:00", rule).first(10)[0]) == 3


def test_utc_anchor_without_zone_is_utc():
    found, _ = RecurrenceSet.of(
        anchor=parse_date_value("2026-03-27T09:30:00Z"), rule="FREQ=DAILY"
    ).first(3)
    assert [o.local for o in found][-1] == "2026-03-29T09:30:00+00:00"


def test_between_overlap_limit_and_indexes():
    recurrence = build(
        "2026-01-05T10:00",
        "FREQ=DAILY",
        tz="Europe/Berlin",
        ends=parse_date_value("2026-01-05T11:00", tz="Europe/Berlin"),
    )
    first, _ = recurrence.first(40)
    since = first[10].start_us + 30 * 60_000_000  # inside occurrence 10: it overlaps
    until = first[20].start_us  # occurrence 20 starts on the bound: it matches
    found, more = recurrence.between(since, until, limit=100)
    assert found == first[10:21]
    assert not more
    found, more = recurrence.between(since, until, limit=3)
    assert (found, more) == (first[10:13], True)
    assert recurrence.between(since, until, limit=11) == (first[10:21], False)


def test_between_instants_match_inclusive_bounds():
    recurrence = build("2026-01-05T10:00", "FREQ=DAILY;COUNT=5", tz="Europe/Berlin")
    first, _ = recurrence.first(5)
    assert recurrence.between(first[1].start_us, first[3].start_us, limit=9) == (first[1:4], False)
    assert recurrence.between(first[1].start_us + 1, first[3].start_us - 1, limit=9) == (
        first[2:3],
        False,
    )
    assert recurrence.between(first[4].start_us + 1, first[4].start_us + DAY_US, limit=9) == (
        [],
        False,
    )


def test_between_stops_at_the_step_bound():
    recurrence = build("2026-01-05T10:00", "FREQ=SECONDLY", tz="Europe/Berlin")
    anchor = parse_date_value("2026-01-05T10:00", tz="Europe/Berlin").start_us
    found, truncated = recurrence.between(anchor + 30 * DAY_US, anchor + 31 * DAY_US, limit=10)
    assert (found, truncated) == ([], True)
    # Within reach, the same rule answers, with indexes counted from the anchor.
    found, truncated = recurrence.between(anchor + 10_000_000, anchor + 12_000_000, limit=10)
    assert [o.index for o in found] == [10, 11, 12]
    assert not truncated
    assert MAX_STEPS < 30 * 86_400


def test_index_is_stable_when_later_exceptions_change():
    base, _ = build("2026-01-05T10:00", "FREQ=WEEKLY", tz="Europe/Berlin").first(10)
    later, _ = build(
        "2026-01-05T10:00", "FREQ=WEEKLY", tz="Europe/Berlin", exdates=("2026-03-02T10:00",)
    ).first(10)
    assert later[:8] == base[:8]  # 2026-03-02 is the 9th: nothing before it moves
    assert (later[8].index, later[8].start_us) == (8, base[9].start_us)


@settings(max_examples=60, deadline=None)
@given(
    freq=st.sampled_from(["DAILY", "WEEKLY", "MONTHLY"]),
    interval=st.integers(1, 3),
    byday=st.lists(
        st.sampled_from(["MO", "TU", "WE", "TH", "FR", "SA", "SU"]), max_size=3, unique=True
    ),
    count=st.none() | st.integers(1, 60),
    day=st.dates(date(2020, 1, 1), date(2030, 12, 31)),
    minute=st.integers(0, 24 * 60 - 1),
    tz=st.sampled_from(["Europe/Berlin", NY, "UTC", "Australia/Lord_Howe"]),
    window=st.tuples(st.integers(0, 400), st.integers(0, 60)),
    hours=st.integers(0, 30),
)
def test_between_is_the_filter_of_first(
    freq, interval, byday, count, day, minute, tz, window, hours
):
    rule = f"FREQ={freq};INTERVAL={interval}"
    if byday:
        rule += ";BYDAY=" + ",".join(byday)
    if count is not None:
        rule += f";COUNT={count}"
    anchor = f"{day}T{minute // 60:02d}:{minute % 60:02d}"
    recurrence = build(
        anchor,
        rule,
        tz=tz,
        ends=parse_date_value(f"{day}T{minute // 60:02d}:{minute % 60:02d}", tz=tz)
        if hours == 0
        else None,
    )
    everything, _ = recurrence.first(300)
    assert [o.index for o in everything] == list(range(len(everything)))
    starts = [o.start_us for o in everything]
    assert starts == sorted(set(starts))
    start = everything[0].start_us
    since = start + window[0] * DAY_US + hours * HOUR_US
    until = since + window[1] * DAY_US
    if everything[-1].start_us <= until and len(everything) == 300:
        return  # the window reaches past what first(300) holds
    expected = [o for o in everything if since <= o.start_us <= until]
    found, more = recurrence.between(since, until, limit=300)
    assert (found, more) == (expected, False)
    if len(expected) > 1:
        assert recurrence.between(since, until, limit=1) == (expected[:1], True)


@pytest.mark.parametrize(
    ("rule", "anchor"),
    [
        pytest.param("FREQ=WEEKLY;BYDAY=MO,TH", "2026-01-05T10:00", id="weekly"),
        pytest.param("FREQ=DAILY", "2026-01-05T10:00", id="daily"),
    ],
)
def test_first_2000_steps_about_as_many_instances(rule, anchor):
    """The expansion is lazy: it steps through the instances it returns, a few more for the
    reorder buffer, not the rule's whole run to `MAX_STEPS` (bench/recurrence.py times it)."""
    recurrence = build(anchor, rule, tz="Europe/Berlin")
    walk = Walk()
    found, more = recurrence.first(2000, walk=walk)
    assert len(found) == 2000 and more
    assert len(found) <= walk.steps <= len(found) + 2
    assert not walk.truncated


@pytest.mark.parametrize("limit", [1, 10, 500])
def test_between_steps_through_the_window_not_the_rule(limit):
    """A window a year after the anchor costs that year's steps, whatever the limit."""
    recurrence = build("2026-01-05T10:00", "FREQ=DAILY", tz="Europe/Berlin")
    since = parse_date_value("2027-01-05T00:00", tz="Europe/Berlin").start_us
    walk = Walk()
    found, more = recurrence.between(since, since + 1000 * DAY_US, limit=limit, walk=walk)
    assert len(found) == limit and more
    assert 365 + limit <= walk.steps <= 365 + limit + 2


@pytest.mark.parametrize(
    ("lines", "expected"),
    [
        pytest.param(
            [
                "occurred_at: 2026-01-05T10:00",
                "timezone: Europe/Berlin",
                "recurrence: FREQ=WEEKLY;BYDAY=MO",
                "exdates: [2026-01-12T10:00]",
            ],
            [],
            id="valid",
        ),
        pytest.param(
            ["occurred_at: 2024-10-18", "recurrence: FREQ=DAILY;COUNT=3;BYHOUR=10,12"],
            [],
            id="byhour-on-a-date-is-ignored",
        ),
        pytest.param(
            ["occurred_at: 2026-01-05", "recurrence: FREQ=YEARLY;BYEASTER=0"],
            [("recurrence", "invalid_recurrence")],
            id="byeaster",
        ),
        pytest.param(
            ["occurred_at: 2026-01-05", "recurrence: FREQ=DAILY", "exdates: [2026-02]"],
            [("exdates", "invalid_recurrence")],
            id="month-exdate",
        ),
        pytest.param(
            ["occurred_at: 2026-01-05T10:00:00+01:00", "recurrence: FREQ=DAILY"],
            [("recurrence", "recurrence_needs_timezone")],
            id="offset-anchor",
        ),
        pytest.param(
            ["occurred_at: 2026-01-05", "rdates: [2026-01-09]", "exdates: [2026-13-01]"],
            [("exdates", "invalid_date")],
            id="bad-exdate-is-a-date-issue-only",
        ),
    ],
)
def test_reconcile_reports_what_the_engine_refuses(lines, expected):
    text = "---\n" + "\n".join(["id: r", *lines]) + "\n---\nBody.\n"
    note = parse_note("r.md", text.encode()).note
    assert note is not None
    _, tz, issues = note_dates(note)
    assert [(i.field, i.code) for i in issues] == expected
    anchor = parse_date_value(note.dates["occurred_at"], tz=tz)
    try:
        RecurrenceSet.of(
            anchor=anchor, rule=note.recurrence, exdates=note.exdates, rdates=note.rdates, tz=tz
        )
    except InvalidRecurrence as exc:
        assert (exc.field, exc.issue) == expected[0]
    else:
        assert all(code != "invalid_recurrence" for _, code in expected)


@settings(max_examples=80, deadline=None)
@given(
    weekly=st.booleans(),
    interval=st.integers(1, 4),
    byday=st.lists(st.sampled_from(list(_DAYS)), max_size=4, unique=True),
    wkst=st.none() | st.sampled_from(list(_DAYS)),
    until=st.none() | st.dates(date(2020, 1, 1), date(2031, 12, 31)),
    start=st.datetimes(datetime(2019, 1, 1), datetime(2030, 12, 31)),
)
def test_simple_walls_equal_dateutil_walls(weekly, interval, byday, wkst, until, start):
    # The fast path for DAILY and WEEKLY-by-weekday rules must agree with dateutil.
    rule = f"FREQ={'WEEKLY' if weekly else 'DAILY'};INTERVAL={interval}"
    if byday and weekly:
        rule += ";BYDAY=" + ",".join(byday)
    if wkst:
        rule += f";WKST={wkst}"
    if until:
        rule += f";UNTIL={until:%Y%m%d}"
    checked = parse_rule(rule, floating=False)
    simple = list(itertools.islice(_simple_walls(start, checked), 300))
    assert simple == list(itertools.islice(_dateutil_walls(start, checked), 300))
    assert all(wall >= start for wall in simple)
