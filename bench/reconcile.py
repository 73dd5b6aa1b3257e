"""Reconcile benchmark: cold, no-change and one-file-change reconciles next to the floors.

    python bench/reconcile.py --notes 10000 [--notes 100000] [--runs 5] [--cold-runs 3]

Generates each vault (deterministic, bench/generate.py) in a temp folder,
measures the floors (bench/floors.py) and the reconciles in the same run, and
prints one JSON object per size. Cold reconciles alternate with their floors
(`--cold-runs` pairs, medians and the median per-pair ratio). Figures go into
bench/README.md by hand.
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import floors
import generate
from starlette.testclient import TestClient

from almanac import temporal
from almanac.api.app import create_app
from almanac.api.settings import Settings
from almanac.vault.watcher import Watcher


def measure(notes: int, runs: int, cold_runs: int) -> dict[str, object]:
    with tempfile.TemporaryDirectory() as tmp:
        vault = Path(tmp) / "vault"
        generate.generate(vault, notes)
        db = Path(tmp) / "state.db"
        out: dict[str, object] = {"notes": notes}
        out["floor_insert_one_row_per_note_s"] = floors.insert_floor(notes, runs=1)
        # Side by side: a cold reconcile into a new state file, then the floors, `cold_runs`
        # times; the ratio is taken per pair (a busy minute of the machine hits both).
        pairs = [_cold_pair(vault, db, Path(tmp) / "floor.db") for _ in range(cold_runs)]
        for key in pairs[0]:
            out[key] = statistics.median(pair[key] for pair in pairs)
        out["cold_over_floor_sum_each"] = [round(pair["cold_over_floor_sum"], 3) for pair in pairs]
        store = temporal.Store.open(db)  # the last pair's state file
        rec = temporal.Reconciler(store, vault, temporal.VaultConfig())
        # Side by side, run after run: the stat floor, then a no-change reconcile.
        stat, scan, ratio = floors.paired(
            lambda: floors.stat_floor(vault), lambda: rec.reconcile(now_us=2), runs * 3
        )
        out["floor_stat_s"], out["no_change_scan_s"], out["no_change_over_stat_floor"] = (
            stat,
            scan,
            ratio,
        )
        target = sorted(vault.rglob("*.md"))[notes // 2]
        original = target.read_text()
        rel = target.relative_to(vault).as_posix()
        counter = iter(range(10_000))

        def edit() -> None:
            target.write_text(original + f"\nedit {next(counter)}\n")

        out["one_change_scan_s"] = floors.median(lambda: rec.reconcile(now_us=3), runs, before=edit)
        watcher = Watcher(str(vault))
        out["one_change_watched_s"] = floors.median(
            lambda: rec.reconcile(now_us=4, paths=watcher.drain()), runs, before=edit
        )
        out["no_change_watched_check_s"] = floors.median(lambda: watcher.drain(), runs * 20)
        watcher.close()
        out["changed_path"] = rel
        store.close()
        out.update(_through_the_api(vault, db, edit, runs))
        out["peak_rss_mb"] = floors.peak_rss_mb()
        return out


def _cold_pair(vault: Path, db: Path, floor_db: Path) -> dict[str, float]:
    """One cold reconcile into a new state file, then the floors of the same work."""
    for path in (db, floor_db):
        for suffix in ("", "-wal", "-shm"):
            Path(f"{path}{suffix}").unlink(missing_ok=True)
    out: dict[str, float] = {}
    store = temporal.Store.open(db)
    rec = temporal.Reconciler(store, vault, temporal.VaultConfig())
    os.sync()  # each timed write pays for its own I/O, not the write-back of earlier ones
    start = time.perf_counter()
    rec.reconcile(now_us=1)
    out["cold_s"] = time.perf_counter() - start
    start = time.perf_counter()
    store.settle()  # the log copied into the database file, in the background since the commit
    out["cold_checkpoint_after_s"] = time.perf_counter() - start
    store.close()
    out["floor_read_hash_s"] = floors.read_hash_floor(vault, runs=1)
    out["floor_frontmatter_s"] = floors.frontmatter_floor(vault, runs=1)
    out["floor_insert_s"] = same_rows_insert_floor(db, floor_db)
    out["floor_sum_s"] = (
        out["floor_read_hash_s"] + out["floor_frontmatter_s"] + out["floor_insert_s"]
    )
    out["cold_over_floor_sum"] = out["cold_s"] / out["floor_sum_s"]
    return out


def _through_the_api(
    vault: Path, db: Path, edit: Callable[[], None], runs: int
) -> dict[str, float]:
    """In-process GraphQL, watcher on: an unchanged-vault query, and edit-then-query."""
    settings = Settings.build(vault=vault, state=db, watch=True)
    query = {"query": "{ records(first: 1) { total meta { snapshot } } }"}
    with TestClient(
        create_app(settings), base_url="http://127.0.0.1", client=("127.0.0.1", 0)
    ) as client:
        client.post("/graphql", json=query)
        unchanged = floors.median(lambda: client.post("/graphql", json=query), runs * 4)
        edited = floors.median(lambda: client.post("/graphql", json=query), runs, before=edit)
    return {"api_query_unchanged_s": unchanged, "api_edit_then_query_s": edited}


def same_rows_insert_floor(source: Path, target: Path) -> float:
    """Raw `executemany` of the very rows a reconcile wrote, into bare tables, one transaction.

    The full-text index is filled from the same texts into a bare FTS5 table.
    """
    src = sqlite3.connect(source)
    tables = [
        "files", "notes", "dates", "spans", "sources", "facts", "associations", "targets", "names",
        "issues", "seen", "search_keys",
    ]  # fmt: skip
    schema = dict(src.execute("SELECT name, sql FROM sqlite_master WHERE type = 'table'"))
    rows = {t: src.execute(f"SELECT * FROM {t}").fetchall() for t in tables}
    texts = src.execute(
        "SELECT title, (SELECT group_concat(value, ' ') FROM json_each(aliases)), body FROM notes"
    ).fetchall()
    src.close()
    os.sync()
    dst = sqlite3.connect(target, isolation_level=None)
    dst.execute("PRAGMA journal_mode = WAL")
    dst.execute("PRAGMA synchronous = FULL")
    for table in tables:
        dst.execute(schema[table])
    start = time.perf_counter()
    dst.execute("BEGIN")
    for table, items in rows.items():
        if items:
            marks = ",".join("?" * len(items[0]))
            dst.executemany(f"INSERT INTO {table} VALUES ({marks})", items)
    # The full-text index: the same texts into a bare FTS5 table with the same tokenizer.
    dst.execute(
        "CREATE VIRTUAL TABLE fts USING fts5(title, aliases, body,"
        " tokenize='unicode61 remove_diacritics 2')"
    )
    dst.executemany("INSERT INTO fts VALUES (?, ?, ?)", texts)
    dst.execute("COMMIT")
    elapsed = time.perf_counter() - start
    dst.close()
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--notes", type=int, action="append", required=True)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--cold-runs", type=int, default=3, help="cold reconcile + floors pairs")
    args = parser.parse_args()
    for notes in args.notes:
        print(json.dumps(measure(notes, args.runs, args.cold_runs)), flush=True)


if __name__ == "__main__":
    main()
