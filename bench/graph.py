"""Graph benchmark: projection build, traversal and paths, next to a raw networkx bounded BFS.

    python bench/graph.py --vault /tmp/bench100k --state /tmp/bench100k-graph.db [--runs 30]

Uses an existing generated vault (bench/generate.py; `--notes 100000` has five hubs with
~20,000 references each) and a state file (reconciled first if needed). Measures, in one run:
the projection build (time; memory by tracemalloc in a second build); a 3-hop traversal (fan-out
25, 100 paths) as a library call, first from `--runs` nodes of median degree never walked before
(cold: the edges' locators are made then), then from the biggest hub and from an ordinary node,
`--runs` × 10 times each, alternating run by run with the floor (ratios taken per run); a
`paths` query; the same queries through the GraphQL schema in-process (resolver, context,
types) and over HTTP (a real uvicorn server on loopback). The floor is a raw bounded BFS on the
same networkx graph: first 25 neighbours per node in the graph's own order, no sorting, no
filters, no evidence, stop at 100 reached nodes. Prints one JSON object; figures go into
bench/README.md.
"""

from __future__ import annotations

import argparse
import gc
import itertools
import json
import socket
import statistics
import sys
import threading
import time
import tracemalloc
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import floors
import httpx2
import networkx as nx
import uvicorn

from almanac import graph
from almanac.api.app import create_app
from almanac.api.context import Context
from almanac.api.schema import build_schema
from almanac.api.services import now_us
from almanac.api.settings import Settings

GRAPH = """query($id: ID!) { graph(seed: {id: $id}, hops: 3, fanOut: 25, maxPaths: 100) {
  status nodes { id hop } paths { nodes edges { relation from to direction record
  locator { path startLine endLine revision } } } limits { reason nodeId available }
  meta { snapshot degraded } } }"""
COMPACT = """query($id: ID!) { graph(seed: {id: $id}, hops: 3, fanOut: 25, maxPaths: 100) {
  status paths { nodes } limits { reason nodeId available } meta { degraded } } }"""
LOOKUP = """query($id: String!) { lookup(name: $id) { status record { id } meta { degraded } } }"""
PATHS = """query($from: ID!, $to: ID!) { paths(from: $from, to: $to, maxHops: 3) {
  status paths { nodes edges { relation record direction } } limits { reason available }
  meta { degraded } } }"""


def median_ms(action: Callable[[], object], runs: int) -> float:
    return round(floors.median(action, runs, warm=True) * 1000, 3)


def raw_bfs(g: Any, seed: str, *, hops: int, fan_out: int, max_paths: int) -> int:
    """The floor: networkx's own bounded BFS, both directions, first `fan_out` neighbours."""

    def neighbours(node: str) -> Iterator[str]:
        return itertools.islice(itertools.chain(g.successors(node), g.predecessors(node)), fan_out)

    found = nx.generic_bfs_edges(g, seed, neighbors=neighbours, depth_limit=hops)
    return sum(1 for _ in itertools.islice(found, max_paths))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--vault", type=Path, required=True)
    parser.add_argument("--state", type=Path, required=True)
    parser.add_argument("--runs", type=int, default=30)
    args = parser.parse_args()
    out: dict[str, object] = {}
    settings = Settings.build(vault=args.vault, state=args.state, config=None, watch=True)
    start = time.perf_counter()
    app = create_app(settings)  # reconcile (cold when the state is new) and projection
    out["open_s"] = round(time.perf_counter() - start, 2)
    services = app.state.services
    store = services.store
    out["records"] = store.conn.execute("SELECT count(*) FROM notes WHERE eligible = 1").fetchone()[
        0
    ]

    gc.collect()
    start = time.perf_counter()
    projection = graph.Projection.build(store)
    out["projection_build_s"] = round(time.perf_counter() - start, 2)
    g = projection.graphs["default"]
    out["nodes"] = g.number_of_nodes()
    out["edges"] = g.number_of_edges()
    del projection
    gc.collect()
    tracemalloc.start()
    projection = graph.Projection.build(store)
    current, _peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    out["projection_memory_mb"] = round(current / 2**20)
    del projection
    gc.collect()

    projection = services.projection
    g = projection.graphs["default"]
    degrees = sorted((g.degree(n), n) for n in g)
    hub_degree, hub = degrees[-1]
    ordinary_degree, ordinary = degrees[len(degrees) // 2]
    out["hub"] = {"id": hub, "edges": hub_degree}
    out["ordinary"] = {"id": ordinary, "edges": ordinary_degree}
    view = services.projection.view
    limits = graph.TraversalLimits(hops=3, max_paths=100, fan_out=25)
    edges = graph.EdgeFilter()

    def seeds(name: str) -> graph.Seeds:
        node = view.node("default", name)
        assert node is not None
        return graph.Seeds(graph.LookupStatus.FOUND, (("default", node.ref),))

    walk = graph.traverse(view, seeds(ordinary), limits=limits, edges=edges)
    target = walk.paths[-1].nodes[-1]
    out["paths_target"] = {"id": target, "hops": len(walk.paths[-1].edges)}
    runs = args.runs
    # Cold: the first traversal from each of `runs` nodes of median degree never walked before
    # (their edges' locators not yet made), each next to the raw BFS from the same node.
    cold = [n for _, n in degrees[len(degrees) // 3 : 2 * len(degrees) // 3 : 997]][:runs]
    pairs = []
    for node in cold:
        found = seeds(node)
        start = time.perf_counter()
        raw_bfs(g, node, hops=3, fan_out=25, max_paths=100)
        middle = time.perf_counter()
        graph.traverse(view, found, limits=limits, edges=edges)
        pairs.append((middle - start, time.perf_counter() - middle))
    out["raw_bfs_cold_ms"] = round(statistics.median(p[0] for p in pairs) * 1000, 3)
    out["traverse_cold_library_ms"] = round(statistics.median(p[1] for p in pairs) * 1000, 3)
    out["ratio_cold_library"] = round(statistics.median(p[1] / p[0] for p in pairs), 2)
    for name, node in (("hub", hub), ("ordinary", ordinary)):
        found = seeds(node)
        floor_ms, thing_ms, ratio = floors.paired_ms(
            lambda node=node: raw_bfs(g, node, hops=3, fan_out=25, max_paths=100),  # type: ignore[misc]
            lambda found=found: graph.traverse(view, found, limits=limits, edges=edges),  # type: ignore[misc]
            runs * 10,
        )
        out[f"raw_bfs_{name}_ms"] = floor_ms
        out[f"traverse_{name}_library_ms"] = thing_ms
        out[f"ratio_{name}_library"] = ratio
    source, goal = seeds(ordinary), seeds(target)
    out["paths_library_ms"] = median_ms(
        lambda: graph.find_paths(view, source, goal, limits=limits, edges=edges), runs
    )

    schema = build_schema(settings.limits)

    def execute(query: str, variables: dict[str, str]) -> None:
        context = Context(services, None, now_us(), deadline=time.monotonic() + 10)
        try:
            result = schema.execute_sync(query, variable_values=variables, context_value=context)
        finally:
            context.close()
        assert result.errors is None, result.errors

    # What any query costs through the schema (parse, validation, limits, context, meta).
    out["lookup_in_process_ms"] = median_ms(lambda: execute(LOOKUP, {"id": hub}), runs)
    out["traverse_hub_in_process_ms"] = median_ms(lambda: execute(GRAPH, {"id": hub}), runs)
    out["traverse_hub_in_process_compact_ms"] = median_ms(
        lambda: execute(COMPACT, {"id": hub}), runs
    )
    out["traverse_ordinary_in_process_ms"] = median_ms(
        lambda: execute(GRAPH, {"id": ordinary}), runs
    )
    out["paths_in_process_ms"] = median_ms(
        lambda: execute(PATHS, {"from": ordinary, "to": target}), runs
    )

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.05)
    url = f"http://127.0.0.1:{port}/graphql"
    with httpx2.Client() as client:

        def post(query: str, variables: dict[str, str]) -> None:
            response = client.post(url, json={"query": query, "variables": variables})
            assert response.status_code == 200 and "errors" not in response.json(), response.text

        out["lookup_http_ms"] = median_ms(lambda: post(LOOKUP, {"id": hub}), runs)
        out["traverse_hub_http_ms"] = median_ms(lambda: post(GRAPH, {"id": hub}), runs)
        out["traverse_hub_http_compact_ms"] = median_ms(lambda: post(COMPACT, {"id": hub}), runs)
        out["traverse_ordinary_http_ms"] = median_ms(lambda: post(GRAPH, {"id": ordinary}), runs)
        out["paths_http_ms"] = median_ms(
            lambda: post(PATHS, {"from": ordinary, "to": target}), runs
        )
        out["status_http_ms"] = median_ms(lambda: post("{ status { recordCount } }", {}), runs)
        # One note edited (a link to the hub added: the hub's adjacency is sorted again), then
        # the next query: reconcile of the watched path, graph update, publication, query.
        # The note's bytes are put back afterwards.
        node = view.node("default", ordinary)
        assert node is not None
        note = args.vault / node.path
        original = note.read_bytes()
        counter = itertools.count()

        def edit() -> None:
            note.write_bytes(original + f"\nSee [[{hub}]] ({next(counter)}).\n".encode())

        def edit_then(action: Callable[[], object]) -> Callable[[], object]:
            return lambda: (edit(), action())

        try:
            out["edit_then_reconcile_and_graph_update_ms"] = median_ms(
                edit_then(lambda: services.reconcile_now(now_us=now_us())), 10
            )
            out["edit_then_graph_query_http_ms"] = median_ms(
                edit_then(lambda: post(COMPACT, {"id": ordinary})), 10
            )
        finally:
            note.write_bytes(original)
            post(COMPACT, {"id": ordinary})
    server.should_exit = True
    thread.join()
    for name in ("hub", "ordinary"):
        floor = out[f"raw_bfs_{name}_ms"]
        value = out[f"traverse_{name}_in_process_ms"]
        assert isinstance(floor, float) and isinstance(value, float)
        out[f"ratio_{name}_in_process"] = round(value / floor, 2)
    compact = out["traverse_hub_in_process_compact_ms"]
    assert isinstance(compact, float)
    out["ratio_hub_in_process_compact"] = round(compact / out["raw_bfs_hub_ms"], 2)  # type: ignore[operator]
    print(json.dumps(out, indent=1), flush=True)


if __name__ == "__main__":
    main()
