"""Polling and live updates on a real server: an unchanged dashboard query polled over HTTP (the
304 path and the cached-200 path) next to a plain Starlette JSON floor in the same run, and the
delay from a commit to its event at many subscribers.

    python bench/polling.py [--seconds 5] [--clients 8] [--subscribers 200]

The floor is a Starlette app answering a fixed JSON body of the dashboard answer's size through
uvicorn, with nothing else: what the machine, uvicorn and the client allow. Both servers run in
subprocesses; the client is one asyncio loop with `--clients` keep-alive connections.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import httpx2 as httpx
import pendulum
from serving import free_port

ROOT = Path(__file__).resolve().parent.parent
DASHBOARD = (
    "{ status { snapshot recordCount coverage { issueCount } }"
    ' overdue: timeline(entity: "projects/atlas", timeField: DUE_AT, timezone: "Europe/Berlin")'
    " { total clockCounts { clock count } entries { record { id title } clock } } }"
)
EVENTS = "subscription { snapshots { snapshot committedAt changed } }"


def floor_app() -> Any:  # Any: a Starlette app (bench code, not typed as the packages are)
    from starlette.applications import Starlette
    from starlette.responses import Response
    from starlette.routing import Route

    body = os.environ["FLOOR_BODY"].encode()

    async def answer(request: Any) -> Response:
        return Response(body, media_type="application/json")

    return Starlette(routes=[Route("/graphql", answer)])


def _start(
    command: list[str], base: str, log: Path, env: dict[str, str]
) -> subprocess.Popen[bytes]:
    process = subprocess.Popen(
        command, cwd=ROOT, env=env, stdout=log.open("wb"), stderr=subprocess.STDOUT
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            httpx.get(base + "/graphql", timeout=1)
            return process
        except httpx.TransportError:
            time.sleep(0.1)
    process.kill()
    raise SystemExit(f"server not up: {log.read_text()}")


async def _poll(
    base: str, params: dict[str, str], headers: dict[str, str], seconds: float, clients: int
) -> dict[str, Any]:
    """Requests/s of `clients` keep-alive connections asking GET /graphql for `seconds`, through
    a minimal HTTP/1.1 client (asyncio streams), so that the servers, not the client, bound it."""
    host, port = base.removeprefix("http://").split(":")
    target = "/graphql?" + urlencode(params)
    lines = [f"GET {target} HTTP/1.1", f"Host: {host}:{port}"]
    lines += [f"{k}: {v}" for k, v in headers.items()]
    request = ("\r\n".join(lines) + "\r\n\r\n").encode()
    codes: dict[int, int] = {}
    done = 0
    stop = time.monotonic() + seconds

    async def one() -> None:
        nonlocal done
        reader, writer = await asyncio.open_connection(host, int(port))
        try:
            while time.monotonic() < stop:
                writer.write(request)
                head = await reader.readuntil(b"\r\n\r\n")
                status = int(head.split(b" ", 2)[1])
                length = 0
                for line in head.split(b"\r\n"):
                    if line.lower().startswith(b"content-length:"):
                        length = int(line.split(b":", 1)[1])
                await reader.readexactly(length)
                codes[status] = codes.get(status, 0) + 1
                done += 1
        finally:
            writer.close()

    began = time.monotonic()
    await asyncio.gather(*(one() for _ in range(clients)))
    return {"requests_per_s": round(done / (time.monotonic() - began), 1), "codes": codes}


async def _subscribers(base: str, count: int, vault: Path) -> dict[str, Any]:
    from websockets.asyncio.client import connect

    url = base.replace("http://", "ws://") + "/graphql"
    sockets = []
    for _ in range(count):
        ws = await connect(url, subprotocols=["graphql-transport-ws"])  # type: ignore[list-item]
        await ws.send(json.dumps({"type": "connection_init", "payload": {}}))
        await ws.recv()
        await ws.send(json.dumps({"id": "1", "type": "subscribe", "payload": {"query": EVENTS}}))
        await ws.recv()  # the first event
        sockets.append(ws)
    note = vault / "people" / "ada-lopez.md"
    note.write_text(note.read_text() + f"\nEdited {time.time_ns()}.\n")

    async def delay(ws: Any) -> float:
        message = json.loads(await asyncio.wait_for(ws.recv(), 30))
        event = message["payload"]["data"]["snapshots"]
        at = pendulum.parse(event["committedAt"])
        return (pendulum.now("UTC") - at).total_seconds()  # type: ignore[operator,no-any-return]

    delays = await asyncio.gather(*(delay(ws) for ws in sockets))
    for ws in sockets:
        await ws.close()
    return {
        "subscribers": count,
        "within_1s": sum(1 for d in delays if d <= 1.0),
        "median_s": round(statistics.median(delays), 3),
        "max_s": round(max(delays), 3),
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--seconds", type=float, default=5.0, help="per polling measurement")
    parser.add_argument("--clients", type=int, default=8, help="concurrent polling connections")
    parser.add_argument("--subscribers", type=int, default=200)
    args = parser.parse_args()
    env = {k: v for k, v in os.environ.items() if not k.startswith("ALMANAC_")}
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        shutil.copytree(ROOT / "api" / "demo_vault", folder / "vault")
        config = folder / "almanac.toml"
        config.write_text(f"[limits]\nmax_connections = {args.subscribers + 10}\n")
        port = free_port()
        base = f"http://127.0.0.1:{port}"
        command = [sys.executable, "-m", "api", "serve", "--vault", str(folder / "vault")]
        command += [
            "--state",
            str(folder / "state.db"),
            "--port",
            str(port),
            "--config",
            str(config),
        ]
        almanac = _start(command, base, folder / "almanac.log", env)
        floor_port = free_port()
        floor_base = f"http://127.0.0.1:{floor_port}"
        try:
            params = {"query": DASHBOARD}
            first = httpx.get(base + "/graphql", params=params, timeout=30)
            tag = first.headers["etag"]
            floor_env = {**env, "FLOOR_BODY": first.text}
            floor_command = [sys.executable, "-m", "uvicorn", "--factory", "polling:floor_app"]
            floor_command += [
                "--app-dir",
                "bench",
                "--port",
                str(floor_port),
                "--log-level",
                "warning",
            ]
            floor = _start(floor_command, floor_base, folder / "floor.log", floor_env)
            try:
                # The 304 path first, with a tag fetched now (a time query's tag lasts a minute).
                tag = httpx.get(base + "/graphql", params=params, timeout=30).headers["etag"]
                results = {
                    "floor": asyncio.run(_poll(floor_base, params, {}, args.seconds, args.clients)),
                    "almanac_304": asyncio.run(
                        _poll(base, params, {"If-None-Match": tag}, args.seconds, args.clients)
                    ),
                    "almanac_cached_200": asyncio.run(
                        _poll(base, params, {}, args.seconds, args.clients)
                    ),
                }
            finally:
                floor.terminate()
                floor.wait(10)
            rate = results["floor"]["requests_per_s"]
            for name in ("almanac_304", "almanac_cached_200"):
                results[name]["of_floor"] = round(results[name]["requests_per_s"] / rate, 3)
            results["events"] = asyncio.run(_subscribers(base, args.subscribers, folder / "vault"))
            print(json.dumps(results, indent=2))
        finally:
            almanac.terminate()
            almanac.wait(10)


if __name__ == "__main__":
    main()
