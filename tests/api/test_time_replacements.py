"""Time queries against SPEC, rule by rule: superseded replacements, source_event stand-ins,
eligibility corners, and pagination (page by page equals one big page)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from starlette.testclient import TestClient

from tests.api.helpers import data
from tests.api.time_vaults import (
    AS_OF,
    DAY,
    SINCE,
    TL,
    app_over,
    ids,
    since,
    strip_meta,
    tl,
    write_vault,
)

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
