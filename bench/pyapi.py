"""The Python API's cost: one traversal through `kb.graph` (typed helper, in process), through
`kb.query` (the GraphQL document in process) and over HTTP (a real uvicorn server on loopback),
in one run, the three alternating call by call.

    python bench/pyapi.py --vault /tmp/pyapi-vault --state /tmp/pyapi.db [--notes 2000] [--runs 30]

Generates the vault (bench/generate.py) when the folder does not exist. The seeds are the
person with the most neighbours (a hub) and one of median degree among the first 50 people.
Every call keeps the freshness promise with the watcher (one inotify read). The document asks
for every field the helper returns, so the three do the same work. Prints one JSON object;
figures go into bench/README.md.
"""

from __future__ import annotations

import argparse
import json
import socket
import statistics
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import httpx2
import uvicorn
from generate import generate

import almanac
from almanac.api.app import create_app
from almanac.api.settings import Settings

REF = "id kind type title"
LOCATOR = "locator { path startLine endLine revision }"
META = """meta { snapshot freshness { queriedAt scannedAt indexedAt }
  coverage { complete issueCount issues { code path line field recordId message } } degraded }"""
GRAPH = f"""query($id: ID!) {{ graph(seed: {{id: $id}}, hops: 3, fanOut: 25, maxPaths: 100) {{
  status seeds {{ {REF} }} candidates {{ {REF} }} nodes {{ {REF} hop }}
  paths {{ nodes edges {{ relation from to direction record {LOCATOR} }} }}
  limits {{ reason nodeId available }} {META} }} }}"""
LOOKUP = f"""query($name: String!) {{ lookup(name: $name) {{ status record {{ {REF} }}
  candidates {{ {REF} }} {META} }} }}"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--vault", type=Path, required=True)
    parser.add_argument("--state", type=Path, required=True)
    parser.add_argument("--notes", type=int, default=2000, help="notes of a generated vault")
    parser.add_argument("--runs", type=int, default=30)
    args = parser.parse_args()
    out: dict[str, object] = {}
    if not args.vault.exists():
        generate(args.vault, args.notes)
    start = time.perf_counter()
    kb = almanac.open(args.vault, state=args.state, watch=True)
    out["open_s"] = round(time.perf_counter() - start, 2)
    out["records"] = kb.status().record_count
    people = [r.id for r, _ in zip(kb.records(type="person"), range(50), strict=False)]
    degree = sorted((len(kb.graph(p, hops=1, fan_out=100, max_paths=100).nodes), p) for p in people)
    seeds = {"hub": degree[-1][1], "ordinary": degree[len(degree) // 2][1]}
    out["seeds"] = seeds

    settings = Settings.build(vault=args.vault, state=args.state, watch=True)
    app = create_app(settings)
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.05)
    url = f"http://127.0.0.1:{port}/graphql"
    try:
        with httpx2.Client() as client:

            def post(query: str, variables: dict[str, str]) -> None:
                response = client.post(url, json={"query": query, "variables": variables})
                assert response.status_code == 200 and "errors" not in response.json()

            def query(document: str, variables: dict[str, str]) -> None:
                assert "errors" not in kb.query(document, variables)

            for name, seed in seeds.items():
                paths = len(kb.graph(seed, hops=3, fan_out=25, max_paths=100).paths)
                out[f"{name}_paths"] = paths
                out |= _alternate(
                    f"traverse_{name}",
                    {
                        "helper": lambda s=seed: kb.graph(s, hops=3, fan_out=25, max_paths=100),
                        "query": lambda s=seed: query(GRAPH, {"id": s}),
                        "http": lambda s=seed: post(GRAPH, {"id": s}),
                    },
                    args.runs,
                )
            hub = seeds["hub"]
            out |= _alternate(
                "lookup",
                {
                    "helper": lambda: kb.lookup(hub),
                    "query": lambda: query(LOOKUP, {"name": hub}),
                    "http": lambda: post(LOOKUP, {"name": hub}),
                },
                args.runs,
            )
    finally:
        server.should_exit = True
        thread.join()
        kb.close()
    print(json.dumps(out, indent=1), flush=True)


def _alternate(name: str, calls: dict[str, Callable[[], object]], runs: int) -> dict[str, float]:
    """The median milliseconds of each call, the calls taking turns run by run (a machine
    that slows down slows all of them), after one warm-up call each."""
    times: dict[str, list[float]] = {way: [] for way in calls}
    for call in calls.values():
        call()
    for _ in range(runs):
        for way, call in calls.items():
            start = time.perf_counter()
            call()
            times[way].append((time.perf_counter() - start) * 1000)
    return {f"{name}_{way}_ms": round(statistics.median(t), 3) for way, t in times.items()}


if __name__ == "__main__":
    main()
