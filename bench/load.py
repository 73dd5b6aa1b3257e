"""A mixed load against a real `almanac serve`: keep-alive clients, one note edited every second.

    python bench/load.py [--notes 2000] [--clients 16] [--seconds 60] [--warmup 10] [--vault DIR]
        [--hubs-every N] [--workers N] [--state FILE] [--floor]

Starts `python -m api serve` over a generated vault (or `--vault`), then `--clients` threads,
each with one keep-alive connection, send timelines, chronicle days, graph walks and lookups
in turn while another thread rewrites one note a second (the five most referenced first, so
the largest reconciles fall in the warm-up; `--hubs-every N`: again every N edits, for
short runs that repeat them at known times). Prints one JSON object: requests/s,
p50/p95/p99 per query kind, failures (any non-200 or GraphQL error), the server's CPU time per
request (the clients share the machine's cores: requests/s alone mixes in their cost), and its
resident memory sampled every second, with its growth from the end of `--warmup` to the end.
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
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import generate
import httpx2 as httpx
from serving import free_port

ROOT = Path(__file__).resolve().parent.parent

PEOPLE = '{ records(first: 100, filter: {type: "person"}) { nodes { id title } } }'
KINDS = {
    "timeline": (
        "query($e: ID!) { timeline(entity: $e, first: 20) { total entries { record { id }"
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


def _most_referenced(notes: list[Path], count: int) -> list[Path]:
    """The notes most often named by others' links and reference fields (by file name)."""
    named: dict[str, int] = {}
    for note in notes:
        text = note.read_text(encoding="utf-8")
        for target in re.findall(r"\[\[([^\]|#]+)", text) + re.findall(
            r"^(?:entities|owner|subject|from|to|source): \[?([^\n\]]+)", text, re.M
        ):
            for name in target.split(","):
                key = name.strip().strip("'\"").rsplit("/", 1)[-1]
                named[key] = named.get(key, 0) + 1
    return sorted(notes, key=lambda n: (-named.get(n.stem, 0), str(n)))[:count]


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
) -> dict[str, Any]:
    """Drive the server (or with `floor`, answers by query text: a Starlette app serving
    them under uvicorn) and measure it."""
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    command = [sys.executable, "-m", "api", "serve", "--vault", str(vault), "--state", str(state)]
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

        def ready() -> bool:
            """Whether every worker said its graph is ready (one worker: /healthz is enough).
            Read with `pread`: the server shares this file's offset."""
            if workers == 1 or floor is not None:
                return True
            text = os.pread(log.fileno(), 1 << 20, 0).decode("utf-8", "replace")
            return text.count(" ready: RSS ") >= workers

        try:
            return _drive(
                base,
                server.pid,
                vault,
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
    *,
    clients: int,
    seconds: float,
    warmup: float,
    hubs_every: int,
    ready: Callable[[], bool],
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
    while not ready():
        if time.monotonic() - started > 300:
            raise RuntimeError("the workers did not all get ready")
        time.sleep(0.1)
    with httpx.Client(base_url=base, timeout=30) as client:
        found = client.post("/graphql", json={"query": PEOPLE}).json()
        people = found["data"]["records"]["nodes"]
    samples: dict[str, Any] = {PEOPLE: found}  # one answer per query, for the floor
    entities = [p["id"] for p in people]
    names = [p["title"] for p in people]
    days = [f"2026-0{m}-{d:02d}" for m in range(1, 10) for d in range(1, 29)]
    notes = sorted(vault.rglob("*.md"))
    stop = threading.Event()
    latencies: dict[str, list[float]] = {kind: [] for kind in KINDS}
    failures: list[str] = []
    lock = threading.Lock()

    def client_loop(index: int) -> None:
        pick = random.Random(index)
        kinds = list(KINDS)
        with httpx.Client(base_url=base, timeout=60) as client:
            turn = index
            while not stop.is_set():
                kind = kinds[turn % len(kinds)]
                turn += 1
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
    hubs = _most_referenced(notes, 5)

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
        "requests": total,
        "requests_per_s": round(total / elapsed, 1),
        "server_cpu_s": round(cpu, 1),
        "server_cpu_ms_per_request": round(1000 * cpu / total, 3) if total else None,
        "failures": len(failures),
        "failure_examples": failures[:5],
        "ms": {
            kind: {
                "n": len(values),
                "p50": round(1000 * statistics.median(values), 1),
                "p95": round(1000 * _percentile(values, 0.95), 1),
                "p99": round(1000 * _percentile(values, 0.99), 1),
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
            )
            floor.pop("samples")
            result["floor"] = {k: floor[k] for k in ("requests_per_s", "ms", "failures")}
            result["floor"]["server_cpu_ms_per_request"] = floor["server_cpu_ms_per_request"]
            result["ratio_to_floor"] = round(result["requests_per_s"] / floor["requests_per_s"], 3)
    print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
