"""Pure date logic: date values, local days and weeks, clock relations, RRULE, recurrence."""

from __future__ import annotations

from almanac.temporal.calendar.clock import (
    ClockRelation,
    LocalDay,
    clock_params,
    clock_sql,
    distance,
    distance_params,
    distance_sql,
    local_date,
    local_day,
    parse_local_date,
    utc_date,
    wall_us,
    week_of,
)
from almanac.temporal.calendar.dates import (
    DatePrecision,
    DateValue,
    format_instant,
    from_datetime,
    instant,
    parse_date_value,
    parse_query_bound,
    timezone,
)
from almanac.temporal.calendar.recurrence import Occurrence, RecurrenceSet, Walk

__all__ = [
    "ClockRelation",
    "DatePrecision",
    "DateValue",
    "LocalDay",
    "Occurrence",
    "RecurrenceSet",
    "Walk",
    "clock_params",
    "clock_sql",
    "distance",
    "distance_params",
    "distance_sql",
    "format_instant",
    "from_datetime",
    "instant",
    "local_date",
    "local_day",
    "parse_date_value",
    "parse_local_date",
    "parse_query_bound",
    "timezone",
    "utc_date",
    "wall_us",
    "week_of",
]
