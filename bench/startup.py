"""Time to first answer of each query kind after `almanac serve` starts, and memory after warm-up.

    python bench/startup.py --vault /tmp/v100k --state /tmp/s100k.db [--warmup 200] [--runs 1]

Runs on an existing vault and state file (reconcile it first: this measures a restart). Starts a
real `almanac serve` (a subprocess, `--watch off` unless `--watch`) and, from the moment it is
started, one client thread per query kind (`/healthz`, `lookup`, `records`, `search`,
`timeline`, `chronicleDay`, `graph`) sends its query again and again until the first answer
without errors; a `graph` answered `INDEX_UNAVAILABLE` with `reason: graph_warming` counts as
not yet. Then `--warmup` rounds of the mixed queries (one of each kind but /healthz, rotating
entities) and the server's resident memory (`/proc/PID/status`, and PSS from
`smaps_rollup`), then SIGTERM. Prints one JSON object per run.

`PYTHONPATH` is passed on, so `PYTHONPATH=/some/checkout python bench/startup.py ...` measures
that checkout's server with this script.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import httpx2 as httpx
import yaml
from serving import free_port

ROOT = Path(__file__).resolve().parent.parent

KINDS: dict[str, str] = {
    "lookup": "query($n: String!) { lookup(name: $n) { status record { id } } }",
    "records": '{ records(first: 5, filter: {type: "person"}) { total nodes { id } } }',
    "search": "query($n: String!) { search(query: $n, first: 5) { total hits { record { id } } } }",
    "timeline": (
        "query($e: ID!) { timeline(entity: $e, first: 20) { total entries { record { id } } } }"
    ),
    "chronicle_day": (
        '{ chronicleDay(date: "2026-03-04", timezone: "Europe/Berlin", first: 20) { total } }'
    ),
    "graph": (
        "query($e: ID!) { graph(seed: {id: $e}, hops: 2, fanOut: 10, maxPaths: 20)"
        " { nodes { id } paths { nodes edges { relation } } } }"
    ),
}


def _memory_mb(pid: int) -> dict[str, float]:
    found: dict[str, float] = {}
    with open(f"/proc/{pid}/status", encoding="ascii") as f:
        for line in f:
            name, _, value = line.partition(":")
            if name in ("VmRSS", "RssAnon", "RssFile", "VmHWM"):
                found[name] = round(int(value.split()[0]) / 1024, 1)
    try:
        with open(f"/proc/{pid}/smaps_rollup", encoding="ascii") as f:
            for line in f:
                if line.startswith("Pss:"):
                    found["Pss"] = round(int(line.split()[1]) / 1024, 1)
    except OSError:
        pass
    return found


def _people(vault: Path, count: int) -> list[tuple[str, str]]:
    """(id, first alias, else title) of the first `count` person notes, read from the files
    (`people/` of a generated or a legislators vault)."""
    found: list[tuple[str, str]] = []
    for path in sorted((vault / "people").rglob("*.md")):
        text = path.read_text(encoding="utf-8")
        if not text.startswith("---\n"):
            continue
        fields = yaml.safe_load(text[4:].split("\n---\n", 1)[0])
        if not isinstance(fields, dict) or fields.get("type") != "person":
            continue
        rid = str(fields.get("id") or path.relative_to(vault).with_suffix(""))
        aliases = fields.get("aliases") or []
        name = aliases[0] if isinstance(aliases, list) and aliases else fields.get("title")
        if name:
            found.append((rid, str(name)))
        if len(found) == count:
            break
    return found


def _variables(kind: str, person: tuple[str, str]) -> dict[str, str]:
    if kind in ("timeline", "graph"):
        return {"e": person[0]}
    if kind in ("lookup", "search"):
        return {"n": person[1]}
    return {}


def run(vault: Path, state: Path, *, warmup: int, watch: bool) -> dict[str, Any]:
    people = _people(vault, 50)
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
    command += ["--port", str(port), "--watch", "on" if watch else "off"]
    first: dict[str, float] = {}
    warming_answers: dict[str, int] = {"graph": 0}
    wrong: list[str] = []
    with tempfile.TemporaryFile() as log:
        started = time.monotonic()
        # `python -m` puts the working directory first on sys.path: run from the checkout
        # measured (the first PYTHONPATH entry, else this one).
        cwd = os.environ.get("PYTHONPATH", "").split(os.pathsep)[0] or ROOT
        server = subprocess.Popen(command, cwd=cwd, stdout=log, stderr=subprocess.STDOUT)
        try:

            def until_answered(kind: str) -> None:
                with httpx.Client(base_url=base, timeout=60) as client:
                    while time.monotonic() - started < 600:
                        try:
                            if kind == "healthz":
                                ok = client.get("/healthz").status_code == 200
                            else:
                                body = {
                                    "query": KINDS[kind],
                                    "variables": _variables(kind, people[0]),
                                }
                                answer = client.post("/graphql", json=body).json()
                                errors = answer.get("errors") or []
                                ok = not errors
                                for error in errors:
                                    extensions = error.get("extensions", {})
                                    if extensions.get("reason") == "graph_warming":
                                        warming_answers[kind] = warming_answers.get(kind, 0) + 1
                                    else:
                                        wrong.append(f"{kind}: {error}")
                        except httpx.TransportError:
                            ok = False
                        if ok:
                            first[kind] = round(time.monotonic() - started, 2)
                            return
                        time.sleep(0.05)

            threads = [
                threading.Thread(target=until_answered, args=(kind,))
                for kind in ("healthz", *KINDS)
            ]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
            before = _memory_mb(server.pid)
            print(json.dumps({"first_answer_s": first, "memory_mb": before}), file=sys.stderr)
            with httpx.Client(base_url=base, timeout=60) as client:
                for n in range(warmup):
                    person = people[n % len(people)]
                    for kind, query in KINDS.items():
                        body = {"query": query, "variables": _variables(kind, person)}
                        answer = client.post("/graphql", json=body).json()
                        if answer.get("errors"):
                            wrong.append(f"{kind}: {answer['errors']}")
            after = _memory_mb(server.pid)
        finally:
            server.terminate()
            server.wait(timeout=120)
        log.seek(0)
        tail = log.read().decode("utf-8", "replace").splitlines()[-5:]
    return {
        "first_answer_s": first,
        "graph_warming_answers": warming_answers["graph"],
        "memory_mb_at_first_answers": before,
        "memory_mb_after_warmup": after,
        "warmup_rounds": warmup,
        "errors": wrong[:5],
        "server_log_tail": tail,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--vault", type=Path, required=True)
    parser.add_argument("--state", type=Path, required=True)
    parser.add_argument("--warmup", type=int, default=200, help="rounds of mixed queries")
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--watch", action="store_true", help="serve with the watcher on")
    args = parser.parse_args()
    for _ in range(args.runs):
        result = run(args.vault, args.state, warmup=args.warmup, watch=args.watch)
        result["load_average"] = os.getloadavg()
        print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
