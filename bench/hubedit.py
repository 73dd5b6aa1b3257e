"""One hub edit in process: the reconcile of a note named by thousands, its body edited.

    python bench/hubedit.py --vault V --state S [--edits 5] [--code DIR] [--paths]

Loads the reconciler's memory from an existing state file (reconciled before), then appends a
line to each of the five most-referenced notes in turn (as `bench/load.py` does in its warm-up)
and times each reconcile: the full stat scan, or with `--paths` only the edited file named (as
the watcher names it). `--code DIR` imports temporal from another checkout (for old/new side
by side: run the two alternately, each on its own copy of the vault and the state). Prints one
JSON object: each edit's seconds, SQL statements and paths resolved again, and the peak RSS.
"""

from __future__ import annotations

import argparse
import json
import resource
import sqlite3
import statistics
import sys
import time
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--vault", type=Path, required=True)
    parser.add_argument("--state", type=Path, required=True)
    parser.add_argument("--edits", type=int, default=5)
    parser.add_argument("--code", type=Path, default=Path(__file__).resolve().parent.parent)
    parser.add_argument("--paths", action="store_true", help="name the edited file")
    args = parser.parse_args()
    sys.path.insert(0, str(args.code))
    from almanac import temporal

    assert Path(temporal.__file__).is_relative_to(args.code), temporal.__file__

    with sqlite3.connect(args.state) as db:
        hubs = [
            row[0]
            for row in db.execute(
                "SELECT resolved_path FROM targets WHERE status = 'resolved'"
                " GROUP BY resolved_path ORDER BY count(*) DESC, resolved_path LIMIT 5"
            )
        ]
    store = temporal.Store.open(args.state)
    rec = temporal.Reconciler(store, args.vault, temporal.VaultConfig())
    begin = time.perf_counter()
    rec.reconcile(now_us=1)
    load_s = time.perf_counter() - begin
    statements = 0

    def count(_sql: str) -> None:
        nonlocal statements
        statements += 1

    edits = []
    for i in range(args.edits):
        hub = hubs[i % len(hubs)]
        note = args.vault / hub
        note.write_text(note.read_text().rstrip("\n") + f"\nEdited in process {i}.\n")
        statements = 0
        store.conn.set_trace_callback(count)
        begin = time.perf_counter()
        done = rec.reconcile(now_us=2 + i, paths=[hub] if args.paths else None)
        seconds = time.perf_counter() - begin
        store.conn.set_trace_callback(None)
        edits.append(
            {"hub": hub, "s": round(seconds, 3), "sql": statements,
             "resolved": len(done.resolved_paths)}
        )  # fmt: skip
    store.close()
    print(
        json.dumps(
            {
                "code": str(args.code),
                "load_s": round(load_s, 2),
                "median_s": round(statistics.median(e["s"] for e in edits), 3),
                "edits": edits,
                "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
            }
        )
    )


if __name__ == "__main__":
    main()
