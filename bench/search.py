"""Search benchmark: median latency of 1-, 2- and 3-token searches, of a search with five keyword
variants and of `AUTO` searches that take the relaxed pass, in-process and over HTTP.

    python bench/search.py [--vault DIR] [--state FILE] [--notes 100000] [--runs 15]

Uses the vault at --vault (generated there with bench/generate.py when it does not exist),
reconciles it into --state (cold when the file is new, timed), then measures each query
`--runs` times after one warm-up: `temporal.search_records` over one read transaction
(first page of 20, default filter), and the same search through the Starlette app
(TestClient, watcher on, so the freshness check is a drained inotify queue), once the graph
has loaded in the background. Prints one JSON object; figures go into bench/README.md by
hand. The floor of each query is the bare FTS5 statement ranking the same matches
(`ORDER BY bm25(...) LIMIT 20`, no filter, no join). The retrieval searches (`RETRIEVAL`)
have no floor; their `retrieval` figures are printed too.
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import json
import sqlite3
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import floors
import generate
from starlette.testclient import TestClient

from almanac import temporal
from almanac.api.app import create_app
from almanac.api.settings import Settings
from almanac.temporal.store import SEARCH_KEYS_FILL, search_fill, search_table

# The generator's sentences draw on one small vocabulary, so these words are in most notes:
# the worst case (every match is scored and sorted). Names are rare.
QUERIES = {
    "common_1": "deadline",
    "common_2": "deadline workshop",
    "common_3": "deadline workshop vendor",
    "rare_1": "Dijkstra",
    "rare_2": "Guido Dijkstra",
    "rare_3": "Guido Dijkstra analysis",
}
# (query, variants, strategy): five variants of names (each a few hundred matches); AUTO
# searches no record matches as given, so that the relaxed pass runs, around rare words and
# around common ones (which it counts up to half the scope, then drops).
RETRIEVAL = {
    "variants_5": (
        "Guido Dijkstra",
        ["Edsger Dijkstra", "Grace Hopper", "Ada Lovelace", "Linus Torvalds", "Barbara Liskov"],
        temporal.SearchStrategy.STRICT,
    ),
    "auto_rare": ("Guido Dijkstra zeppelin", [], temporal.SearchStrategy.AUTO),
    "auto_common": ("deadline workshop zeppelin", [], temporal.SearchStrategy.AUTO),
}
GQL_RETRIEVAL = (
    "query($q: String!, $v: [String!], $s: SearchStrategy) {"
    " search(query: $q, variants: $v, strategy: $s) { total"
    " hits { record { id } score matches matchQuality snippet { text startLine } }"
    " retrieval { reason candidatePool perQueryMatches fallback { keywords survived } } } }"
)
GQL = (
    "query($q: String!) { search(query: $q) { total"
    " hits { record { id } score matches snippet { text startLine } } } }"
)


def measure(vault: Path, state: Path, notes: int, runs: int) -> dict[str, object]:
    out: dict[str, object] = {}
    if not vault.exists():
        generate.generate(vault, notes)
    out["notes"] = sum(1 for _ in vault.rglob("*.md"))
    fresh = not state.exists()
    config = temporal.VaultConfig()
    # The app's fingerprint, so that the app below opens this state as it is.
    store = temporal.Store.open(state, fingerprint=config.fingerprint(temporal.FINGERPRINT))
    rec = temporal.Reconciler(store, vault, config)
    start = time.perf_counter()
    rec.reconcile(now_us=1)
    out["cold_reconcile_s" if fresh else "reconcile_s"] = time.perf_counter() - start
    with store.read() as reader:
        for name, query in QUERIES.items():
            page = _search(reader, query)
            out[f"{name}_total"] = page.total
            out[f"{name}_in_process_ms"] = 1000 * floors.median(
                functools.partial(_search, reader, query), runs, warm=True
            )
            # Floor: the bare FTS5 query that ranks the same matches (no filter, no join, no
            # snippets), in the same run.
            floor = functools.partial(_fts_floor, reader.conn, query)
            out[f"{name}_fts_floor_ms"] = 1000 * floors.median(floor, runs, warm=True)
        for name, (query, variants, strategy) in RETRIEVAL.items():
            search = functools.partial(_search, reader, query, variants=variants, strategy=strategy)
            page = search()
            out[f"{name}_total"] = page.total
            out[f"{name}_retrieval"] = {
                "reason": page.retrieval.reason.name,
                "per_query_matches": page.retrieval.per_query_matches,
                "candidate_pool": page.retrieval.candidate_pool,
                "fallback": (
                    dataclasses.asdict(page.retrieval.fallback)
                    if page.retrieval.fallback is not None
                    else None
                ),
            }
            out[f"{name}_in_process_ms"] = 1000 * floors.median(search, runs, warm=True)
    start = time.perf_counter()
    with store.write() as conn:
        for statement in (*search_fill("default"), *SEARCH_KEYS_FILL):
            conn.execute(statement)
    out["fts_rebuild_s"] = time.perf_counter() - start
    store.close()
    settings = Settings.build(vault=vault, state=state, watch=True)
    with TestClient(
        create_app(settings), base_url="http://127.0.0.1", client=("127.0.0.1", 0)
    ) as client:
        # Time the searches once the graph has loaded in the background (and written its
        # compact file): meanwhile it takes the CPU and the GIL from them, 2-20 times slower.
        for thread in threading.enumerate():
            if thread.name == "almanac-graph":
                thread.join()
        for name, query in QUERIES.items():
            body = {"query": GQL, "variables": {"q": query}}
            answer = client.post("/graphql", json=body).json()
            assert answer["data"]["search"]["total"] == out[f"{name}_total"], answer
            out[f"{name}_http_ms"] = 1000 * floors.median(
                functools.partial(client.post, "/graphql", json=body), runs, warm=True
            )
        for name, (query, variants, strategy) in RETRIEVAL.items():
            body = {
                "query": GQL_RETRIEVAL,
                "variables": {"q": query, "v": variants or None, "s": strategy.name},
            }
            answer = client.post("/graphql", json=body).json()
            assert answer["data"]["search"]["total"] == out[f"{name}_total"], answer
            out[f"{name}_http_ms"] = 1000 * floors.median(
                functools.partial(client.post, "/graphql", json=body), runs, warm=True
            )
    out["peak_rss_mb"] = floors.peak_rss_mb()
    return out


def _search(
    reader: temporal.Reader,
    query: str,
    *,
    variants: Sequence[str] = (),
    strategy: temporal.SearchStrategy = temporal.SearchStrategy.STRICT,
) -> temporal.queries.SearchPage:
    return temporal.search_records(
        reader,
        query,
        mode=temporal.MatchMode.ALL,
        flt=temporal.RecordFilter(),
        scopes=["default"],
        first=20,
        variants=variants,
        strategy=strategy,
    )


def _fts_floor(conn: sqlite3.Connection, query: str) -> list[object]:
    expression = " AND ".join(f'"{t}"' for t in temporal.queries.search_tokens(query))
    table = search_table("default")  # the vault's one scope
    sql = (
        f"SELECT rowid FROM {table} WHERE {table} MATCH ? ORDER BY bm25({table}, 8, 6, 1) LIMIT 20"
    )
    return conn.execute(sql, (expression,)).fetchall()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--vault", type=Path, default=Path("/tmp/bench100k-search"))
    parser.add_argument("--state", type=Path, default=Path("/tmp/bench100k-search.db"))
    parser.add_argument("--notes", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    print(json.dumps(measure(args.vault, args.state, args.notes, args.runs)), flush=True)


if __name__ == "__main__":
    main()
