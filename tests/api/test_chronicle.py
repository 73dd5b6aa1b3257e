"""chronicleDay, chronicleSince and occurrences over a vault built for time zones and DST."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from almanac.api.app import create_app
from almanac.api.settings import Settings
from tests.api.helpers import LocalClient, codes, data, gql

NOTES = {
    # 21:30Z: still the 29th in UTC, the 29th in Berlin (23:30 CEST, the 23-hour day).
    "berlin-late": "occurred_at: 2026-03-29T23:30:00+02:00",
    # 23:30Z on the 28th: already the 29th in Berlin (00:30 CET).
    "utc-late": "occurred_at: 2026-03-28T23:30:00Z",
    "floating": "occurred_at: 2026-03-29",
    "month": "occurred_at: 2026-03",
    "year": "occurred_at: 2026",
    "conference": "occurred_at: 2026-03-28\nends_at: 2026-03-30",
    # The repeated 01:30 of New York's fall-back day (25 hours), first and second time.
    "ny-first": "occurred_at: 2026-11-01T01:30:00-04:00",
    "ny-second": "occurred_at: 2026-11-01T01:30:00-05:00",
    "ny-late": "occurred_at: 2026-11-01T23:30:00-05:00",  # 04:30Z on the 2nd
    "kiritimati": "occurred_at: 2026-01-01T00:30:00+14:00",  # 2025-12-31T10:30Z
    "pago": "occurred_at: 2025-12-31T23:30:00-11:00",  # 2026-01-01T10:30Z
    "standup": (
        "type: meeting\ntimezone: Europe/Berlin\noccurred_at: 2026-03-02T09:30\n"
        "ends_at: 2026-03-02T09:45\nrecurrence: FREQ=WEEKLY;BYDAY=MO,WE;COUNT=10\n"
        "exdates: [2026-03-30T09:30]"
    ),
    "monthly": "type: meeting\noccurred_at: 2026-01-15\nrecurrence: FREQ=MONTHLY;COUNT=12",
    "undated": "type: meeting",
}


@pytest.fixture(scope="module")
def time_client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    folder = tmp_path_factory.mktemp("time")
    vault = folder / "vault"
    vault.mkdir()
    for name, fields in NOTES.items():
        (vault / f"{name}.md").write_text(f"---\n{fields}\n---\n# {name}\n")
    settings = Settings.build(vault=vault, state=folder / "state.db", config=None, watch=False)
    with LocalClient(create_app(settings)) as client:
        yield client


DAY = """query($date: String!, $tz: String, $week: Boolean, $partial: Boolean, $kind: String) {
  chronicleDay(date: $date, timezone: $tz, week: $week, includePartial: $partial, kind: $kind,
               first: 100) {
    total localDate timezone
    entries { record { id } occurrence { index local } date { text precision } }
    meta { degraded }
  }
}"""


def rows(result: dict[str, Any]) -> list[str]:
    """Entry ids, with `#index` for occurrences, in the order returned."""
    out = []
    for e in result["entries"]:
        occ = e["occurrence"]
        out.append(e["record"]["id"] + (f"#{occ['index']}" if occ else ""))
    return out


DAYS = [
    ("2026-03-29", "Europe/Berlin", False, False,
     ["conference", "utc-late", "floating", "berlin-late"]),
    ("2026-03-29", "Europe/Berlin", False, True,
     ["year", "month", "conference", "utc-late", "floating", "berlin-late"]),
    ("2026-03-29", "UTC", False, False, ["conference", "floating", "berlin-late"]),
    ("2026-03-28", "UTC", False, False, ["conference", "utc-late"]),
    ("2026-03-30", "Europe/Berlin", False, False, ["conference"]),  # the stand-up is excepted
    ("2026-03-31", "Europe/Berlin", False, False, []),  # ends_at 2026-03-30 covers the 30th
    ("2026-11-01", "America/New_York", False, False, ["ny-first", "ny-second", "ny-late"]),
    ("2026-11-01", "UTC", False, False, ["ny-first", "ny-second"]),
    ("2026-11-02", "UTC", False, False, ["ny-late"]),
    ("2026-01-01", "Pacific/Kiritimati", False, False, ["kiritimati"]),
    ("2025-12-31", "Pacific/Kiritimati", False, False, []),
    ("2025-12-31", "Pacific/Pago_Pago", False, False, ["pago"]),
    ("2026-01-01", "Pacific/Pago_Pago", False, False, []),
    ("2026-01-01", "UTC", False, False, ["pago"]),
    ("2025-12-31", "UTC", False, False, ["kiritimati"]),
    ("2026-03-04", "Europe/Berlin", False, False, ["standup#1"]),
    ("2026-03-15", "Asia/Tokyo", False, False, ["monthly#2"]),  # floating: the 15th everywhere
    # Weeks run Monday to Sunday: the Sunday the 29th closes the week of the 23rd.
    ("2026-03-29", "Europe/Berlin", True, False,
     ["standup#6", "standup#7", "conference", "utc-late", "floating", "berlin-late"]),
    ("2026-03-30", "Europe/Berlin", True, False, ["conference", "standup#8"]),
    ("2026-03-11", "Europe/Berlin", True, False, ["standup#2", "standup#3", "monthly#2"]),
]  # fmt: skip


@pytest.mark.parametrize(("date", "zone", "week", "partial", "expected"), DAYS)
def test_chronicle_day(
    time_client: TestClient, date: str, zone: str, week: bool, partial: bool, expected: list[str]
) -> None:
    result = data(time_client, DAY, date=date, tz=zone, week=week, partial=partial)["chronicleDay"]
    assert rows(result) == expected
    assert result["total"] == len(expected)
    assert (result["localDate"], result["timezone"]) == (date, zone)
    assert result["meta"]["degraded"] == []


def test_occurrences_keep_their_wall_clock_time_across_dst(time_client: TestClient) -> None:
    week = data(time_client, DAY, date="2026-03-25", tz="Europe/Berlin", week=True)
    before = [e["occurrence"]["local"] for e in week["chronicleDay"]["entries"] if e["occurrence"]]
    after = data(time_client, DAY, date="2026-04-01", tz="Europe/Berlin")["chronicleDay"]
    assert before == ["2026-03-23T09:30:00+01:00", "2026-03-25T09:30:00+01:00"]
    assert [e["occurrence"]["local"] for e in after["entries"]] == ["2026-04-01T09:30:00+02:00"]
    assert after["entries"][0]["date"] == {
        "text": "2026-04-01T09:30:00+02:00",
        "precision": "INSTANT",
    }


def test_kind_matches_the_exact_type(time_client: TestClient) -> None:
    week = data(time_client, DAY, date="2026-03-11", tz="UTC", week=True, kind="meeting")
    assert rows(week["chronicleDay"]) == ["standup#2", "standup#3", "monthly#2"]
    none = data(time_client, DAY, date="2026-03-11", tz="UTC", week=True, kind="page")
    assert none["chronicleDay"]["total"] == 0


SINCE = """query($since: String!, $until: String, $kind: String) {
  chronicleSince(since: $since, until: $until, kind: $kind, first: 100) {
    total entries { record { id } occurrence { index } } meta { degraded }
  }
}"""


@pytest.mark.parametrize(
    ("since", "until", "expected", "degraded"),
    [
        # A date-only upper bound covers its whole UTC day; partial periods match what they overlap.
        ("2026-03-29", "2026-03-29",
         ["year", "month", "conference", "floating", "berlin-late"], []),
        # Bounds are inclusive: an instant equal to both matches.
        ("2026-03-29T21:30:00Z", "2026-03-29T21:30:00Z",
         ["year", "month", "conference", "floating", "berlin-late"], []),
        ("2026-03-29T21:30:00.000001Z", "2026-03-29T22:00:00Z",
         ["year", "month", "conference", "floating"], []),
        ("2026-03-23T00:00:00+01:00", "2026-03-26",
         ["year", "month", "standup#6", "standup#7"], []),
        # Half-bounded: anchors only, and a recurring one in the result says so.
        ("2026-11-01", None, ["year", "ny-first", "ny-second", "ny-late"], []),
        ("2026-03-03", None,
         ["year", "month", "conference", "utc-late", "floating", "berlin-late", "ny-first",
          "ny-second", "ny-late"], []),
        ("2026-03-02", None,
         ["year", "month", "standup", "conference", "utc-late", "floating", "berlin-late",
          "ny-first", "ny-second", "ny-late"], ["recurrence_unbounded"]),
    ],
)  # fmt: skip
def test_chronicle_since(
    time_client: TestClient, since: str, until: str | None, expected: list[str], degraded: list[str]
) -> None:
    result = data(time_client, SINCE, since=since, until=until)["chronicleSince"]
    assert rows(result) == expected
    assert result["meta"]["degraded"] == degraded


OCC = """query($id: ID!, $since: String!, $until: String!, $tz: String, $first: Int,
  $after: String) {
  occurrences(id: $id, since: $since, until: $until, timezone: $tz, first: $first, after: $after) {
    record { id } total occurrences { index start end local } meta { degraded }
  }
}"""


def test_occurrences_of_a_weekly_rule_with_an_exception(time_client: TestClient) -> None:
    result = data(time_client, OCC, id="standup", since="2026-03-23", until="2026-04-30")
    occ = result["occurrences"]
    assert occ["total"] == 3
    assert [o["index"] for o in occ["occurrences"]] == [6, 7, 8]
    assert occ["occurrences"][2] == {
        "index": 8,
        "start": "2026-04-01T07:30:00Z",
        "end": "2026-04-01T07:45:00Z",
        "local": "2026-04-01T09:30:00+02:00",
    }


def test_occurrences_of_a_floating_rule_are_dates(time_client: TestClient) -> None:
    result = data(time_client, OCC, id="monthly", since="2026-01-01", until="2026-03-31")
    occ = result["occurrences"]["occurrences"]
    assert [(o["index"], o["start"], o["local"], o["end"]) for o in occ] == [
        (0, "2026-01-15", "2026-01-15", None),
        (1, "2026-02-15", "2026-02-15", None),
        (2, "2026-03-15", "2026-03-15", None),
    ]


def test_occurrences_page_and_total(time_client: TestClient) -> None:
    result = data(time_client, OCC, id="monthly", since="2026-01-01", until="2027-12-31", first=5)
    assert result["occurrences"]["total"] == 12
    assert len(result["occurrences"]["occurrences"]) == 5


def test_occurrences_are_paged_with_a_cursor_bound_to_the_snapshot(
    time_client: TestClient,
) -> None:
    query = OCC.replace("meta { degraded }", "meta { degraded } pageInfo { hasNextPage endCursor }")
    args = {"id": "monthly", "since": "2026-01-01", "until": "2027-12-31", "first": 5}
    seen: list[int] = []
    after = None
    for _ in range(5):
        page = data(time_client, query, after=after, **args)["occurrences"]
        assert page["total"] == 12
        seen += [o["index"] for o in page["occurrences"]]
        after = page["pageInfo"]["endCursor"]
        if not page["pageInfo"]["hasNextPage"]:
            break
    assert seen == list(range(12))
    forged = gql(time_client, query, after="x" * 12, **args)
    assert codes(forged) == ["BAD_USER_INPUT"]


def test_occurrences_of_a_plain_record_and_of_a_missing_one(time_client: TestClient) -> None:
    plain = data(time_client, OCC, id="pago", since="2026-01-01", until="2026-01-01", tz="UTC")
    assert plain["occurrences"]["occurrences"] == [
        {"index": 0, "start": "2026-01-01T10:30:00Z", "end": None,
         "local": "2026-01-01T10:30:00+00:00"}
    ]  # fmt: skip
    missing = data(time_client, OCC, id="nope", since="2026-01-01", until="2026-01-02")
    assert missing["occurrences"] == {
        "record": None,
        "total": 0,
        "occurrences": [],
        "meta": {"degraded": []},
    }


BAD = [
    ("chronicleDay", '(date: "2026-02-30")', "date"),
    ("chronicleDay", '(date: "2026-3-01")', "date"),
    ("chronicleDay", '(date: "2026-03-01", timezone: "Mars/Base")', "timezone"),
    ("chronicleSince", '(since: "2026-03")', "since"),
    ("chronicleSince", '(since: "2026-03-01T10:00")', "since"),
    ("chronicleSince", '(since: "2026-03-02", until: "2026-03-01")', "since"),
    ("chronicleSince", '(since: "2026-03-01", first: 0)', "first"),
    ("chronicleSince", '(since: "2026-03-01", first: 101)', "first"),
    ("occurrences", '(id: "standup", since: "2026-03-01", until: "yesterday")', "until"),
    (
        "occurrences",
        '(id: "standup", since: "2026-03-01", until: "2026-04-01", first: 101)',
        "first",
    ),  # fmt: skip
    ("timeline", '(since: "last week")', "since"),
    ("timeline", '(asOf: "now")', "asOf"),
    ("timeline", "(group: SOURCE)", "group"),
    ("timeline", '(entity: "standup", group: SOURCE, kind: "meeting")', "group"),
    ("timeline", '(entity: "standup", group: SOURCE, timeField: DUE_AT)', "group"),
    ("timeline", '(timezone: "")', "timezone"),
    ("chronicleLastSeen", '(entity: "standup", occurredOnOrBefore: "soon")', "occurredOnOrBefore"),
]


@pytest.mark.parametrize(("field", "args", "named"), BAD)
def test_bad_arguments_are_typed_errors_naming_the_argument(
    time_client: TestClient, field: str, args: str, named: str
) -> None:
    selection = (
        "{ total }"
        if field not in ("chronicleLastSeen", "occurrences")
        else "{ meta { snapshot } }"
    )
    body = gql(time_client, f"{{ {field}{args} {selection} }}")
    assert codes(body) == ["BAD_USER_INPUT"], body
    assert named in body["errors"][0]["message"]


def test_a_timeline_of_an_unknown_entity_is_not_found(time_client: TestClient) -> None:
    body = gql(time_client, '{ timeline(entity: "nobody") { total } }')
    assert codes(body) == ["NOT_FOUND"]


def test_cursors_page_through_and_are_bound_to_the_snapshot(
    tmp_path: Path,
) -> None:
    vault = tmp_path / "vault"
    vault.mkdir()
    for i in range(5):
        (vault / f"n{i}.md").write_text(f"---\noccurred_at: 2026-01-0{i + 1}\n---\n")
    settings = Settings.build(vault=vault, state=tmp_path / "s.db", config=None, watch=False)
    query = """query($after: String) { chronicleSince(since: "2026-01-01", first: 2, after: $after)
      { total entries { record { id } } pageInfo { hasNextPage endCursor } } }"""
    with LocalClient(create_app(settings)) as client:
        seen, after = [], None
        while True:
            page = data(client, query, after=after)["chronicleSince"]
            assert page["total"] == 5
            seen += [e["record"]["id"] for e in page["entries"]]
            if not page["pageInfo"]["hasNextPage"]:
                break
            after = page["pageInfo"]["endCursor"]
        assert seen == ["n0", "n1", "n2", "n3", "n4"]
        first = data(client, query)["chronicleSince"]["pageInfo"]["endCursor"]
        (vault / "n9.md").write_text("---\noccurred_at: 2026-02-01\n---\n")
        assert codes(gql(client, query, after=first)) == ["SNAPSHOT_CHANGED"]
        assert codes(gql(client, query, after="bm9wZQ")) == ["BAD_USER_INPUT"]
