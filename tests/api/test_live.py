"""`subscription { snapshots }` over graphql-transport-ws against a real server (uvicorn): events
within a second of a commit, the HTTP protections on the upgrade, tokens at `connection_init`,
scopes that reveal nothing, a client that never reads, commits of another process."""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx2 as httpx
import pendulum
import pytest
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidStatus

from tests.api.served import ROOT, serve

EVENTS = (
    "subscription($scope: String) { snapshots(scope: $scope) {"
    " snapshot previous committedAt changedCount changed truncated degraded } }"
)
READER = "reader-token-0123456789"
ADMIN = "admin-token-9876543210"


def _sha(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def _config(tmp_path: Path, limits: str = "") -> Path:
    """READER reads `default`, ADMIN also `work` (projects/)."""
    path = tmp_path / "almanac.toml"
    path.write_text(
        f"""
[scopes]
work = "projects"

[limits]
{limits}

[[tokens]]
sha256 = "{_sha(READER)}"
scopes = ["default"]

[[tokens]]
sha256 = "{_sha(ADMIN)}"
scopes = ["default", "work"]
""",
        encoding="utf-8",
    )
    return path


def _url(base: str) -> str:
    return base.replace("http://", "ws://") + "/graphql"


@asynccontextmanager
async def _socket(base: str, **options: Any) -> AsyncIterator[ClientConnection]:
    async with connect(_url(base), subprotocols=["graphql-transport-ws"], **options) as ws:  # type: ignore[list-item]
        yield ws


async def _receive(ws: ClientConnection, timeout: float = 10.0) -> dict[str, Any]:
    message: dict[str, Any] = json.loads(await asyncio.wait_for(ws.recv(), timeout))
    return message


async def _init(ws: ClientConnection, token: str | None = None) -> dict[str, Any]:
    payload = {"Authorization": f"Bearer {token}"} if token else {}
    await ws.send(json.dumps({"type": "connection_init", "payload": payload}))
    return await _receive(ws)


async def _subscribe(ws: ClientConnection, id: str, scope: str | None = None) -> dict[str, Any]:
    """Subscribe; the first event (or the error)."""
    payload = {"query": EVENTS, "variables": {"scope": scope}}
    await ws.send(json.dumps({"id": id, "type": "subscribe", "payload": payload}))
    return await _receive(ws)


def _event(message: dict[str, Any]) -> dict[str, Any]:
    assert message["type"] == "next", message
    event: dict[str, Any] = message["payload"]["data"]["snapshots"]
    return event


def _edit(vault: Path, relative: str) -> None:
    path = vault / relative
    path.write_text(path.read_text(encoding="utf-8") + f"\nEdited {time.time_ns()}.\n", "utf-8")


def _age(committed_at: str) -> float:
    at = pendulum.parse(committed_at)
    assert isinstance(at, pendulum.DateTime)
    return (pendulum.now("UTC") - at).total_seconds()


def _metrics(base: str, headers: dict[str, str] | None = None) -> dict[str, float]:
    text = httpx.get(f"{base}/metrics", headers=headers or {}, timeout=10).text
    found = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            name, _, value = line.rpartition(" ")
            found[name] = float(value)
    return found


def test_an_edit_reaches_a_subscriber_within_a_second(demo_vault: Path, tmp_path: Path) -> None:
    with serve(demo_vault, tmp_path) as base:
        status = httpx.post(
            f"{base}/graphql", json={"query": "{ status { snapshot } }"}, timeout=10
        ).json()

        async def run() -> None:
            async with _socket(base) as ws:
                assert await _init(ws) == {"type": "connection_ack"}
                first = _event(await _subscribe(ws, "1"))
                assert first["snapshot"] == status["data"]["status"]["snapshot"]
                assert (first["previous"], first["changedCount"], first["changed"]) == (None, 0, [])
                await ws.send(json.dumps({"type": "ping"}))
                assert await _receive(ws) == {"type": "pong"}
                _edit(demo_vault, "people/ada-lopez.md")
                event = _event(await _receive(ws))
                assert _age(event["committedAt"]) < 1.0, event
                assert event["previous"] == first["snapshot"] != event["snapshot"]
                assert event["changed"] == ["people/ada-lopez"]
                assert (event["changedCount"], event["truncated"], event["degraded"]) == (
                    1,
                    False,
                    [],
                )
                # A query on the same socket: answered from the new snapshot, then complete.
                query = {"query": "{ status { snapshot } }"}
                await ws.send(json.dumps({"id": "2", "type": "subscribe", "payload": query}))
                answered = await _receive(ws)
                assert answered["id"] == "2", answered
                assert answered["payload"]["data"]["status"]["snapshot"] == event["snapshot"]
                assert await _receive(ws) == {"id": "2", "type": "complete"}
                _edit(demo_vault, "people/hana-sato.md")
                following = _event(await _receive(ws))
                assert following["changed"] == ["people/hana-sato"]
                assert following["previous"] == event["snapshot"]

        asyncio.run(run())


def test_the_upgrade_passes_the_http_rules(demo_vault: Path, tmp_path: Path) -> None:
    """A cross-site page cannot subscribe; a host name that is not loopback is refused without
    tokens; connections are capped."""
    config = tmp_path / "limits.toml"
    config.write_text("[limits]\nmax_connections = 2\n", encoding="utf-8")
    with serve(demo_vault, tmp_path, "--config", str(config)) as base:
        host = base.removeprefix("http://")

        async def refused(**headers: str) -> int:
            with pytest.raises(InvalidStatus) as refusal:
                async with _socket(base, additional_headers=headers):
                    pass
            return refusal.value.response.status_code

        async def run() -> None:
            assert await refused(Origin="http://evil.example") == 403
            assert await refused(Origin=f"http://{host}", **{"Sec-Fetch-Site": "cross-site"}) == 403
            # A name that is not loopback (DNS rebinding), over a socket to loopback.
            port = int(base.rsplit(":", 1)[1])
            sock = socket.create_connection(("127.0.0.1", port))
            with pytest.raises(InvalidStatus) as refusal:
                async with connect(
                    f"ws://almanac.example:{port}/graphql",
                    subprotocols=["graphql-transport-ws"],  # type: ignore[list-item]
                    sock=sock,
                ):
                    pass
            assert refusal.value.response.status_code == 403
            async with _socket(base, additional_headers={"Origin": f"http://{host}"}) as ws:
                assert await _init(ws) == {"type": "connection_ack"}
                async with _socket(base) as other:
                    assert await _init(other) == {"type": "connection_ack"}
                    assert await refused() == 403  # a third connection
                assert _event(await _subscribe(ws, "1"))["changedCount"] == 0

        asyncio.run(run())


def test_a_token_is_checked_at_connection_init(demo_vault: Path, tmp_path: Path) -> None:
    with serve(demo_vault, tmp_path, "--config", str(_config(tmp_path))) as base:

        async def closed_with(token: str | None) -> int | None:
            async with _socket(base) as ws:
                payload = {"Authorization": f"Bearer {token}"} if token else {}
                await ws.send(json.dumps({"type": "connection_init", "payload": payload}))
                with pytest.raises(ConnectionClosed) as closed:
                    await _receive(ws)
                assert closed.value.rcvd is not None
                return closed.value.rcvd.code

        async def run() -> None:
            assert await closed_with("not-a-token") == 4403
            assert await closed_with(None) == 4403
            async with _socket(base) as ws:
                assert await _init(ws, READER) == {"type": "connection_ack"}
            # The upgrade's own header: a valid one serves, a wrong one is refused at once.
            bearer = {"Authorization": f"Bearer {READER}"}
            async with _socket(base, additional_headers=bearer) as ws:
                assert await _init(ws) == {"type": "connection_ack"}
            with pytest.raises(InvalidStatus):
                async with _socket(base, additional_headers={"Authorization": "Bearer nope"}):
                    pass

        asyncio.run(run())


def test_a_change_in_a_scope_the_token_lacks_reveals_nothing(
    demo_vault: Path, tmp_path: Path
) -> None:
    with serve(demo_vault, tmp_path, "--config", str(_config(tmp_path))) as base:

        async def run() -> None:
            async with _socket(base) as reader, _socket(base) as admin:
                await _init(reader, READER)
                await _init(admin, ADMIN)
                forbidden = await _subscribe(reader, "w", scope="work")
                assert forbidden["payload"]["errors"][0]["extensions"]["code"] == "FORBIDDEN"
                assert (await _receive(reader))["type"] == "complete"
                mine = _event(await _subscribe(reader, "1"))
                theirs = _event(await _subscribe(admin, "1"))
                _edit(demo_vault, "projects/atlas.md")  # scope `work`
                seen = _event(await _receive(admin))
                assert (
                    seen["changed"] == ["projects/atlas"] and seen["previous"] == theirs["snapshot"]
                )
                with pytest.raises(TimeoutError):  # a full second more: nothing comes
                    await _receive(reader, timeout=1.5)
                _edit(demo_vault, "people/ada-lopez.md")  # scope `default`
                event = _event(await _receive(reader))
                assert event["changed"] == ["people/ada-lopez"] and event["changedCount"] == 1
                assert event["previous"] == mine["snapshot"]  # the work edit moved nothing here
                assert _event(await _receive(admin))["changed"] == ["people/ada-lopez"]

        asyncio.run(run())


def test_a_client_that_never_reads_is_dropped(demo_vault: Path, tmp_path: Path) -> None:
    limits = "send_queue = 2\nsend_seconds = 2\nmax_subscriptions = 10"
    config = tmp_path / "almanac.toml"
    config.write_text(f"[limits]\n{limits}\n", encoding="utf-8")
    extra = demo_vault / "extra"
    extra.mkdir()
    with serve(demo_vault, tmp_path, "--config", str(config)) as base:

        async def run() -> tuple[dict[str, float], dict[str, float]]:
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            sock.connect(("127.0.0.1", int(base.rsplit(":", 1)[1])))
            async with _socket(base, sock=sock, max_queue=1, compression=None) as ws:
                await _init(ws)
                for index in range(10):
                    _event(await _subscribe(ws, str(index)))
                before = _metrics(base)
                assert before["almanac_subscriptions"] == 10
                # From here on the client reads nothing; commits of 120 changed notes follow.
                after = before
                for round in range(40):
                    for index in range(120):
                        note = extra / f"{'long-name-' * 15}{index:03d}.md"  # long ids
                        note.write_text(f"# Note {index} {'x' * 40}\n\nRound {round}.\n")
                    # A query sees every finished change: the round is one commit.
                    httpx.post(f"{base}/graphql", json={"query": "{ status { snapshot } }"})
                    after = _metrics(base)
                    if after["almanac_subscriptions"] == 0:
                        break
                return before, after

        before, after = asyncio.run(run())
        assert after["almanac_subscriptions"] == 0, "the stuck client was never dropped"
        growth = after["process_resident_memory_bytes"] - before["process_resident_memory_bytes"]
        assert growth < 20 * 2**20, f"RSS grew by {growth / 2**20:.1f} MiB"
        log = (tmp_path / "server.log").read_text()
        assert "dropped" in log, [line for line in log.splitlines() if "INFO" not in line]


def test_a_subscription_survives_a_failed_reconcile_and_hears_another_process(
    demo_vault: Path, tmp_path: Path
) -> None:
    """The server's reconciles fail (its vault is gone); another process commits to the same
    state file: the subscriber hears that commit, marked `index_stale`, on an open socket."""
    with serve(demo_vault, tmp_path) as base:

        async def run() -> None:
            async with _socket(base) as ws:
                await _init(ws)
                first = _event(await _subscribe(ws, "1"))
                moved = tmp_path / "moved"
                demo_vault.rename(moved)
                await asyncio.sleep(1.0)  # the feed's freshness checks fail meanwhile
                _edit(moved, "people/ada-lopez.md")
                command = [sys.executable, "-m", "almanac", "reconcile", "--vault", str(moved)]
                command += ["--state", str(tmp_path / "state.db")]
                env = {k: v for k, v in os.environ.items() if not k.startswith("ALMANAC_")}
                await asyncio.to_thread(subprocess.run, command, cwd=ROOT, env=env, check=True)
                event = _event(await _receive(ws))
                assert event["changed"] == ["people/ada-lopez"]
                assert event["previous"] == first["snapshot"]
                assert event["degraded"] == ["index_stale"]
                moved.rename(demo_vault)
                _edit(demo_vault, "people/hana-sato.md")
                event = _event(await _receive(ws))
                assert event["changed"] == ["people/hana-sato"] and event["degraded"] == []

        asyncio.run(run())


def test_event_ids_are_capped_and_sorted(demo_vault: Path, tmp_path: Path) -> None:
    staging = tmp_path / "staging"
    staging.mkdir()
    for index in reversed(range(150)):
        (staging / f"n{index:03d}.md").write_text(f"# N {index}\n")
    with serve(demo_vault, tmp_path, "--watch", "off") as base:

        async def run() -> None:
            async with _socket(base) as ws:
                await _init(ws)
                _event(await _subscribe(ws, "1"))
                staging.rename(demo_vault / "extra")  # all 150 at once, for one commit
                event = _event(await _receive(ws))
                assert event["changedCount"] == 150 and event["truncated"] is True
                assert event["changed"] == [f"extra/n{i:03d}" for i in range(100)]

        asyncio.run(run())
