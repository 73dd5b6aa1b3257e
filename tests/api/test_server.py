"""A real `almanac serve` (uvicorn) on loopback, driven over TCP."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx2 as httpx
import pytest

ROOT = Path(__file__).resolve().parents[2]
STARTUP_SECONDS = 20.0
STATUS = {"query": "{ status { recordCount scopes snapshot } }"}


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@pytest.fixture
def server(demo_vault: Path, tmp_path: Path) -> Iterator[str]:
    """`python -m api serve` in a subprocess; yields its base URL once /healthz answers."""
    port = _free_port()
    log = (tmp_path / "server.log").open("wb")
    env = {k: v for k, v in os.environ.items() if not k.startswith("ALMANAC_")}
    command = [
        sys.executable,
        "-m",
        "api",
        "serve",
        "--vault",
        str(demo_vault),
        "--state",
        str(tmp_path / "state.db"),
        "--port",
        str(port),
    ]
    process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + STARTUP_SECONDS
        while True:
            try:
                if httpx.get(f"{base}/healthz", timeout=1.0).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            try:
                code = process.wait(timeout=0.05)  # doubles as the pause between attempts
            except subprocess.TimeoutExpired:
                code = None
            if code is not None:
                raise AssertionError(
                    f"server exited with {code}: {(tmp_path / 'server.log').read_text()}"
                )
            if time.monotonic() > deadline:
                raise AssertionError(
                    f"server not up in {STARTUP_SECONDS}s: {(tmp_path / 'server.log').read_text()}"
                )
        yield base
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)
        log.close()


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
