"""Time queries against SPEC, rule by rule: recurrence through the API (DST changes,
floating rules, invalid rules, EXDATE/UNTIL, unbounded ranges, overnight occurrences)."""

from __future__ import annotations

from datetime import date, timedelta

import pytest
from starlette.testclient import TestClient

from tests.api.helpers import data
from tests.api.time_vaults import (
    OCC,
    day,
    ids,
    rows,
    since,
    tl,
)

# -- recurrence through the API -------------------------------------------------------------


def test_fall_back_day_keeps_the_first_repeated_time(rv: TestClient) -> None:
    result = data(rv, OCC, id="ny-daily", since="2026-10-30", until="2026-11-05")["occurrences"]
    assert [(o["index"], o["start"], o["local"]) for o in result["occurrences"]] == [
        (0, "2026-10-30T05:30:00Z", "2026-10-30T01:30:00-04:00"),
        (1, "2026-10-31T05:30:00Z", "2026-10-31T01:30:00-04:00"),
        (2, "2026-11-01T05:30:00Z", "2026-11-01T01:30:00-04:00"),  # the first 01:30 only
        (3, "2026-11-02T06:30:00Z", "2026-11-02T01:30:00-05:00"),
        (4, "2026-11-03T06:30:00Z", "2026-11-03T01:30:00-05:00"),
    ]
    # The fall-back day in New York (25 hours) holds exactly one occurrence.
    ny = day(rv, date="2026-11-01", tz="America/New_York")
    assert rows(ny) == ["ny-daily#2"]


@pytest.mark.parametrize("tz", ["Pacific/Kiritimati", "Pacific/Pago_Pago", "UTC"])
def test_floating_recurrences_are_the_same_dates_in_every_zone(rv: TestClient, tz: str) -> None:
    for week, d in enumerate(["2026-06-01", "2026-06-08", "2026-06-15", "2026-06-22"]):
        assert f"floating-weekly#{week}" in rows(day(rv, date=d, tz=tz))
        following = (date.fromisoformat(d) + timedelta(days=1)).isoformat()
        assert not any(r.startswith("floating") for r in rows(day(rv, date=following, tz=tz)))
    result = data(rv, OCC, id="floating-weekly", since="2026-06-01", until="2026-06-30", tz=tz)
    assert [o["local"] for o in result["occurrences"]["occurrences"]] == [
        "2026-06-01",
        "2026-06-08",
        "2026-06-15",
        "2026-06-22",
    ]


def test_an_invalid_rule_leaves_its_anchor(rv: TestClient) -> None:
    on_day = day(rv, date="2026-07-01")
    assert "bad-rule" in ids(on_day)
    assert on_day["meta"]["coverage"]["complete"] is False  # the invalid_recurrence issue
    assert "bad-rule" not in ids(day(rv, date="2026-07-02"))
    result = data(rv, OCC, id="bad-rule", since="2026-07-01", until="2026-07-31")["occurrences"]
    assert [(o["index"], o["start"]) for o in result["occurrences"]] == [
        (0, "2026-07-01T10:00:00Z")
    ]


def test_exdates_apply_after_count_and_until_in_utc_is_an_instant(rv: TestClient) -> None:
    result = data(rv, OCC, id="count-exdate", since="2026-08-01", until="2026-08-31")
    assert [o["start"] for o in result["occurrences"]["occurrences"]] == [
        "2026-08-01T10:00:00Z",
        "2026-08-03T10:00:00Z",
    ]
    assert [o["index"] for o in result["occurrences"]["occurrences"]] == [0, 1]
    # UNTIL 08:00Z on the 12th is exactly 10:00 CEST: that instance is included.
    until = data(rv, OCC, id="until-utc", since="2026-08-01", until="2026-08-31")
    assert [o["local"] for o in until["occurrences"]["occurrences"]] == [
        "2026-08-10T10:00:00+02:00",
        "2026-08-11T10:00:00+02:00",
        "2026-08-12T10:00:00+02:00",
    ]


def test_half_bounded_queries_flag_unbounded_only_with_a_recurring_record(rv: TestClient) -> None:
    recurring = since(rv, since="2026-10-01")
    assert rows(recurring) == ["ny-daily"]  # the anchor alone
    assert recurring["meta"]["degraded"] == ["recurrence_unbounded"]
    plain = since(rv, since="2026-03-20T12:00:00Z", until=None, kind="task")
    assert plain["meta"]["degraded"] == []
    closed = since(rv, since="2026-10-01", until="2026-12-31")
    assert closed["meta"]["degraded"] == []
    assert len(rows(closed)) == 5


def test_timeline_without_range_shows_anchors_only(rv: TestClient) -> None:
    result = tl(rv, kind="meeting")
    assert all(e["occurrence"] is None for e in result["entries"])
    assert result["meta"]["degraded"] == []  # SPEC: an unbounded query returns the anchor


def _occ(client: TestClient, rid: str, lo: str, hi: str, tz: str = "UTC") -> list[str]:
    found = data(client, OCC, id=rid, since=lo, until=hi, tz=tz)["occurrences"]
    return [o["local"] for o in found["occurrences"]]


def test_recurrence_corners_through_the_api(extra: TestClient) -> None:
    assert _occ(extra, "gap", "2026-03-01", "2026-03-31") == [
        "2026-03-28T02:30:00+01:00",
        "2026-03-29T03:30:00+02:00",  # the gap: read with the offset before it
        "2026-03-30T02:30:00+02:00",
    ]
    assert _occ(extra, "local-until", "2026-04-01", "2026-05-31") == [
        "2026-05-01T23:00:00+14:00",
        "2026-05-02T23:00:00+14:00",
        "2026-05-03T23:00:00+14:00",
    ]
    assert _occ(extra, "day-exdate", "2026-05-01", "2026-05-31") == [
        "2026-05-04T21:00:00-04:00",
        "2026-05-06T21:00:00-04:00",
        "2026-05-07T21:00:00-04:00",
    ]
    # `local` stays in the record's own zone whatever the query's timezone.
    assert _occ(extra, "gap", "2026-03-28", "2026-03-28", tz="Asia/Tokyo") == [
        "2026-03-28T02:30:00+01:00"
    ]


def test_an_overnight_occurrence_is_on_both_local_days(extra: TestClient) -> None:
    for d in ("2026-06-01", "2026-06-02", "2026-06-08", "2026-06-09"):
        assert any(r.startswith("overnight#") for r in rows(day(extra, date=d, tz="Europe/Berlin")))
    assert not any(
        r.startswith("overnight") for r in rows(day(extra, date="2026-06-03", tz="Europe/Berlin"))
    )
    # ends_at exactly at the next UTC midnight: the half-open interval stops before the 4th.
    assert "until-midnight" in ids(day(extra, date="2026-06-03"))
    assert "until-midnight" not in ids(day(extra, date="2026-06-04"))


def test_occurrences_of_a_plain_record_use_the_query_zone_for_local(rv: TestClient) -> None:
    found = data(rv, OCC, id="tie-a", since="2026-03-20", until="2026-03-20", tz="Asia/Kathmandu")
    assert [(o["index"], o["start"], o["local"]) for o in found["occurrences"]["occurrences"]] == [
        (0, "2026-03-20T12:00:00Z", "2026-03-20T17:45:00+05:45")
    ]
    outside = data(rv, OCC, id="tie-a", since="2026-03-21", until="2026-03-22")["occurrences"]
    assert outside["total"] == 0 and outside["record"] == {"id": "tie-a"}
