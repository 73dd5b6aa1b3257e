"""A restarted server answers before its graph is ready, and never from a wrong graph.

Real processes: `almanac reconcile` makes the existing state, then a real uvicorn serves it.
The graph's background load is held at its start (`create_app(on_warm=...)`, the way crash
tests stop a reconcile at `on_step`) by a launcher, so "before the graph is ready" is an order,
not a timing.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2 as httpx

from almanac import graph, temporal
from almanac.api.services import Services, now_us
from almanac.api.settings import Settings
from almanac.temporal import FINGERPRINT
from tests.api.served import ROOT, STARTUP_SECONDS, free_port, serve

LAUNCHER = """
import sys, time
from pathlib import Path
import uvicorn
from almanac.api.app import create_app
from almanac.api.settings import Settings

vault, state, port, config, hold = sys.argv[1:6]
held = {}

def on_warm(step):
    # "gate:PATH": until PATH exists; "waiter": until a graph query waits for the graph.
    while True:
        if hold.startswith("gate:") and Path(hold[5:]).exists():
            return
        services = held.get("services")
        if hold == "waiter" and services is not None and services.view_waits > 0:
            return
        time.sleep(0.01)

settings = Settings.build(vault=vault, state=state, config=config or None, watch=False)
app = create_app(settings, on_warm=on_warm)
held["services"] = app.state.services
uvicorn.run(app, host="127.0.0.1", port=int(port), log_level="warning")
"""

GRAPH = {
    "query": '{ graph(seed: {id: "people/samuel-okafor"}, relations: ["works_at"], hops: 2)'
    " { status nodes { id hop } paths { nodes edges { relation from to record } } } }"
}
LOOKUP = {"query": '{ lookup(name: "Samuel Okafor") { status record { id } } }'}


def reconcile(vault: Path, state: Path) -> None:
    command = [sys.executable, "-m", "almanac", "reconcile", "--vault", str(vault)]
    subprocess.run([*command, "--state", str(state)], cwd=ROOT, check=True, capture_output=True)


def cli_answer(vault: Path, state: Path, document: dict[str, str]) -> Any:
    """The answer of `almanac query`, whose graph is built from the database on the spot."""
    command = [
        sys.executable,
        "-m",
        "almanac",
        "query",
        "--vault",
        str(vault),
        "--state",
        str(state),
    ]
    done = subprocess.run(
        [*command, document["query"]], cwd=ROOT, check=True, capture_output=True, text=True
    )
    return json.loads(done.stdout)


@contextlib.contextmanager
def launched(vault: Path, tmp_path: Path, hold: str, config: Path | None = None) -> Iterator[str]:
    port = free_port()
    log_path = tmp_path / "launcher.log"
    env = {k: v for k, v in os.environ.items() if not k.startswith("ALMANAC_")}
    state = tmp_path / "state.db"
    command = [sys.executable, "-c", LAUNCHER, str(vault), str(state), str(port)]
    command += [str(config or ""), hold]
    with log_path.open("wb") as log:
        process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=log, stderr=log)
        base = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + STARTUP_SECONDS
            while True:
                try:
                    if httpx.get(f"{base}/healthz", timeout=1.0).status_code == 200:
                        break
                except httpx.TransportError:
                    pass
                assert process.poll() is None, log_path.read_text()
                assert time.monotonic() < deadline, log_path.read_text()
                time.sleep(0.05)
            yield base
        finally:
            process.terminate()
            process.wait(timeout=30)


def test_a_restarted_server_answers_a_lookup_before_its_graph_is_ready(
    demo_vault: Path, tmp_path: Path
) -> None:
    state = tmp_path / "state.db"
    reconcile(demo_vault, state)
    expected = cli_answer(demo_vault, state, GRAPH)
    assert expected["data"]["graph"]["paths"]
    config = tmp_path / "almanac.toml"
    config.write_text("[limits]\nrequest_seconds = 1\n")
    gate = tmp_path / "gate"
    with (
        launched(demo_vault, tmp_path, f"gate:{gate}", config) as base,
        httpx.Client(base_url=base, timeout=30.0) as client,
    ):
        lookup = client.post("/graphql", json=LOOKUP).json()
        assert lookup == {
            "data": {"lookup": {"status": "FOUND", "record": {"id": "people/samuel-okafor"}}}
        }
        warming = client.post("/graphql", json=GRAPH).json()
        assert warming["data"] is None
        assert warming["errors"][0]["extensions"] == {
            "code": "INDEX_UNAVAILABLE",
            "reason": "graph_warming",
        }
        gate.touch()
        answer = warming
        while answer.get("errors"):  # the load is a few ms once let go
            assert answer["errors"][0]["extensions"]["reason"] == "graph_warming"
            answer = client.post("/graphql", json=GRAPH).json()
        assert answer == expected


def test_a_graph_query_during_the_warm_up_waits_for_the_graph(
    demo_vault: Path, tmp_path: Path
) -> None:
    state = tmp_path / "state.db"
    reconcile(demo_vault, state)
    expected = cli_answer(demo_vault, state, GRAPH)
    # The load begins only once this query waits for it.
    with launched(demo_vault, tmp_path, "waiter") as base:
        answer = httpx.post(f"{base}/graphql", json=GRAPH, timeout=30.0).json()
    assert answer == expected


WORKS_AT_KESTREL = (
    "---\ntype: relationship\nfrom: people/samuel-okafor\nto: orgs/kestrel-cloud\n"
    "relation: works_at\n---\nSamuel consults for Kestrel.\n"
)


def compact_stamp(state: Path) -> graph.CompactStamp:
    # The fingerprint a server without a config file uses (another would rebuild the state).
    store = temporal.Store.open(state, fingerprint=temporal.VaultConfig().fingerprint(FINGERPRINT))
    try:
        generation, commit = temporal.commit_stamp(store)
        return graph.CompactStamp(store.fingerprint, generation, commit)
    finally:
        store.close()


def test_a_stale_or_damaged_compact_file_is_rebuilt_never_used(
    demo_vault: Path, tmp_path: Path
) -> None:
    state = tmp_path / "state.db"
    compact = tmp_path / "state.db.graph"
    reconcile(demo_vault, state)
    with serve(demo_vault, tmp_path, "--watch", "off") as base:
        first = httpx.post(f"{base}/graphql", json=GRAPH, timeout=30.0).json()
    assert graph.read_rows(compact, compact_stamp(state)) is not None  # kept at close
    old = compact.read_bytes()
    # The vault changes while no server runs, and a CLI run brings the state up to date: the
    # compact file is now of an older state. A server that used it would miss the new edge.
    (demo_vault / "relationships/samuel-kestrel.md").write_text(WORKS_AT_KESTREL)
    reconcile(demo_vault, state)
    assert graph.read_rows(compact, compact_stamp(state)) is None
    expected = cli_answer(demo_vault, state, GRAPH)
    assert expected != first
    with serve(demo_vault, tmp_path, "--watch", "off") as base:
        stale = httpx.post(f"{base}/graphql", json=GRAPH, timeout=30.0).json()
    assert stale == expected
    assert graph.read_rows(compact, compact_stamp(state)) is not None  # written again
    assert compact.read_bytes() != old
    # Damaged, of the right state: one byte of its body changed.
    data = compact.read_bytes()
    compact.write_bytes(data[:-10] + bytes([data[-10] ^ 1]) + data[-9:])
    assert graph.read_rows(compact, compact_stamp(state)) is None
    with serve(demo_vault, tmp_path, "--watch", "off") as base:
        damaged = httpx.post(f"{base}/graphql", json=GRAPH, timeout=30.0).json()
    assert damaged == expected
    assert graph.read_rows(compact, compact_stamp(state)) is not None


def test_a_server_started_after_another_process_committed_loads_the_older_compact_file(
    demo_vault: Path, tmp_path: Path
) -> None:
    """The file is of the state before a CLI run's commit: it is loaded and brought up to
    date from the commit log (not built from the database), and its graph is that state's."""
    state = tmp_path / "state.db"
    reconcile(demo_vault, state)
    settings = Settings.build(vault=demo_vault, state=state, watch=False)
    Services.open(settings, now_us=now_us(), graph=True).close()  # keeps the compact file
    (demo_vault / "relationships/samuel-kestrel.md").write_text(WORKS_AT_KESTREL)
    reconcile(demo_vault, state)
    services = Services.open(settings, now_us=now_us(), graph=True)
    try:
        services.wait_graph()
        assert services.graph_source == "compact+log"
        assert services.projection is not None
        with services.store.read() as reader:
            fresh = graph.Projection.build(reader)
        notes, edges = services.projection.rows()
        assert (Counter(notes), Counter(edges)) == tuple(Counter(rows) for rows in fresh.rows())
    finally:
        services.close()
    expected = cli_answer(demo_vault, state, GRAPH)
    assert "orgs/kestrel-cloud" in json.dumps(expected)


def test_a_restarted_server_reads_the_rest_of_its_memory_in_the_background(
    demo_vault: Path, tmp_path: Path
) -> None:
    state = tmp_path / "state.db"
    reconcile(demo_vault, state)
    settings = Settings.build(vault=demo_vault, state=state, watch=False)
    services = Services.open(settings, now_us=now_us(), graph=True)
    try:
        assert services.reconciler.loads == 1
        assert services._warmer is not None
        services._warmer.join(timeout=60)
        memory = services.reconciler.memory
        assert memory.complete and "people/samuel-okafor.md" in memory.entries
        assert services.reconciler.loads == 1  # the files' part was not read twice
    finally:
        services.close()


def test_a_read_older_than_every_published_graph_gets_the_graph_of_its_own_snapshot(
    demo_vault: Path, tmp_path: Path
) -> None:
    # A CLI or Python API run keeps no graph until asked: a request whose read began before a
    # reconcile committed, and that asks for the graph after, finds only the newer graph.
    settings = Settings.build(vault=demo_vault, state=tmp_path / "state.db", watch=False)
    services = Services.open(settings, now_us=now_us(), graph=False)
    try:
        with services.store.read() as reader:
            older = temporal.generation(reader)  # the read's snapshot begins here
            (demo_vault / "people/visitor.md").write_text(
                "---\ntype: person\ntitle: Visitor\n---\n[[Ada Lopez]]\n"
            )
            services.reconcile_now(now_us=now_us())
            services.refresh_projection()  # the graph of the newer generation only
            newer = services.view_for(temporal.generation(services.store), deadline=None)
            assert newer is not None and newer.node("default", "people/visitor") is not None
            assert temporal.generation(services.store) != older
            view = services.view_of(reader, deadline=None)
            assert view.node("default", "people/visitor") is None  # as of the request's read
            assert view.node("default", "people/ada-lopez") is not None
    finally:
        services.close()


def test_a_reconcile_leaves_no_page_of_the_state_file_mapped(
    demo_vault: Path, tmp_path: Path
) -> None:
    state = tmp_path / "state.db"
    settings = Settings.build(vault=demo_vault, state=state, watch=False)
    services = Services.open(settings, now_us=now_us(), graph=True)
    try:
        services.wait_graph()
        (demo_vault / "relationships/samuel-kestrel.md").write_text(WORKS_AT_KESTREL)
        assert services.reconcile_now(now_us=now_us()).changed
        with open("/proc/self/maps", encoding="utf-8") as maps:
            assert not [line for line in maps if line.rstrip("\n").endswith(str(state))]
    finally:
        services.close()
