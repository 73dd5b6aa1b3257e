from __future__ import annotations

from collections.abc import Iterator

import pytest
from starlette.testclient import TestClient

from tests.api.helpers import data
from tests.api.time_vaults import app_over
from tests.temporal.conflict_vault import CONFLICT_NOTES, write_notes


@pytest.fixture(scope="module")
def cv(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    folder = tmp_path_factory.mktemp("conflicts")
    write_notes(folder / "vault", CONFLICT_NOTES)
    with app_over(folder / "vault", folder / "state.db") as client:
        yield client


RECORD = """query($id: ID!) {
  record(id: $id) { factKey derivedFrom { id } conflicts { id kind } conflicted }
}"""


@pytest.mark.parametrize(
    "record_id,expected",
    [
        (
            "claims/role-2020",
            {
                "factKey": "role",
                "derivedFrom": [],
                "conflicts": [{"id": "claims/role-2020-lead", "kind": "CLAIM"}],
                "conflicted": True,
            },
        ),
        (
            "claims/role-2022",
            {"factKey": "role", "derivedFrom": [], "conflicts": [], "conflicted": False},
        ),
        (
            "notes/sum-2",
            {
                "factKey": None,
                "derivedFrom": [{"id": "notes/sum-1"}],
                "conflicts": [],
                "conflicted": True,
            },
        ),
        (
            "notes/sum-4",
            {
                "factKey": None,
                "derivedFrom": [{"id": "notes/sum-3"}],
                "conflicts": [],
                "conflicted": False,
            },
        ),
    ],
    ids=["conflicting-claim", "disjoint-claim", "two-levels-down", "four-levels-down"],
)
def test_record_conflict_fields(
    cv: TestClient, record_id: str, expected: dict[str, object]
) -> None:
    assert data(cv, RECORD, id=record_id)["record"] == expected


RECORDS = """query($filter: RecordFilter) {
  records(filter: $filter, first: 100) { nodes { id conflicted } meta { degraded } }
}"""


@pytest.mark.parametrize(
    "flt,degraded",
    [({"type": "claim"}, ["conflict"]), ({"type": "person"}, [])],
    ids=["with-conflicts", "without"],
)
def test_records_say_conflict_when_the_page_holds_one(
    cv: TestClient, flt: dict[str, str], degraded: list[str]
) -> None:
    result = data(cv, RECORDS, filter=flt)["records"]
    assert result["meta"]["degraded"] == degraded
    assert any(n["conflicted"] for n in result["nodes"]) == bool(degraded)


SEARCH = """query($q: String!) {
  search(query: $q) { hits { record { id } conflicted } meta { degraded } }
}"""


@pytest.mark.parametrize(
    "words,hits,degraded",
    [
        ("Engineer", [{"record": {"id": "claims/role-2020"}, "conflicted": True}], ["conflict"]),
        ("Director", [{"record": {"id": "claims/role-2023"}, "conflicted": False}], []),
    ],
    ids=["conflicting-hit", "plain-hit"],
)
def test_search_hits_say_conflicted(
    cv: TestClient, words: str, hits: list[object], degraded: list[str]
) -> None:
    result = data(cv, SEARCH, q=words)["search"]
    assert (result["hits"], result["meta"]["degraded"]) == (hits, degraded)


TIMELINE = """query($asOf: String) {
  timeline(entity: "people/ada", asOf: $asOf, first: 100) {
    entries { record { id } conflicted } meta { degraded }
  }
}"""


@pytest.mark.parametrize(
    "as_of,conflicted,degraded",
    [
        (
            None,
            {
                "claims/employer-always": True,
                "claims/role-2020": True,
                "claims/role-2020-lead": True,
                "claims/role-2022": False,
                "claims/role-2023": False,
            },
            ["conflict"],
        ),
        (
            "2020-07-01",
            {
                "claims/employer-always": False,
                "claims/role-2020": True,
                "claims/role-2020-lead": True,
            },
            ["conflict"],
        ),
        ("2020-10-01", {"claims/employer-always": False, "claims/role-2020": False}, []),
    ],
    ids=["history", "as-of-both-roles-valid", "as-of-one-role-valid"],
)
def test_timeline_entries_say_conflicted_under_as_of(
    cv: TestClient, as_of: str | None, conflicted: dict[str, bool], degraded: list[str]
) -> None:
    result = data(cv, TIMELINE, asOf=as_of)["timeline"]
    assert {e["record"]["id"]: e["conflicted"] for e in result["entries"]} == conflicted
    assert result["meta"]["degraded"] == degraded


def test_chronicle_entries_say_conflicted(cv: TestClient) -> None:
    result = data(
        cv,
        """{ chronicleDay(date: "2020-06-01") {
               entries { record { id } conflicted } meta { degraded } }
             chronicleLastSeen(entity: "people/ada", occurredOnOrBefore: "2022-06-01") {
               entry { record { id } conflicted } meta { degraded } } }""",
    )
    assert result["chronicleDay"] == {
        "entries": [{"record": {"id": "claims/role-2020-lead"}, "conflicted": True}],
        "meta": {"degraded": ["conflict"]},
    }
    assert result["chronicleLastSeen"] == {
        "entry": {"record": {"id": "claims/role-2022"}, "conflicted": False},
        "meta": {"degraded": []},
    }
