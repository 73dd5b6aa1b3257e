"""`almanac serve --workers 2`: real processes on one state file (uvicorn's supervisor)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import signal
import socket
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx2 as httpx
import pendulum
import pytest
from websockets.asyncio.client import ClientConnection, connect

from almanac import temporal
from almanac.api.workers import listening_socket, worker_count
from almanac.vault import StartupError
from tests.api.served import ROOT, free_port

QUERY = '{ record(id: "zed") { title } graph(seed: {id: "ada"}, hops: 1) { nodes { id } } }'
NOTES = {
    "ada.md": "---\ntype: person\n---\n# Ada\n",
    "bob.md": "---\ntype: person\n---\n# Bob\nKnows [[Ada]].\n",
}
ZED = "---\ntype: person\n---\n# Zed\nMet [[Ada]].\n"


class Server:
    """A running `almanac serve --workers 2` and its output."""

    def __init__(self, process: subprocess.Popen[bytes], base: str, log: Path) -> None:
        self.process, self.base, self.log = process, base, log

    def worker(self, client: httpx.Client) -> int:
        """The pid of the worker that answers on `client`'s connection."""
        text = client.get(f"{self.base}/metrics").text
        found = re.search(r"^almanac_worker_pid (\d+)", text, re.M)
        assert found, text
        return int(float(found.group(1)))

    def query(self, client: httpx.Client, document: str = QUERY) -> dict[str, object]:
        response = client.post(f"{self.base}/graphql", json={"query": document})
        assert response.status_code == 200, response.text
        body: dict[str, object] = response.json()
        assert "errors" not in body, body
        return body

    def pids(self, count: int, *, within: float = 20.0) -> set[int]:
        """Worker pids seen on fresh connections until `count` different ones answered."""
        seen: set[int] = set()
        deadline = time.monotonic() + within
        while len(seen) < count:
            assert time.monotonic() < deadline, f"only {seen} answered: {self.log.read_text()}"
            with contextlib.suppress(httpx.TransportError), httpx.Client() as client:
                seen.add(self.worker(client))
        return seen


@contextlib.contextmanager
def served(tmp_path: Path, *options: str) -> Iterator[Server]:
    vault = tmp_path / "vault"
    for name, text in NOTES.items():
        (vault / name).parent.mkdir(parents=True, exist_ok=True)
        (vault / name).write_text(text)
    port = free_port()
    log_path = tmp_path / "server.log"
    env = {k: v for k, v in os.environ.items() if not k.startswith("ALMANAC_")}
    command = [sys.executable, "-m", "almanac", "serve", "--vault", str(vault), "--port", str(port)]
    command += ["--state", str(tmp_path / "state.db"), "--workers", "2", *options]
    with log_path.open("wb") as log:
        process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
        server = Server(process, f"http://127.0.0.1:{port}", log_path)
        try:
            server.pids(2)
            yield server
        finally:
            if process.poll() is None:
                process.terminate()
                try:
                    process.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait(timeout=10)


def _nodes(body: dict[str, object]) -> set[str]:
    data = body["data"]
    assert isinstance(data, dict)
    return {n["id"] for n in data["graph"]["nodes"]}


def test_two_workers_both_see_an_edit_on_their_next_query(tmp_path: Path) -> None:
    with served(tmp_path) as server:
        vault = tmp_path / "vault"
        clients: dict[int, httpx.Client] = {}
        deadline = time.monotonic() + 20
        while len(clients) < 2:  # one keep-alive connection to each worker
            assert time.monotonic() < deadline
            client = httpx.Client()
            pid = server.worker(client)
            if pid in clients:
                client.close()
            else:
                clients[pid] = client
        try:
            for client in clients.values():
                before = server.query(client)
                assert before["data"]["record"] is None  # type: ignore[index]
                assert _nodes(before) == {"ada", "bob"}
            (vault / "zed.md").write_text(ZED)
            for pid, client in clients.items():  # the first query of each sees it
                assert server.worker(client) == pid
                after = server.query(client)
                assert after["data"]["record"] == {"title": "Zed"}, pid  # type: ignore[index]
                assert _nodes(after) == {"ada", "bob", "zed"}, pid
            (vault / "bob.md").unlink()
            for client in reversed(clients.values()):
                assert _nodes(server.query(client)) == {"ada", "zed"}
            for client in clients.values():  # each followed the other's commits, never reloaded
                metrics = client.get(f"{server.base}/metrics").text
                assert re.search(r"^almanac_memory_loads 1\.0$", metrics, re.M), metrics
        finally:
            for client in clients.values():
                client.close()
        text = server.log.read_text()
        assert re.search(r"Worker \d+ ready: RSS \d+ MB, PSS \d+ MB", text), text


EVENTS = "subscription { snapshots { snapshot committedAt changed } }"


def _worker_socket(server: Server) -> tuple[int, socket.socket]:
    """A connection, and the pid of the worker that serves it (it asks `/metrics` over
    HTTP/1.1 and stays open, at a request's boundary)."""
    port = int(server.base.rsplit(":", 1)[1])
    sock = socket.create_connection(("127.0.0.1", port), timeout=10)
    sock.sendall(f"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode())
    received = b""
    while b"\r\n\r\n" not in received:
        received += (chunk := sock.recv(65536))
        assert chunk, received
    head, _, body = received.partition(b"\r\n\r\n")
    length = int(re.search(rb"content-length: (\d+)", head, re.I).group(1))  # type: ignore[union-attr]
    while len(body) < length:
        body += (chunk := sock.recv(65536))
        assert chunk, body
    found = re.search(rb"^almanac_worker_pid (\d+)", body, re.M)
    assert found, body
    return int(found.group(1)), sock


async def _subscribe(server: Server, sock: socket.socket) -> ClientConnection:
    """`sock` upgraded to a WebSocket with one subscription, its first event read."""
    url = server.base.replace("http://", "ws://") + "/graphql"
    ws = await connect(url, sock=sock, subprotocols=["graphql-transport-ws"])  # type: ignore[list-item]
    await ws.send(json.dumps({"type": "connection_init", "payload": {}}))
    assert json.loads(await ws.recv()) == {"type": "connection_ack"}
    await ws.send(json.dumps({"id": "1", "type": "subscribe", "payload": {"query": EVENTS}}))
    assert json.loads(await ws.recv())["type"] == "next"  # the first event: the snapshot now
    return ws


def test_every_workers_subscribers_hear_every_commit(tmp_path: Path) -> None:
    """Two subscribers on each worker; one edit: each hears it within a second of its commit,
    whichever worker reconciled it."""
    with served(tmp_path) as server:

        async def run() -> None:
            by_worker: dict[int, list[ClientConnection]] = {}
            deadline = time.monotonic() + 30
            while len(by_worker) < 2 or any(len(s) < 2 for s in by_worker.values()):
                assert time.monotonic() < deadline, {pid: len(s) for pid, s in by_worker.items()}
                pid, sock = _worker_socket(server)  # the kernel picks the worker
                if len(by_worker.setdefault(pid, [])) < 2:
                    by_worker[pid].append(await _subscribe(server, sock))  # at once: kept alive
                else:
                    sock.close()
            sockets = [ws for group in by_worker.values() for ws in group]
            try:
                (tmp_path / "vault" / "zed.md").write_text(ZED)
                for ws in sockets:
                    message = json.loads(await asyncio.wait_for(ws.recv(), 10))
                    event = message["payload"]["data"]["snapshots"]
                    assert event["changed"] == ["zed"], event
                    at = pendulum.parse(event["committedAt"])
                    assert isinstance(at, pendulum.DateTime)
                    assert (pendulum.now("UTC") - at).total_seconds() < 1.0, event
            finally:
                for ws in sockets:
                    await ws.close()

        asyncio.run(run())


def _lock_holder(lock: Path) -> int | None:
    """The pid holding the flock on `lock`, from /proc/locks."""
    inode = os.stat(lock).st_ino
    for line in Path("/proc/locks").read_text().splitlines():
        parts = line.split()
        if "FLOCK" in parts and "->" not in parts and parts[5].endswith(f":{inode}"):
            return int(parts[4])
    return None


def test_killing_the_reconciling_worker_loses_no_commit(tmp_path: Path) -> None:
    with served(tmp_path, "--watch", "off") as server:
        first = server.pids(2)
        many = tmp_path / "vault" / "many"
        many.mkdir()
        for i in range(2500):
            (many / f"n{i}.md").write_text(f"---\ntype: note\n---\n# Note {i}\nSee [[Ada]].\n")
        lock = tmp_path / "state.db.lock"

        def ask() -> None:
            with contextlib.suppress(httpx.TransportError), httpx.Client(timeout=60) as client:
                client.post(f"{server.base}/graphql", json={"query": "{ status { recordCount } }"})

        asking = threading.Thread(target=ask, daemon=True)
        asking.start()
        holder = None
        deadline = time.monotonic() + 20
        while holder is None:  # the worker planning and writing those notes
            assert time.monotonic() < deadline, "no worker took the lock"
            holder = _lock_holder(lock)
            time.sleep(0.01)
        assert holder in first
        os.kill(holder, signal.SIGKILL)
        # The other worker takes the lock and indexes everything before it answers.
        with httpx.Client(timeout=60) as client:
            body = server.query(client, "{ status { recordCount } }")
        assert body["data"] == {"status": {"recordCount": 2502}}
        replaced: set[int] = set()
        deadline = time.monotonic() + 30
        while not replaced:  # uvicorn starts a worker in its place
            assert time.monotonic() < deadline, server.log.read_text()
            replaced = server.pids(2) - first
        assert holder not in server.pids(2)
        asking.join(60)
        server.process.terminate()
        assert server.process.wait(timeout=15) == 0
    with sqlite3.connect(tmp_path / "state.db") as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    # Nothing was lost or torn: the state equals the vault, so a reconcile finds nothing to do.
    config = temporal.VaultConfig()
    store = temporal.Store.open(
        tmp_path / "state.db", fingerprint=config.fingerprint(temporal.FINGERPRINT)
    )
    try:
        result = temporal.Reconciler(store, tmp_path / "vault", config).reconcile(now_us=1)
        assert not result.changed, result
    finally:
        store.close()


def test_sigterm_under_load_loses_no_answered_request(tmp_path: Path) -> None:
    with served(tmp_path) as server:
        answered: list[int] = []
        bad: list[str] = []
        stop = threading.Event()

        def load() -> None:
            while not stop.is_set():
                try:
                    with httpx.Client(timeout=20) as client:
                        while not stop.is_set():
                            response = client.post(f"{server.base}/graphql", json={"query": QUERY})
                            body = response.json()
                            if response.status_code != 200 or "errors" in body:
                                bad.append(response.text)
                            elif _nodes(body) >= {"ada", "bob"}:
                                answered.append(1)
                            else:
                                bad.append(response.text)
                except (httpx.TransportError, httpx.RemoteProtocolError):
                    time.sleep(0.01)  # refused or cut before an answer: not answered

        threads = [threading.Thread(target=load, daemon=True) for _ in range(6)]
        for thread in threads:
            thread.start()
        time.sleep(1.5)
        assert answered
        began = time.monotonic()
        server.process.send_signal(signal.SIGTERM)
        assert server.process.wait(timeout=12) == 0
        took = time.monotonic() - began
        stop.set()
        for thread in threads:
            thread.join(20)
        assert not bad, bad[:3]
        assert took < 10, took


@pytest.mark.parametrize(
    ("value", "count"), [("1", 1), ("2", 2), ("auto", len(os.sched_getaffinity(0)))]
)
def test_worker_count(value: str, count: int) -> None:
    assert worker_count(value) == count


@pytest.mark.parametrize("value", ["0", "-1", "many", "65", ""])
def test_worker_count_refuses(value: str) -> None:
    with pytest.raises(StartupError, match="--workers"):
        worker_count(value)


@pytest.mark.parametrize(
    ("options", "environ"),
    [(["--workers", "0"], {}), ([], {"ALMANAC_WORKERS": "lots"}), (["--workers", "x"], {})],
)
def test_serve_refuses_a_bad_worker_count(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    options: list[str],
    environ: dict[str, str],
) -> None:
    from almanac.api.cli import main

    for name, value in environ.items():
        monkeypatch.setenv(name, value)
    argv = ["serve", "--vault", str(ROOT / "api" / "demo_vault")]
    argv += ["--state", str(tmp_path / "s.db"), *options]
    assert main(argv) == 2
    assert "--workers must be auto or a number" in capsys.readouterr().err


def test_the_workers_socket_accepts_connections_without_nagle() -> None:
    # uvicorn's own socket names no protocol, so asyncio leaves Nagle on for the connections
    # it accepts: a keep-alive client then waits ~40 ms (a delayed ACK) on every request.
    async def accepted_nodelay() -> int:
        sock = listening_socket("127.0.0.1", 0)
        found: asyncio.Future[int] = asyncio.get_running_loop().create_future()

        async def on_connect(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            conn = writer.get_extra_info("socket")
            found.set_result(conn.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
            writer.close()

        server = await asyncio.start_server(on_connect, sock=sock)
        async with server:
            _, writer = await asyncio.open_connection(*sock.getsockname())
            value = await asyncio.wait_for(found, 10)
            writer.close()
        return value

    assert asyncio.run(accepted_nodelay()) != 0
