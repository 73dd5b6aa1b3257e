"""Time queries against SPEC, rule by rule: range bounds (date-only, partial values,
inclusive), order and ties, and last seen."""

from __future__ import annotations

from pathlib import Path

import pytest
from starlette.testclient import TestClient

from tests.api.helpers import data
from tests.api.time_vaults import (
    LAST,
    app_over,
    ids,
    rows,
    since,
    tl,
    write_vault,
)

# -- ranges: date-only, partial values, inclusive bounds ------------------------------------


@pytest.mark.parametrize(
    ("lo", "hi", "inside", "outside"),
    [
        # A date-only upper bound includes its whole UTC day.
        # (Berlin's midnight of the 15th is 23:00Z on the 14th.)
        ("2026-03-15", "2026-03-15", ["next-midnight", "conference"], ["at-midnight"]),
        # The 23:00Z instant on the 15th is 16 March 00:00 in Berlin.
        ("2026-03-15T23:00:00Z", "2026-03-15T23:00:00Z", ["next-midnight", "conference"], []),
        # An explicit offset bound is its instant (23:00Z on the 15th, inclusive).
        ("2026-03-16T00:00:00+01:00", "2026-03-16T00:00:00+01:00", ["next-midnight"], []),
        # A month value covers its UTC month; a year value its UTC year.
        ("2026-02-28T23:59:59Z", "2026-02-28T23:59:59Z", ["month"], ["day"]),
        ("2026-03-01T00:00:00Z", "2026-03-01", ["day"], ["month"]),
        ("2025-12-31T23:59:59Z", "2026-01-01", ["year", "valid-from-asof"], ["month"]),
        # A day value covers its whole UTC day, from any instant in it.
        ("2026-03-01T23:59:59Z", "2026-03-02", ["day", "plan-v2"], ["month"]),
    ],
)
def test_chronicle_since_bounds(
    rv: TestClient, lo: str, hi: str, inside: list[str], outside: list[str]
) -> None:
    found = ids(since(rv, since=lo, until=hi))
    for name in inside:
        assert name in found, (name, found)
    for name in outside:
        assert name not in found, (name, found)
    # timeline over the same range (no entity) answers the same rows.
    assert ids(tl(rv, since=lo, until=hi)) == found


def test_a_day_value_starts_its_utc_day_in_order(rv: TestClient) -> None:
    result = since(rv, since="2026-03-14", until="2026-03-15")
    # Sorted by (interval start, id): the floating conference starts at 00:00Z on the 14th.
    starts = [e["record"]["id"] for e in result["entries"]]
    assert starts.index("conference") < starts.index("ends-at-asof")


# -- order and ties --------------------------------------------------------------------------


def test_ties_order_by_id_and_desc_reverses_both_keys(rv: TestClient) -> None:
    asc = ids(tl(rv, entity="ada", since="2026-03-20", until="2026-03-20"))
    assert asc == ["tie-a", "tie-b"]
    desc = ids(tl(rv, entity="ada", since="2026-03-20", until="2026-03-20", order="DESC"))
    assert desc == ["tie-b", "tie-a"]


def test_desc_is_the_reverse_of_asc_with_occurrences(rv: TestClient) -> None:
    both = {"since": "2026-01-01", "until": "2026-12-31"}
    asc = rows(tl(rv, **both, eligibility="INCLUDE_INACTIVE"))
    desc = rows(tl(rv, **both, eligibility="INCLUDE_INACTIVE", order="DESC"))
    assert desc == asc[::-1]
    assert "ny-daily#4" in asc


# -- last seen --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("bound", "expected"),
    [
        ("2026-03-20T12:00:00Z", "tie-b"),  # ties go to the greatest record id
        ("2026-03-20T11:59:59Z", "next-midnight"),
        ("2026-03-15T23:00:00Z", "next-midnight"),  # inclusive
        ("2026-03-15T22:59:59Z", "at-midnight"),
        ("2026-06-08", "floating-weekly"),  # a materialised occurrence, the whole UTC day
    ],
)
def test_last_seen_bounds(rv: TestClient, bound: str, expected: str) -> None:
    result = data(rv, LAST, entity="ada", bound=bound)["chronicleLastSeen"]
    assert result["entry"]["record"]["id"] == expected


def test_last_seen_of_a_recurring_record_is_its_latest_occurrence(rv: TestClient) -> None:
    result = data(rv, LAST, entity="ada", bound="2026-06-10")["chronicleLastSeen"]
    assert result["entry"]["occurrence"] == {"index": 1}
    assert result["entry"]["date"] == {"text": "2026-06-08"}


def test_last_seen_defaults_to_now_and_never_returns_the_future(tmp_path: Path) -> None:
    write_vault(
        tmp_path / "vault",
        {
            "ada": "type: person",
            "past": "entities: [ada]\noccurred_at: 2020-05-01",
            "future": "entities: [ada]\noccurred_at: 2099-01-01T00:00:00Z",
            "undated": "entities: [ada]",
        },
    )
    with app_over(tmp_path / "vault", tmp_path / "s.db") as client:
        found = data(client, LAST, entity="ada")["chronicleLastSeen"]
        assert found["entry"]["record"]["id"] == "past"
        before = data(client, LAST, entity="ada", bound="2020-04-30")["chronicleLastSeen"]
        assert before == {"entry": None, "reason": "no_dated_association"}
