"""Floors: the least time the machine needs for each step a full reconcile must take.

A reconcile of a vault stats every note, reads and hashes the changed ones, parses their
frontmatter and writes rows to SQLite. Each floor times one of those steps alone, in plain Python
with no Almanac code, so a measured reconcile can be read as a multiple of what the hardware and
the libraries allow. Files are read through the page cache after the first run; the median of
several runs is therefore a warm-cache figure.

    python bench/floors.py VAULT [--runs 3]
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import resource
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import yaml

__all__ = [
    "frontmatter_floor",
    "insert_floor",
    "main",
    "markdown_files",
    "peak_rss_mb",
    "read_hash_floor",
    "stat_floor",
]

COLUMNS = (
    "id",
    "path",
    "type",
    "kind",
    "title",
    "aliases",
    "tags",
    "occurred_at",
    "ends_at",
    "valid_from",
    "valid_until",
    "due_at",
    "recurrence",
    "content_hash",
    "frontmatter",
)


def markdown_files(vault: Path) -> list[str]:
    """Paths of every ``*.md`` file below ``vault``, skipping dot-folders, in sorted order."""
    found: list[str] = []
    _walk(str(vault), lambda entry: found.append(entry.path))
    return sorted(found)


def stat_floor(vault: Path, *, runs: int = 1) -> float:
    """Seconds to walk ``vault`` with ``os.scandir`` and stat every note (median of ``runs``)."""

    def run() -> None:
        _walk(str(vault), lambda entry: entry.stat(follow_symlinks=False))

    return median(run, runs)


def read_hash_floor(vault: Path, *, runs: int = 1) -> float:
    """Seconds to read every note's bytes and SHA-256 them; the file list is made beforehand."""
    paths = markdown_files(vault)

    def run() -> None:
        for path in paths:
            with open(path, "rb") as file:
                hashlib.sha256(file.read()).digest()

    return median(run, runs)


def frontmatter_floor(vault: Path, *, runs: int = 1) -> float:
    """Seconds to split and ``yaml.load`` (libyaml ``CSafeLoader``) every note's frontmatter.

    The notes are read and decoded beforehand, so this times the parsing alone. A frontmatter
    block that is not valid YAML is parsed as far as libyaml goes and then skipped.
    """
    texts = [Path(path).read_bytes().decode("utf-8", "replace") for path in markdown_files(vault)]

    def run() -> None:
        for text in texts:
            block = _frontmatter(text)
            if block is not None:
                with contextlib.suppress(yaml.YAMLError):
                    yaml.load(block, Loader=yaml.CSafeLoader)

    return median(run, runs)


def insert_floor(rows: int, *, runs: int = 1) -> float:
    """Seconds to insert ``rows`` rows of 15 text columns into a new on-disk SQLite file.

    Each run opens a fresh database in a temporary folder, turns WAL on, creates one table with a
    text primary key and inserts every row with one ``executemany`` in one transaction; the rows
    (about 600 bytes each, like a note's projection row) are built beforehand.
    """
    data = [_row(index) for index in range(rows)]
    columns = ", ".join(f"{name} TEXT" for name in COLUMNS[1:])
    marks = ", ".join("?" for _ in COLUMNS)

    def run() -> None:
        with tempfile.TemporaryDirectory(prefix="almanac-floor-") as folder:
            db = sqlite3.connect(Path(folder) / "floor.db", isolation_level=None)
            try:
                db.execute("PRAGMA journal_mode=WAL")
                db.execute(f"CREATE TABLE records (id TEXT PRIMARY KEY, {columns})")
                db.execute("BEGIN")
                db.executemany(f"INSERT INTO records VALUES ({marks})", data)
                db.execute("COMMIT")
            finally:
                db.close()

    return median(run, runs)


def peak_rss_mb() -> float:
    """Peak resident set size of this process so far, in MiB."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / (1024 * 1024) if sys.platform == "darwin" else peak / 1024  # bytes vs KiB


def main(argv: Sequence[str] | None = None) -> int:
    """Measure every floor on a vault and print them as one JSON object; returns the exit status."""
    parser = argparse.ArgumentParser(description="Measure reconcile floors on a vault.")
    parser.add_argument("vault", type=Path)
    parser.add_argument("--runs", type=int, default=3, help="runs per floor; the median is kept")
    args = parser.parse_args(argv)
    if not args.vault.is_dir():
        parser.error(f"{str(args.vault)!r} is not a folder")
    if args.runs < 1:
        parser.error(f"--runs must be >= 1, got {args.runs}")
    paths = markdown_files(args.vault)
    notes = len(paths)
    seconds = {
        "stat": stat_floor(args.vault, runs=args.runs),
        "read_hash": read_hash_floor(args.vault, runs=args.runs),
        "frontmatter": frontmatter_floor(args.vault, runs=args.runs),
        "insert": insert_floor(notes, runs=args.runs),
    }
    report: dict[str, object] = {
        "vault": str(args.vault),
        "notes": notes,
        "bytes": sum(os.lstat(path).st_size for path in paths),
        "runs": args.runs,
        "seconds": {name: round(value, 4) for name, value in seconds.items()},
        "us_per_note": {
            name: round(value / notes * 1e6, 2) if notes else None
            for name, value in seconds.items()
        },
        "insert_rows_per_s": round(notes / seconds["insert"]) if seconds["insert"] else None,
        "peak_rss_mb": round(peak_rss_mb(), 1),
    }
    json.dump(report, sys.stdout, indent=2)
    sys.stdout.write("\n")
    return 0


def _walk(root: str, visit: Callable[[os.DirEntry[str]], object]) -> None:
    """Call ``visit`` on every ``*.md`` file below ``root``; dot entries and symlinked folders
    are skipped, as the scanner skips them."""
    pending = [root]
    while pending:
        with os.scandir(pending.pop()) as entries:
            for entry in entries:
                if entry.name.startswith("."):
                    continue
                if entry.is_dir(follow_symlinks=False):
                    pending.append(entry.path)
                elif entry.name.endswith(".md") and entry.is_file(follow_symlinks=False):
                    visit(entry)


def _frontmatter(text: str) -> str | None:
    """The YAML between a leading ``---`` line and the next ``---`` line, if there is one."""
    if not text.startswith("---\n"):
        return None
    end = text.find("\n---\n", 3)
    if end == -1:
        end = len(text) - 4 if text.endswith("\n---") else -1
    return text[4 : end + 1] if end != -1 else None


def _row(index: int) -> tuple[str, ...]:
    """One plausible projection row; values vary with ``index`` so the primary key is unique."""
    id = f"src/{index % 25:02d}/s{index:06d}"
    frontmatter = json.dumps(
        {
            "id": id,
            "type": "meeting",
            "occurred_at": "2025-06-03T09:30:00+02:00",
            "ends_at": "2025-06-03T10:15:00+02:00",
            "entities": [f"people/{index % 20:02d}/p{index % 9973:06d}", "orgs/01/o000042"],
            "tags": ["meeting", "team/roadmap"],
            "recorded_at": "2025-06-03T20:00:00Z",
        }
    )
    return (
        id,
        f"{id}.md",
        "meeting",
        "page",
        f"Roadmap sync with Ada Lovelace {index}",
        '["Roadmap sync"]',
        '["meeting", "team/roadmap"]',
        "2025-06-03T07:30:00Z",
        "2025-06-03T08:15:00Z",
        "2025-06-01T00:00:00Z",
        "2026-01-01T00:00:00Z",
        "2025-06-10",
        "FREQ=WEEKLY;BYDAY=TU;COUNT=10",
        hashlib.sha256(id.encode()).hexdigest(),
        frontmatter,
    )


def paired(
    floor: Callable[[], object], thing: Callable[[], object], runs: int
) -> tuple[float, float, float]:
    """Floor and thing timed alternately, run after run (so that a busy moment of the machine
    hits both), after one untimed call each: their median seconds and the median of the
    per-run ratios."""
    floor(), thing()
    floors_s, things_s, ratios = [], [], []
    for _ in range(runs):
        start = time.perf_counter()
        floor()
        middle = time.perf_counter()
        thing()
        end = time.perf_counter()
        floors_s.append(middle - start)
        things_s.append(end - middle)
        ratios.append((end - middle) / (middle - start))
    return statistics.median(floors_s), statistics.median(things_s), statistics.median(ratios)


def paired_ms(
    floor: Callable[[], object], thing: Callable[[], object], runs: int
) -> tuple[float, float, float]:
    """`paired` in milliseconds (3 decimals), the ratio to 2 decimals."""
    floor_s, thing_s, ratio = paired(floor, thing, runs)
    return round(floor_s * 1000, 3), round(thing_s * 1000, 3), round(ratio, 2)


def median(
    run: Callable[[], object],
    runs: int,
    *,
    before: Callable[[], object] | None = None,
    warm: bool = False,
) -> float:
    """Median wall-clock seconds of ``runs`` calls of ``run`` (``before`` each, untimed).

    Every benchmark times its steps with this; ``warm`` makes one untimed call first.
    """
    if warm:
        run()
    times = []
    for _ in range(runs):
        if before is not None:
            before()
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


if __name__ == "__main__":
    sys.exit(main())
