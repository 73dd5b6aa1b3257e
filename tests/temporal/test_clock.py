"""Local days, weeks and clock relations (SPEC "Dates" and the Timeline clock rules)."""

from __future__ import annotations

import sqlite3
from datetime import date

import pytest

from almanac.temporal import (
    ClockRelation,
    format_instant,
    local_day,
    parse_local_date,
    parse_query_bound,
    week_of,
)
from almanac.temporal.calendar import (
    clock_sql,
    distance,
    distance_sql,
    local_date,
    parse_date_value,
    wall_us,
)
from almanac.vault import InvalidDate, UnknownTimezone

HOUR = 3_600_000_000


def us(text: str) -> int:
    return parse_date_value(text).start_us


# (zone, date, UTC start, UTC end, hours): DST days in Europe and America, +14 and -11.
DAYS = [
    ("UTC", "2026-03-29", "2026-03-29T00:00:00Z", "2026-03-30T00:00:00Z", 24),
    ("Europe/Berlin", "2026-03-29", "2026-03-28T23:00:00Z", "2026-03-29T22:00:00Z", 23),
    ("Europe/Berlin", "2026-10-25", "2026-10-24T22:00:00Z", "2026-10-25T23:00:00Z", 25),
    ("Europe/Berlin", "2026-06-01", "2026-05-31T22:00:00Z", "2026-06-01T22:00:00Z", 24),
    ("America/New_York", "2026-03-08", "2026-03-08T05:00:00Z", "2026-03-09T04:00:00Z", 23),
    ("America/New_York", "2026-11-01", "2026-11-01T04:00:00Z", "2026-11-02T05:00:00Z", 25),
    ("Pacific/Kiritimati", "2026-01-01", "2025-12-31T10:00:00Z", "2026-01-01T10:00:00Z", 24),
    ("Pacific/Pago_Pago", "2026-01-01", "2026-01-01T11:00:00Z", "2026-01-02T11:00:00Z", 24),
    ("Australia/Lord_Howe", "2026-04-05", "2026-04-04T13:00:00Z", "2026-04-05T13:30:00Z", 24.5),
]


@pytest.mark.parametrize(("zone", "day", "start", "end", "hours"), DAYS)
def test_local_day_is_the_zone_s_midnight_to_midnight(
    zone: str, day: str, start: str, end: str, hours: float
) -> None:
    span = local_day(date.fromisoformat(day), zone)
    assert (format_instant(span.start_us), format_instant(span.end_us)) == (start, end)
    assert (span.end_us - span.start_us) / HOUR == hours
    # Floating dates are the UTC midnights, whatever the zone.
    assert format_instant(span.floating_start_us) == f"{day}T00:00:00Z"


WEEKS = [
    ("2026-03-29", "2026-03-23", "2026-03-29"),  # a Sunday belongs to the week before
    ("2026-03-30", "2026-03-30", "2026-04-05"),  # a Monday starts its own
    ("2026-01-01", "2025-12-29", "2026-01-04"),  # across a year
    ("2024-02-29", "2024-02-26", "2024-03-03"),
]


@pytest.mark.parametrize(("day", "monday", "sunday"), WEEKS)
def test_weeks_run_monday_to_sunday(day: str, monday: str, sunday: str) -> None:
    week = week_of(date.fromisoformat(day), "Europe/Berlin")
    assert (week.first.isoformat(), week.last.isoformat()) == (monday, sunday)
    start = local_day(date.fromisoformat(monday), "Europe/Berlin").start_us
    end = local_day(date.fromisoformat(sunday), "Europe/Berlin").end_us
    assert (week.start_us, week.end_us) == (start, end)


def test_a_week_across_a_dst_change_lasts_167_hours() -> None:
    week = week_of(date(2026, 3, 29), "Europe/Berlin")
    assert (week.end_us - week.start_us) / HOUR == 7 * 24 - 1


@pytest.mark.parametrize(
    ("instant", "zone", "local"),
    [
        ("2026-03-29T22:30:00Z", "Europe/Berlin", "2026-03-30"),
        ("2026-03-29T21:59:59Z", "Europe/Berlin", "2026-03-29"),
        ("2026-01-01T09:59:59Z", "Pacific/Kiritimati", "2026-01-01"),
        ("2026-01-01T10:00:00Z", "Pacific/Kiritimati", "2026-01-02"),
        ("2026-01-01T10:59:59Z", "Pacific/Pago_Pago", "2025-12-31"),
        ("2026-11-01T05:30:00Z", "America/New_York", "2026-11-01"),
    ],
)
def test_an_instant_belongs_to_its_local_date(instant: str, zone: str, local: str) -> None:
    assert local_date(us(instant), zone).isoformat() == local


@pytest.mark.parametrize("text", ["2026-2-01", "2026-02-30", "20260201", "2026-02-01T00:00", ""])
def test_local_dates_are_strict(text: str) -> None:
    with pytest.raises(InvalidDate, match="date"):
        parse_local_date(text)


def test_an_unknown_zone_is_refused() -> None:
    with pytest.raises(UnknownTimezone):
        local_day(date(2026, 1, 1), "Mars/Olympus_Mons")


def test_the_last_days_of_year_9999_are_refused_not_crashed() -> None:
    with pytest.raises(InvalidDate, match="9999"):
        week_of(date(9999, 12, 31), "Pacific/Kiritimati")


@pytest.mark.parametrize(
    ("text", "upper", "expected"),
    [
        ("2026-03-29", False, "2026-03-29T00:00:00Z"),
        ("2026-03-29", True, "2026-03-29T23:59:59.999999Z"),  # a date-only upper bound: the day
        ("2026-03-29T10:00:00+02:00", True, "2026-03-29T08:00:00Z"),
        ("2026-03-29T10:00:00.5Z", False, "2026-03-29T10:00:00.5Z"),
    ],
)
def test_query_bounds(text: str, upper: bool, expected: str) -> None:
    assert format_instant(parse_query_bound(text, upper=upper)) == expected


@pytest.mark.parametrize("text", ["2026", "2026-03", "2026-03-29T10:00", "2026-03-29T10:00Z", "x"])
def test_other_bounds_are_refused_naming_the_value(text: str) -> None:
    with pytest.raises(InvalidDate, match="Bound"):
        parse_query_bound(text)


C = ClockRelation
AS_OF = "2026-06-15T10:00:00Z"  # a Monday; 12:00 in Berlin
TODAY = date(2026, 6, 15)


# (value, due, state, occurrence span, validity, zone, expected): the first rule that applies wins.
CLOCKS = [
    ("undated", None, None, None, None, None, "UTC", C.UNDATED),
    ("undated beats overdue", None, "2026-01-01", "open", None, None, "UTC", C.UNDATED),
    ("overdue task", "2026-05-01", "2026-06-01", "open", None, None, "UTC", C.OVERDUE),
    (
        "overdue, no state",
        "2026-05-01",
        "2026-06-14",
        None,
        None,
        None,
        "UTC",
        C.OVERDUE,
    ),
    (
        "done is never overdue",
        "2026-05-01",
        "2026-06-01",
        "done",
        None,
        None,
        "UTC",
        C.PAST,
    ),
    ("cancelled", "2026-05-01", "2026-06-01", "cancelled", None, None, "UTC", C.PAST),
    (
        "due today is today",
        "2026-06-15",
        "2026-06-15",
        "open",
        None,
        None,
        "UTC",
        C.TODAY,
    ),
    (
        "due this month",
        "2026-06",
        "2026-06",
        "open",
        None,
        None,
        "UTC",
        C.CURRENT_PERIOD,
    ),
    (
        "due instant passed",
        "2026-06-15",
        "2026-06-15T09:59:59Z",
        "open",
        None,
        None,
        "UTC",
        C.OVERDUE,
    ),  # fmt: skip
    (
        "instant today",
        "2026-06-15T23:30:00+02:00",
        None,
        None,
        None,
        None,
        "Europe/Berlin",
        C.TODAY,
    ),  # fmt: skip
    (
        "instant tomorrow in Berlin",
        "2026-06-15T22:30:00Z",
        None,
        None,
        None,
        None,
        "Europe/Berlin",
        C.FUTURE,
    ),  # fmt: skip
    (
        "same instant today in UTC",
        "2026-06-15T22:30:00Z",
        None,
        None,
        None,
        None,
        "UTC",
        C.TODAY,
    ),  # fmt: skip
    ("day today", "2026-06-15", None, None, None, None, "Europe/Berlin", C.TODAY),
    # At 10:00Z it is already the 16th at +14 and still the 14th at -11.
    ("day, +14", "2026-06-15", None, None, None, None, "Pacific/Kiritimati", C.PAST),
    ("day, -11", "2026-06-15", None, None, None, None, "Pacific/Pago_Pago", C.FUTURE),
    ("month", "2026-06", None, None, None, None, "UTC", C.CURRENT_PERIOD),
    ("year", "2026", None, None, None, None, "UTC", C.CURRENT_PERIOD),
    ("last year", "2025", None, None, None, None, "UTC", C.PAST),
    ("next month", "2026-07", None, None, None, None, "UTC", C.FUTURE),
    ("yesterday", "2026-06-14", None, None, None, None, "UTC", C.PAST),
    (
        "ongoing event",
        "2026-06-14",
        None,
        None,
        ("2026-06-14", "2026-06-17"),
        None,
        "UTC",
        C.ONGOING,
    ),  # fmt: skip
    (
        "finished event",
        "2026-06-10",
        None,
        None,
        ("2026-06-10", "2026-06-12"),
        None,
        "UTC",
        C.PAST,
    ),  # fmt: skip
    (
        "valid state",
        "2025-01-01",
        None,
        None,
        None,
        ("2025-01-01", None),
        "UTC",
        C.ONGOING,
    ),
    (
        "expired state",
        "2025-01-01",
        None,
        None,
        None,
        ("2025-01-01", "2026-06-15"),
        "UTC",
        C.PAST,
    ),  # fmt: skip
    ("instant earlier", "2026-06-15T09:00:00Z", None, None, None, None, "UTC", C.TODAY),
    ("instant before", "2026-06-14T23:59:59Z", None, None, None, None, "UTC", C.PAST),
    ("future instant", "2026-06-16T00:00:00Z", None, None, None, None, "UTC", C.FUTURE),
]


@pytest.mark.parametrize(
    ("name", "text", "due", "state", "span", "validity", "zone", "expected"),
    CLOCKS,
    ids=[c[0] for c in CLOCKS],
)
def test_clock_relation(
    name: str,
    text: str | None,
    due: str | None,
    state: str | None,
    span: tuple[str, str] | None,
    validity: tuple[str | None, str | None] | None,
    zone: str,
    expected: ClockRelation,
) -> None:
    as_of = us(AS_OF)
    db = sqlite3.connect(":memory:")
    db.execute(
        "CREATE TABLE c (start, vend, stop, precision, idx, due_start, due_end, due_instant,"
        " open, occ_start, occ_stop, occ_floating, valid_from, valid_until)"
    )
    v = parse_date_value(text) if text is not None else None
    value = (v.start_us, v.end_us, v.end_us, v.precision.value) if v else (None,) * 4
    d = parse_date_value(due) if due is not None else None
    occ = (
        (us(span[0]), parse_date_value(span[1]).end_us, int("T" not in span[0]))
        if span
        else (None,) * 3
    )
    valid = tuple(us(b) if b else None for b in validity) if validity else (None, None)
    db.execute(
        "INSERT INTO c VALUES (?, ?, ?, ?, -1, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            *value,
            d.start_us if d else None,
            d.end_us if d else None,
            int(d.precision.value == "instant") if d else None,
            int(state in (None, "open")),
            *occ,
            *valid,
        ),
    )
    today = local_day(local_date(as_of, zone), zone)
    (relation,) = db.execute(f"SELECT {clock_sql(as_of, today)} FROM c").fetchone()
    assert ClockRelation(relation) is expected


# -- NEAREST: a row's distance to asOf --------------------------------------------------------

NEAR = "2026-03-15T23:30:00Z"  # 00:30 on the 16th in Berlin, still the 15th in UTC
MINUTE = 60_000_000


def _distance_in_sql(start: int, stop: int, precision: str, as_of: int, wall: int) -> int:
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE TABLE c (start, stop, vend, precision)")
    conn.execute("INSERT INTO c VALUES (?, ?, ?, ?)", [start, stop, stop, precision])
    return int(conn.execute(f"SELECT {distance_sql(as_of, wall)} FROM c").fetchone()[0])


@pytest.mark.parametrize(
    ("value", "stop", "zone", "expected"),
    [
        pytest.param("2026-03-15T23:30:00Z", None, "UTC", 0, id="instant-at-asof"),
        pytest.param("2026-03-15T22:30:00Z", None, "UTC", HOUR, id="instant-an-hour-before"),
        pytest.param("2026-03-16T00:30:00Z", None, "UTC", HOUR, id="instant-an-hour-after"),
        pytest.param("2026-03-15T20:00:00Z", "2026-03-16T01:00:00Z", "UTC", 0, id="contains"),
        pytest.param("2026-03-15T23:30:00Z", "2026-03-16T01:00:00Z", "UTC", 0, id="starts-at-asof"),
        pytest.param(  # half-open: its last instant is a microsecond before asOf
            "2026-03-15T20:00:00Z", "2026-03-15T23:30:00Z", "UTC", 1, id="ends-at-asof"
        ),
        pytest.param(
            "2026-03-15T20:00:00Z", "2026-03-15T23:00:00Z", "UTC", 30 * MINUTE + 1, id="ended"
        ),
        pytest.param("2026-03-15", None, "UTC", 0, id="day-of-asof-utc"),
        pytest.param("2026-03-16", None, "UTC", 30 * MINUTE, id="next-day-utc"),
        # In Berlin asOf is 00:30 on the 16th: the 16th holds it, the 15th ended 30 min ago.
        pytest.param("2026-03-16", None, "Europe/Berlin", 0, id="day-of-asof-berlin"),
        pytest.param("2026-03-15", None, "Europe/Berlin", 30 * MINUTE + 1, id="day-before-berlin"),
        pytest.param("2026-03", None, "Europe/Berlin", 0, id="month-of-asof"),
        pytest.param(
            "2026-02", None, "UTC", 14 * 24 * HOUR + 23 * HOUR + 30 * MINUTE + 1, id="month-before"
        ),
    ],
)
def test_distance_to_asof_is_zero_inside_else_the_gap_to_the_nearer_end(
    value: str, stop: str | None, zone: str, expected: int
) -> None:
    parsed = parse_date_value(value)
    end = us(stop) if stop is not None else parsed.end_us
    floating = parsed.precision.value != "instant"
    as_of = us(NEAR)
    wall = wall_us(as_of, zone)
    found = distance(parsed.start_us, end, floating=floating, as_of_us=as_of, wall=wall)
    assert found == expected
    assert _distance_in_sql(parsed.start_us, end, parsed.precision.value, as_of, wall) == found


@pytest.mark.parametrize(
    ("zone", "wall"),
    [
        ("UTC", "2026-03-15T23:30:00Z"),
        ("Europe/Berlin", "2026-03-16T00:30:00Z"),
        ("America/New_York", "2026-03-15T19:30:00Z"),  # EDT since 8 March
        ("Pacific/Kiritimati", "2026-03-16T13:30:00Z"),
    ],
)
def test_the_wall_clock_of_asof_is_counted_as_utc(zone: str, wall: str) -> None:
    assert wall_us(us(NEAR), zone) == us(wall)
