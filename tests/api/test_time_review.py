"""An adversarial second suite for the time queries (issue 3), rule by rule against SPEC.

Each test builds a small purpose-built vault and asks the real GraphQL API. The defects it
found first (floating intervals' ONGOING, stand-ins under `kind` and `asOf`, forged cursors,
non-ASCII digits, the host's `localtime`, ...) are fixed; their tests stay as regressions.
"""

from __future__ import annotations

import base64
import json
import os
import random
from collections.abc import Iterator, Mapping
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from starlette.testclient import TestClient

from api.app import create_app
from api.settings import Settings
from tests.api.helpers import DOCUMENTED, codes, data, gql

# -- building vaults ------------------------------------------------------------------------


def write_vault(vault: Path, notes: Mapping[str, str]) -> None:
    """One note per item: `name.md` (folders allowed) with `fields` as frontmatter."""
    for name, fields in notes.items():
        path = vault / f"{name}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        body = f"# {name}"
        path.write_text(f"---\n{fields}\n---\n{body}\n")


def app_over(vault: Path, state: Path, config: Path | None = None) -> TestClient:
    settings = Settings.build(vault=vault, state=state, config=config, watch=False)
    return TestClient(create_app(settings))


def touch(path: Path, text: str) -> None:
    """Rewrite a note and move its mtime on, so that no stat-based scan can miss the edit."""
    old = path.stat().st_mtime if path.exists() else 0.0
    path.write_text(text)
    stamp = max(old + 2, path.stat().st_mtime)
    os.utime(path, (stamp, stamp))


def strip_meta(value: Any) -> Any:
    """A response without what legitimately differs between two apps (freshness, cursors)."""
    if isinstance(value, dict):
        return {
            k: strip_meta(v)
            for k, v in value.items()
            if k not in ("freshness", "snapshot", "endCursor", "revision")
        }
    if isinstance(value, list):
        return [strip_meta(v) for v in value]
    return value


# -- the shared vault -----------------------------------------------------------------------

NOTES = {
    "ada": "type: person\ntitle: Ada",
    # Deadlines on the 15th, asked at 11:00Z on the 15th: Kiritimati (+14) is already on the
    # 16th there, Pago Pago (-11) is at 00:00 on the 15th.
    "due-day": "type: task\nowner: ada\ndue_at: 2026-03-15\nstate: open",
    "due-now": "type: task\nowner: ada\ndue_at: 2026-03-15T11:00:00Z",
    "due-just-before": "type: task\nowner: ada\ndue_at: 2026-03-15T10:59:59Z",
    "due-month": "type: task\nowner: ada\ndue_at: 2026-02\nstate: open",
    "due-cancelled": "type: task\nowner: ada\ndue_at: 2026-01-01\nstate: cancelled",
    # Instants at the edges of Berlin's 15 March (UTC+1).
    "at-midnight": "entities: [ada]\noccurred_at: 2026-03-15T00:00:00+01:00",
    "before-midnight": "entities: [ada]\noccurred_at: 2026-03-14T23:59:59+01:00",
    "next-midnight": "entities: [ada]\noccurred_at: 2026-03-16T00:00:00+01:00",
    # Intervals ending at, or just after, asOf.
    "ends-at-asof": (
        "entities: [ada]\noccurred_at: 2026-03-14T08:00:00Z\nends_at: 2026-03-15T11:00:00Z"
    ),
    "ends-after-asof": (
        "entities: [ada]\noccurred_at: 2026-03-14T08:00:00Z\nends_at: 2026-03-15T11:00:01Z"
    ),
    # A floating three-day conference, 14th to 16th.
    "conference": "entities: [ada]\noccurred_at: 2026-03-14\nends_at: 2026-03-16",
    # Validity edges at asOf.
    "valid-from-asof": (
        "entities: [ada]\noccurred_at: 2026-01-01\nvalid_from: 2026-03-15T11:00:00Z"
    ),
    "valid-until-asof": (
        "entities: [ada]\noccurred_at: 2026-01-02\nvalid_until: 2026-03-15T11:00:00Z"
    ),
    "valid-until-day": "entities: [ada]\noccurred_at: 2026-01-03\nvalid_until: 2026-03-15",
    "valid-from-day": "entities: [ada]\noccurred_at: 2026-01-04\nvalid_from: 2026-03-15",
    # Partial values.
    "month": "entities: [ada]\noccurred_at: 2026-02",
    "year": "entities: [ada]\noccurred_at: 2025",
    "day": "entities: [ada]\noccurred_at: 2026-03-01",
    # Two records at one instant (ties go by id).
    "tie-a": "entities: [ada]\noccurred_at: 2026-03-20T12:00:00Z",
    "tie-b": "entities: [ada]\noccurred_at: 2026-03-20T12:00:00Z",
    # Recurrences.
    "ny-daily": (
        "type: meeting\ntimezone: America/New_York\noccurred_at: 2026-10-30T01:30\n"
        "recurrence: FREQ=DAILY;COUNT=5"
    ),
    "floating-weekly": (
        "type: meeting\nentities: [ada]\noccurred_at: 2026-06-01\nrecurrence: FREQ=WEEKLY;COUNT=4"
    ),
    "bad-rule": (
        "type: meeting\ntimezone: UTC\noccurred_at: 2026-07-01T10:00:00Z\n"
        "recurrence: FREQ=FORTNIGHTLY"
    ),
    "count-exdate": (
        "type: meeting\ntimezone: UTC\noccurred_at: 2026-08-01T10:00:00Z\n"
        "recurrence: FREQ=DAILY;COUNT=3\nexdates: [2026-08-02T10:00:00Z]"
    ),
    "until-utc": (
        "type: meeting\ntimezone: Europe/Berlin\noccurred_at: 2026-08-10T10:00\n"
        "recurrence: FREQ=DAILY;UNTIL=20260812T080000Z"
    ),
    # Superseded chain, and a replacement far from the range.
    "plan-v1": (
        "type: decision\nentities: [ada]\noccurred_at: 2026-03-02\nlifecycle: superseded\n"
        "superseded_by: plan-v2"
    ),
    "plan-v2": "type: decision\noccurred_at: 2026-05-01",
}
AS_OF = "2026-03-15T11:00:00Z"


@pytest.fixture(scope="module")
def rv(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    folder = tmp_path_factory.mktemp("review")
    write_vault(folder / "vault", NOTES)
    with app_over(folder / "vault", folder / "state.db") as client:
        yield client


TL = """query($entity: ID, $field: TimeField, $since: String, $until: String, $order: Order,
  $eligibility: Eligibility, $asOf: String, $kind: String, $tz: String, $first: Int,
  $after: String, $scope: String) {
  timeline(entity: $entity, timeField: $field, since: $since, until: $until, order: $order,
    eligibility: $eligibility, asOf: $asOf, kind: $kind, timezone: $tz, first: $first,
    after: $after, scope: $scope) {
    total asOf timezone localDate clockCounts { clock count }
    entries { record { id } date { text precision start end } occurrence { index start local }
              clock via { id } }
    pageInfo { hasNextPage endCursor }
    meta { degraded coverage { complete } }
  }
}"""

SINCE = """query($since: String!, $until: String, $kind: String, $tz: String, $first: Int,
  $after: String, $scope: String) {
  chronicleSince(since: $since, until: $until, kind: $kind, timezone: $tz, first: $first,
    after: $after, scope: $scope) {
    total localDate clockCounts { clock count }
    entries { record { id } date { text precision start } occurrence { index start local } clock
              via { id } }
    pageInfo { hasNextPage endCursor }
    meta { degraded coverage { complete } }
  }
}"""

DAY = """query($date: String!, $tz: String, $week: Boolean, $partial: Boolean, $kind: String,
  $first: Int, $after: String, $scope: String) {
  chronicleDay(date: $date, timezone: $tz, week: $week, includePartial: $partial, kind: $kind,
    first: $first, after: $after, scope: $scope) {
    total localDate timezone clockCounts { clock count }
    entries { record { id } date { text precision } occurrence { index start local } clock
              via { id } }
    pageInfo { hasNextPage endCursor }
    meta { degraded coverage { complete } }
  }
}"""

OCC = """query($id: ID!, $since: String!, $until: String!, $tz: String, $first: Int) {
  occurrences(id: $id, since: $since, until: $until, timezone: $tz, first: $first) {
    record { id } total occurrences { index start end local } meta { degraded }
  }
}"""

LAST = """query($entity: ID!, $bound: String, $scope: String) {
  chronicleLastSeen(entity: $entity, occurredOnOrBefore: $bound, scope: $scope) {
    entry { record { id } date { text } occurrence { index } } reason
  }
}"""


def tl(client: TestClient, **args: Any) -> dict[str, Any]:
    args.setdefault("first", 100)
    result: dict[str, Any] = data(client, TL, **args)["timeline"]
    return result


def since(client: TestClient, **args: Any) -> dict[str, Any]:
    args.setdefault("first", 100)
    result: dict[str, Any] = data(client, SINCE, **args)["chronicleSince"]
    return result


def day(client: TestClient, **args: Any) -> dict[str, Any]:
    args.setdefault("first", 100)
    result: dict[str, Any] = data(client, DAY, **args)["chronicleDay"]
    return result


def ids(result: dict[str, Any]) -> list[str]:
    return [e["record"]["id"] for e in result["entries"]]


def rows(result: dict[str, Any]) -> list[str]:
    out = []
    for e in result["entries"]:
        occ = e["occurrence"]
        out.append(e["record"]["id"] + (f"#{occ['index']}" if occ else ""))
    return out


def clocks(result: dict[str, Any]) -> dict[str, str]:
    return {e["record"]["id"]: e["clock"] for e in result["entries"]}


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


# -- superseded replacements and pagination ---------------------------------------------------


def walk(client: TestClient, query: str, name: str, **args: Any) -> list[dict[str, Any]]:
    """Every entry, one page at a time (`first: 1`)."""
    out: list[dict[str, Any]] = []
    after = None
    for _ in range(500):
        page = data(client, query, first=1, after=after, **args)[name]
        out += page["entries"]
        if not page["pageInfo"]["hasNextPage"]:
            assert len(out) == page["total"]
            return out
        after = page["pageInfo"]["endCursor"]
    raise AssertionError("pagination never ended")


@pytest.mark.parametrize(
    ("query", "field", "args"),
    [
        (TL, "timeline", {"entity": "ada"}),
        (TL, "timeline", {"entity": "ada", "order": "DESC", "asOf": AS_OF}),
        (TL, "timeline", {"since": "2026-01-01", "until": "2026-12-31", "order": "DESC"}),
        (TL, "timeline", {"eligibility": "INCLUDE_INACTIVE", "field": "DUE_AT"}),
        (SINCE, "chronicleSince", {"since": "2026-01-01", "until": "2026-12-31"}),
        (DAY, "chronicleDay", {"date": "2026-03-15", "week": True, "partial": True}),
    ],
)
def test_page_by_page_equals_one_big_page(
    rv: TestClient, query: str, field: str, args: dict[str, Any]
) -> None:
    big = data(rv, query, first=100, **args)[field]
    assert big["total"] == len(big["entries"]) < 100
    assert walk(rv, query, field, **args) == big["entries"]


def test_replacements_come_after_direct_matches_once(rv: TestClient) -> None:
    result = tl(rv, entity="ada")
    assert ids(result)[-1] == "plan-v2" and result["entries"][-1]["via"] == {"id": "plan-v1"}
    assert ids(result).count("plan-v2") == 1
    desc = tl(rv, entity="ada", order="DESC")
    assert ids(desc)[-1] == "plan-v2"


def test_determinism_same_query_same_answer(rv: TestClient) -> None:
    calls: list[tuple[str, dict[str, Any]]] = [
        (TL, {"entity": "ada", "asOf": AS_OF}),
        (SINCE, {"since": "2026-01-01", "until": "2026-12-31", "first": 100}),
        (DAY, {"date": "2026-11-01", "week": True, "tz": "America/New_York", "first": 100}),
    ]
    for query, args in calls:
        first, second = data(rv, query, **args), data(rv, query, **args)
        assert strip_meta(first) == strip_meta(second)


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


# -- incremental edits answer what a fresh state database answers ---------------------------

EDIT_NOTES = {
    "ada": "type: person\ntitle: Ada",
    "people/bo": "type: person\ntitle: Bo",
    "standup": (
        "type: meeting\nentities: [ada, bo]\ntimezone: Europe/Berlin\n"
        "occurred_at: 2026-03-02T09:30\nends_at: 2026-03-02T09:45\n"
        "recurrence: FREQ=WEEKLY;BYDAY=MO,WE;COUNT=10"
    ),
    "m1": "type: meeting\noccurred_at: 2026-03-10T14:00:00Z\nentities: [bo]",
    "c1": "type: claim\nsubject: ada\nsource: m1\nsource_event: true",
    "d1": "type: decision\nentities: [ada]\noccurred_at: 2026-03-04",
    "t1": "type: task\nowner: bo\ndue_at: 2026-03-05\nstate: open",
}


def _edit_rule(vault: Path) -> None:
    text = (vault / "standup.md").read_text()
    touch(vault / "standup.md", text.replace("BYDAY=MO,WE;COUNT=10", "BYDAY=TU;COUNT=6"))


def _edit_exdates(vault: Path) -> None:
    text = (vault / "standup.md").read_text()
    touch(vault / "standup.md", text.replace("COUNT=6\n", "COUNT=6\nexdates: [2026-03-10]\n"))


def _edit_zone(vault: Path) -> None:
    text = (vault / "standup.md").read_text()
    touch(vault / "standup.md", text.replace("Europe/Berlin", "America/New_York"))


def _withdraw_claim(vault: Path) -> None:
    text = (vault / "c1.md").read_text()
    touch(
        vault / "c1.md",
        text.replace("source_event: true", "source_event: true\nlifecycle: withdrawn"),
    )


def _supersede(vault: Path) -> None:
    touch(vault / "d2.md", "---\ntype: decision\noccurred_at: 2026-03-20\n---\n# d2\n")
    text = (vault / "d1.md").read_text()
    touch(
        vault / "d1.md",
        text.replace("2026-03-04", "2026-03-04\nlifecycle: superseded\nsuperseded_by: d2"),
    )


def _rename_entity(vault: Path) -> None:
    (vault / "archive").mkdir()
    (vault / "people" / "bo.md").rename(vault / "archive" / "bo.md")


def _close_task(vault: Path) -> None:
    text = (vault / "t1.md").read_text()
    touch(vault / "t1.md", text.replace("state: open", "state: done"))


def _delete_standup(vault: Path) -> None:
    (vault / "standup.md").unlink()


EDITS = [
    _edit_rule, _edit_exdates, _edit_zone, _withdraw_claim, _supersede, _rename_entity,
    _close_task, _delete_standup,
]  # fmt: skip
EDIT_QUERIES: list[tuple[str, dict[str, Any]]] = [
    (TL, {"entity": "ada", "since": "2026-03-01", "until": "2026-04-30", "asOf": AS_OF}),
    (TL, {"entity": "ada", "asOf": AS_OF, "eligibility": "INCLUDE_INACTIVE"}),
    (TL, {"field": "DUE_AT", "asOf": AS_OF}),
    (SINCE, {"since": "2026-03-01", "until": "2026-03-31", "tz": "Europe/Berlin"}),
    (DAY, {"date": "2026-03-10", "week": True, "tz": "America/New_York"}),
    (OCC, {"id": "standup", "since": "2026-03-01", "until": "2026-04-30"}),
    (LAST, {"entity": "ada", "bound": "2026-03-31"}),
]


def _answers(client: TestClient, entity_bo: str) -> list[Any]:
    out = []
    for query, args in EDIT_QUERIES:
        if query is not LAST and query is not OCC:
            args = {"first": 100, **args}
        out.append(strip_meta(gql(client, query, **args)))
    out.append(strip_meta(gql(client, TL, entity=entity_bo, first=100, asOf=AS_OF)))
    out.append(strip_meta(gql(client, LAST, entity=entity_bo)))
    return out


def test_incremental_edits_answer_like_a_fresh_state(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    write_vault(vault, EDIT_NOTES)
    with app_over(vault, tmp_path / "live.db") as live:
        before = _answers(live, "people/bo")  # the first reconcile
        for n, edit in enumerate(EDITS):
            edit(vault)
            bo = "archive/bo" if (vault / "archive").exists() else "people/bo"
            incremental = _answers(live, bo)
            with app_over(vault, tmp_path / f"fresh-{n}.db") as fresh:
                assert incremental == _answers(fresh, bo), edit.__name__
            if edit is _rename_entity:
                # The renamed entity keeps its timeline (`entities: [bo]` resolves by file name).
                assert incremental[-2]["data"]["timeline"]["total"] == 2
                assert codes(gql(live, TL, entity="people/bo")) == ["NOT_FOUND"]
            else:
                assert incremental != before, f"{edit.__name__} changed nothing visible"
            before = incremental


# -- scopes ---------------------------------------------------------------------------------

SCOPED = {
    "team/ada": "type: person\ntitle: Ada",
    "team/m1": "type: meeting\nentities: [ada]\noccurred_at: 2026-03-10T10:00:00Z",
    "team/t1": "type: task\nowner: ada\ndue_at: 2026-03-01",
    # The same ids in ops, and ops-only records that would change team's answers if they leaked.
    "ops/ada": "type: person\ntitle: Ada (ops)",
    "ops/m1": "type: meeting\nentities: [ada]\noccurred_at: 2026-03-10T09:00:00Z",
    "ops/c1": "type: claim\nsubject: ada\nsource: m1\nsource_event: true",
    "ops/t1": "type: task\nowner: ada\ndue_at: 2026-03-01",
    "ops/daily": (  # goes on past its materialised occurrences: recurrence_truncated
        "type: meeting\nentities: [ada]\ntimezone: UTC\noccurred_at: 2026-01-01T08:00:00Z\n"
        "recurrence: FREQ=HOURLY"
    ),
    "ops/broken": "type: meeting\noccurred_at: 2026-13-45",
}


@pytest.fixture(scope="module")
def scoped(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    folder = tmp_path_factory.mktemp("scoped")
    # Written ids: the same id in both scopes (slugs would carry the folder).
    write_vault(folder / "vault", {k: f"id: {k.split('/')[1]}\n{v}" for k, v in SCOPED.items()})
    config = folder / "almanac.toml"
    config.write_text('[scopes]\nteam = "team/"\nops = "ops/"\n')
    with app_over(folder / "vault", folder / "state.db", config) as client:
        yield client


def test_a_record_in_another_scope_never_appears_or_counts(scoped: TestClient) -> None:
    team = [
        tl(scoped, entity="ada", scope="team", asOf=AS_OF),
        tl(scoped, entity="ada", scope="team", since="2026-03-01", until="2026-03-31"),
        tl(scoped, field="DUE_AT", scope="team", asOf=AS_OF),
        since(scoped, since="2026-03-01", until="2026-03-31", scope="team"),
        day(scoped, date="2026-03-10", week=True, scope="team"),
    ]
    assert [ids(r) for r in team] == [["m1"], ["m1"], ["t1"], ["m1"], ["m1"]]
    for result in team:
        assert result["total"] == sum(c["count"] for c in result["clockCounts"]) == 1
        assert result["meta"]["degraded"] == []
        assert result["meta"]["coverage"]["complete"] is True
    last = data(scoped, LAST, entity="ada", scope="team", bound="2026-12-31")
    assert last["chronicleLastSeen"]["entry"]["record"]["id"] == "m1"
    assert last["chronicleLastSeen"]["entry"]["date"] == {"text": "2026-03-10T10:00:00Z"}


def test_each_scope_sees_its_own_records(scoped: TestClient) -> None:
    ops = tl(scoped, entity="ada", scope="ops", since="2026-03-10T09:00:00Z",
             until="2026-03-10T09:00:00Z")  # fmt: skip
    # In ops, the source_event claim stands for ops' m1 (and the hourly meeting at 09:00).
    assert ids(ops) == ["daily", "c1"]
    assert ops["meta"]["coverage"]["complete"] is False  # ops/broken
    both = since(scoped, since="2026-03-10T09:00:00Z", until="2026-03-10T10:00:00Z")
    assert sorted(ids(both)) == ["c1", "daily", "daily", "m1"]
    # The hourly set's 2,000 stored occurrences end in late March: a range beyond is truncated
    # in ops, and nothing of it shows or degrades team's answer.
    late = {"since": "2026-04-01", "until": "2026-04-02"}
    assert since(scoped, **late)["meta"]["degraded"] == ["recurrence_truncated"]
    assert since(scoped, **late, scope="ops")["meta"]["degraded"] == ["recurrence_truncated"]
    team = since(scoped, **late, scope="team")
    assert (team["total"], team["meta"]["degraded"]) == (0, [])


def test_an_entity_of_another_scope_is_not_found(scoped: TestClient) -> None:
    folder_only = gql(scoped, TL, entity="daily", scope="team", first=5)
    assert codes(folder_only) == ["NOT_FOUND"]
    result = data(scoped, LAST, entity="daily", scope="team")["chronicleLastSeen"]
    assert result == {"entry": None, "reason": "entity_missing"}
    assert codes(gql(scoped, OCC, id="daily", since="2026-01-01", until="2026-01-02")) == []
    hidden = data(
        scoped,
        OCC.replace("timezone: $tz", "timezone: $tz, scope: \"team\""),
        id="daily", since="2026-01-01", until="2026-01-02",
    )["occurrences"]  # fmt: skip
    assert hidden["record"] is None and hidden["total"] == 0


# -- kind and type aliases ------------------------------------------------------------------


def test_kind_matches_the_expanded_type_alias(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    write_vault(
        vault,
        {
            "a": "type: meetings\noccurred_at: 2026-03-10T10:00:00Z",
            "b": "type: meeting\noccurred_at: 2026-03-10T11:00:00Z",
            "c": "type: call\noccurred_at: 2026-03-10T12:00:00Z",
        },
    )
    config = tmp_path / "almanac.toml"
    config.write_text('[type_aliases]\nmeetings = "meeting"\n')
    with app_over(vault, tmp_path / "s.db", config) as client:
        assert ids(day(client, date="2026-03-10", kind="meeting")) == ["a", "b"]
        assert ids(since(client, since="2026-03-10", until="2026-03-10", kind="meeting")) == [
            "a",
            "b",
        ]
        assert ids(tl(client, kind="meeting")) == ["a", "b"]
        # `kind` is the exact type, never the derived page kind.
        assert ids(tl(client, kind="page")) == []


# -- eligibility corners ----------------------------------------------------------------------


@pytest.fixture(scope="module")
def corners(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    folder = tmp_path_factory.mktemp("corners")
    write_vault(
        folder / "vault",
        {
            "ada": "type: person",
            "m1": "type: meeting\noccurred_at: 2026-03-10T10:00:00Z",
            # A relationship sourced at m1 that is no longer valid at asOf.
            "r1": (
                "type: relationship\nfrom: ada\nto: m1\nrelation: attended\nsource: m1\n"
                "valid_until: 2026-03-12"
            ),
            # A superseded task whose replacement has no deadline.
            "task-v1": (
                "type: task\nowner: ada\ndue_at: 2026-03-01\nlifecycle: superseded\n"
                "superseded_by: task-v2"
            ),
            "task-v2": "type: task\nowner: ada",
            # A superseded meeting whose replacement lies outside the range asked for.
            "old": (
                "type: meeting\noccurred_at: 2026-03-11\nlifecycle: superseded\nsuperseded_by: new"
            ),
            "new": "type: meeting\noccurred_at: 2026-09-01",
        },
    )
    with app_over(folder / "vault", folder / "state.db") as client:
        yield client


GROUPED = """query($asOf: String, $eligibility: Eligibility) {
  timeline(entity: "ada", group: SOURCE, asOf: $asOf, eligibility: $eligibility) {
    total entries { record { id } note { id } }
  }
}"""


def test_group_source_applies_as_of_only_to_active_eligibility(corners: TestClient) -> None:
    grouped = data(corners, GROUPED, asOf="2026-03-11T00:00:00Z")["timeline"]
    assert grouped["entries"] == [{"record": {"id": "m1"}, "note": {"id": "r1"}}]
    later = data(corners, GROUPED, asOf="2026-03-15T00:00:00Z")["timeline"]
    assert later["total"] == 0  # the relationship is no longer valid at asOf


def test_group_source_include_inactive_drops_the_validity_filter(corners: TestClient) -> None:
    result = data(corners, GROUPED, asOf="2026-03-15T00:00:00Z", eligibility="INCLUDE_INACTIVE")
    assert [e["record"]["id"] for e in result["timeline"]["entries"]] == ["m1"]


def test_a_replacement_without_a_value_in_the_time_field_is_not_listed(
    corners: TestClient,
) -> None:
    # SPEC: rows are records with a value in the time field. task-v1 matches by its deadline,
    # but it is superseded, and its replacement task-v2 has no deadline: nothing is listed.
    result = tl(corners, entity="ada", field="DUE_AT", asOf=AS_OF)
    assert result["entries"] == []
    assert result["total"] == 0
    # The match itself is there: listed as what it is when inactive records are asked for.
    inactive = tl(corners, entity="ada", field="DUE_AT", asOf=AS_OF, eligibility="INCLUDE_INACTIVE")
    assert [(e["record"]["id"], e["date"]["text"]) for e in inactive["entries"]] == [
        ("task-v1", "2026-03-01")
    ]


def test_a_replacement_outside_the_range_is_still_the_current_record(corners: TestClient) -> None:
    result = since(corners, since="2026-03-11", until="2026-03-11")
    # The superseded meeting matched; its current record is listed (after direct matches),
    # with its own date and `via`.
    assert [(e["record"]["id"], e["via"]) for e in result["entries"]] == [("new", {"id": "old"})]


# -- hostile arguments: every bad input is a typed error ------------------------------------

# The contract's codes and the two document errors (tests/api/helpers.py); never a 500.
TYPED = DOCUMENTED
BAD_ZONES = [
    "../etc", "../../etc/passwd", "UTC\u0000", "UTC\n", " UTC", "Europe/Berlin/", "/etc/localtime",
    "Europe/../UTC", "\ud800", "x" * 10_000, "Europe\\Berlin", "posix/../../UTC", ".", "",
]  # fmt: skip
BAD_TEXTS = [
    "\ud800", "2026-03-01\u0000", "2026-03-01T10:00:00+25:00", "2026-03-01T24:00:01Z",
    "0000-01-01", "-2026-03-01", "+12026-03-01", "2026-W10-1", "2026-060",
    "2026-03-01T10:00:00.1234567890123Z", "9" * 5000,
]  # fmt: skip
EDGE_TEXTS = [
    "0001-01-01", "9999-12-31", "0001-01-01T00:00:00+14:00", "9999-12-31T23:59:59-14:00",
    "9999-12-31T23:59:59.999999Z", "2026-03-01T10:00:00.5+01:00", "2026-03-01T10:00:00+14:01",
]  # fmt: skip


def _calls(zone: str | None = None, text: str | None = None) -> list[tuple[str, dict[str, Any]]]:
    z = {"tz": zone} if zone is not None else {}
    if text is None:
        return [
            (TL, {**z, "first": 5}),
            (SINCE, {**z, "since": "2026-01-01"}),
            (DAY, {**z, "date": "2026-03-15", "week": True}),
            (OCC, {**z, "id": "ny-daily", "since": "2026-01-01", "until": "2026-12-31"}),
        ]
    return [
        (TL, {"since": text, "first": 5}),
        (TL, {"until": text, "first": 5}),
        (TL, {"asOf": text, "entity": "ada", "first": 5}),
        (SINCE, {"since": text}),
        (SINCE, {"since": "2026-01-01", "until": text}),
        (DAY, {"date": text}),
        (DAY, {"date": text, "week": True, "tz": "Pacific/Kiritimati"}),
        (DAY, {"date": text, "week": True, "tz": "Pacific/Pago_Pago"}),
        (OCC, {"id": "ny-daily", "since": text, "until": "9999-12-31"}),
        (OCC, {"id": "ny-daily", "since": "0001-01-01", "until": text}),
        (LAST, {"entity": "ada", "bound": text}),
    ]


def _assert_typed(body: dict[str, Any], what: object) -> None:
    found = codes(body)
    assert "INTERNAL_SERVER_ERROR" not in found, (what, body)
    assert set(found) <= TYPED, (what, body)


@pytest.mark.parametrize("zone", BAD_ZONES, ids=range(len(BAD_ZONES)))
def test_bad_zones_are_refused_by_name(rv: TestClient, zone: str) -> None:
    for query, args in _calls(zone=zone):
        response = post(rv, query, **args)
        assert response.status_code in (200, 400), response.text
        body = response.json()
        _assert_typed(body, (zone, args))
        assert codes(body) == ["BAD_USER_INPUT"], (zone, body)


@pytest.mark.parametrize("text", BAD_TEXTS + EDGE_TEXTS, ids=range(len(BAD_TEXTS + EDGE_TEXTS)))
def test_hostile_date_texts_never_break_the_server(rv: TestClient, text: str) -> None:
    for query, args in _calls(text=text):
        response = post(rv, query, **args)
        assert response.status_code in (200, 400), response.text
        body = response.json()
        _assert_typed(body, (text, args))
        if text in BAD_TEXTS:
            assert codes(body) == ["BAD_USER_INPUT"], (text, args, body)


@pytest.mark.parametrize(
    "args",
    [
        {"first": 0},
        {"first": -1},
        {"first": 101},
        {"first": 2**31 - 1},
        {"first": -(2**31)},
        {"after": ""},
        {"after": "!!!"},
        {"after": "\ud800"},
        {"after": "A" * 100_000},
        {"after": "WyJ4IiwiLTEiXQ"},  # ["x","-1"]: a forged cursor of another snapshot
        {"entity": "\ud800"},
        {"entity": "nobody"},
        {"entity": ""},
        {"kind": "\ud800"},
        {"scope": "nope"},
        {"scope": "\ud800"},
        {"field": "NOT_A_FIELD"},
    ],  # fmt: skip
    ids=lambda a: json.dumps(a)[:40],
)
def test_hostile_page_and_identity_arguments_are_typed_errors(
    rv: TestClient, args: dict[str, Any]
) -> None:
    base = {"first": 5, **args}
    body = post(rv, TL, **base).json()
    _assert_typed(body, args)
    if "errors" not in body:
        assert args in ({"kind": "\ud800"},), body


@pytest.mark.parametrize(
    "key",
    [
        "-1",
        "99999999999999999999",
        "1e3",
        " 1",
        "١",
        "²",
        "1" * 5000,
    ],  # fmt: skip
    ids=range(7),
)
def test_a_forged_cursor_of_this_snapshot_is_a_typed_error(rv: TestClient, key: str) -> None:
    page = data(rv, SINCE, since="2026-01-01", until="2026-12-31", first=1)["chronicleSince"]
    snapshot, _ = json.loads(_unb64(page["pageInfo"]["endCursor"]))
    raw = json.dumps([snapshot, key], separators=(",", ":")).encode()
    cursor = base64.urlsafe_b64encode(raw).decode().rstrip("=")
    body = gql(rv, SINCE, since="2026-01-01", until="2026-12-31", first=1, after=cursor)
    _assert_typed(body, key)


def post(client: TestClient, query: str, **variables: Any) -> Any:
    """POST a document as ASCII JSON, so lone surrogates travel as `\\udXXX` escapes."""
    payload = json.dumps({"query": query, "variables": variables}, ensure_ascii=True)
    return client.post(
        "/graphql", content=payload.encode(), headers={"content-type": "application/json"}
    )


def _unb64(text: str) -> str:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4)).decode()


def test_occurrences_over_the_widest_range_are_bounded(rv: TestClient) -> None:
    body = gql(rv, OCC, id="bad-rule", since="0001-01-01", until="9999-12-31", first=100)
    _assert_typed(body, "widest")
    endless = gql(rv, OCC, id="ny-daily", since="0001-01-01", until="9999-12-31", first=100)
    assert endless["data"]["occurrences"]["total"] == 5


@pytest.mark.parametrize("text", ["２０２６-03-01", "٢٠٢٦-٠٣-٠١", "2026-03-01T10:00:0０Z"])
def test_non_ascii_digits_are_not_a_date(rv: TestClient, text: str) -> None:
    for query, args in [(SINCE, {"since": text}), (DAY, {"date": text}), (TL, {"asOf": text})]:
        body = post(rv, query, **args).json()
        assert codes(body) == ["BAD_USER_INPUT"], (text, query[:20], body)


# -- properties: brute force against SPEC's overlap rule --------------------------------------

_UTC = UTC
_OFFSETS = ["Z", "+14:00", "-11:00", "+01:00", "+05:45", "-03:30"]
_ZONES = ["UTC", "Pacific/Kiritimati", "Pacific/Pago_Pago", "Europe/Berlin", "America/New_York",
          "Asia/Kathmandu", "Australia/Lord_Howe"]  # fmt: skip
_W0 = datetime(2026, 3, 1, tzinfo=_UTC)


def _us(moment: datetime) -> int:
    return (moment - datetime(1970, 1, 1, tzinfo=_UTC)) // timedelta(microseconds=1)


def _random_vault(seed: int, count: int) -> tuple[dict[str, str], dict[str, tuple[str, int, int]]]:
    """Dated notes around March 2026 and each one's (precision, start, stop) in microseconds."""
    rng = random.Random(seed)
    notes: dict[str, str] = {}
    truth: dict[str, tuple[str, int, int]] = {}
    for n in range(count):
        name = f"n{n:03d}"
        shape = rng.choice(["instant", "instant", "instant", "day", "day", "month", "year"])
        if shape == "instant":
            start = _W0 + timedelta(minutes=rng.randrange(-20 * 1440, 40 * 1440))
            if rng.random() < 0.3:
                start = start.replace(minute=0)  # many at whole hours: local midnights
            offset = rng.choice(_OFFSETS)
            sign = 1 if offset[0] == "+" else -1
            delta = (
                timedelta(hours=int(offset[1:3]), minutes=int(offset[4:6]))
                if offset != "Z"
                else timedelta()
            )
            local = (start + sign * delta).replace(tzinfo=None).isoformat(timespec="seconds")
            fields = f"occurred_at: {local}{offset}"
            stop = start
            if rng.random() < 0.4:
                stop = start + timedelta(minutes=rng.choice([0, 1, 59, 600, 1440, 4000]))
                fields += f"\nends_at: {stop.isoformat(timespec='seconds').replace('+00:00', 'Z')}"
            truth[name] = ("instant", _us(start), _us(stop))
        elif shape == "day":
            first = _W0.date() + timedelta(days=rng.randrange(-20, 40))
            last = first + timedelta(days=rng.choice([0, 0, 1, 3]))
            fields = f"occurred_at: {first.isoformat()}"
            if last != first or rng.random() < 0.2:
                fields += f"\nends_at: {last.isoformat()}"
            start = datetime.combine(first, datetime.min.time(), _UTC)
            stop = datetime.combine(last + timedelta(days=1), datetime.min.time(), _UTC)
            truth[name] = ("day", _us(start), _us(stop))
        elif shape == "month":
            month = rng.choice([2, 3, 4])
            fields = f"occurred_at: 2026-{month:02d}"
            start = datetime(2026, month, 1, tzinfo=_UTC)
            truth[name] = ("month", _us(start), _us(datetime(2026, month + 1, 1, tzinfo=_UTC)))
        else:
            year = rng.choice([2025, 2026])
            fields = f"occurred_at: {year}"
            start = datetime(year, 1, 1, tzinfo=_UTC)
            truth[name] = ("year", _us(start), _us(datetime(year + 1, 1, 1, tzinfo=_UTC)))
        notes[name] = fields
    return notes, truth


PROPERTY_NOTES, TRUTH = _random_vault(seed=20261129, count=70)
# Recurring records (ids `r-…`): their rows must be what `occurrences` expands on the fly.
PROPERTY_NOTES |= {
    "r-ny": (  # 23:30-00:30 in New York, across the change to summer time on 8 March
        "timezone: America/New_York\noccurred_at: 2026-02-25T23:30\n"
        "ends_at: 2026-02-26T00:30\nrecurrence: FREQ=WEEKLY;BYDAY=WE,SA;COUNT=16"
    ),
    "r-float": (
        "occurred_at: 2026-02-27\nrecurrence: FREQ=WEEKLY;INTERVAL=2;COUNT=6\nexdates: [2026-03-13]"
    ),
    "r-kiri": (
        "timezone: Pacific/Kiritimati\noccurred_at: 2026-03-01T00:00\n"
        "recurrence: FREQ=MONTHLY;BYMONTHDAY=1,15;COUNT=6\nrdates: [2026-03-20T12:00]"
    ),
}


def _plain(result: dict[str, Any]) -> list[str]:
    return [i for i in ids(result) if not i.startswith("r-")]


@pytest.fixture(scope="module")
def randomized(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    folder = tmp_path_factory.mktemp("random")
    write_vault(folder / "vault", PROPERTY_NOTES)
    with app_over(folder / "vault", folder / "state.db") as client:
        yield client


def _overlaps(start: int, stop: int, lo: int, hi: int) -> bool:
    """SPEC: overlap with the inclusive range [lo, hi]; an instant matches itself."""
    return start <= hi and (stop > lo or stop == start >= lo)


def _expected_range(
    lo: int, hi: int, truth: Mapping[str, tuple[str, int, int]] = TRUTH
) -> list[str]:
    hits = [(s, name) for name, (_, s, e) in truth.items() if _overlaps(s, e, lo, hi)]
    return [name for _, name in sorted(hits)]


def _expected_day(
    first: date,
    days: int,
    tz: str,
    partial: bool,
    truth: Mapping[str, tuple[str, int, int]] = TRUTH,
) -> list[str]:
    zone = ZoneInfo(tz)
    lo = _us(datetime.combine(first, datetime.min.time(), zone))
    hi = _us(datetime.combine(first + timedelta(days=days), datetime.min.time(), zone))
    flo = _us(datetime.combine(first, datetime.min.time(), _UTC))
    fhi = flo + days * 86_400_000_000
    hits = []
    for name, (precision, s, e) in truth.items():
        if precision == "instant":
            ok = s < hi and (e > lo or e == s >= lo)
        else:
            ok = (precision == "day" or partial) and s < fhi and e > flo
        if ok:
            hits.append((s, name))
    return [name for _, name in sorted(hits)]


def _all(client: TestClient, query: str, name: str, **args: Any) -> dict[str, Any]:
    result: dict[str, Any] = data(client, query, first=100, **args)[name]
    assert result["total"] == len(result["entries"]), "raise `first` or shrink the vault"
    return result


_moments = st.integers(min_value=-25 * 1440, max_value=45 * 1440).map(
    lambda m: _W0 + timedelta(minutes=m)
)


def _bound_text(moment: datetime, as_date: bool) -> str:
    return moment.date().isoformat() if as_date else moment.strftime("%Y-%m-%dT%H:%M:%SZ")


@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    a=_moments, b=_moments, date_a=st.booleans(), date_b=st.booleans(), tz=st.sampled_from(_ZONES)
)
def test_chronicle_since_equals_a_brute_force_overlap_filter(
    randomized: TestClient, a: datetime, b: datetime, date_a: bool, date_b: bool, tz: str
) -> None:
    a, b = min(a, b), max(a, b)
    lo_text, hi_text = _bound_text(a, date_a), _bound_text(b, date_b)
    lo = _us(datetime.fromisoformat(lo_text.replace("Z", "+00:00")).replace(tzinfo=_UTC))
    hi = _us(datetime.fromisoformat(hi_text.replace("Z", "+00:00")).replace(tzinfo=_UTC))
    if date_b:
        hi += 86_400_000_000 - 1  # a date-only upper bound includes its whole UTC day
    if lo > hi:
        return
    expected = _expected_range(lo, hi)
    # Ranges compare in UTC: the timezone changes clocks, never which rows match.
    got = _all(randomized, SINCE, "chronicleSince", since=lo_text, until=hi_text, tz=tz)
    assert _plain(got) == expected
    assert ids(_all(randomized, TL, "timeline", since=lo_text, until=hi_text, tz=tz)) == ids(got)
    # Materialised occurrences (spans) agree with the on-the-fly expansion.
    for rid in ("r-ny", "r-float", "r-kiri"):
        mine = [e["occurrence"]["index"] for e in got["entries"] if e["record"]["id"] == rid]
        fly = data(randomized, OCC, id=rid, since=lo_text, until=hi_text)["occurrences"]
        assert mine == [o["index"] for o in fly["occurrences"]], rid
    keys = [
        (e["date"]["start"], e["record"]["id"], (e["occurrence"] or {}).get("index", -1))
        for e in got["entries"]
    ]
    assert keys == sorted(keys)


@settings(
    max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    offset=st.integers(min_value=-22, max_value=42),
    tz=st.sampled_from(_ZONES),
    partial=st.booleans(),
)
def test_chronicle_day_and_week_equal_brute_force_and_the_union_of_days(
    randomized: TestClient, offset: int, tz: str, partial: bool
) -> None:
    asked = _W0.date() + timedelta(days=offset)
    one = _all(randomized, DAY, "chronicleDay", date=asked.isoformat(), tz=tz, partial=partial)
    assert _plain(one) == _expected_day(asked, 1, tz, partial)
    assert one["localDate"] == asked.isoformat()
    monday = asked - timedelta(days=asked.weekday())
    week = _all(
        randomized, DAY, "chronicleDay", date=asked.isoformat(), tz=tz, partial=partial, week=True
    )
    assert _plain(week) == _expected_day(monday, 7, tz, partial)
    union: set[str] = set()
    for n in range(7):
        d = (monday + timedelta(days=n)).isoformat()
        union |= set(rows(_all(randomized, DAY, "chronicleDay", date=d, tz=tz, partial=partial)))
    assert set(rows(week)) == union and len(rows(week)) == len(union)


# -- more recurrence and replacement corners --------------------------------------------------

EXTRA = {
    "ada": "type: person",
    "gap": (  # 02:30 daily in Berlin: on 29 March 2026 02:30 does not exist
        "type: meeting\ntimezone: Europe/Berlin\noccurred_at: 2026-03-28T02:30\n"
        "recurrence: FREQ=DAILY;COUNT=3"
    ),
    "local-until": (  # a date-only UNTIL includes that whole local date
        "type: meeting\ntimezone: Pacific/Kiritimati\noccurred_at: 2026-05-01T23:00\n"
        "recurrence: FREQ=DAILY;UNTIL=20260503"
    ),
    "day-exdate": (  # a date-only EXDATE removes that local day's instances
        "type: meeting\ntimezone: America/New_York\noccurred_at: 2026-05-04T21:00\n"
        "recurrence: FREQ=DAILY;COUNT=4\nexdates: [2026-05-05]"
    ),
    "overnight": (  # each occurrence runs past local midnight: it is on both days
        "type: meeting\nentities: [ada]\ntimezone: Europe/Berlin\noccurred_at: 2026-06-01T23:00\n"
        "ends_at: 2026-06-02T01:00\nrecurrence: FREQ=WEEKLY;COUNT=2"
    ),
    "until-midnight": "occurred_at: 2026-06-03T20:00:00Z\nends_at: 2026-06-04T00:00:00Z",
    "dec-v1": (
        "type: decision\nentities: [ada]\noccurred_at: 2026-07-01\nlifecycle: superseded\n"
        "superseded_by: dec-v2"
    ),
    "dec-v2": "type: note\noccurred_at: 2026-07-02",  # another type: filtered out by kind
    "orphan": (  # superseded, but by nothing: an ACTIVE query returns nothing for it
        "type: decision\nentities: [ada]\noccurred_at: 2026-07-03\nlifecycle: superseded"
    ),
    "dec-gone-v1": (
        "type: decision\nentities: [ada]\noccurred_at: 2026-07-04\nlifecycle: superseded\n"
        "superseded_by: dec-gone-v2"
    ),
    "dec-gone-v2": "type: decision\noccurred_at: 2026-07-05\nlifecycle: withdrawn",
}


@pytest.fixture(scope="module")
def extra(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    folder = tmp_path_factory.mktemp("extra")
    write_vault(folder / "vault", EXTRA)
    with app_over(folder / "vault", folder / "state.db") as client:
        yield client


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


def test_chains_that_reach_a_filtered_out_record_return_nothing(extra: TestClient) -> None:
    decisions = ids(tl(extra, entity="ada", kind="decision"))
    assert decisions == []  # dec-v2 is a note; orphan has no successor; dec-gone-v2 is withdrawn
    everything = tl(extra, entity="ada", since="2026-07-01", until="2026-07-31")
    assert [(e["record"]["id"], e["via"]) for e in everything["entries"]] == [
        ("dec-v2", {"id": "dec-v1"})
    ]
    inactive = ids(tl(extra, entity="ada", kind="decision", eligibility="INCLUDE_INACTIVE"))
    assert inactive == ["dec-v1", "orphan", "dec-gone-v1"]


GROUPED_PAGE = """query($first: Int, $after: String, $order: Order) {
  timeline(entity: "ada", group: SOURCE, first: $first, after: $after, order: $order) {
    total entries { record { id } date { text } claims summary } pageInfo { hasNextPage endCursor }
  }
}"""


@pytest.mark.parametrize("order", ["ASC", "DESC"])
def test_group_source_pages_equal_one_big_page(rv: TestClient, order: str) -> None:
    big = data(rv, GROUPED_PAGE, first=100, order=order)["timeline"]
    assert big["total"] == len(big["entries"]) > 5
    assert walk(rv, GROUPED_PAGE, "timeline", order=order) == big["entries"]


# -- source_event stand-ins under filters -----------------------------------------------------

STANDS = {
    "ada": "type: person",
    "summit": "type: event\nentities: [ada]\noccurred_at: 2026-04-10T09:00:00Z",
    "c-summit": "type: claim\nsubject: ada\nsource: summit\nsource_event: true",
    "sync": "type: meeting\nentities: [ada]\noccurred_at: 2026-04-11T09:00:00Z",
    "c-sync": (  # stands for the sync, but is no longer valid in June
        "type: claim\nsubject: ada\nsource: sync\nsource_event: true\nvalid_until: 2026-05-01"
    ),
}


@pytest.fixture(scope="module")
def stands(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    folder = tmp_path_factory.mktemp("stands")
    write_vault(folder / "vault", STANDS)
    with app_over(folder / "vault", folder / "state.db") as client:
        yield client


KINDED = """query($kind: String, $asOf: String) {
  timeline(entity: "ada", kind: $kind, asOf: $asOf) { entries { record { id type } } }
  chronicleDay(date: "2026-04-10", kind: $kind) { entries { record { id type } } }
}"""


def test_a_stand_in_replaces_the_meeting_without_a_kind(stands: TestClient) -> None:
    result = data(stands, KINDED, kind=None)
    assert [e["record"]["id"] for e in result["timeline"]["entries"]] == ["c-summit", "c-sync"]
    meetings = data(stands, KINDED, kind="meeting")["timeline"]["entries"]
    assert [e["record"] for e in meetings] == [{"id": "sync", "type": "meeting"}]


def test_a_kind_query_only_returns_records_of_that_type(stands: TestClient) -> None:
    result = data(stands, KINDED, kind="event")
    for field in ("timeline", "chronicleDay"):
        assert [e["record"] for e in result[field]["entries"]] == [
            {"id": "summit", "type": "event"}
        ], field


def test_a_stand_in_outside_its_validity_does_not_replace_the_meeting(stands: TestClient) -> None:
    result = data(stands, KINDED, kind=None, asOf="2026-06-01T00:00:00Z")["timeline"]
    assert [e["record"]["id"] for e in result["entries"]] == ["c-summit", "sync"]


@pytest.mark.soak
@pytest.mark.parametrize("seed", range(8))
def test_soak_random_vaults_against_brute_force(tmp_path: Path, seed: int) -> None:
    notes, truth = _random_vault(seed=seed, count=90)
    write_vault(tmp_path / "vault", notes)
    rng = random.Random(seed)
    with app_over(tmp_path / "vault", tmp_path / "state.db") as client:
        for _ in range(150):
            a, b = sorted(
                _W0 + timedelta(minutes=rng.randrange(-25 * 1440, 45 * 1440)) for _ in "ab"
            )
            lo_text = _bound_text(a, rng.random() < 0.5)
            date_b = rng.random() < 0.5
            hi_text = _bound_text(b, date_b)
            lo = _us(datetime.fromisoformat(lo_text.replace("Z", "+00:00")).replace(tzinfo=_UTC))
            hi = _us(datetime.fromisoformat(hi_text.replace("Z", "+00:00")).replace(tzinfo=_UTC))
            hi += 86_400_000_000 - 1 if date_b else 0
            if lo <= hi:
                found = data(client, SINCE, since=lo_text, until=hi_text, first=100)
                expected = _expected_range(lo, hi, truth)
                if len(expected) <= 100:
                    assert ids(found["chronicleSince"]) == expected, (lo_text, hi_text)
            asked = _W0.date() + timedelta(days=rng.randrange(-22, 42))
            tz, partial = rng.choice(_ZONES), rng.random() < 0.5
            got = data(client, DAY, date=asked.isoformat(), tz=tz, partial=partial, first=100)
            expected = _expected_day(asked, 1, tz, partial, truth)
            assert ids(got["chronicleDay"]) == expected, (asked, tz, partial)


# -- zone names that are files, not IANA zones ------------------------------------------------


@pytest.mark.skipif(
    "localtime" not in __import__("zoneinfo").available_timezones(),
    reason="this host's tz database has no 'localtime' entry",
)
def test_the_hosts_localtime_is_not_an_iana_zone(rv: TestClient) -> None:
    for query, args in _calls(zone="localtime"):
        assert codes(post(rv, query, **args).json()) == ["BAD_USER_INPUT"], query[:30]


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


def test_truncation_is_reported_per_reach(scoped: TestClient) -> None:
    late = {"since": "2026-04-01", "until": "2026-04-02"}
    ops = tl(scoped, entity="ada", scope="ops", **late)
    assert ops["meta"]["degraded"] == ["recurrence_truncated"]
    assert tl(scoped, entity="ada", scope="team", **late)["meta"]["degraded"] == []
    assert tl(scoped, kind="task", **late)["meta"]["degraded"] == []  # not a meeting: out of reach
    wide = data(scoped, OCC, id="daily", since="2026-01-01", until="2028-01-01", first=100)
    result = wide["occurrences"]
    assert result["meta"]["degraded"] == ["recurrence_truncated"]
    assert result["total"] == 10_000 and len(result["occurrences"]) == 100
    assert [o["index"] for o in result["occurrences"][:3]] == [0, 1, 2]


def test_cursors_follow_the_snapshot_of_the_scopes_read(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    write_vault(
        vault,
        {
            **{f"team/n{i}": f"occurred_at: 2026-01-0{i + 1}" for i in range(3)},
            "ops/standup": (
                "timezone: UTC\noccurred_at: 2026-01-01T09:00:00Z\nrecurrence: FREQ=DAILY;COUNT=5"
            ),
        },
    )
    config = tmp_path / "almanac.toml"
    config.write_text('[scopes]\nteam = "team/"\nops = "ops/"\n')
    args = {"since": "2026-01-01", "until": "2026-01-31", "first": 1}
    with app_over(vault, tmp_path / "s.db", config) as client:
        team = data(client, SINCE, scope="team", **args)["chronicleSince"]["pageInfo"]["endCursor"]
        both = data(client, SINCE, **args)["chronicleSince"]["pageInfo"]["endCursor"]
        text = (vault / "ops" / "standup.md").read_text()
        touch(
            vault / "ops" / "standup.md", text.replace("COUNT=5", "COUNT=5\nexdates: [2026-01-02]")
        )
        # An edit in ops changes what a reader of both scopes sees, not what team readers see.
        assert codes(gql(client, SINCE, after=both, **args)) == ["SNAPSHOT_CHANGED"]
        page = data(client, SINCE, scope="team", after=team, **args)["chronicleSince"]
        assert ids(page) == ["team/n1"]


@pytest.mark.parametrize(
    "url",
    [
        # Invalid UTF-8 (an encoded lone surrogate) in the document and in the variables.
        "/graphql?query=%7BchronicleDay(date%3A%222026-03-01%22%2Ctimezone%3A%22%ED%A0%80%22)"
        "%7Btotal%7D%7D",
        "/graphql?query=query(%24t%3AString)%7BchronicleDay(date%3A%222026-03-01%22%2C"
        "timezone%3A%24t)%7Btotal%7D%7D&variables=%7B%22t%22%3A%22%ED%A0%80%22%7D",
        # A JSON escape of a lone surrogate in the variables, and a GraphQL one in the document.
        "/graphql?query=query(%24t%3AString)%7BchronicleDay(date%3A%222026-03-01%22%2C"
        "timezone%3A%24t)%7Btotal%7D%7D&variables=%7B%22t%22%3A%22%5Cud800%22%7D",
        "/graphql?query=%7BchronicleDay(date%3A%222026-03-01%22%2Ctimezone%3A%22%5CuD800%22)"
        "%7Btotal%7D%7D",
    ],
    ids=["doc-utf8", "vars-utf8", "vars-escape", "doc-escape"],
)
def test_lone_surrogates_over_http_get_are_typed_errors(rv: TestClient, url: str) -> None:
    response = rv.get(url)
    assert response.status_code in (200, 400), response.text
    found = codes(response.json())
    assert found and set(found) <= TYPED and "INTERNAL_SERVER_ERROR" not in found


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


def test_clock_counts_list_all_seven_relations_in_enum_order(rv: TestClient) -> None:
    order = ["PAST", "TODAY", "CURRENT_PERIOD", "ONGOING", "FUTURE", "OVERDUE", "UNDATED"]
    for result in (
        tl(rv, entity="ada", asOf=AS_OF),
        since(rv, since="2030-01-01", until="2030-01-02"),  # empty: all zeros
        day(rv, date="2026-03-15", week=True),
    ):
        assert [c["clock"] for c in result["clockCounts"]] == order
        assert sum(c["count"] for c in result["clockCounts"]) == result["total"]


def test_occurrences_of_a_plain_record_use_the_query_zone_for_local(rv: TestClient) -> None:
    found = data(rv, OCC, id="tie-a", since="2026-03-20", until="2026-03-20", tz="Asia/Kathmandu")
    assert [(o["index"], o["start"], o["local"]) for o in found["occurrences"]["occurrences"]] == [
        (0, "2026-03-20T12:00:00Z", "2026-03-20T17:45:00+05:45")
    ]
    outside = data(rv, OCC, id="tie-a", since="2026-03-21", until="2026-03-22")["occurrences"]
    assert outside["total"] == 0 and outside["record"] == {"id": "tie-a"}


ISSUES = """{ timeline(since: "2026-01-01", until: "2026-12-31") {
  entries { record { id } date { text } } meta { coverage { complete } } } }"""


def test_non_ascii_digits_in_a_note_are_an_invalid_date(tmp_path: Path) -> None:
    write_vault(tmp_path / "vault", {"w": "occurred_at: ２０２６-03-01"})
    with app_over(tmp_path / "vault", tmp_path / "s.db") as client:
        result = data(client, ISSUES)["timeline"]
    assert result["entries"] == [] and result["meta"]["coverage"]["complete"] is False


@pytest.mark.skipif(
    "localtime" not in __import__("zoneinfo").available_timezones(),
    reason="this host's tz database has no 'localtime' entry",
)
def test_localtime_in_a_note_is_an_unknown_timezone(tmp_path: Path) -> None:
    write_vault(tmp_path / "vault", {"z": "timezone: localtime\noccurred_at: 2026-03-01T10:00"})
    with app_over(tmp_path / "vault", tmp_path / "s.db") as client:
        result = data(client, ISSUES)["timeline"]
    assert result["entries"] == [] and result["meta"]["coverage"]["complete"] is False
