"""Where a soaking server's memory goes: `bench/load.py`'s load against a server that samples
its own heaps.

    python bench/soak_probe.py [--notes 2000] [--clients 16] [--seconds 600] [--warmup 30]
        [--every 10] [--trace 60,590] [--frames 8] [--top 30] [--out FILE]

Starts the server as `almanac serve` does, but from this script (`--serve`, a child process),
with a thread that every `--every` seconds records: the resident size and its anonymous and
file-backed parts, glibc's `mallinfo2` (bytes in use, free inside its heaps, mmapped), its
arenas (`malloc_info`), Python's allocated blocks, SQLite's heap (`sqlite3_memory_used`), the
threads, the store's idle read connections, and the sizes of the server's caches. With
`--trace T1,T2` the child runs under `tracemalloc` (`--frames` deep, slower) and compares a
snapshot at T2 seconds with one at T1 by traceback. The parent drives the load with
`bench/load.py` (the same clients and editor) and prints one JSON object: load's report and
the samples. Nothing here is in the server's code: the hooks are this script's.
"""

from __future__ import annotations

import argparse
import ctypes
import gc
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
import tracemalloc
from pathlib import Path
from typing import Any

# This script's folder holds bench/graph.py: the `graph` package must be the checkout's.
_HERE = Path(__file__).resolve().parent
if Path(sys.path[0] or ".").resolve() == _HERE:
    del sys.path[0]


class _Mallinfo2(ctypes.Structure):
    _fields_ = [
        (name, ctypes.c_size_t)
        for name in (
            "arena",
            "ordblks",
            "smblks",
            "hblks",
            "hblkhd",
            "usmblks",
            "fsmblks",
            "uordblks",
            "fordblks",
            "keepcost",
        )
    ]


_LIBC = ctypes.CDLL(None)
_LIBC.mallinfo2.restype = _Mallinfo2
_SQLITE = ctypes.CDLL("libsqlite3.so.0")
_SQLITE.sqlite3_memory_used.restype = ctypes.c_int64
_SQLITE.sqlite3_memory_highwater.restype = ctypes.c_int64
_SQLITE.sqlite3_memory_highwater.argtypes = [ctypes.c_int]


def _status() -> dict[str, float]:
    found = {}
    with open("/proc/self/status", encoding="ascii") as f:
        for line in f:
            name, _, value = line.partition(":")
            if name in ("VmRSS", "RssAnon", "RssFile", "Threads"):
                number = int(value.split()[0])
                found[name] = number if name == "Threads" else round(number / 1024, 2)
    return found


def _arenas() -> int:
    """How many glibc arenas (`malloc_info`'s heaps)."""
    buffer = ctypes.c_char_p()
    size = ctypes.c_size_t()
    _LIBC.open_memstream.restype = ctypes.c_void_p
    stream = _LIBC.open_memstream(ctypes.byref(buffer), ctypes.byref(size))
    _LIBC.malloc_info(0, ctypes.c_void_p(stream))
    _LIBC.fclose(ctypes.c_void_p(stream))
    text = ctypes.string_at(buffer, size.value).decode()
    _LIBC.free(buffer)
    return len(re.findall(r"<heap nr=", text))


def _sample(app: Any, begin: float) -> dict[str, Any]:
    info = _LIBC.mallinfo2()
    found: dict[str, Any] = {"t": round(time.monotonic() - begin, 1), **_status()}
    found["malloc_used_mb"] = round((info.uordblks + info.hblkhd) / 2**20, 2)
    found["malloc_free_mb"] = round(info.fordblks / 2**20, 2)
    found["malloc_mmapped_mb"] = round(info.hblkhd / 2**20, 2)
    found["malloc_arena_mb"] = round(info.arena / 2**20, 2)
    found["arenas"] = _arenas()
    found["py_blocks"] = sys.getallocatedblocks()
    found["sqlite_mb"] = round(_SQLITE.sqlite3_memory_used() / 2**20, 2)
    if app is not None:
        services = app.state.services
        store = services.store
        found["idle_readers"] = len(store._readers)
        found["views"] = len(services._views)
        answers = getattr(app.state.graphql, "answers", None)
        if answers is not None:
            found["answers_kb"] = round(answers.size / 1024, 1)
    return found


def serve(argv: list[str], every: float, trace: list[float], frames: int, top: int) -> None:
    """The server, as `almanac serve`, with the sampler thread (the child)."""
    import almanac.api.app
    from almanac.api.cli import main

    if trace:
        tracemalloc.start(frames)
    made: list[Any] = []
    create = almanac.api.app.create_app

    def create_app(*args: Any, **kwargs: Any) -> Any:
        app = create(*args, **kwargs)
        made.append(app)
        return app

    almanac.api.app.create_app = create_app
    out = Path(os.environ["PROBE_OUT"])

    def sampler() -> None:
        while not made or not out.with_suffix(".go").exists():
            time.sleep(0.2)
        begin = time.monotonic()
        snapshots: dict[float, tracemalloc.Snapshot] = {}
        todo = sorted(trace)
        with out.open("a", encoding="utf-8") as f:
            while True:
                now = time.monotonic() - begin
                sample = _sample(made[0], begin)
                if todo and now >= todo[0]:
                    gc.collect()
                    snapshots[todo.pop(0)] = tracemalloc.take_snapshot()
                    sample["snapshot"] = True
                    if len(snapshots) == 2:
                        first, last = (snapshots[k] for k in sorted(snapshots))
                        filters = [tracemalloc.Filter(False, tracemalloc.__file__)]
                        stats = last.filter_traces(filters).compare_to(
                            first.filter_traces(filters), "traceback"
                        )
                        lines = []
                        for stat in stats[:top]:
                            where = [
                                f"{fr.filename.split('site-packages/')[-1]}:{fr.lineno}"
                                for fr in stat.traceback
                            ]
                            lines.append(
                                {
                                    "kb": round(stat.size_diff / 1024, 1),
                                    "count": stat.count_diff,
                                    "where": where,
                                }
                            )
                        sample["trace_diff"] = lines
                        sample["traced_mb"] = [
                            round(sum(s.size for s in x.statistics("filename")) / 2**20, 2)
                            for x in (first, last)
                        ]
                f.write(json.dumps(sample) + "\n")
                f.flush()
                time.sleep(every)

    threading.Thread(target=sampler, daemon=True, name="probe").start()
    sys.exit(main(["serve", *argv]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--notes", type=int, default=2000)
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--seconds", type=float, default=600.0)
    parser.add_argument("--warmup", type=float, default=30.0)
    parser.add_argument("--every", type=float, default=10.0)
    parser.add_argument("--trace", default="", help="T1,T2: tracemalloc snapshots at these s")
    parser.add_argument("--frames", type=int, default=8)
    parser.add_argument("--top", type=int, default=30)
    parser.add_argument("--out", type=Path)
    parser.add_argument("--serve", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    trace = [float(t) for t in args.trace.split(",") if t]
    if args.serve is not None:
        serve(args.serve, args.every, trace, args.frames, args.top)
        return
    sys.path.insert(0, str(_HERE))
    import generate
    import load
    from serving import free_port

    with tempfile.TemporaryDirectory() as tmp:
        vault = Path(tmp) / "vault"
        generate.generate(vault, args.notes)
        out = args.out or Path(tmp) / "samples.jsonl"
        out.unlink(missing_ok=True)
        port = free_port()
        command = [sys.executable, __file__, "--every", str(args.every), "--trace", args.trace]
        command += ["--frames", str(args.frames), "--top", str(args.top), "--serve"]
        command += ["--vault", str(vault), "--state", str(Path(tmp) / "state.db")]
        command += ["--port", str(port)]
        with tempfile.TemporaryFile() as log:
            server = subprocess.Popen(
                command,
                cwd=_HERE.parent,
                stdout=log,
                stderr=subprocess.STDOUT,
                env={**os.environ, "PROBE_OUT": str(out)},
            )
            go = out.with_suffix(".go")
            try:
                # The sampler's clock starts with the load's: `.go` appears as the load begins
                # (the first `_memory_mb` sample is taken right after the clients start).
                original = load._cpu_s

                def cpu_s(pid: int) -> float:
                    go.touch()
                    return original(pid)

                load._cpu_s = cpu_s
                report = load._drive(
                    f"http://127.0.0.1:{port}",
                    server.pid,
                    vault,
                    ready=lambda: True,
                    clients=args.clients,
                    seconds=args.seconds,
                    warmup=args.warmup,
                    hubs_every=0,
                )
            finally:
                server.terminate()
                server.wait(timeout=30)
                log.seek(0)
                tail = log.read().decode("utf-8", "replace")[-3000:]
        report.pop("samples")
        samples = [json.loads(line) for line in out.read_text().splitlines()]
        report["probe"] = samples
        report["server_log_tail"] = tail
    print(json.dumps(report), flush=True)


if __name__ == "__main__":
    main()
