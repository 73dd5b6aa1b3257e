"""A real `almanac serve` (uvicorn) on loopback, driven over TCP."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

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
