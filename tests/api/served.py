"""A real `almanac serve` (uvicorn) on loopback in a subprocess, for end-to-end tests."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx2 as httpx

ROOT = Path(__file__).resolve().parents[2]
STARTUP_SECONDS = 20.0


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@contextlib.contextmanager
def serve(
    vault: Path | None,
    tmp_path: Path,
    *options: str,
    python: str = sys.executable,
    cwd: Path = ROOT,
) -> Iterator[str]:
    """`python -m almanac serve` over `vault` (None: the demo vault); yields its base URL once
    /healthz answers, and stops it afterwards. Its output is in `tmp_path / "server.log"`."""
    port = free_port()
    log_path = tmp_path / "server.log"
    log = log_path.open("wb")
    env = {k: v for k, v in os.environ.items() if not k.startswith("ALMANAC_")}
    command = [python, "-m", "almanac", "serve"]
    command += [] if vault is None else ["--vault", str(vault)]
    command += ["--state", str(tmp_path / "state.db"), "--port", str(port), *options]
    process = subprocess.Popen(command, cwd=cwd, env=env, stdout=log, stderr=subprocess.STDOUT)
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
                raise AssertionError(f"server exited with {code}: {log_path.read_text()}")
            if time.monotonic() > deadline:
                raise AssertionError(f"server not up in {STARTUP_SECONDS}s: {log_path.read_text()}")
        yield base
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)
        log.close()
