"""Time-query benchmark: chronicle day, week, one-month range and a hub's timeline.

    python bench/chronicle.py --vault /tmp/bench100k [--state /tmp/bench100k-time.db] [--runs 30]
    python bench/chronicle.py --notes 100000              # generates the vault in a temp folder

Each query runs in-process (the GraphQL schema executed directly over the app's services: no
HTTP, no freshness check) and then over HTTP against a real `almanac serve` (uvicorn, watcher
on, one keep-alive connection), in one run; medians in milliseconds, one JSON object.

Also timed, since the unit tests pin only the bounds that keep them short: the first 2,000
occurrences of a weekly and a daily rule (a library call, with the rule instances it stepped
through), and over HTTP the answer to hostile requests a limit refuses (tokens, depth, JSON
nesting, body size) next to a 50 KB document the limits let through.
"""

from __future__ import annotations

import argparse
import functools
import http.client
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import floors
import generate
from serving import free_port

from almanac.api.context import Context
from almanac.api.schema import build_schema
from almanac.api.services import Services, now_us
from almanac.api.settings import Settings
from almanac.temporal.calendar import RecurrenceSet, Walk, parse_date_value

# Dates inside the generator's span (2024-2026): a weekday, its week, and a month.
DAY = "2025-03-12"
RULES = {"weekly_mo_th": "FREQ=WEEKLY;BYDAY=MO,TH", "daily": "FREQ=DAILY"}
_NESTED = "{ status { coverage { " + "issues { " * 200 + "code" + " }" * 200 + " } } }"
# Hostile request bodies (tests/api/test_errors.py's corpus): each refused by one limit, and a
# large document within every limit for comparison.
HOSTILE = {
    "token_bomb": json.dumps({"query": "{ " + " ".join(["__typename"] * 5000) + " }"}),
    "depth_bomb": json.dumps({"query": _NESTED}),
    "deep_json_5000": "[" * 5000 + "]" * 5000,
    "body_1mb": '{"query": "' + " " * 1_000_000 + '"}',
    "body_50kb_within_limits": json.dumps({"query": "{ status { recordCount } }" + " " * 50_000}),
}


def queries(hub: str) -> dict[str, str]:
    page = "total entries { record { id } date { text } occurrence { index } clock }"
    return {
        # Not a time query: what any query costs through the schema (parse, validate, meta).
        "floor_schema_lookup": '{ lookup(name: "nobody") { status } }',
        "chronicle_day_utc": f'{{ chronicleDay(date: "{DAY}") {{ {page} }} }}',
        "chronicle_day_berlin": (
            f'{{ chronicleDay(date: "{DAY}", timezone: "Europe/Berlin") {{ {page} }} }}'
        ),
        "chronicle_week": f'{{ chronicleDay(date: "{DAY}", week: true) {{ {page} }} }}',
        "chronicle_since_month": (
            f'{{ chronicleSince(since: "2025-03-01", until: "2025-03-31") {{ {page} }} }}'
        ),
        "timeline_hub": f'{{ timeline(entity: "{hub}") {{ {page} }} }}',
        "timeline_hub_month": (
            f'{{ timeline(entity: "{hub}", since: "2025-03-01", until: "2025-03-31")'
            f" {{ {page} }} }}"
        ),
        "timeline_hub_sources": (
            f'{{ timeline(entity: "{hub}", includeSources: true)'
            " { total entries { record { id } sources { id } } } }"
        ),
        "last_seen_hub": (
            f'{{ chronicleLastSeen(entity: "{hub}") {{ entry {{ record {{ id }} }} reason }} }}'
        ),
        "timeline_hub_by_source": (
            f'{{ timeline(entity: "{hub}", group: SOURCE) {{ total entries {{ record {{ id }}'
            " claims } } }"
        ),
    }


def measure(vault: Path, state: Path, runs: int) -> dict[str, Any]:
    out: dict[str, Any] = {"notes": sum(1 for _ in vault.rglob("*.md"))}
    settings = Settings.build(vault=vault, state=state, config=None, watch=False)
    start = time.perf_counter()
    services = Services.open(settings, now_us=now_us(), graph=False)
    out["open_and_reconcile_s"] = round(time.perf_counter() - start, 2)
    with services.store.read() as reader:
        out["spans_rows"] = reader.run("SELECT count(*) FROM spans").fetchone()[0]
        out["recurring_records"] = reader.run(
            "SELECT count(*) FROM spans WHERE recurring = 1 AND idx = -1"
        ).fetchone()[0]
        hub, refs = reader.run(
            "SELECT n.id, count(*) c FROM targets t JOIN notes n ON n.path = t.resolved_path"
            " WHERE t.field IN ('entities', 'owner', 'from', 'to', 'subject')"
            " GROUP BY t.resolved_path ORDER BY c DESC LIMIT 1"
        ).fetchone()
    out["hub"], out["hub_direct_references"] = hub, refs
    for name, rule in RULES.items():
        out[f"recurrence_first_2000_{name}"] = _first_2000(rule, runs)
    schema = build_schema()
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "almanac", "serve", "--vault", str(vault), "--state", str(state)]
        + ["--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent)},
    )
    try:
        conn = _connect(port)
        for name, query in queries(hub).items():
            # In-process runs, then HTTP runs of the same query: interleaving them would have
            # the server and this process evict each other's caches on every request.
            run = functools.partial(_in_process, services, schema, query)
            local_ms = floors.median(run, runs) * 1000
            conn = _connect(port)  # uvicorn closes a keep-alive connection idle for 5 s
            http_ms = floors.median(functools.partial(_post, conn, query), runs) * 1000
            body = _post(conn, query)
            out[name] = {
                "total": next(iter(body["data"].values())).get("total", 1),
                "in_process_ms": round(local_ms, 2),
                "http_ms": round(http_ms, 2),
            }
        for name, body in HOSTILE.items():
            status = _send(port, body)
            http_ms = floors.median(functools.partial(_send, port, body), runs) * 1000
            out[f"hostile_{name}"] = {"status": status, "http_ms": round(http_ms, 2)}
    finally:
        server.terminate()
        server.wait(timeout=30)
        services.close()
    return out


def _in_process(services: Services, schema: Any, query: str) -> None:
    """One query through the schema over the app's services, in a request context of its own."""
    context = Context(services, None, now_us())
    try:
        result = schema.execute_sync(query, context_value=context)
    finally:
        context.close()
    assert result.errors is None, result.errors


def _first_2000(rule: str, runs: int) -> dict[str, Any]:
    """The first 2,000 occurrences of `rule` from a Berlin anchor: median ms, steps taken."""
    anchor = parse_date_value("2026-01-05T10:00", tz="Europe/Berlin")
    recurrence = RecurrenceSet.of(anchor=anchor, rule=rule, tz="Europe/Berlin")
    walk = Walk()
    found, _ = recurrence.first(2000, walk=walk)
    ms = floors.median(functools.partial(recurrence.first, 2000), runs) * 1000
    return {"found": len(found), "steps": walk.steps, "ms": round(ms, 2)}


def _send(port: int, body: str) -> int:
    """POST a raw JSON body on a connection of its own (a refusal may leave the rest of the
    body unread); the HTTP status: a refusal is the expected answer."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    try:
        conn.request("POST", "/graphql", body.encode(), {"Content-Type": "application/json"})
        response = conn.getresponse()
        response.read()
        return response.status
    finally:
        conn.close()


def _connect(port: int) -> http.client.HTTPConnection:
    deadline = time.monotonic() + 600
    while True:
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
            _post(conn, "{ status { recordCount } }")
            return conn
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.5)


def _post(conn: http.client.HTTPConnection, query: str) -> dict[str, Any]:
    payload = json.dumps({"query": query})
    conn.request("POST", "/graphql", payload, {"Content-Type": "application/json"})
    response = conn.getresponse()
    body: dict[str, Any] = json.loads(response.read())
    assert "errors" not in body, body
    return body


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--vault", type=Path)
    parser.add_argument("--notes", type=int)
    parser.add_argument("--state", type=Path)
    parser.add_argument("--runs", type=int, default=30)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        vault = args.vault
        if vault is None:
            vault = Path(tmp) / "vault"
            generate.generate(vault, args.notes or 100_000)
        state = args.state or Path(tmp) / "state.db"
        print(json.dumps(measure(vault, state, args.runs), indent=1), flush=True)


if __name__ == "__main__":
    main()
