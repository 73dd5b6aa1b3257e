"""Cheap polling: ETags, 304, the answer cache (each kept answer equal to a fresh execution, across
a midnight of the query's zone and across commits), and `/metrics` with its counters."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2 as httpx
import pendulum
import pytest
from prometheus_client.parser import text_string_to_metric_families
from starlette.testclient import TestClient

from almanac.api.app import create_app
from almanac.api.settings import Settings
from almanac.temporal import from_datetime
from tests.api.helpers import LocalClient
from tests.api.served import serve

BERLIN_NIGHT = "2026-03-01T22:59:10Z"  # 23:59:10 in Berlin
# Dashboard queries: none selects freshness (the instant of the request: never kept).
QUERIES = [
    "{ status { snapshot recordCount coverage { issueCount issues { code path } } } }",
    "{ records(first: 5) { total nodes { id title } } }",
    '{ lookup(name: "Ada Lopez") { status candidates { id } } }',
    '{ search(query: "storage", first: 3) { total hits { record { id } } } }',
    '{ timeline(entity: "people/ada-lopez", timezone: "Europe/Berlin", first: 50)'
    " { localDate clockCounts { clock count } entries { record { id } clock } } }",
    '{ chronicleDay(date: "2026-03-02", timezone: "Europe/Berlin")'
    " { localDate entries { record { id } clock } } }",
    '{ graph(seed: {id: "people/ada-lopez"}, hops: 1) { nodes { id } } }',
]


class Clock:
    """The instant the app stamps requests with, moved by the test."""

    def __init__(self, text: str) -> None:
        self.us = from_datetime(pendulum.parse(text))  # type: ignore[arg-type]

    def __call__(self) -> int:
        return self.us


@pytest.fixture
def clock() -> Clock:
    return Clock(BERLIN_NIGHT)


@pytest.fixture
def polled(settings: Settings, clock: Clock) -> Iterator[TestClient]:
    with LocalClient(create_app(settings, clock=clock)) as client:
        yield client


def _get(client: TestClient, query: str, **headers: str) -> Any:
    return client.get("/graphql", params={"query": query}, headers=headers)


def _fresh(client: TestClient, query: str) -> Any:
    """The same document executed now (a POST is never answered from the cache)."""
    return client.post("/graphql", json={"query": query}).json()


def _hits(client: TestClient) -> float:
    for family in text_string_to_metric_families(client.get("/metrics").text):
        if family.name == "almanac_cache_hits":
            return sum(s.value for s in family.samples if s.name.endswith("_total"))
    raise AssertionError("no almanac_cache_hits")


def _round(client: TestClient) -> dict[str, str]:
    """Every query twice by GET (the second from the cache), each equal to a fresh execution;
    the tags."""
    tags = {}
    for query in QUERIES:
        first = _get(client, query)
        hits = _hits(client)
        again = _get(client, query)
        assert _hits(client) == hits + 1, query  # kept, not executed again
        assert first.status_code == again.status_code == 200
        assert first.headers["etag"] == again.headers["etag"]
        assert again.json() == first.json() == _fresh(client, query), query
        assert "errors" not in first.json(), first.json()
        tags[query] = first.headers["etag"]
    return tags


def test_kept_answers_equal_fresh_ones_across_midnight_and_commits(
    polled: TestClient, clock: Clock, demo_vault: Path
) -> None:
    before = _round(polled)
    clock.us += 20 * 1_000_000  # 23:59:30: the same minute, the same answers
    assert _round(polled) == before
    clock.us += 60 * 1_000_000  # 00:00:30 in Berlin: a new local day
    after_midnight = _round(polled)
    clocked = {q for q in QUERIES if "timeline" in q or "chronicle" in q}
    assert {q for q in QUERIES if after_midnight[q] != before[q]} == clocked
    timeline = QUERIES[4]
    assert _fresh(polled, timeline)["data"]["timeline"]["localDate"] == "2026-03-02"
    # A commit: every tag of a scope it changes moves, and the answers follow.
    note = demo_vault / "people" / "ada-lopez.md"
    note.write_text(note.read_text(encoding="utf-8") + "\nA storage edit.\n", encoding="utf-8")
    edited = _round(polled)
    assert all(edited[q] != after_midnight[q] for q in QUERIES)
    # A change that adds an issue and no record: the snapshot stays, the tags still move.
    (demo_vault / "broken.md").write_text("---\nid: [unclosed\n---\nBody\n", encoding="utf-8")
    broken = _round(polled)
    assert broken[QUERIES[0]] != edited[QUERIES[0]]
    status = _fresh(polled, QUERIES[0])["data"]["status"]
    assert status["coverage"]["issueCount"] >= 1


def test_if_none_match_answers_304_without_executing(polled: TestClient) -> None:
    query = QUERIES[0]
    tag = _get(polled, query).headers["etag"]
    unchanged = _get(polled, query, **{"If-None-Match": tag})
    assert unchanged.status_code == 304 and unchanged.content == b""
    assert unchanged.headers["etag"] == tag
    other = _get(polled, query, **{"If-None-Match": '"something-else"'})
    assert other.status_code == 200 and other.headers["etag"] == tag
    # Variables and scopes are part of the tag.
    varied = polled.get(
        "/graphql",
        params={"query": "query($s: String) { status(scope: $s) { snapshot } }", "variables": "{}"},
    )
    assert varied.headers["etag"] != tag


@pytest.mark.parametrize(
    "query",
    [
        "{ status { freshness { queriedAt } } }",
        '{ excerpt(path: "people/ada-lopez.md") { revision } }',
        "{ status { nope } }",
    ],
    ids=["freshness", "excerpt", "invalid"],
)
def test_answers_that_cannot_be_kept_have_no_tag(polled: TestClient, query: str) -> None:
    answer = _get(polled, query)
    if "nope" in query:  # an error answer: tagged (the tag is known first), never kept
        hits = _hits(polled)
        _get(polled, query)
        assert _hits(polled) == hits
        return
    assert "etag" not in answer.headers


def test_the_cache_is_bounded_by_bytes(demo_vault: Path, tmp_path: Path, clock: Clock) -> None:
    config = tmp_path / "small.toml"
    config.write_text("[limits]\ncache_bytes = 8192\n", encoding="utf-8")
    settings = Settings.build(vault=demo_vault, state=tmp_path / "s.db", config=config, watch=False)
    app = create_app(settings, clock=clock)
    with LocalClient(app) as client:
        for first in range(1, 40):
            _get(client, f"{{ records(first: {first}) {{ nodes {{ id body }} }} }}")
        answers = app.state.graphql.answers
        assert 0 < answers.size <= 8192


def test_metrics_parse_and_move_with_requests(polled: TestClient) -> None:
    def counters() -> dict[str, float]:
        found: dict[str, float] = {}
        for family in text_string_to_metric_families(polled.get("/metrics").text):
            for sample in family.samples:
                key = sample.name + json.dumps(sample.labels, sort_keys=True)
                found[key] = sample.value
        return found

    before = counters()
    for _ in range(3):
        polled.post("/graphql", json={"query": "{ status { snapshot } }"})
    polled.post("/graphql", json={"query": 'query Whatever { lookup(name: "x") { status } }'})
    for name in range(50):  # operation names of the client's choosing add no series
        polled.post("/graphql", json={"query": f"query Op{name} {{ status {{ snapshot }} }}"})
    after = counters()
    status = 'almanac_requests_total{"code": "200", "operation": "status"}'
    assert after[status] - before.get(status, 0) == 53
    assert after['almanac_requests_total{"code": "200", "operation": "lookup"}'] >= 1
    operations = {
        json.loads(k[len("almanac_requests_total") :])["operation"]
        for k in after
        if k.startswith("almanac_requests_total")
    }
    assert operations <= {"status", "lookup", "metrics", "graphql"}
    for metric in (
        "almanac_request_duration_seconds_count",
        "almanac_reconcile_duration_seconds_count",
        "almanac_records",
        "almanac_validation_issues",
        "almanac_snapshot_age_seconds",
        "almanac_subscriptions",
    ):
        assert any(k.startswith(metric + "{") for k in after), metric
    assert after["almanac_records{}"] == 88


def test_metrics_follow_the_graphql_rules(demo_vault: Path, tmp_path: Path) -> None:
    config = tmp_path / "tokens.toml"
    token = "metrics-reader-0123456789"
    digest = hashlib.sha256(token.encode()).hexdigest()
    config.write_text(f'[[tokens]]\nsha256 = "{digest}"\nscopes = ["default"]\n', "utf-8")
    settings = Settings.build(vault=demo_vault, state=tmp_path / "s.db", config=config, watch=False)
    with LocalClient(create_app(settings)) as client:
        assert client.get("/metrics").status_code == 401
        assert client.get("/metrics", headers={"Authorization": "Bearer nope"}).status_code == 401
        answer = client.get("/metrics", headers={"Authorization": f"Bearer {token}"})
        assert answer.status_code == 200


def test_a_served_poll_is_304_until_an_edit(demo_vault: Path, tmp_path: Path) -> None:
    query = {"query": QUERIES[0]}
    with serve(demo_vault, tmp_path, "--log-format", "json") as base:
        first = httpx.get(f"{base}/graphql", params=query, timeout=10)
        tag = first.headers["etag"]
        again = httpx.get(f"{base}/graphql", params=query, headers={"If-None-Match": tag})
        assert again.status_code == 304
        assert again.headers["x-request-id"] != first.headers["x-request-id"]
        echoed = httpx.get(f"{base}/healthz", headers={"X-Request-Id": "trace-42"})
        assert echoed.headers["x-request-id"] == "trace-42"
        note = demo_vault / "people" / "ada-lopez.md"
        note.write_text(note.read_text(encoding="utf-8") + "\nEdited.\n", encoding="utf-8")
        edited = httpx.get(f"{base}/graphql", params=query, headers={"If-None-Match": tag})
        assert edited.status_code == 200 and edited.headers["etag"] != tag
        assert (
            edited.json()["data"]["status"]["snapshot"]
            != first.json()["data"]["status"]["snapshot"]
        )
    lines = [
        json.loads(line)
        for line in (tmp_path / "server.log").read_text().splitlines()
        if line.startswith("{")
    ]
    polls = [line for line in lines if line["operation"] == "status"]
    assert [p["status"] for p in polls] == [200, 304, 200]
    assert [p["cache"] for p in polls] == ["miss", "hit", "miss"]
    assert {"time", "request_id", "duration_ms", "snapshot"} <= set(polls[0])
    assert any(line["request_id"] == "trace-42" for line in lines)
