"""A real `almanac serve` (uvicorn) on loopback, driven over TCP."""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlencode

import httpx2 as httpx
import pytest

from tests.api.served import serve

STATUS = {"query": "{ status { recordCount scopes snapshot } }"}


@pytest.fixture
def server(demo_vault: Path, tmp_path: Path) -> Iterator[str]:
    with serve(demo_vault, tmp_path) as base:
        yield base


def test_real_server_answers_status(server: str, demo_vault: Path) -> None:
    with httpx.Client(base_url=server, timeout=10.0) as client:
        response = client.post("/graphql", json=STATUS)
        assert response.status_code == 200
        status = response.json()["data"]["status"]
        assert status["recordCount"] == 88
        assert status["scopes"] == ["default"]

        (demo_vault / "people/zoe-new.md").write_text("---\ntype: person\n---\n# Zoe New\n")
        after = client.post("/graphql", json=STATUS).json()["data"]["status"]
        assert after["recordCount"] == 89
        assert after["snapshot"] != status["snapshot"]

        same_origin = client.post("/graphql", json=STATUS, headers={"Origin": server})
        assert same_origin.status_code == 200
        cross = client.post("/graphql", json=STATUS, headers={"Origin": "https://evil.example"})
        assert cross.status_code == 403
        assert cross.json()["errors"][0]["extensions"]["code"] == "FORBIDDEN"
        big = client.post(
            "/graphql",
            content=b'{"query": "' + b" " * 100_000 + b'"}',
            headers={"content-type": "application/json"},
        )
        assert big.status_code == 413
        assert client.get("/graphql", params={"query": "{ status { recordCount } }"}).json() == {
            "data": {"status": {"recordCount": 89}}
        }


def _trickled_get(server: str, query: str) -> tuple[int, bytes]:
    """GET /graphql?query=... sent 4 KiB at a time, as a slow network delivers it (uvicorn's
    bound applies to a head not yet complete); the status and body of the answer."""
    host, port = server.removeprefix("http://").split(":")
    target = "/graphql?" + urlencode({"query": query})
    request = f"GET {target} HTTP/1.1\r\nHost: {host}:{port}\r\nConnection: close\r\n\r\n"
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        data = request.encode()
        for start in range(0, len(data), 4096):
            sock.sendall(data[start : start + 4096])
            time.sleep(0.002)
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    head, _, body = answer.partition(b"\r\n\r\n")
    return int(head.split(b" ", 2)[1]), body


def test_a_long_get_reaches_the_guard_which_answers_past_its_limit(server: str) -> None:
    """uvicorn's bound on a request's head leaves room for a query string at the guard's limit
    (64 KiB): under it the query is answered, past it the guard's typed 413 answers, never
    uvicorn's plain 400."""
    status, body = _trickled_get(server, "# " + "x" * 40_000 + "\n{ status { recordCount } }")
    assert status == 200, body
    assert json.loads(body)["data"]["status"]["recordCount"] == 88
    status, body = _trickled_get(server, "# " + "x" * 70_000 + "\n{ status { recordCount } }")
    assert status == 413, body
    assert json.loads(body)["errors"][0]["extensions"]["code"] == "QUERY_TOO_COMPLEX"
