"""Where the memory of a served state goes: the reconciler's memory and the graph projection.

    python bench/memory.py --state /tmp/s100k.db [--top 25]
    PYTHONPATH=/some/older/checkout python bench/memory.py ...   # the same against other code

Loads what `almanac serve` holds after start-up, in this process under `tracemalloc`: the
reconciler's memory (`Memory.load`), then the projection from the compact file beside the state
(`<state>.graph`; built from the database and written first if it does not match). Prints, for
each, the memory still allocated once loaded and the `--top` source lines that allocated it
(size, number of blocks). The interpreter, the modules and SQLite's caches are not counted: the
server's resident size is these plus ~160 MB at 100,000 notes (bench/startup.py measures it).
"""

from __future__ import annotations

import argparse
import gc
import linecache
import sys
import tracemalloc
from pathlib import Path

# This script's folder holds bench/graph.py: the `graph` package is the checkout's (the installed
# one, or the first PYTHONPATH entry).
if Path(sys.path[0] or ".").resolve() == Path(__file__).resolve().parent:
    del sys.path[0]

from almanac import graph, temporal
from almanac.temporal import FINGERPRINT
from almanac.temporal.reconcile.memory import Memory


def _lines(after: tracemalloc.Snapshot, before: tracemalloc.Snapshot, top: int) -> list[str]:
    out = []
    for stat in after.compare_to(before, "lineno")[:top]:
        frame = stat.traceback[0]
        name = frame.filename.split("site-packages/")[-1]
        code = linecache.getline(frame.filename, frame.lineno).strip()[:80]
        out.append(
            f"{stat.size_diff / 1e6:8.1f} MB {stat.count_diff:>9}  {name}:{frame.lineno}  {code}"
        )
    return out


def _traced(snapshot: tracemalloc.Snapshot) -> int:
    return sum(stat.size for stat in snapshot.statistics("filename"))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--state", type=Path, required=True)
    parser.add_argument("--top", type=int, default=25)
    args = parser.parse_args()
    store = temporal.Store.open(
        args.state, fingerprint=temporal.VaultConfig().fingerprint(FINGERPRINT)
    )
    generation, commit = temporal.commit_stamp(store)
    stamp = graph.CompactStamp(store.fingerprint, generation, commit)
    compact = args.state.with_name(args.state.name + ".graph")
    if graph.read_rows(compact, stamp) is None:
        with store.read() as reader:
            graph.write_rows(compact, stamp, *graph.Projection.build(reader).rows())
    gc.collect()
    gc.disable()  # as the loads themselves: nothing is collected in between
    tracemalloc.start()
    before = tracemalloc.take_snapshot()
    with store.read() as reader:
        memory = Memory.load(reader.conn)
    loaded = tracemalloc.take_snapshot()
    print(f"reconciler memory: {(_traced(loaded) - _traced(before)) / 1e6:.1f} MB")
    print("\n".join(_lines(loaded, before, args.top)))
    rows = graph.read_rows(compact, stamp)
    assert rows is not None
    projection = graph.Projection.from_rows(rows.notes, rows.edges)
    del rows
    built = tracemalloc.take_snapshot()
    print(f"graph projection: {(_traced(built) - _traced(loaded)) / 1e6:.1f} MB")
    print("\n".join(_lines(built, loaded, args.top)))
    assert memory is not None and projection is not None  # kept to the end
    store.close()


if __name__ == "__main__":
    main()
