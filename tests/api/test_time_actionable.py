"""Actionable timelines: `clock:` keeps the rows of some clock relations while `clockCounts`
counts every row; `order: NEAREST` puts the rows closest to asOf first (ties by start, then
id); pages walked through their cursors are the one big page, with either or both."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from starlette.testclient import TestClient

from tests.api.helpers import codes, data, gql
from tests.api.time_vaults import app_over, write_vault

AS_OF = "2026-03-15T11:00:00Z"
NOTES = {
    "proj": "type: project\ntitle: Project",
    # Deadlines of the project, asked at 11:00Z on the 15th.
    "t-far-over": "type: task\nowner: proj\ndue_at: 2025-12-01",
    "t-over-1": "type: task\nowner: proj\ndue_at: 2026-03-10\nstate: open",
    "t-over-2": "type: task\nowner: proj\ndue_at: 2026-03-12T09:00:00Z",
    "t-over-3b": "type: task\nowner: proj\ndue_at: 2026-03-14",  # ties with t-over-3
    "t-over-3": "type: task\nowner: proj\ndue_at: 2026-03-14",
    "t-done": "type: task\nowner: proj\ndue_at: 2026-03-11\nstate: done",
    "t-today": "type: task\nowner: proj\ndue_at: 2026-03-15",
    "t-today-late": "type: task\nowner: proj\ndue_at: 2026-03-15T18:00:00Z",
    "t-month": "type: task\nowner: proj\ndue_at: 2026-03",
    "t-future": "type: task\nowner: proj\ndue_at: 2026-03-20",
    # Events of the project around asOf: two contain it, two are an hour away.
    "e-before": "type: event\nentities: [proj]\noccurred_at: 2026-03-15T10:00:00Z",
    "e-after": "type: event\nentities: [proj]\noccurred_at: 2026-03-15T12:00:00Z",
    "e-contains": (
        "type: event\nentities: [proj]\noccurred_at: 2026-03-15T09:00:00Z\n"
        "ends_at: 2026-03-15T13:00:00Z"
    ),
    "e-day": "type: event\nentities: [proj]\noccurred_at: 2026-03-15",
    "e-old": "type: event\nentities: [proj]\noccurred_at: 2026-01-02",
    "e-next": "type: event\nentities: [proj]\noccurred_at: 2026-04-01T08:00:00Z",
    # Meetings with claims (group: SOURCE), and a claim with no source (UNDATED, last).
    "m-near": "type: meeting\noccurred_at: 2026-03-16T09:00:00Z",
    "m-far": "type: meeting\noccurred_at: 2026-02-01T09:00:00Z",
    "c-near": "type: claim\nsubject: proj\nsource: m-near\noccurred_at: 2026-03-16T09:00:00Z",
    "c-far": "type: claim\nsubject: proj\nsource: m-far\noccurred_at: 2026-02-01T09:00:00Z",
    "c-undated": "type: claim\nsubject: proj",
}

TL = """query($field: TimeField, $order: Order, $clock: [ClockRelation!], $asOf: String,
  $group: TimelineGroup, $tz: String, $first: Int, $after: String) {
  timeline(entity: "proj", timeField: $field, order: $order, clock: $clock, asOf: $asOf,
    group: $group, timezone: $tz, first: $first, after: $after) {
    total asOf clockCounts { clock count }
    entries { record { id } clock }
    pageInfo { hasNextPage endCursor }
  }
}"""


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    folder = tmp_path_factory.mktemp("actionable")
    write_vault(folder / "vault", NOTES)
    with app_over(folder / "vault", folder / "state.db") as client:
        yield client


def timeline(client: TestClient, **arguments: Any) -> dict[str, Any]:
    found: dict[str, Any] = data(client, TL, **{"asOf": AS_OF, **arguments})["timeline"]
    return found


def ids(found: dict[str, Any]) -> list[str]:
    return [e["record"]["id"] for e in found["entries"]]


def counts(found: dict[str, Any]) -> dict[str, int]:
    return {c["clock"]: c["count"] for c in found["clockCounts"] if c["count"]}


ALL_DUE = {"OVERDUE": 5, "PAST": 1, "TODAY": 2, "CURRENT_PERIOD": 1, "FUTURE": 1}


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        pytest.param(  # the question: what is overdue, most urgent first
            {"field": "DUE_AT", "clock": ["OVERDUE"], "order": "NEAREST"},
            ["t-over-3", "t-over-3b", "t-over-2", "t-over-1", "t-far-over"],
            id="overdue-nearest",
        ),
        pytest.param(
            {"field": "DUE_AT", "clock": ["OVERDUE", "TODAY"], "order": "NEAREST"},
            [
                "t-today",
                "t-today-late",
                "t-over-3",
                "t-over-3b",
                "t-over-2",
                "t-over-1",
                "t-far-over",
            ],
            id="actionable-nearest",
        ),
        pytest.param(
            {"field": "DUE_AT", "clock": ["OVERDUE"]},
            ["t-far-over", "t-over-1", "t-over-2", "t-over-3", "t-over-3b"],
            id="overdue-asc",
        ),
        pytest.param(  # DESC untouched: the ASC rows reversed, ties included
            {"field": "DUE_AT", "clock": ["OVERDUE"], "order": "DESC"},
            ["t-over-3b", "t-over-3", "t-over-2", "t-over-1", "t-far-over"],
            id="overdue-desc",
        ),
        pytest.param(
            {"field": "DUE_AT", "order": "DESC"},
            [
                "t-future",
                "t-today-late",
                "t-today",
                "t-over-3b",
                "t-over-3",
                "t-over-2",
                "t-done",
                "t-over-1",
                "t-month",
                "t-far-over",
            ],
            id="desc-without-clock",
        ),
        pytest.param(
            {"field": "DUE_AT", "clock": ["UNDATED", "ONGOING"]}, [], id="no-row-of-those"
        ),
        pytest.param({"field": "DUE_AT", "clock": []}, [], id="empty-list-keeps-none"),
        pytest.param(  # 0 (contains asOf) by start, then an hour either side by start
            {"order": "NEAREST", "clock": ["TODAY", "ONGOING"]},
            ["e-day", "e-contains", "e-before", "e-after"],
            id="nearest-ties-by-start",
        ),
        pytest.param(
            {"order": "NEAREST"},
            [
                "e-day",
                "e-contains",
                "e-before",
                "e-after",
                "c-near",
                "m-near",
                "e-next",
                "c-far",
                "m-far",
                "e-old",
            ],
            id="nearest-all",
        ),
        pytest.param(
            {"group": "SOURCE", "order": "NEAREST"},
            [
                "e-day",
                "e-contains",
                "e-before",
                "e-after",
                "m-near",
                "e-next",
                "m-far",
                "e-old",
                "c-undated",
            ],
            id="nearest-by-source-undated-last",
        ),
        pytest.param(
            {"group": "SOURCE", "clock": ["UNDATED", "FUTURE"]},
            ["m-near", "e-next", "c-undated"],
            id="by-source-clock",
        ),
    ],
)
def test_clock_keeps_some_relations_and_nearest_orders_by_distance(
    client: TestClient, arguments: dict[str, Any], expected: list[str]
) -> None:
    found = timeline(client, **arguments)
    assert ids(found) == expected
    assert found["total"] == len(expected)
    whole = timeline(client, **{k: v for k, v in arguments.items() if k not in ("clock", "order")})
    assert counts(found) == counts(whole)  # every row counted, whatever is kept
    assert sum(counts(found).values()) == whole["total"]
    if arguments.get("field") == "DUE_AT":
        assert counts(found) == ALL_DUE
    if "clock" in arguments:
        assert {e["clock"] for e in found["entries"]} <= set(arguments["clock"])


def test_nearest_measures_dates_from_the_local_date(client: TestClient) -> None:
    """At 23:30Z on the 14th it is still the 14th in UTC but the 15th in Berlin: the date
    that holds asOf (distance 0, TODAY) is the 14th in one, the 15th in the other."""
    late = {"field": "DUE_AT", "order": "NEAREST", "asOf": "2026-03-14T23:30:00Z", "first": 4}
    utc = timeline(client, **late)
    berlin = timeline(client, tz="Europe/Berlin", **late)
    # The month holds asOf in both, and starts first.
    assert ids(utc) == ["t-month", "t-over-3", "t-over-3b", "t-today"]
    assert [e["clock"] for e in utc["entries"]] == ["CURRENT_PERIOD", "TODAY", "TODAY", "FUTURE"]
    assert ids(berlin) == ["t-month", "t-today", "t-over-3", "t-over-3b"]
    assert [e["clock"] for e in berlin["entries"]] == [
        "CURRENT_PERIOD",
        "TODAY",
        "OVERDUE",
        "OVERDUE",
    ]


# -- pages --------------------------------------------------------------------------------------


def walk(client: TestClient, first: int, **arguments: Any) -> list[dict[str, Any]]:
    pages, after = [], None
    while True:
        pages.append(timeline(client, first=first, after=after, **arguments))
        if not pages[-1]["pageInfo"]["hasNextPage"]:
            return pages
        after = pages[-1]["pageInfo"]["endCursor"]


@pytest.mark.parametrize(
    "arguments",
    [
        {"field": "DUE_AT", "clock": ["OVERDUE"], "order": "NEAREST"},
        {"field": "DUE_AT", "clock": ["OVERDUE", "TODAY", "FUTURE"]},
        {"field": "DUE_AT", "clock": ["PAST", "OVERDUE"], "order": "DESC"},
        {"order": "NEAREST"},
        {"order": "NEAREST", "clock": ["PAST", "FUTURE"]},
        {"group": "SOURCE", "order": "NEAREST", "clock": ["PAST", "UNDATED", "TODAY"]},
    ],
    ids=["overdue-nearest", "clock", "clock-desc", "nearest", "nearest-clock", "by-source"],
)
@pytest.mark.parametrize("first", [1, 2, 3])
def test_pages_through_cursors_are_the_one_big_page(
    client: TestClient, arguments: dict[str, Any], first: int
) -> None:
    big = timeline(client, first=100, **arguments)
    pages = walk(client, first, **arguments)
    assert [i for p in pages for i in ids(p)] == ids(big)
    assert {p["total"] for p in pages} == {big["total"]}
    assert all(p["clockCounts"] == big["clockCounts"] for p in pages)
    assert len(pages) == max(1, -(-big["total"] // first))


def test_pages_without_asof_keep_the_first_page_s_time(client: TestClient) -> None:
    """Without asOf the clocks are computed at the request's time: the next pages keep the
    first one's, so a row crossing from FUTURE to TODAY in between is not skipped or repeated."""
    pages = walk(client, 2, asOf=None, order="NEAREST", clock=["PAST", "FUTURE"])
    assert len(pages) > 2
    assert len({p["asOf"] for p in pages}) == 1
    assert len({i for p in pages for i in ids(p)}) == pages[0]["total"]


def test_a_cursor_is_for_the_asof_it_was_computed_at(client: TestClient) -> None:
    first = timeline(client, first=1, order="NEAREST")
    cursor = first["pageInfo"]["endCursor"]
    again = timeline(client, first=1, order="NEAREST", after=cursor)
    assert again["asOf"] == first["asOf"] == AS_OF
    other = gql(client, TL, asOf="2026-03-16T11:00:00Z", first=1, order="NEAREST", after=cursor)
    assert codes(other) == ["BAD_USER_INPUT"]
    assert "asOf" in other["errors"][0]["message"]


@pytest.mark.parametrize(
    "key",
    ["1@", "1@x", "1@999999999999999999", "1@-99999999999999999", "1@1e3", "@5", "1@٣"],
)
def test_a_forged_timeline_cursor_is_a_typed_error(client: TestClient, key: str) -> None:
    import base64
    import json

    cursor = timeline(client, first=1)["pageInfo"]["endCursor"]
    raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
    snapshot, _ = json.loads(raw)
    forged = json.dumps([snapshot, key], separators=(",", ":")).encode()
    after = base64.urlsafe_b64encode(forged).decode().rstrip("=")
    assert codes(gql(client, TL, asOf=None, first=1, after=after)) == ["BAD_USER_INPUT"]
