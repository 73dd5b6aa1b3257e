"""`graph` and `paths` end to end: over HTTP, on the demo vault, with typed errors."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from almanac import temporal
from almanac.api.app import create_app
from almanac.api.services import Services
from almanac.api.settings import Settings
from tests.api.helpers import REPLACEMENT, SAMS, SUPERSEDED, LocalClient, codes, data, gql

GRAPH = """query($seed: GraphSeedInput!, $hops: Int, $direction: Direction, $relations: [String!],
  $maxPaths: Int, $fanOut: Int, $history: Boolean, $asOf: String, $scope: String) {
  graph(seed: $seed, hops: $hops, direction: $direction, relations: $relations,
        maxPaths: $maxPaths, fanOut: $fanOut, history: $history, asOf: $asOf, scope: $scope) {
    status seeds { id } candidates { id }
    nodes { id kind type title hop }
    paths { nodes edges { relation from to direction record
                          locator { path startLine endLine revision } } }
    limits { reason nodeId available }
    meta { snapshot degraded }
  }
}"""

PATHS = """query($from: ID!, $to: ID!, $maxHops: Int, $maxPaths: Int, $fanOut: Int,
  $relations: [String!], $asOf: String) {
  paths(from: $from, to: $to, maxHops: $maxHops, maxPaths: $maxPaths, fanOut: $fanOut,
        relations: $relations, asOf: $asOf) {
    status seeds { id } nodes { id hop } paths { nodes edges { relation record direction } }
    limits { reason nodeId available } meta { degraded }
  }
}"""

SAMUEL = "people/samuel-okafor"
BRIGHTWAVE = "orgs/brightwave-systems"


def graph(client: TestClient, **variables: Any) -> dict[str, Any]:
    result: dict[str, Any] = data(client, GRAPH, **variables)["graph"]
    return result


def test_graph_from_an_id_returns_nodes_paths_and_evidence(demo_client: TestClient) -> None:
    result = graph(demo_client, seed={"id": SAMUEL}, hops=1, fanOut=100, maxPaths=100)
    assert result["status"] == "FOUND"
    assert result["seeds"] == [{"id": SAMUEL}]
    assert result["nodes"][0] == {
        "id": SAMUEL,
        "kind": "PAGE",
        "type": "person",
        "title": "Samuel Okafor",
        "hop": 0,
    }
    assert {n["hop"] for n in result["nodes"][1:]} == {1}
    assert len(result["paths"]) == len(result["nodes"]) - 1
    # Between two records the first edge in (relation, evidence) order is used: here a body
    # link comes before the relationship, which a relation filter selects.
    to_brightwave = [p["edges"][0] for p in result["paths"] if p["nodes"][-1] == BRIGHTWAVE]
    assert [e["relation"] for e in to_brightwave] == ["links_to"]
    only = graph(demo_client, seed={"id": SAMUEL}, hops=1, relations=["works_at"])
    works = [p["edges"][0] for p in only["paths"] if p["nodes"][-1] == BRIGHTWAVE]
    assert works == [
        {
            "relation": "works_at",
            "from": SAMUEL,
            "to": BRIGHTWAVE,
            "direction": "OUT",
            "record": "relationships/samuel-works-at-brightwave",
            "locator": {
                "path": "relationships/samuel-works-at-brightwave.md",
                "startLine": 1,
                "endLine": works[0]["locator"]["endLine"],
                "revision": works[0]["locator"]["revision"],
            },
        }
    ]
    assert len(works[0]["locator"]["revision"]) == 64
    assert result["meta"]["degraded"] == sorted({h["reason"] for h in result["limits"]})


def test_as_of_drops_the_ended_relationship(demo_client: TestClient) -> None:
    def targets(as_of: str | None) -> list[str]:
        result = graph(demo_client, seed={"id": SAMUEL}, hops=1, relations=["works_at"], asOf=as_of)
        return [p["nodes"][-1] for p in result["paths"]]

    assert BRIGHTWAVE in targets(None)
    assert BRIGHTWAVE in targets("2025-01-01")
    assert BRIGHTWAVE not in targets("2026-05-01")  # valid_until is exclusive
    assert BRIGHTWAVE in targets("2026-04-30T23:59:59Z")


def test_history_leads_from_a_superseded_record_to_its_replacement(
    demo_client: TestClient,
) -> None:
    plain = graph(demo_client, seed={"id": SUPERSEDED}, hops=1, relations=["superseded_by"])
    assert plain["paths"] == []
    history = graph(
        demo_client, seed={"id": SUPERSEDED}, hops=1, relations=["superseded_by"], history=True
    )
    assert [p["nodes"] for p in history["paths"]] == [[SUPERSEDED, REPLACEMENT]]
    assert history["paths"][0]["edges"][0]["direction"] == "OUT"


def test_an_ambiguous_name_in_a_text_seed_returns_candidates(demo_client: TestClient) -> None:
    result = graph(demo_client, seed={"text": "What did Sam decide?"})
    assert result["status"] == "AMBIGUOUS"
    assert [c["id"] for c in result["candidates"]] == SAMS
    assert result["nodes"] == [] and result["paths"] == []


def test_a_text_seed_without_names_is_missing(demo_client: TestClient) -> None:
    result = graph(demo_client, seed={"text": "nothing declared here, qwxz"})
    assert (result["status"], result["nodes"]) == ("MISSING", [])


def test_fan_out_limit_reports_the_node_and_its_real_neighbour_count(
    demo_client: TestClient,
) -> None:
    result = graph(demo_client, seed={"id": "people/ada-lopez"}, hops=1, fanOut=3, maxPaths=100)
    assert len(result["paths"]) == 3
    hit = result["limits"][0]
    assert (hit["reason"], hit["nodeId"]) == ("fan_out_limit", "people/ada-lopez")
    everything = graph(
        demo_client, seed={"id": "people/ada-lopez"}, hops=1, fanOut=100, maxPaths=100
    )
    assert hit["available"] == len(everything["paths"])
    assert "fan_out_limit" in result["meta"]["degraded"]


def test_graph_answers_are_the_same_every_time(demo_client: TestClient) -> None:
    variables = {"seed": {"text": "Ada Lopez and Kestrel Cloud"}, "hops": 3, "maxPaths": 100}
    first = graph(demo_client, **variables)
    assert first["paths"]
    assert graph(demo_client, **variables) == first


def test_paths_between_two_records(demo_client: TestClient) -> None:
    result = data(demo_client, PATHS, **{"from": SAMUEL, "to": BRIGHTWAVE, "maxHops": 2})["paths"]
    assert result["status"] == "FOUND"
    sequences = [p["nodes"] for p in result["paths"]]
    assert sequences[0] == [SAMUEL, BRIGHTWAVE]
    assert [(len(s), s) for s in sequences] == sorted((len(s), s) for s in sequences)
    assert all(len(set(s)) == len(s) for s in sequences)
    missing = data(demo_client, PATHS, **{"from": SAMUEL, "to": "nobody"})["paths"]
    assert (missing["status"], missing["paths"]) == ("MISSING", [])


@pytest.mark.parametrize(
    ("variables", "named"),
    [
        ({"hops": 0}, "'hops'"),
        ({"hops": 4}, "'hops'"),
        ({"maxPaths": 0}, "'maxPaths'"),
        ({"maxPaths": 101}, "'maxPaths'"),
        ({"fanOut": 0}, "'fanOut'"),
        ({"fanOut": 101}, "'fanOut'"),
        ({"asOf": "yesterday"}, "'asOf'"),
        ({"asOf": "2026-01-01T10:00"}, "'asOf'"),
        ({"seed": {}}, "'seed'"),
        ({"seed": {"id": SAMUEL, "text": "Sam"}}, "'seed'"),
        ({"seed": {"text": "x" * 501}}, "'seed.text'"),
        ({"seed": {"text": "   "}}, "'seed.text'"),
    ],
    ids=repr,
)
def test_bad_graph_arguments_are_bad_user_input(
    demo_client: TestClient, variables: dict[str, Any], named: str
) -> None:
    body = gql(demo_client, GRAPH, **({"seed": {"id": SAMUEL}} | variables))
    assert codes(body) == ["BAD_USER_INPUT"]
    assert named in body["errors"][0]["message"]


@pytest.mark.parametrize("max_hops", [0, 4])
def test_bad_paths_arguments_are_bad_user_input(demo_client: TestClient, max_hops: int) -> None:
    body = gql(demo_client, PATHS, **{"from": SAMUEL, "to": BRIGHTWAVE, "maxHops": max_hops})
    assert codes(body) == ["BAD_USER_INPUT"]
    assert "'maxHops' must be between 1 and 3" in body["errors"][0]["message"]


def test_an_unreadable_scope_is_forbidden(demo_client: TestClient) -> None:
    body = gql(demo_client, GRAPH, seed={"id": SAMUEL}, scope="private")
    assert codes(body) == ["FORBIDDEN"]


def test_an_edit_shows_in_the_next_graph(client: TestClient, demo_vault: Path) -> None:
    seed = {"id": "people/samuel-okafor"}
    before = graph(client, seed=seed, hops=1, fanOut=100, maxPaths=100)
    note = demo_vault / "people" / "samuel-okafor.md"
    note.write_text(note.read_text() + "\nNow also with [[Tidepool Ventures]].\n")
    after = graph(client, seed=seed, hops=1, fanOut=100, maxPaths=100)

    def shape(result: dict[str, Any]) -> list[tuple[list[str], str]]:
        # Locators carry the file revision, which the edit changed: compare without them.
        return [(p["nodes"], p["edges"][0]["relation"]) for p in result["paths"]]

    new = [p for p in shape(after) if p not in shape(before)]
    assert new == [([SAMUEL, "orgs/tidepool-ventures"], "links_to")]
    assert len(shape(after)) == len(shape(before)) + 1
    assert after["meta"]["snapshot"] != before["meta"]["snapshot"]


def test_a_write_by_another_process_is_picked_up(
    client: TestClient, demo_vault: Path, settings: Settings
) -> None:
    seed = {"id": "people/samuel-okafor"}
    links = {"hops": 1, "relations": ["links_to"], "fanOut": 100, "maxPaths": 100}
    before = graph(client, seed=seed, **links)
    assert "orgs/tidepool-ventures" not in [p["nodes"][-1] for p in before["paths"]]
    note = demo_vault / "people" / "samuel-okafor.md"
    note.write_text(note.read_text() + "\nSee [[Tidepool Ventures]].\n")
    # What `almanac reconcile` does from another process: its own store and reconciler.
    store = temporal.Store.open(
        settings.db_path, fingerprint=settings.config.fingerprint(temporal.FINGERPRINT)
    )
    try:
        temporal.Reconciler(store, settings.vault, settings.config).reconcile(now_us=1)
    finally:
        store.close()
    result = graph(client, seed=seed, **links)
    assert "orgs/tidepool-ventures" in [p["nodes"][-1] for p in result["paths"]]


CONSISTENT = """query($id: ID!) {
  record(id: $id) { links { target { id } } }
  graph(seed: {id: $id}, direction: OUT, relations: ["links_to"], hops: 1,
        fanOut: 100, maxPaths: 100) { paths { nodes } }
}"""


def hold_after_commit(services: Services) -> threading.Event:
    """Hold the next reconcile after its COMMIT, before its graph is published, until a request
    waits for that graph (`Services.view_waits` moves). The event is set once it holds."""
    waits = services.view_waits
    committing, held = threading.Event(), threading.Event()

    def trace(sql: str) -> None:
        if sql == "COMMIT":
            committing.set()
        elif committing.is_set() and not held.is_set():  # the first statement after it
            held.set()
            limit = time.monotonic() + 10
            while services.view_waits == waits and time.monotonic() < limit:
                time.sleep(0.001)

    services.store.conn.set_trace_callback(trace)
    return held


def test_one_request_reads_one_snapshot_and_its_graph_while_reconciles_apply(
    demo_vault: Path, tmp_path: Path
) -> None:
    """I5: the record's links and the graph's link edges of one response always agree.

    A request arrives between a reconcile's commit and the publication of the graph it
    committed. With the watcher it has nothing left to reconcile, so its read transaction sees
    the new generation at once: it must wait for that generation's graph (`view_waits`
    counts it), never pair it with the graph before. The reconcile is held in that window
    for real: the first statement its connection runs after the COMMIT waits (a trace callback
    of that sqlite3 connection) until the request waits.
    """
    settings = Settings.build(vault=demo_vault, state=tmp_path / "state.db", watch=True)
    note = demo_vault / "people" / "samuel-okafor.md"
    original = note.read_text()
    variants = [original + "\n[[Tidepool Ventures]] and [[Open Geo Foundation]].\n", original]
    app = create_app(settings)
    services = app.state.services
    assert services.watcher is not None, "inotify watcher did not start"
    seen: list[frozenset[str]] = []
    with LocalClient(app) as client:
        for i, text in enumerate(variants, start=1):
            waits = services.view_waits
            held = hold_after_commit(services)
            note.write_text(text)
            writer = threading.Thread(target=services.reconcile_now, kwargs={"now_us": i})
            writer.start()
            try:
                assert held.wait(timeout=30), "the reconcile did not commit"
                body = data(client, CONSISTENT, id=SAMUEL)
            finally:
                writer.join()
                services.store.conn.set_trace_callback(None)
            assert services.view_waits == waits + 1  # the request came in the window
            linked = {link["target"]["id"] for link in body["record"]["links"] if link["target"]}
            walked = {p["nodes"][-1] for p in body["graph"]["paths"]}
            assert walked == linked - {SAMUEL}
            seen.append(frozenset(walked))
    assert seen[0] - seen[1] == {"orgs/tidepool-ventures", "orgs/open-geo-foundation"}


def test_without_a_kept_graph_only_a_traversal_builds_it(settings: Settings) -> None:
    # A CLI run (`almanac query`, `check`) opens the services this way: no projection up front.
    with LocalClient(create_app(settings, graph=False)) as client:
        services = client.app.state.services  # type: ignore[attr-defined]
        assert services.projection is None
        data(client, '{ timeline(entity: "people/ada-lopez", first: 1) { total } }')
        assert services.projection is None
        found = data(client, '{ graph(seed: {id: "people/ada-lopez"}, hops: 1) { status } }')
        assert found["graph"]["status"] == "FOUND"
        assert services.projection is not None and services.keeps_graph
