"""Polling and live updates on a real server: an unchanged dashboard query polled over HTTP (the
304 path and the cached-200 path) next to a plain Starlette JSON floor in the same run, and the
delay from a commit to its event at many subscribers.

    python bench/polling.py [--seconds 6] [--slice 0.5] [--clients 8] [--subscribers 200]
        [--against OTHER_CHECKOUT]

The floor is a Starlette app answering a fixed JSON body of the dashboard answer's size through
uvicorn (h11, as `almanac serve`), with nothing else: what the machine, uvicorn and the client
allow. `floor` runs with `--log-level warning` (no access log); `floor_logged` with uvicorn's
default `info`, which writes uvicorn's access line per request (every `of_floor` ratio is given
against both). `almanac serve` writes its own request line (`--log-format text`, the default),
batched. Both servers run in subprocesses; the client is one asyncio loop with `--clients`
keep-alive connections. The machine is shared, so the paths are measured in turns of `--slice`
seconds (floor, 304, cached 200, floor, ...; `--seconds` of each in all): a path's `of_floor` is
the median over the turns of its rate over the floor's rate in the same turn. `--against` also
serves the same vault copy with the code of another checkout (its `api`, from a second state
file), polled in the same turns: old and new code side by side. `in_process_us` is the CPU time
of one request through each app called in this process (no sockets, best of 5 rounds): what the
code adds, with none of the machine's noise of HTTP.
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
    command: list[str], base: str, log: Path, env: dict[str, str], *, cwd: Path = ROOT
) -> subprocess.Popen[bytes]:
    process = subprocess.Popen(
        command, cwd=cwd, env=env, stdout=log.open("wb"), stderr=subprocess.STDOUT
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


def _serve(
    root: Path, folder: Path, name: str, port: int, config: Path, env: dict[str, str]
) -> subprocess.Popen[bytes]:
    """`almanac serve` with the code of checkout `root`, on its own copy of the vault."""
    command = [sys.executable, "-m", "almanac", "serve", "--vault", str(folder / name / "vault")]
    command += ["--state", str(folder / f"{name}.db"), "--port", str(port)]
    command += ["--config", str(config)]
    env = {**env, "PYTHONPATH": str(root)}
    return _start(command, f"http://127.0.0.1:{port}", folder / f"{name}.log", env, cwd=root)


def _turns(
    bases: dict[str, str], params: dict[str, str], args: argparse.Namespace
) -> dict[str, Any]:
    """Every path polled in turns of `args.slice` seconds; rates, and ratios to the floor of
    the same turn."""
    paths = ["floor", "floor_logged"]
    for name in bases:
        if not name.startswith("floor"):
            paths += [f"{name}_304", f"{name}_cached_200"]
    rates: dict[str, list[float]] = {path: [] for path in paths}
    codes: dict[str, dict[int, int]] = {path: {} for path in paths}
    for _ in range(max(1, round(args.seconds / args.slice))):
        for path in paths:
            name = path.rsplit("_304", 1)[0].rsplit("_cached_200", 1)[0]
            headers = {}
            if path.endswith("_304"):
                # A tag fetched now: a time query's tag lasts a minute.
                tag = httpx.get(bases[name] + "/graphql", params=params, timeout=30)
                headers["If-None-Match"] = tag.headers["etag"]
            got = asyncio.run(_poll(bases[name], params, headers, args.slice, args.clients))
            rates[path].append(got["requests_per_s"])
            for code, count in got["codes"].items():
                codes[path][code] = codes[path].get(code, 0) + count
    results: dict[str, Any] = {}
    for path in paths:
        results[path] = {
            "requests_per_s": round(statistics.median(rates[path]), 1),
            "codes": codes[path],
        }
        for floor in ("floor", "floor_logged"):
            if not path.startswith("floor"):
                ratios = [a / f for a, f in zip(rates[path], rates[floor], strict=True)]
                results[path][f"of_{floor}"] = round(statistics.median(ratios), 3)
    return results


def _in_process(root: Path, folder: Path, name: str, body: str) -> dict[str, float]:
    """CPU microseconds per request of the floor app and of Almanac's 304 and cached 200,
    each app called in a child process with the code of `root` (no sockets)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ALMANAC_")}
    env |= {"PYTHONPATH": str(root), "FLOOR_BODY": body}
    command = [sys.executable, str(Path(__file__).resolve()), "--in-process-child"]
    command += [str(folder / name / "vault"), str(folder / f"{name}-in-process.db")]
    done = subprocess.run(command, cwd=root, env=env, capture_output=True, text=True, check=True)
    return json.loads(done.stdout)  # type: ignore[no-any-return]


def _in_process_child(vault: str, state: str) -> None:
    """`_in_process`'s child: runs with the code on PYTHONPATH, prints its figures."""
    sys.path.insert(0, os.environ["PYTHONPATH"])
    from almanac.api.app import create_app
    from almanac.api.settings import Settings

    app = create_app(Settings.build(vault=vault, state=state, watch="on"))
    # CPU time is the process's: the graph's warm-up thread must be done first.
    app.state.services.wait_graph()
    query_string = urlencode({"query": DASHBOARD}).encode()
    host = [(b"host", b"127.0.0.1:8000")]

    async def run() -> dict[str, float]:
        told: asyncio.Queue[dict[str, str]] = asyncio.Queue()
        told.put_nowait({"type": "lifespan.startup"})
        said: asyncio.Queue[Any] = asyncio.Queue()
        lifespan = asyncio.create_task(
            app({"type": "lifespan", "asgi": {"version": "3.0"}}, told.get, said.put)
        )
        await said.get()  # started
        best: dict[str, float] = {}
        for _ in range(5):
            answer = await _call(app, query_string, host)
            tag = dict(answer[0]["headers"])[b"etag"]  # again each round: a minute's tag
            cases = {
                "floor": (floor_app(), host, 200),
                "almanac_304": (app, [*host, (b"if-none-match", tag)], 304),
                "almanac_cached_200": (app, host, 200),
            }
            for path, (target, headers, status) in cases.items():
                began = time.process_time()
                for _ in range(1000):
                    sent = await _call(target, query_string, headers)
                    assert sent[0]["status"] == status, sent[0]
                cpu = (time.process_time() - began) * 1000  # microseconds per request
                best[path] = min(best.get(path, cpu), cpu)
        told.put_nowait({"type": "lifespan.shutdown"})
        await lifespan
        return {path: round(us, 1) for path, us in best.items()}

    print(json.dumps(asyncio.run(run())))


async def _call(app: Any, query_string: bytes, headers: list[tuple[bytes, bytes]]) -> list[Any]:
    """One GET /graphql through an ASGI app, from 127.0.0.1; the messages it sent."""
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "GET",
        "scheme": "http",
        "path": "/graphql",
        "raw_path": b"/graphql",
        "root_path": "",
        "query_string": query_string,
        "headers": headers,
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 8000),
        "state": {},
    }
    sent: list[Any] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: Any) -> None:
        sent.append(message)

    await app(scope, receive, send)
    return sent


def main() -> None:
    if len(sys.argv) == 4 and sys.argv[1] == "--in-process-child":
        _in_process_child(sys.argv[2], sys.argv[3])
        return
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--seconds", type=float, default=6.0, help="of each path, in all")
    parser.add_argument("--slice", type=float, default=0.5, help="one turn of one path")
    parser.add_argument("--clients", type=int, default=8, help="concurrent polling connections")
    parser.add_argument("--subscribers", type=int, default=200)
    parser.add_argument("--against", type=Path, help="another checkout, served side by side")
    args = parser.parse_args()
    env = {k: v for k, v in os.environ.items() if not k.startswith("ALMANAC_")}
    roots = {"almanac": ROOT}
    if args.against is not None:
        roots["against"] = args.against.resolve()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for name in roots:  # a copy each: the event measurement edits one
            shutil.copytree(ROOT / "api" / "demo_vault", folder / name / "vault")
        config = folder / "almanac.toml"
        config.write_text(f"[limits]\nmax_connections = {args.subscribers + 10}\n")
        servers = {}
        bases = {}
        try:
            for name, root in roots.items():
                port = free_port()
                servers[name] = _serve(root, folder, name, port, config, env)
                bases[name] = f"http://127.0.0.1:{port}"
            params = {"query": DASHBOARD}
            first = httpx.get(bases["almanac"] + "/graphql", params=params, timeout=30)
            floors = {}
            for floor, level in (("floor", "warning"), ("floor_logged", "info")):
                port = free_port()
                bases[floor] = f"http://127.0.0.1:{port}"
                command = [sys.executable, "-m", "uvicorn", "--factory", "polling:floor_app"]
                command += ["--app-dir", "bench", "--port", str(port), "--log-level", level]
                command += ["--http", "h11"]  # as `almanac serve` (`api.workers.server_options`)
                floor_env = {**env, "FLOOR_BODY": first.text}
                servers[floor] = _start(command, bases[floor], folder / f"{floor}.log", floor_env)
                floors[floor] = servers[floor]
            results = _turns(bases, params, args)
            for floor, server in floors.items():
                server.terminate()
                server.wait(10)
                del servers[floor]
            results["in_process_us"] = {
                name: _in_process(root, folder, name, first.text) for name, root in roots.items()
            }
            for name in roots:
                results[f"{name}_events"] = asyncio.run(
                    _subscribers(bases[name], args.subscribers, folder / name / "vault")
                )
            print(json.dumps(results, indent=2))
        finally:
            for server in servers.values():
                server.terminate()
                server.wait(10)


if __name__ == "__main__":
    main()
