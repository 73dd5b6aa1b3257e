"""Time queries against SPEC, rule by rule: clocks at exact boundaries, asOf validity, clock
counts, and the local times of records at DST changes."""

from __future__ import annotations

from pathlib import Path

import pytest
from starlette.testclient import TestClient

from tests.api.time_vaults import (
    AS_OF,
    app_over,
    clocks,
    day,
    ids,
    since,
    tl,
    write_vault,
)

# -- clocks at exact boundaries -------------------------------------------------------------


@pytest.mark.parametrize(
    ("tz", "expected", "local"),
    [
        ("UTC", "TODAY", "2026-03-15"),
        ("Pacific/Kiritimati", "OVERDUE", "2026-03-16"),  # already the 16th there
        ("Pacific/Pago_Pago", "TODAY", "2026-03-15"),  # 00:00 on the 15th
    ],
)
def test_a_task_due_today_depends_on_the_zone(
    rv: TestClient, tz: str, expected: str, local: str
) -> None:
    result = tl(rv, entity="ada", field="DUE_AT", asOf=AS_OF, tz=tz)
    assert result["localDate"] == local
    assert clocks(result)["due-day"] == expected


def test_deadline_clocks_compare_instants_and_periods(rv: TestClient) -> None:
    found = clocks(tl(rv, entity="ada", field="DUE_AT", asOf=AS_OF))
    assert found["due-now"] == "TODAY"  # due exactly at asOf: not before it
    assert found["due-just-before"] == "OVERDUE"
    assert found["due-month"] == "OVERDUE"  # February ended before the 15 March
    assert found["due-cancelled"] == "PAST"  # a cancelled item is never overdue


def test_due_month_is_current_period_not_overdue_within_it(rv: TestClient) -> None:
    found = clocks(tl(rv, entity="ada", field="DUE_AT", asOf="2026-02-28T23:00:00Z"))
    assert found["due-month"] == "CURRENT_PERIOD"
    # An hour later in UTC February is over; in Pago Pago (-11) it is still the 28th.
    later = "2026-03-01T00:30:00Z"
    assert clocks(tl(rv, entity="ada", field="DUE_AT", asOf=later))["due-month"] == "OVERDUE"
    pago = tl(rv, entity="ada", field="DUE_AT", asOf=later, tz="Pacific/Pago_Pago")
    assert clocks(pago)["due-month"] == "CURRENT_PERIOD"


def test_instants_at_local_midnight_belong_to_the_day_they_start(rv: TestClient) -> None:
    found = clocks(tl(rv, entity="ada", asOf=AS_OF, tz="Europe/Berlin"))
    assert found["at-midnight"] == "TODAY"
    assert found["before-midnight"] == "PAST"
    assert found["next-midnight"] == "FUTURE"
    berlin = day(rv, date="2026-03-15", tz="Europe/Berlin")
    assert "at-midnight" in ids(berlin) and "next-midnight" not in ids(berlin)
    assert "before-midnight" not in ids(berlin)
    assert "before-midnight" in ids(day(rv, date="2026-03-14", tz="Europe/Berlin"))


def test_an_interval_ending_exactly_at_as_of_is_no_longer_ongoing(rv: TestClient) -> None:
    found = clocks(tl(rv, entity="ada", asOf=AS_OF))
    assert found["ends-at-asof"] == "PAST"
    assert found["ends-after-asof"] == "ONGOING"


@pytest.mark.parametrize(
    ("as_of", "tz", "expected"),
    [
        ("2026-03-15T12:00:00Z", "UTC", "ONGOING"),
        ("2026-03-17T00:00:00Z", "UTC", "PAST"),
        ("2026-03-13T23:00:00Z", "UTC", "FUTURE"),
        ("2026-03-14T00:00:00Z", "UTC", "TODAY"),  # its first day: rule 3 wins
    ],
)
def test_a_floating_conference_clock_in_utc(
    rv: TestClient, as_of: str, tz: str, expected: str
) -> None:
    assert clocks(tl(rv, entity="ada", asOf=as_of, tz=tz))["conference"] == expected


@pytest.mark.parametrize(
    ("as_of", "tz", "local", "expected"),
    [
        # 12:00Z on the 16th is already the 17th in Kiritimati: the conference is over there.
        ("2026-03-16T12:00:00Z", "Pacific/Kiritimati", "2026-03-17", "PAST"),
        # 05:00Z on the 14th is still the 13th in Pago Pago: the conference has not begun.
        ("2026-03-14T05:00:00Z", "Pacific/Pago_Pago", "2026-03-13", "FUTURE"),
    ],
)
def test_a_floating_conference_clock_follows_the_local_date(
    rv: TestClient, as_of: str, tz: str, local: str, expected: str
) -> None:
    result = tl(rv, entity="ada", asOf=as_of, tz=tz)
    assert result["localDate"] == local
    assert clocks(result)["conference"] == expected


def test_a_floating_conference_is_on_each_of_its_days_in_every_zone(rv: TestClient) -> None:
    for tz in ("Pacific/Kiritimati", "Pacific/Pago_Pago", "UTC"):
        for d, present in [("13", False), ("14", True), ("15", True), ("16", True), ("17", False)]:
            found = "conference" in ids(day(rv, date=f"2026-03-{d}", tz=tz))
            assert found is present, (tz, d)


# -- asOf validity edges --------------------------------------------------------------------


def test_as_of_validity_edges(rv: TestClient) -> None:
    at = ids(tl(rv, entity="ada", asOf=AS_OF))
    assert "valid-from-asof" in at  # valid_from <= asOf
    assert "valid-until-asof" not in at  # asOf < valid_until fails at equality
    assert "valid-until-day" not in at and "valid-from-day" in at
    # A date asOf stands for its UTC midnight: valid_until: 2026-03-15 is over, valid_from begun.
    midnight = ids(tl(rv, entity="ada", asOf="2026-03-15"))
    assert "valid-until-day" not in midnight and "valid-from-day" in midnight
    before = ids(tl(rv, entity="ada", asOf="2026-03-14T23:59:59Z"))
    assert "valid-until-day" in before and "valid-from-day" not in before
    # Without asOf nothing is filtered by validity.
    assert {"valid-until-asof", "valid-from-asof"} <= set(ids(tl(rv, entity="ada")))


def test_validity_clock_is_ongoing_only_inside_the_half_open_interval(rv: TestClient) -> None:
    inactive = tl(rv, entity="ada", asOf=AS_OF, eligibility="INCLUDE_INACTIVE")
    found = clocks(inactive)
    assert found["valid-from-asof"] == "ONGOING"
    assert found["valid-until-asof"] == "PAST"


# -- local times of records at DST changes -----------------------------------------------------


def test_record_local_times_in_a_gap_and_in_a_repeated_hour(tmp_path: Path) -> None:
    write_vault(
        tmp_path / "vault",
        {
            "gap": "timezone: Europe/Berlin\noccurred_at: 2026-03-29T02:30",
            "repeat": "timezone: Europe/Berlin\noccurred_at: 2026-10-25T02:30",
            "ny-repeat": "timezone: America/New_York\noccurred_at: 2026-11-01T01:30:00",
        },
    )
    with app_over(tmp_path / "vault", tmp_path / "s.db") as client:
        found = {
            e["record"]["id"]: e["date"]["start"]
            for e in tl(client, since="2026-01-01", until="2026-12-31")["entries"]
        }
    assert found == {
        "gap": "2026-03-29T01:30:00Z",  # the instant after the gap
        "repeat": "2026-10-25T00:30:00Z",  # the first 02:30 (CEST)
        "ny-repeat": "2026-11-01T05:30:00Z",  # the first 01:30 (EDT)
    }


def test_clock_counts_list_all_seven_relations_in_enum_order(rv: TestClient) -> None:
    order = ["PAST", "TODAY", "CURRENT_PERIOD", "ONGOING", "FUTURE", "OVERDUE", "UNDATED"]
    for result in (
        tl(rv, entity="ada", asOf=AS_OF),
        since(rv, since="2030-01-01", until="2030-01-02"),  # empty: all zeros
        day(rv, date="2026-03-15", week=True),
    ):
        assert [c["clock"] for c in result["clockCounts"]] == order
        assert sum(c["count"] for c in result["clockCounts"]) == result["total"]
