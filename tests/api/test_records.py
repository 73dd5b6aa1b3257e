from __future__ import annotations

import base64
import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from almanac.api.settings import DEMO_VAULT
from tests.api.helpers import (
    DEMO_RECORDS,
    REPLACEMENT,
    SAMS,
    SUPERSEDED,
    WITHDRAWN,
    codes,
    data,
    gql,
)

STATUS = """{
  status {
    snapshot recordCount scopes fingerprint
    countsByKind { key count }
    countsByType { key count }
    coverage { complete issueCount issues { code } }
    freshness { queriedAt scannedAt indexedAt }
  }
}"""

RECORD = """query($id: ID!) {
  record(id: $id) {
    id scope kind type title aliases tags lifecycle supersededBy body
    locator { path startLine endLine revision }
    entities { id }
    subject { id } source { id } from { id } to { id } relation sourceEvent
    recordedAt { text precision start end }
    links { text line resolved target { id kind type title } }
  }
}"""

RECORDS = """query($filter: RecordFilter, $first: Int, $after: String) {
  records(filter: $filter, first: $first, after: $after) {
    total
    nodes { id kind type tags lifecycle supersededBy }
    pageInfo { hasNextPage endCursor }
    meta { snapshot degraded coverage { complete } }
  }
}"""

LOCATED = """query($first: Int, $after: String) {
  records(filter: {lifecycle: ALL}, first: $first, after: $after) {
    nodes { id locator { path startLine endLine revision } links { text line } }
    pageInfo { hasNextPage endCursor }
  }
}"""

LOOKUP = """query($name: String!) {
  lookup(name: $name) { status record { id } candidates { id } meta { snapshot } }
}"""


def ids(nodes: list[dict[str, Any]]) -> list[str]:
    return [n["id"] for n in nodes]


def records(client: TestClient, **variables: Any) -> dict[str, Any]:
    result: dict[str, Any] = data(client, RECORDS, **variables)["records"]
    return result


def all_pages(
    client: TestClient, document: str, first: int, **variables: Any
) -> list[dict[str, Any]]:
    nodes: list[dict[str, Any]] = []
    after = None
    for _ in range(DEMO_RECORDS + 1):
        page = data(client, document, first=first, after=after, **variables)["records"]
        nodes += page["nodes"]
        if not page["pageInfo"]["hasNextPage"]:
            return nodes
        after = page["pageInfo"]["endCursor"]
    raise AssertionError("pagination never ended")


# -- status ------------------------------------------------------------------------------


def test_status_counts_the_demo_vault(demo_client: TestClient) -> None:
    status = data(demo_client, STATUS)["status"]
    assert status["recordCount"] == DEMO_RECORDS
    assert status["scopes"] == ["default"]
    by_kind = {c["key"]: c["count"] for c in status["countsByKind"]}
    assert by_kind == {"page": 67, "claim": 10, "relationship": 11}
    by_type = {c["key"]: c["count"] for c in status["countsByType"]}
    assert by_type["person"] == 12
    assert by_type["decision"] == 8  # the superseded decision is eligible: it counts
    assert by_type["claim"] == 10  # the withdrawn claim does not
    assert sum(by_type.values()) == DEMO_RECORDS
    assert status["coverage"] == {"complete": True, "issueCount": 0, "issues": []}
    assert status["snapshot"] and status["fingerprint"]
    fresh = status["freshness"]
    assert all(fresh[k].endswith("Z") for k in ("queriedAt", "scannedAt", "indexedAt"))
    assert fresh["indexedAt"] <= fresh["scannedAt"] <= fresh["queriedAt"]


# -- record ------------------------------------------------------------------------------


def test_record_returns_its_fields(demo_client: TestClient) -> None:
    record = data(demo_client, RECORD, id="people/ada-lopez")["record"]
    assert record["id"] == "people/ada-lopez"
    assert record["scope"] == "default"
    assert (record["kind"], record["type"], record["title"]) == ("PAGE", "person", "Ada Lopez")
    assert record["aliases"] == ["Ada", "A. Lopez"]
    assert record["tags"] == ["leadership", "platform"]
    assert (record["lifecycle"], record["supersededBy"]) == ("ACTIVE", None)
    assert record["entities"] == [{"id": "orgs/lumen-analytics"}]
    assert record["recordedAt"] == {
        "text": "2025-01-06",
        "precision": "DAY",
        "start": "2025-01-06T00:00:00Z",
        "end": "2025-01-07T00:00:00Z",
    }
    assert record["body"].startswith("# Ada Lopez\n")
    assert record["body"] in (DEMO_VAULT / "people/ada-lopez.md").read_text(encoding="utf-8")


def test_record_locator_covers_the_whole_file(demo_client: TestClient) -> None:
    raw = (DEMO_VAULT / "people/ada-lopez.md").read_bytes()
    locator = data(demo_client, RECORD, id="people/ada-lopez")["record"]["locator"]
    assert locator == {
        "path": "people/ada-lopez.md",
        "startLine": 1,
        "endLine": len(raw.decode().splitlines()),
        "revision": hashlib.sha256(raw).hexdigest(),
    }


def test_record_links_carry_their_line(demo_client: TestClient) -> None:
    links = data(demo_client, RECORD, id="people/ada-lopez")["record"]["links"]
    assert [(link["text"], link["line"], link["target"]["id"]) for link in links] == [
        ("[[Lumen Analytics]]", 14, "orgs/lumen-analytics"),
        ("[[Berlin office]]", 15, "places/berlin-office"),
        ("[[Lars Johansson]]", 15, "people/lars-johansson"),
        ("[[projects/atlas|Atlas]]", 17, "projects/atlas"),
        (
            "[[meetings/2026-03-02-platform-standup|platform stand-up]]",
            18,
            "meetings/2026-03-02-platform-standup",
        ),
        ("[[meetings/2026-01-14-atlas-kickoff]]", 22, "meetings/2026-01-14-atlas-kickoff"),
        ("[[Adopt DuckDB Spatial for Atlas]]", 23, REPLACEMENT),
        ("[[GeoConf 2026]]", 24, "events/geoconf-2026"),
        (
            "[[2026-11-18-atlas-beta-review|beta review]]",
            25,
            "meetings/2026-11-18-atlas-beta-review",
        ),
    ]
    assert all(link["resolved"] for link in links)


def test_every_locator_and_link_line_matches_the_file(demo_client: TestClient) -> None:
    nodes = all_pages(demo_client, LOCATED, first=50)
    assert len(nodes) == DEMO_RECORDS
    for node in nodes:
        raw = (DEMO_VAULT / node["locator"]["path"]).read_bytes()
        lines = raw.decode("utf-8").splitlines()
        assert node["locator"]["startLine"] == 1, node["id"]
        assert node["locator"]["endLine"] == len(lines), node["id"]
        assert node["locator"]["revision"] == hashlib.sha256(raw).hexdigest(), node["id"]
        for link in node["links"]:
            assert link["text"] in lines[link["line"] - 1], (node["id"], link)


@pytest.mark.parametrize(
    ("record_id", "kind", "refs"),
    [
        (
            "relationships/samuel-works-at-lumen",
            "RELATIONSHIP",
            {
                "from": "people/samuel-okafor",
                "to": "orgs/lumen-analytics",
                "source": "meetings/2026-03-18-hiring-sync",
                "relation": "works_at",
            },
        ),
        (
            "claims/atlas-kickoff-summary",
            "CLAIM",
            {
                "subject": "projects/atlas",
                "source": "meetings/2026-01-14-atlas-kickoff",
                "sourceEvent": True,
            },
        ),
    ],
)
def test_record_resolves_references(
    demo_client: TestClient, record_id: str, kind: str, refs: dict[str, Any]
) -> None:
    record = data(demo_client, RECORD, id=record_id)["record"]
    assert record["kind"] == kind
    for field, expected in refs.items():
        value = record[field]
        assert (value["id"] if isinstance(value, dict) else value) == expected, field


def test_record_superseded_shows_its_replacement(demo_client: TestClient) -> None:
    record = data(demo_client, RECORD, id=SUPERSEDED)["record"]
    assert record["lifecycle"] == "SUPERSEDED"
    assert record["supersededBy"] == REPLACEMENT
    replacement = data(demo_client, RECORD, id=REPLACEMENT)["record"]
    assert (replacement["lifecycle"], replacement["supersededBy"]) == ("ACTIVE", None)


@pytest.mark.parametrize(
    "record_id",
    [WITHDRAWN, "people/nobody", "People/Ada-Lopez", "ada-lopez", "people/ada-lopez.md", ""],
)
def test_record_is_null_when_withdrawn_or_missing(demo_client: TestClient, record_id: str) -> None:
    assert gql(demo_client, RECORD, id=record_id) == {"data": {"record": None}}


# -- records: filters ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("filter", "total"),
    [
        (None, DEMO_RECORDS - 1),
        ({"type": "decision"}, 7),
        ({"type": "person"}, 12),
        ({"type": "people"}, 0),  # no type aliases configured
        ({"kind": "CLAIM"}, 10),
        ({"kind": "RELATIONSHIP"}, 11),
        ({"kind": "PAGE"}, 66),
        ({"tag": "atlas"}, 16),
        ({"tag": "Atlas"}, 0),  # tags are case-sensitive
        ({"kind": "CLAIM", "tag": "atlas"}, 2),
        ({"lifecycle": "ACTIVE"}, DEMO_RECORDS - 1),
        ({"lifecycle": "SUPERSEDED"}, 1),
        ({"lifecycle": "ALL"}, DEMO_RECORDS),
        ({"scope": "default"}, DEMO_RECORDS - 1),
    ],
)
def test_records_filter_totals(
    demo_client: TestClient, filter: dict[str, Any] | None, total: int
) -> None:
    page = records(demo_client, filter=filter, first=100)
    assert page["total"] == total
    assert len(page["nodes"]) == total
    assert page["pageInfo"]["hasNextPage"] is False
    nodes = page["nodes"]
    assert WITHDRAWN not in ids(nodes)
    if filter and "type" in filter:
        assert {n["type"] for n in nodes} <= {filter["type"]}
    if filter and "kind" in filter:
        assert {n["kind"] for n in nodes} <= {filter["kind"]}
    if filter and "tag" in filter:
        assert all(filter["tag"] in n["tags"] for n in nodes)
    lifecycle = (filter or {}).get("lifecycle", "ACTIVE")
    if lifecycle != "ALL":
        assert {n["lifecycle"] for n in nodes} <= {lifecycle}


def test_records_default_excludes_superseded_and_all_includes_it(demo_client: TestClient) -> None:
    active = ids(records(demo_client, first=100)["nodes"])
    everything = records(demo_client, filter={"lifecycle": "ALL"}, first=100)["nodes"]
    assert SUPERSEDED not in active
    assert REPLACEMENT in active
    assert set(ids(everything)) - set(active) == {SUPERSEDED}
    superseded = next(n for n in everything if n["id"] == SUPERSEDED)
    assert (superseded["lifecycle"], superseded["supersededBy"]) == ("SUPERSEDED", REPLACEMENT)
    assert ids(records(demo_client, filter={"lifecycle": "SUPERSEDED"})["nodes"]) == [SUPERSEDED]


@pytest.mark.parametrize(
    ("filter", "expected"),
    [
        # a date-only upper bound includes its whole UTC day
        (
            {"since": "2026-01-14", "until": "2026-01-14"},
            ["meetings/2026-01-14-atlas-kickoff", "projects/atlas"],
        ),
        ({"until": "2026-01-13"}, ["events/lumen-series-b", "meetings/2025-11-20-lisbon-offsite"]),
        # the kickoff is at 09:00Z; projects/atlas is the whole day 2026-01-14
        (
            {"until": "2026-01-14T08:59:59Z"},
            ["events/lumen-series-b", "meetings/2025-11-20-lisbon-offsite", "projects/atlas"],
        ),
        (
            {"since": "2026-01-14T09:00:00Z", "until": "2026-01-14T09:00:00Z"},
            ["meetings/2026-01-14-atlas-kickoff", "projects/atlas"],
        ),
        (
            {"since": "2026-01-14T10:00:00+01:00", "until": "2026-01-14T10:00:00+01:00"},
            ["meetings/2026-01-14-atlas-kickoff", "projects/atlas"],
        ),
        # the kickoff runs until 10:30Z (ends_at): its occurrence interval overlaps
        (
            {"since": "2026-01-14T09:00:01Z", "until": "2026-01-14"},
            ["meetings/2026-01-14-atlas-kickoff", "projects/atlas"],
        ),
        ({"since": "2026-01-14T10:30:00Z", "until": "2026-01-14"}, ["projects/atlas"]),
        (
            {"since": "2026-01-14", "until": "2026-01-14", "lifecycle": "ALL"},
            [SUPERSEDED, "meetings/2026-01-14-atlas-kickoff", "projects/atlas"],
        ),
        (
            {"since": "2026-01-14", "until": "2026-01-14", "timeField": "RECORDED_AT"},
            ["claims/atlas-kickoff-summary", "meetings/2026-01-14-atlas-kickoff", "projects/atlas"],
        ),
        ({"since": "2026-01-15", "until": "2026-01-14"}, []),
    ],
)
def test_records_since_until(
    demo_client: TestClient, filter: dict[str, Any], expected: list[str]
) -> None:
    page = records(demo_client, filter=filter, first=100)
    assert ids(page["nodes"]) == expected
    assert page["total"] == len(expected)


def test_records_date_only_until_includes_the_last_instant_of_the_day(
    demo_vault: Path, client: TestClient
) -> None:
    notes = {
        "late": "2030-05-05T23:59:59Z",
        "late-offset": "2030-05-06T01:30:00+02:00",  # 23:30Z on the 5th
        "next-day": "2030-05-06T00:00:00Z",
        "day": "2030-05-05",
        "month": "2030-05",
    }
    for name, when in notes.items():
        (demo_vault / f"{name}.md").write_text(f"---\noccurred_at: {when}\n---\n{name}\n")
    page = records(client, filter={"since": "2030-01-01", "until": "2030-05-05"}, first=100)
    assert ids(page["nodes"]) == ["day", "late", "late-offset", "month"]
    page = records(client, filter={"since": "2030-05-06", "until": "2030-05-06"}, first=100)
    assert ids(page["nodes"]) == ["month", "next-day"]


# -- records: pagination ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("first", "lifecycle"), [(1, "ALL"), (7, "ALL"), (20, "ACTIVE"), (100, "ALL")]
)
def test_records_pages_cover_everything_once(
    demo_client: TestClient, first: int, lifecycle: str
) -> None:
    filter = {"lifecycle": lifecycle}
    total = records(demo_client, filter=filter, first=1)["total"]
    seen: list[str] = []
    snapshots = set()
    after = None
    while True:
        page = records(demo_client, filter=filter, first=first, after=after)
        assert page["total"] == total
        assert 1 <= len(page["nodes"]) <= first
        seen += ids(page["nodes"])
        snapshots.add(page["meta"]["snapshot"])
        if not page["pageInfo"]["hasNextPage"]:
            break
        assert len(page["nodes"]) == first
        after = page["pageInfo"]["endCursor"]
    assert len(seen) == len(set(seen)) == total
    assert total == (DEMO_RECORDS if lifecycle == "ALL" else DEMO_RECORDS - 1)
    assert seen == sorted(seen)
    assert len(snapshots) == 1


def test_records_default_page_is_twenty(demo_client: TestClient) -> None:
    body = gql(demo_client, "{ records { total nodes { id } pageInfo { hasNextPage endCursor } } }")
    page = body["data"]["records"]
    assert len(page["nodes"]) == 20
    assert page["pageInfo"]["hasNextPage"] is True
    assert page["pageInfo"]["endCursor"]


def test_records_empty_result_has_no_cursor(demo_client: TestClient) -> None:
    page = records(demo_client, filter={"type": "no-such-type"})
    assert page == {
        "total": 0,
        "nodes": [],
        "pageInfo": {"hasNextPage": False, "endCursor": None},
        "meta": page["meta"],
    }


def test_records_cursor_from_another_snapshot_is_refused(
    client: TestClient, demo_vault: Path
) -> None:
    first_page = records(client, first=10)
    cursor = first_page["pageInfo"]["endCursor"]
    note = demo_vault / "people/ada-lopez.md"
    note.write_text(note.read_text().replace("title: Ada Lopez", "title: Ada López"))
    body = gql(client, RECORDS, first=10, after=cursor)
    assert codes(body) == ["SNAPSHOT_CHANGED"]
    assert body["data"] is None
    assert body["errors"][0]["path"] == ["records"]
    restarted = records(client, first=10)
    assert restarted["meta"]["snapshot"] != first_page["meta"]["snapshot"]


def test_records_cursor_survives_an_unrelated_touch(client: TestClient, demo_vault: Path) -> None:
    cursor = records(client, first=10)["pageInfo"]["endCursor"]
    (demo_vault / "people/ada-lopez.md").touch()
    assert len(records(client, first=10, after=cursor)["nodes"]) == 10


def _cursor(value: object) -> str:
    return base64.urlsafe_b64encode(json.dumps(value).encode()).decode().rstrip("=")


@pytest.mark.parametrize(
    "cursor",
    [
        "garbage!!",
        "",
        "%%%",
        "bm90LWpzb24",
        _cursor([1, 2]),
        _cursor({"a": 1}),
        _cursor(["a", "b", "c"]),
        _cursor(None),
        "x" * 5000,
    ],
)
def test_records_bad_cursor_is_bad_user_input(demo_client: TestClient, cursor: str) -> None:
    body = gql(demo_client, RECORDS, after=cursor)
    assert codes(body) == ["BAD_USER_INPUT"]
    assert body["data"] is None


@pytest.mark.parametrize("first", [0, -1, 101, 1000, -(2**31)])
def test_records_first_out_of_range_is_bad_user_input(demo_client: TestClient, first: int) -> None:
    body = gql(demo_client, RECORDS, first=first)
    assert codes(body) == ["BAD_USER_INPUT"]
    assert "'first'" in body["errors"][0]["message"]


@pytest.mark.parametrize("first", [1, 100])
def test_records_first_in_range_is_accepted(demo_client: TestClient, first: int) -> None:
    assert len(records(demo_client, first=first)["nodes"]) == min(first, DEMO_RECORDS - 1)


@pytest.mark.parametrize("field", ["since", "until"])
@pytest.mark.parametrize(
    "bound",
    [
        "2024-13-01",
        "yesterday",
        "2024-02-30",
        "2024-01-01T10:00",
        "2024-01-01T10:00Z",
        "2024-01-01T10:00:00",
        "2024",
        "2024-01",
        "",
        "2024-1-1",
    ],
)
def test_records_bad_bound_is_bad_user_input(
    demo_client: TestClient, field: str, bound: str
) -> None:
    body = gql(demo_client, RECORDS, filter={field: bound})
    assert codes(body) == ["BAD_USER_INPUT"]
    assert f"filter.{field}" in body["errors"][0]["message"]


# -- lookup -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "status", "found", "candidates"),
    [
        ("people/ada-lopez", "FOUND", "people/ada-lopez", []),  # id (= slug here)
        ("Ada Lopez", "FOUND", "people/ada-lopez", []),  # title
        ("ada lopez", "FOUND", "people/ada-lopez", []),
        ("  ADA   lopez ", "FOUND", "people/ada-lopez", []),
        ("Ada\tLopez", "FOUND", "people/ada-lopez", []),
        ("ＡＤＡ ＬＯＰＥＺ", "FOUND", "people/ada-lopez", []),  # NFKC
        ("A. Lopez", "FOUND", "people/ada-lopez", []),  # alias
        ("Sammy", "FOUND", "people/samuel-okafor", []),
        ("Sam", "AMBIGUOUS", None, SAMS),
        ("sam", "AMBIGUOUS", None, SAMS),
        (" SAM ", "AMBIGUOUS", None, SAMS),
        ("Use PostGIS for Atlas storage", "FOUND", SUPERSEDED, []),
        ("Open Geo Foundation will relicense its libraries", "MISSING", None, []),  # withdrawn
        (WITHDRAWN, "MISSING", None, []),
        ("People/Ada-Lopez", "MISSING", None, []),  # ids are case-sensitive
        ("Ada Lope", "MISSING", None, []),  # never fuzzy
        ("nobody at all", "MISSING", None, []),
        ("", "MISSING", None, []),
    ],
)
def test_lookup(
    demo_client: TestClient, name: str, status: str, found: str | None, candidates: list[str]
) -> None:
    result = data(demo_client, LOOKUP, name=name)["lookup"]
    assert result["status"] == status
    assert result["record"] == ({"id": found} if found else None)
    assert ids(result["candidates"]) == candidates
    assert result["meta"]["snapshot"]


def test_lookup_by_slug_of_a_note_with_its_own_id(client: TestClient, demo_vault: Path) -> None:
    (demo_vault / "misc").mkdir()
    (demo_vault / "misc/Field Notes.md").write_text(
        "---\nid: field-notes-2030\n---\n# Field notes\n"
    )
    for name in ["field-notes-2030", "misc/Field Notes", "field notes"]:
        result = data(client, LOOKUP, name=name)["lookup"]
        assert (result["status"], result["record"]) == ("FOUND", {"id": "field-notes-2030"}), name
    assert data(client, RECORD, id="misc/Field Notes")["record"] is None
