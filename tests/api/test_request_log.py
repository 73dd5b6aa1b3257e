"""One line per request (`RequestLines`): text or JSON, handed to the `almanac.requests`
logger in batches, every line there by the time the server has stopped."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Iterator
from pathlib import Path

import httpx2 as httpx
import pytest
from starlette.testclient import TestClient

from almanac.api.metrics import RequestLines
from tests.api.served import serve

STATUS = "{ status { snapshot recordCount } }"
SCOPE = {"client": ("127.0.0.1", 5123), "method": "GET", "path": "/graphql"}


class _Records(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.records: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record.getMessage())


@pytest.fixture
def records() -> Iterator[list[str]]:
    handler = _Records()
    logger = logging.getLogger("almanac.requests")
    logger.addHandler(handler)
    level, logger.level = logger.level, logging.INFO
    try:
        yield handler.records
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)


def test_lines_are_handed_over_in_batches(records: list[str]) -> None:
    async def run() -> None:
        lines = RequestLines(json_lines=False, interval=0.05)
        for n in range(3):
            lines.add(SCOPE, f"id{n}", "status", 0.0012, 304, None, "hit")
        assert records == []  # queued, not yet written
        await asyncio.sleep(0.2)
        assert len(records) == 1  # one record of three lines, after the interval
        lines.add(SCOPE, "id3", "graphql", 0.5, 400, None, "none")
        lines.flush()  # at once, as at shutdown
        assert len(records) == 2

    asyncio.run(run())
    batch = records[0].split("\n")
    assert batch == [
        f'INFO:     127.0.0.1:5123 - "GET /graphql HTTP/1.1" 304 status 1.2ms cache=hit id=id{n}'
        for n in range(3)
    ]
    assert records[1].endswith("400 graphql 500.0ms cache=none id=id3")


def test_a_full_batch_is_handed_over_at_once(records: list[str]) -> None:
    async def run() -> None:
        lines = RequestLines(json_lines=True, interval=60, max_lines=2)
        lines.add(SCOPE, "a", "status", 0.001, 200, None, "miss")
        assert records == []
        lines.add(SCOPE, "b", "status", 0.001, 304, None, "hit")
        assert len(records) == 1

    asyncio.run(run())
    parsed = [json.loads(line) for line in records[0].split("\n")]
    assert [(p["request_id"], p["status"], p["cache"]) for p in parsed] == [
        ("a", 200, "miss"),
        ("b", 304, "hit"),
    ]
    assert all(p["time"].endswith("Z") and len(p["time"]) == 27 for p in parsed)


def test_a_served_text_log_has_a_line_per_request_without_the_query(
    demo_vault: Path, tmp_path: Path
) -> None:
    with serve(demo_vault, tmp_path) as base:
        first = httpx.get(f"{base}/graphql", params={"query": STATUS}, timeout=10)
        tag = first.headers["etag"]
        for _ in range(3):
            again = httpx.get(
                f"{base}/graphql", params={"query": STATUS}, headers={"If-None-Match": tag}
            )
            assert again.status_code == 304
    logged = (tmp_path / "server.log").read_text()
    polls = [line for line in logged.splitlines() if '"GET /graphql HTTP/1.1"' in line]
    assert len(polls) == 4, logged
    assert [line.split('" ', 1)[1].split()[:2] for line in polls] == [
        ["200", "status"],
        ["304", "status"],
        ["304", "status"],
        ["304", "status"],
    ]
    assert polls[0].endswith(f"cache=miss id={first.headers['x-request-id']}")
    assert "query=" not in logged and "recordCount" not in logged


def test_a_request_id_is_echoed_when_it_is_a_short_token_else_made(
    demo_client: TestClient,
) -> None:
    echoed = demo_client.get("/healthz", headers={"X-Request-Id": "trace-42"})
    assert echoed.headers.get_list("x-request-id") == ["trace-42"]
    for bad in ("has space", "x" * 65, "semi;colon", ""):
        made = demo_client.get("/healthz", headers={"X-Request-Id": bad})
        [request_id] = made.headers.get_list("x-request-id")
        assert request_id != bad and len(request_id) == 32, request_id
    first, second = (demo_client.get("/healthz").headers["x-request-id"] for _ in range(2))
    assert first != second
