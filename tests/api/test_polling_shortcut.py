"""The unchanged poll's shortcut: a tag remembered while the database keeps its version (no
read transaction at all), and everything that must still move it: a commit by another
process, the minute of a time query, the readable scopes. Each poll is compared with a fresh
execution (a POST, never answered from the cache)."""

from __future__ import annotations

import hashlib
import shutil
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from prometheus_client.parser import text_string_to_metric_families
from starlette.testclient import TestClient

from almanac import temporal
from almanac.api.app import create_app
from almanac.api.polling import Answers, etag_matches
from almanac.api.settings import Settings
from tests.api.helpers import LocalClient
from tests.api.test_polling import Clock

ROOT = Path(__file__).resolve().parents[2]
STATUS = "{ status { snapshot recordCount coverage { issueCount } } }"
TIMELINE = (
    '{ timeline(entity: "people/ada-lopez", timezone: "Europe/Berlin", first: 50)'
    " { localDate entries { record { id } clock } } }"
)
TOKENS = {"base": "t0ken-base-reader", "people": "t0ken-people-reader"}


@pytest.fixture
def clock() -> Clock:
    return Clock("2026-03-01T22:59:10Z")  # 23:59:10 in Berlin


@pytest.fixture
def watched(demo_vault: Path, tmp_path: Path, clock: Clock) -> Iterator[TestClient]:
    """The demo copy watched (inotify): an unchanged vault costs its freshness check nothing."""
    settings = Settings.build(vault=demo_vault, state=tmp_path / "state.db", watch="on")
    app = create_app(settings, clock=clock)
    assert app.state.services.watch_mode == "inotify"
    with LocalClient(app) as client:
        yield client


def _poll(client: TestClient, query: str, tag: str | None = None, **headers: str) -> Any:
    if tag is not None:
        headers["If-None-Match"] = tag
    return client.get("/graphql", params={"query": query}, headers=headers)


def _fresh(client: TestClient, query: str, **headers: str) -> Any:
    return client.post("/graphql", json={"query": query}, headers=headers).json()


def _worked_out(client: TestClient) -> int:
    return int(client.app.state.graphql.answers.worked_out)  # type: ignore[attr-defined]


def test_an_unchanged_poll_reads_no_tag_from_the_database(watched: TestClient) -> None:
    first = _poll(watched, STATUS)
    tag = first.headers["etag"]
    assert _worked_out(watched) == 1
    for _ in range(3):
        assert _poll(watched, STATUS, tag).status_code == 304
        again = _poll(watched, STATUS)
        assert again.headers["etag"] == tag and again.json() == first.json()
    assert _worked_out(watched) == 1  # remembered: no read transaction
    assert first.json() == _fresh(watched, STATUS)


def test_a_commit_by_another_process_moves_the_tag(
    watched: TestClient, demo_vault: Path, tmp_path: Path
) -> None:
    """Another process reconciles another copy of the vault into the same state file: this
    server's watcher saw nothing, and its next poll still has the new tag and answer."""
    tag = _poll(watched, STATUS).headers["etag"]
    assert _poll(watched, STATUS, tag).status_code == 304
    other = tmp_path / "other"
    shutil.copytree(demo_vault, other)
    (other / "people" / "zora-new.md").write_text("---\ntype: person\n---\nZora.\n", "utf-8")
    state = str(tmp_path / "state.db")
    subprocess.run(
        [sys.executable, "-m", "almanac", "reconcile", "--vault", str(other), "--state", state],
        cwd=ROOT,
        check=True,
        capture_output=True,
    )
    polled = _poll(watched, STATUS, tag)
    assert polled.status_code == 200 and polled.headers["etag"] != tag
    assert polled.json() == _fresh(watched, STATUS)
    assert polled.json()["data"]["status"]["recordCount"] == 89  # the other copy's note too


def test_a_time_querys_tag_moves_with_the_minute_and_midnight(
    watched: TestClient, clock: Clock
) -> None:
    tag = _poll(watched, TIMELINE).headers["etag"]
    status_tag = _poll(watched, STATUS).headers["etag"]
    clock.us += 40 * 1_000_000  # 23:59:50: the same minute
    assert _poll(watched, TIMELINE, tag).status_code == 304
    worked_out = _worked_out(watched)
    clock.us += 15 * 1_000_000  # 00:00:05 in Berlin: a new minute, a new local day
    polled = _poll(watched, TIMELINE, tag)
    assert polled.status_code == 200 and polled.headers["etag"] != tag
    assert polled.json() == _fresh(watched, TIMELINE)
    assert polled.json()["data"]["timeline"]["localDate"] == "2026-03-02"
    # A document that reads no clock keeps its tag, and its shortcut, across the minute.
    assert _poll(watched, STATUS, status_tag).status_code == 304
    assert _worked_out(watched) == worked_out + 1


def test_tokens_with_other_scopes_never_share_a_tag(demo_vault: Path, tmp_path: Path) -> None:
    config = tmp_path / "almanac.toml"
    grants = {"base": '["default"]', "people": '["default", "people"]'}
    config.write_text(
        '[scopes]\npeople = "people/"\n'
        + "".join(
            f'\n[[tokens]]\nsha256 = "{hashlib.sha256(TOKENS[name].encode()).hexdigest()}"\n'
            f"scopes = {grants[name]}\n"
            for name in TOKENS
        ),
        "utf-8",
    )
    settings = Settings.build(
        vault=demo_vault, state=tmp_path / "state.db", config=config, watch="on"
    )
    with LocalClient(create_app(settings)) as client:
        auth = {name: {"Authorization": f"Bearer {TOKENS[name]}"} for name in TOKENS}
        base = _poll(client, STATUS, **auth["base"])
        people = _poll(client, STATUS, base.headers["etag"], **auth["people"])
        assert people.status_code == 200 and people.headers["etag"] != base.headers["etag"]
        assert people.json() == _fresh(client, STATUS, **auth["people"])
        assert base.json() == _fresh(client, STATUS, **auth["base"])
        assert people.json() != base.json()
        again = _poll(client, STATUS, people.headers["etag"], **auth["base"])
        assert again.status_code == 200 and again.headers["etag"] == base.headers["etag"]


def test_a_refused_query_string_stays_refused(watched: TestClient) -> None:
    """Query strings that passed are remembered (a poll repeats one); a refused one is not.
    Variables nested too deep: refused by the guard alone (GraphQL would ignore them)."""
    params = {"query": STATUS, "variables": '{"a": ' + "[" * 70 + "]" * 70 + "}"}
    for _ in range(2):
        answer = watched.get("/graphql", params=params)
        assert answer.status_code == 400, answer.text
    assert _poll(watched, STATUS).status_code == 200


def test_request_metrics_count_every_poll_in_cumulative_buckets(watched: TestClient) -> None:
    tag = _poll(watched, STATUS).headers["etag"]
    for _ in range(4):
        _poll(watched, STATUS, tag)
    samples = {
        (sample.name, sample.labels.get("code"), sample.labels.get("le")): sample.value
        for family in text_string_to_metric_families(watched.get("/metrics").text)
        for sample in family.samples
        if sample.labels.get("operation") == "status" or family.name == "almanac_cache_hits"
    }
    assert samples[("almanac_requests_total", "200", None)] == 1
    assert samples[("almanac_requests_total", "304", None)] == 4
    assert samples[("almanac_cache_hits_total", None, None)] == 4
    buckets = [v for (name, _, le), v in samples.items() if name.endswith("_bucket")]
    assert buckets == sorted(buckets) and len(buckets) == 15  # cumulative, +Inf last
    assert buckets[-1] == samples[("almanac_request_duration_seconds_count", None, None)] == 5
    assert samples[("almanac_request_duration_seconds_sum", None, None)] > 0


def test_remembered_tags_are_bounded_by_bytes(tmp_path: Path) -> None:
    store = temporal.Store.open(tmp_path / "state.db")
    answers = Answers(schema_id="s", max_bytes=1 << 20)
    try:
        with store.read() as reader:
            for n in range(6000):
                query_string = f"query=%7B+status+%7B+recordCount+%7D+%7D&n={n}".encode()
                params = {"query": "{ status { recordCount } }"}
                known = answers.work_out(
                    reader,
                    query_string,
                    params,
                    scopes=("default",),
                    snapshot="s",
                    clock_us=0,
                    version=1,
                )
                assert known is not None
                assert answers.known(query_string, ("default",), version=1, clock_us=0) == known
        assert answers.worked_out == 6000
        remembered = sum(
            answers.known(
                f"query=%7B+status+%7B+recordCount+%7D+%7D&n={n}".encode(),
                ("default",),
                version=1,
                clock_us=0,
            )
            is not None
            for n in range(6000)
        )
        assert 1000 < remembered < 6000  # the oldest went; the newest stay
        assert answers.known(query_string, ("default",), version=2, clock_us=0) is None
    finally:
        store.close()


def test_a_remembered_poll_passes_every_check_of_the_guard(watched: TestClient) -> None:
    """An unchanged poll is answered before routing, but never before the guard's checks:
    with its tag remembered, a cross-site or foreign-host poll is still refused."""
    tag = _poll(watched, STATUS).headers["etag"]
    assert _poll(watched, STATUS, tag).status_code == 304
    refused = [
        {"Sec-Fetch-Site": "cross-site"},
        {"Origin": "http://evil.example"},
        {"Host": "127.attacker.example"},
    ]
    for headers in refused:
        answer = _poll(watched, STATUS, tag, **headers)
        assert answer.status_code == 403, (headers, answer.status_code)
        assert answer.json()["errors"][0]["extensions"]["code"] == "FORBIDDEN"
        assert "etag" not in answer.headers
    assert _poll(watched, STATUS, tag).status_code == 304


def test_a_remembered_poll_needs_its_token(demo_vault: Path, tmp_path: Path) -> None:
    config = tmp_path / "almanac.toml"
    digest = hashlib.sha256(TOKENS["base"].encode()).hexdigest()
    config.write_text(f'[[tokens]]\nsha256 = "{digest}"\nscopes = ["default"]\n', "utf-8")
    settings = Settings.build(
        vault=demo_vault, state=tmp_path / "state.db", config=config, watch="on"
    )
    with LocalClient(create_app(settings)) as client:
        auth = {"Authorization": f"Bearer {TOKENS['base']}"}
        tag = _poll(client, STATUS, **auth).headers["etag"]
        assert _poll(client, STATUS, tag, **auth).status_code == 304
        assert _poll(client, STATUS, tag).status_code == 401
        assert _poll(client, STATUS, tag, Authorization="Bearer nope").status_code == 401
        kept = _poll(client, STATUS, **auth)
        assert kept.status_code == 200 and kept.headers["etag"] == tag
        assert _poll(client, STATUS).status_code == 401


@pytest.mark.parametrize(
    ("header", "matches"),
    [
        ('"abc"', True),
        ('W/"abc"', True),
        ('"x", W/"abc" ', True),
        (" * ", True),
        ('"abcd"', False),
        ("abc", False),
        ('"x", "y"', False),
        ("", False),
        (None, False),
    ],
)
def test_if_none_match_is_compared_weakly_as_rfc_9110_says(
    header: str | None, matches: bool
) -> None:
    assert etag_matches(header, "abc") is matches


def test_a_poll_that_waits_for_a_reconcile_is_timed_from_its_arrival(
    watched: TestClient, demo_vault: Path
) -> None:
    """The shortcut's freshness check reconciles 1,500 new notes, then the poll goes the whole
    way: its duration (metrics) counts the reconcile it waited for."""

    def duration() -> float:
        for family in text_string_to_metric_families(watched.get("/metrics").text):
            for sample in family.samples:
                name, operation = sample.name, sample.labels.get("operation")
                if name == "almanac_request_duration_seconds_sum" and operation == "status":
                    return float(sample.value)
        return 0.0

    _poll(watched, STATUS)
    before = duration()
    many = demo_vault / "many"
    many.mkdir()
    for index in range(1500):
        (many / f"n{index}.md").write_text(f"---\ntype: note\n---\n# Note {index}\n", "utf-8")
    began = time.perf_counter()
    assert _poll(watched, STATUS).status_code == 200
    wall = time.perf_counter() - began
    assert duration() - before >= 0.8 * wall, (duration() - before, wall)


def test_every_if_none_match_line_counts(watched: TestClient, tmp_path: Path) -> None:
    """Several `If-None-Match` lines are one list (RFC 9110): the tag in the second line
    matches, answered before routing and the whole way alike."""
    tag = _poll(watched, STATUS).headers["etag"]
    lines = [("if-none-match", '"some-other-tag"'), ("if-none-match", tag)]
    assert watched.get("/graphql", params={"query": STATUS}, headers=lines).status_code == 304
    with sqlite3.connect(tmp_path / "state.db") as other:  # the tag is worked out again
        other.execute("CREATE TABLE probe (x)")
    worked_out = _worked_out(watched)
    assert watched.get("/graphql", params={"query": STATUS}, headers=lines).status_code == 304
    assert _worked_out(watched) == worked_out + 1
