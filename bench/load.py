"""A mixed load against a real `almanac serve`: keep-alive clients, one note edited every second.

    python bench/load.py [--notes 2000] [--clients 16] [--seconds 60] [--warmup 10] [--vault DIR]
        [--hubs-every N] [--workers N] [--state FILE] [--floor] [--mix timeline=50,graph=20,...]

Starts `python -m api serve` over a generated vault (or `--vault`, any vault), then `--clients`
threads, each with one keep-alive connection, send timelines (`first: 50`), chronicle days,
graph walks (2 hops) and lookups, drawn by `--mix` (default the serving issue's: 50 % timeline,
20 % chronicleDay, 20 % graph, 10 % lookup), while another thread rewrites one note a second
(the five most referenced first, so the largest reconciles fall in the warm-up;
`--hubs-every N`: again every N edits, for short runs that repeat them at known times). What
the queries ask for is read from the state database once the server answers: the entities
with a timeline (their ids, for `timeline` and `graph`), the titles of the people (of every
record if there is no `type: person`) for `lookup`, the days on which something occurred for
`chronicleDay`, and the most referenced notes for the editor; so any vault works. Prints one
JSON object: requests/s, p50/p95/p99 (and max) per query kind, failures (any non-200 or
GraphQL error), the server's CPU time per request (the clients share the machine's cores:
requests/s alone mixes in their cost), and its resident memory sampled every second, with
its growth from the end of `--warmup` to the end.
With `--workers N` the server runs N worker processes (`almanac serve --workers N`): CPU is
summed over them, memory is that of each worker (RSS and PSS, `/proc/PID/smaps_rollup`) and
their sum. `--floor` runs the same clients against a plain Starlette app under uvicorn (as
many workers) that answers each kind with a precomputed answer of the real server: what HTTP,
JSON and the clients cost alone.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from contextlib import closing
from pathlib import Path
from typing import Any

import generate
import httpx2 as httpx
from serving import free_port

ROOT = Path(__file__).resolve().parent.parent

KINDS = {
    "timeline": (
        "query($e: ID!) { timeline(entity: $e, first: 50) { total entries { record { id }"
        " date { text } clock } meta { snapshot } } }"
    ),
    "chronicle_day": (
        'query($d: String!) { chronicleDay(date: $d, timezone: "Europe/Berlin", first: 20)'
        " { total entries { record { id } date { text } } } }"
    ),
    "graph": (
        "query($e: ID!) { graph(seed: {id: $e}, hops: 2, fanOut: 10, maxPaths: 20) { nodes { id }"
        " paths { nodes edges { relation } } limits { reason } } }"
    ),
    "lookup": "query($n: String!) { lookup(name: $n) { status record { id } candidates { id } } }",
}
MIX = "timeline=50,chronicle_day=20,graph=20,lookup=10"  # the serving issue's


def _memory_mb(pid: int) -> dict[str, float]:
    """The process's resident size, and its anonymous and file-backed parts (the database file
    is memory-mapped: its touched pages count in the resident size), in MB; with workers, the
    sum of theirs."""
    found = {"VmRSS": 0.0, "RssAnon": 0.0, "RssFile": 0.0}
    for one in _workers(pid):
        with open(f"/proc/{one}/status", encoding="ascii") as f:
            for line in f:
                name, _, value = line.partition(":")
                if name in found:
                    found[name] = round(found[name] + int(value.split()[0]) / 1024, 1)
    return found


def _workers(pid: int) -> list[int]:
    """The processes serving: the server, or the workers of a supervisor."""
    found = []
    for one in _family(pid)[1:] or [pid]:
        try:
            with open(f"/proc/{one}/cmdline", "rb") as f:
                if b"resource_tracker" not in f.read():
                    found.append(one)
        except OSError:
            continue
    return found


def _cpu_s(pid: int) -> float:
    """User and system CPU seconds the process and its workers have used (all threads)."""
    total = 0.0
    for one in _family(pid):
        try:
            with open(f"/proc/{one}/stat", encoding="ascii") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return total


def _family(pid: int) -> list[int]:
    """The process and its descendants (a supervisor's workers)."""
    found, todo = [], [pid]
    while todo:
        one = todo.pop()
        found.append(one)
        try:
            with open(f"/proc/{one}/task/{one}/children", encoding="ascii") as f:
                todo.extend(int(c) for c in f.read().split())
        except OSError:
            pass
    return found


def _workers_mb(pid: int) -> dict[str, dict[str, float]]:
    """RSS and PSS of each worker process (the children running the app), in MB."""
    found = {}
    for one in _workers(pid):
        try:
            with open(f"/proc/{one}/smaps_rollup", encoding="ascii") as f:
                sizes = {
                    line.split()[0][:-1]: int(line.split()[1]) / 1024
                    for line in f
                    if line.startswith(("Rss:", "Pss:"))
                }
        except OSError:
            continue
        found[str(one)] = {k.lower(): round(v, 1) for k, v in sizes.items()}
    return found


def _picks(state: Path) -> dict[str, list[str]]:
    """What the clients ask about, read from the server's state database (read-only): the ids
    of the records with a timeline (associated with something), the titles of the people (of
    every record if none is a person), the days on which something occurred, and the paths of
    the five most referenced notes (by resolved links and references)."""
    with closing(sqlite3.connect(f"file:{state}?mode=ro", uri=True)) as db:
        entities = [
            row[0]
            for row in db.execute(
                "SELECT n.id FROM notes n JOIN (SELECT DISTINCT entity FROM associations) a"
                " ON a.entity = n.path WHERE n.eligible = 1 ORDER BY n.id"
            )
        ]
        names = [
            row[0]
            for row in db.execute(
                "SELECT DISTINCT title FROM notes WHERE eligible = 1 AND type = 'person'"
                " ORDER BY title"
            )
        ] or [
            row[0]
            for row in db.execute("SELECT DISTINCT title FROM notes WHERE eligible = 1 ORDER BY 1")
        ]
        days = [
            row[0]
            for row in db.execute(
                "SELECT DISTINCT substr(text, 1, 10) FROM dates WHERE field = 'occurred_at'"
                " AND precision IN ('day', 'instant') ORDER BY 1"
            )
        ]
        hubs = [
            row[0]
            for row in db.execute(
                "SELECT resolved_path FROM targets WHERE status = 'resolved'"
                " GROUP BY resolved_path ORDER BY count(*) DESC, resolved_path LIMIT 5"
            )
        ]
    if not entities or not names or not days:
        raise RuntimeError(f"the vault has nothing to ask about: {state}")
    return {"entities": entities, "names": names, "days": days, "hubs": hubs}


def _mix(text: str) -> dict[str, float]:
    """`kind=weight,...` as weights by kind (every kind of KINDS, weights not all zero)."""
    weights = {}
    for part in text.split(","):
        kind, _, weight = part.partition("=")
        if kind.strip() not in KINDS:
            raise argparse.ArgumentTypeError(f"unknown kind {kind!r}: one of {', '.join(KINDS)}")
        weights[kind.strip()] = float(weight)
    if sum(weights.values()) <= 0 or min(weights.values()) < 0:
        raise argparse.ArgumentTypeError(f"weights must be >= 0, not all 0: {text!r}")
    return weights


def _percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * share))]


def run(
    vault: Path,
    state: Path,
    *,
    clients: int,
    seconds: float,
    warmup: float,
    config: Path | None = None,
    hubs_every: int = 0,
    workers: int = 1,
    floor: dict[str, Any] | None = None,
    mix: dict[str, float] | None = None,
) -> dict[str, Any]:
    """Drive the server (or with `floor`, answers by query text: a Starlette app serving
    them under uvicorn) and measure it."""
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    command = [
        sys.executable,
        "-m",
        "almanac",
        "serve",
        "--vault",
        str(vault),
        "--state",
        str(state),
    ]
    if config is not None:
        command += ["--config", str(config)]
    if workers != 1:
        command += ["--workers", str(workers)]
    env = None
    if floor is not None:
        env = {**os.environ, "FLOOR_ANSWERS": json.dumps(floor)}
        command = [sys.executable, str(Path(__file__).parent / "floor_app.py")]
        command += ["--workers", str(workers)]
    with tempfile.TemporaryFile() as log:
        server = subprocess.Popen(
            [*command, "--port", str(port)],
            cwd=ROOT,
            stdout=log,
            stderr=subprocess.STDOUT,
            env=env,
        )

        def ready(entity: str) -> bool:
            """Whether every worker's graph is ready: several workers say so in the log (read
            with `pread`: the server shares this file's offset); one answers a graph query
            about `entity` without `graph_warming`."""
            if floor is not None:
                return True
            if workers == 1:
                query = "query($e: ID!) { graph(seed: {id: $e}, hops: 1) { nodes { id } } }"
                answer = httpx.post(
                    f"{base}/graphql", json={"query": query, "variables": {"e": entity}}, timeout=60
                ).json()
                return "graph_warming" not in json.dumps(answer.get("errors") or [])
            text = os.pread(log.fileno(), 1 << 20, 0).decode("utf-8", "replace")
            return text.count(" ready: RSS ") >= workers

        try:
            return _drive(
                base,
                server.pid,
                vault,
                state,
                mix=mix or _mix(MIX),
                ready=ready,
                clients=clients,
                seconds=seconds,
                warmup=warmup,
                hubs_every=hubs_every,
            )
        finally:
            server.terminate()
            server.wait(timeout=30)


def _drive(
    base: str,
    pid: int,
    vault: Path,
    state: Path,
    *,
    mix: dict[str, float],
    clients: int,
    seconds: float,
    warmup: float,
    hubs_every: int,
    ready: Callable[[str], bool],
) -> dict[str, Any]:
    started = time.monotonic()
    while True:
        try:
            if httpx.get(f"{base}/healthz", timeout=1).status_code == 200:
                break
        except httpx.TransportError:
            time.sleep(0.1)
        if time.monotonic() - started > 300:
            raise RuntimeError("server did not start")
    startup_s = time.monotonic() - started
    # Keep-alive clients stay with the worker that accepted them: connect once every worker
    # is ready, or a worker still loading its graph gets none of them for the whole run.
    picks = _picks(state)
    while not ready(picks["entities"][0]):
        if time.monotonic() - started > 300:
            raise RuntimeError("the workers did not all get ready")
        time.sleep(0.1)
    ready_s = time.monotonic() - started
    samples: dict[str, Any] = {}  # one answer per query, for the floor
    entities, names, days = picks["entities"], picks["names"], picks["days"]
    notes = sorted(vault.rglob("*.md"))
    stop = threading.Event()
    latencies: dict[str, list[float]] = {kind: [] for kind in KINDS}
    failures: list[str] = []
    lock = threading.Lock()

    def client_loop(index: int) -> None:
        pick = random.Random(index)
        kinds, weights = list(mix), list(mix.values())
        with httpx.Client(base_url=base, timeout=60) as client:
            while not stop.is_set():
                kind = pick.choices(kinds, weights)[0]
                variables = {
                    "timeline": {"e": pick.choice(entities)},
                    "chronicle_day": {"d": pick.choice(days)},
                    "graph": {"e": pick.choice(entities)},
                    "lookup": {"n": pick.choice(names)},
                }[kind]
                begin = time.perf_counter()
                try:
                    response = client.post(
                        "/graphql", json={"query": KINDS[kind], "variables": variables}
                    )
                    elapsed = time.perf_counter() - begin
                    body = response.json()
                    ok = response.status_code == 200 and not body.get("errors")
                    if ok:
                        samples.setdefault(KINDS[kind], body)
                except (httpx.HTTPError, ValueError) as exc:
                    elapsed, ok, body = time.perf_counter() - begin, False, {"error": repr(exc)}
                with lock:
                    latencies[kind].append(elapsed)
                    if not ok:
                        failures.append(f"{kind}: {json.dumps(body)[:300]}")

    # The notes most referenced by others first: editing one re-resolves all its referrers,
    # the largest reconcile of the run, so the heaps reach their high-water mark in the warm-up.
    hubs = [vault / path for path in picks["hubs"]]

    def editor() -> None:
        pick = random.Random(99)
        count = 0
        while not stop.wait(1.0):
            turn = count % hubs_every if hubs_every else count
            note = hubs[turn] if turn < len(hubs) else pick.choice(notes)
            text = note.read_text(encoding="utf-8")
            note.write_text(text.rstrip("\n") + f"\nEdited {count}.\n", encoding="utf-8")
            count += 1

    per_worker: list[tuple[float, dict[str, dict[str, float]]]] = []
    rss: list[tuple[float, float]] = []
    anon: list[tuple[float, float]] = []
    mapped: list[tuple[float, float]] = []
    threads = [threading.Thread(target=client_loop, args=(i,)) for i in range(clients)]
    threads.append(threading.Thread(target=editor))
    begin = time.monotonic()
    cpu_before = _cpu_s(pid)
    for thread in threads:
        thread.start()
    while (now := time.monotonic() - begin) < seconds:
        memory = _memory_mb(pid)
        rss.append((round(now, 1), memory["VmRSS"]))
        anon.append((round(now, 1), memory["RssAnon"]))
        mapped.append((round(now, 1), memory["RssFile"]))
        per_worker.append((round(now, 1), _workers_mb(pid)))
        time.sleep(1.0)
    stop.set()
    for thread in threads:
        thread.join()
    elapsed = time.monotonic() - begin
    cpu = _cpu_s(pid) - cpu_before
    after_warmup = [mb for t, mb in rss if t >= warmup]
    anon_after = [mb for t, mb in anon if t >= warmup]
    total = sum(len(v) for v in latencies.values())
    return {
        "samples": samples,
        "notes": len(notes),
        "clients": clients,
        "seconds": round(elapsed, 1),
        "startup_s": round(startup_s, 2),
        "graph_ready_s": round(ready_s, 2),
        "requests": total,
        "requests_per_s": round(total / elapsed, 1),
        "server_cpu_s": round(cpu, 1),
        "server_cpu_ms_per_request": round(1000 * cpu / total, 3) if total else None,
        "mix": mix,
        "picks": {k: len(v) for k, v in picks.items()},
        "hubs": picks["hubs"],
        "failures": len(failures),
        "failure_examples": failures[:5],
        "ms": {
            kind: {
                "n": len(values),
                "p50": round(1000 * statistics.median(values), 1),
                "p95": round(1000 * _percentile(values, 0.95), 1),
                "p99": round(1000 * _percentile(values, 0.99), 1),
                "max": round(1000 * max(values), 1),
            }
            for kind, values in latencies.items()
            if values
        },
        "rss_mb_at_warmup": after_warmup[0] if after_warmup else None,
        "rss_mb_end": rss[-1][1] if rss else None,
        "rss_mb_max_after_warmup": max(after_warmup) if after_warmup else None,
        "rss_growth_after_warmup": (
            round(max(after_warmup) / after_warmup[0] - 1, 4) if after_warmup else None
        ),
        "anon_mb_at_warmup": anon_after[0] if anon_after else None,
        "anon_mb_end": anon[-1][1] if anon else None,
        "anon_growth_after_warmup": (
            round(max(anon_after) / anon_after[0] - 1, 4) if anon_after else None
        ),
        "workers_mb_end": per_worker[-1][1] if per_worker else None,
        "workers_pss_mb_end": (
            round(sum(w.get("pss", 0) for w in per_worker[-1][1].values()), 1)
            if per_worker
            else None
        ),
        "rss_mb": rss,
        "anon_mb": anon,
        "file_mb": mapped,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--vault", type=Path, help="an existing vault (it is edited!)")
    parser.add_argument("--notes", type=int, default=2000)
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--warmup", type=float, default=10.0)
    parser.add_argument("--config", type=Path, help="the server's TOML configuration")
    parser.add_argument("--workers", type=int, default=1, help="almanac serve --workers N")
    parser.add_argument("--state", type=Path, help="an existing state file (it is written!)")
    parser.add_argument(
        "--floor", action="store_true", help="a Starlette app of precomputed answers instead"
    )
    parser.add_argument(
        "--mix", type=_mix, default=MIX, help=f"weights of the query kinds (default {MIX})"
    )
    parser.add_argument(
        "--hubs-every",
        type=int,
        default=0,
        help="edit the five hubs again every N edits (0: only first)",
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        vault = args.vault
        if vault is None:
            vault = Path(tmp) / "vault"
            generate.generate(vault, args.notes)
        state = args.state or Path(tmp) / "state.db"
        result = run(
            vault,
            state,
            clients=args.clients,
            seconds=args.seconds,
            warmup=args.warmup,
            config=args.config,
            hubs_every=args.hubs_every,
            workers=args.workers,
            mix=args.mix,
        )
        samples = result.pop("samples")
        if args.floor:  # the same clients against precomputed answers, right after
            floor = run(
                vault,
                state,
                clients=args.clients,
                seconds=args.seconds,
                warmup=args.warmup,
                workers=args.workers,
                floor=samples,
                mix=args.mix,
            )
            floor.pop("samples")
            result["floor"] = {k: floor[k] for k in ("requests_per_s", "ms", "failures")}
            result["floor"]["server_cpu_ms_per_request"] = floor["server_cpu_ms_per_request"]
            result["ratio_to_floor"] = round(result["requests_per_s"] / floor["requests_per_s"], 3)
    print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
