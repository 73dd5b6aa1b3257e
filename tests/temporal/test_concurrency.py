"""Readers racing large reconciles see whole snapshots and are never locked out (RELIABILITY 5).

A reconcile commits in one `BEGIN IMMEDIATE` transaction and every `Store.read`
is one read transaction, so a reader (a thread of this process, or another
process on the same file) sees the state before a reconcile or after it,
never a mix (I5), and WAL never makes it wait for or fail on the writer.

Readers loop while one writer adds a batch of hundreds of notes in one go,
rewrites every note of it, deletes it, several times over. The writer reads
right after each of its commits, which lists every state there ever was;
every read of a reader must be one of them (record count, per-kind and
per-type counts, digests, sampled records and issues all of the same commit),
and no read may raise (no `database is locked`, no `IndexUnavailable`).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

import temporal

NOW_US = 1_800_000_000_000_000
ROOT = Path(__file__).resolve().parents[2]
CONFIG = temporal.VaultConfig()
SCOPES = ["default"]
READERS = 3
STATIC = "people/p03"  # a base record that every state holds unchanged

BASE = {
    **{
        f"people/p{i:02d}.md": (
            f"---\ntype: person\ntitle: Person {i}\n---\n"
            f"Works with [[people/p{(i + 1) % 10:02d}]].\n"
        )
        for i in range(10)
    },
    "orgs/acme.md": "---\ntype: organization\nowner: people/p01\n---\n# Acme\n",
    "broken.md": "---\ntitle: [unclosed\n---\nA YAML syntax error: one issue in every state.\n",
}
BASE_RECORDS = 11  # the broken note is no record


def bulk_note(i: int, version: int) -> str:
    """One generated claim; `version` changes its title and body, not whether it counts."""
    return (
        f"---\ntype: claim\ntitle: Bulk {i} v{version}\nsubject: people/p{i % 10:02d}\n"
        f"tags: [bulk, v{version}]\n---\n"
        f"Version {version} of claim {i}, see [[people/p{i % 7:02d}]].\n"
    )


def write_batch(folder: Path, size: int, version: int) -> None:
    folder.mkdir(exist_ok=True)
    for i in range(size):
        (folder / f"n{i:04d}.md").write_text(bulk_note(i, version))


class Batch:
    """The generated notes, kept in a stash outside the vault and moved in and out whole.

    Adding or deleting the batch is one folder rename (as a sync tool or a checkout does):
    creating thousands of files would cost more than the reconciles under test. A rewrite
    writes every note of the batch in place, switching it between two versions.
    """

    def __init__(self, tmp_path: Path, root: Path, size: int) -> None:
        self.size = size
        self.version = 1
        self.stash = tmp_path / "stash"
        self.live = root / "bulk"
        write_batch(self.stash, size, self.version)

    def apply(self, step: str) -> None:
        if step == "add":
            self.stash.rename(self.live)
        elif step == "rewrite":
            self.version = 3 - self.version
            write_batch(self.live, self.size, self.version)
        else:
            self.live.rename(self.stash)


# One cycle: add the batch, rewrite every note of it, delete it (back to the base state).
CYCLE = ("add", "rewrite", "delete")


def sample(size: int) -> list[str]:
    """Ids of the bulk records every read looks at: the first, one inside, the last."""
    return [f"bulk/n{i:04d}" for i in (0, size // 2, size - 1)]


def observe(reader: temporal.Reader, size: int) -> str:
    """What one read transaction sees, canonical JSON so states compare across processes."""
    counts = reader.counts(SCOPES)
    digests = reader.digests()
    static = reader.record(STATIC, SCOPES)
    sampled = [reader.record(rid, SCOPES) for rid in sample(size)]
    issues = reader.issues(SCOPES)
    return json.dumps(
        {
            "records": counts.records,
            "by_kind": [[c.key, c.count] for c in counts.by_kind],
            "by_type": [[c.key, c.count] for c in counts.by_type],
            "digests": {scope: format(value, "x") for scope, value in digests.items()},
            "static": static.title if static is not None else None,
            "sampled": [r.title if r is not None else None for r in sampled],
            "issues": [[i.path, i.code] for i in issues],
        },
        sort_keys=True,
    )


def read_once(store: temporal.Store, size: int) -> str:
    with store.read() as reader:
        return observe(reader, size)


def make_vault(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    for path, text in BASE.items():
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
    return root


def run_cycles(
    store: temporal.Store, reconciler: temporal.Reconciler, batch: Batch, cycles: int
) -> set[str]:
    """The writer: apply the cycle `cycles` times, one reconcile per step, checking each.

    Returns every committed state: this is the only writer, so what it reads right after
    each of its commits (and before the first) is the whole list of states there ever were.
    """
    committed = {read_once(store, batch.size)}
    for _ in range(cycles):
        for step in CYCLE:
            batch.apply(step)
            result = reconciler.reconcile(now_us=NOW_US)
            expected = (0, batch.size) if step == "delete" else (batch.size, 0)
            assert (result.parsed, result.deleted) == expected, step
            committed.add(read_once(store, batch.size))
    counts = {json.loads(s)["records"] for s in committed}
    assert counts == {BASE_RECORDS, BASE_RECORDS + batch.size}
    assert len(committed) == 3  # the base, and the batch in each of its two versions
    return committed


def check_reads(seen: set[str], committed: set[str], size: int) -> None:
    torn = seen - committed
    assert not torn, f"{len(torn)} reads matched no committed state, e.g. {sorted(torn)[0]}"
    counts = {json.loads(s)["records"] for s in seen}
    assert counts <= {BASE_RECORDS, BASE_RECORDS + size}


# 500 notes as a large edit, in the default run. The soak tier (`-m soak`) runs more cycles and
# 2,100 notes from a small vault, which takes the bulk path: it drops and rebuilds the secondary
# indexes inside the write transaction while the readers keep querying.
SIZES = pytest.mark.parametrize(
    ("size", "cycles"),
    [
        pytest.param(500, 2, id="500"),
        pytest.param(500, 10, marks=pytest.mark.soak, id="500-long"),
        pytest.param(2100, 2, marks=pytest.mark.soak, id="2100-bulk"),
    ],
)


@SIZES
def test_reader_threads_see_whole_snapshots_during_reconciles(
    tmp_path: Path, size: int, cycles: int
) -> None:
    root = make_vault(tmp_path)
    store = temporal.Store.open(tmp_path / "state.db")
    try:
        reconciler = temporal.Reconciler(store, root, CONFIG)
        reconciler.reconcile(now_us=NOW_US)
        batch = Batch(tmp_path, root, size)
        stop = threading.Event()
        seen: list[set[str]] = [set() for _ in range(READERS)]
        reads = [0] * READERS
        errors: list[str] = []

        def loop(n: int) -> None:
            while not stop.is_set():
                try:
                    seen[n].add(read_once(store, size))
                except BaseException as exc:  # any exception at all is a failure of the test
                    errors.append(f"reader {n}: {type(exc).__name__}: {exc}")
                    return
                reads[n] += 1

        threads = [threading.Thread(target=loop, args=(n,), daemon=True) for n in range(READERS)]
        for thread in threads:
            thread.start()
        try:
            committed = run_cycles(store, reconciler, batch, cycles)
        finally:
            stop.set()
            for thread in threads:
                thread.join(timeout=30)
        assert not any(thread.is_alive() for thread in threads), "a reader hung"
        assert errors == []
        assert all(reads), reads
        everything = set().union(*seen)
        check_reads(everything, committed, size)
        assert len(everything) >= 2, "the readers never saw a reconcile land"
    finally:
        store.close()


CHILD = """
import json, os, sys, time
import temporal
from tests.temporal.test_concurrency import CONFIG, observe
db, stop, size = sys.argv[1], sys.argv[2], int(sys.argv[3])
store = temporal.Store.open(db)
seen, errors, reads = set(), [], 0
limit = time.monotonic() + 60  # never outlive a parent that failed to stop us
try:
    while reads == 0 or not os.path.exists(stop):
        if time.monotonic() > limit:
            errors.append("no stop file within 60 s")
            break
        try:
            if reads % 25 == 24:  # now and then a fresh Store, as a CLI run would open
                other = temporal.Store.open(db)
                try:
                    with other.read() as reader:
                        seen.add(observe(reader, size))
                finally:
                    other.close()
            else:
                with store.read() as reader:
                    seen.add(observe(reader, size))
        except BaseException as exc:
            errors.append(f"{type(exc).__name__}: {exc}")
            break
        reads += 1
        if reads == 1:
            print("ready", flush=True)
finally:
    store.close()
print(json.dumps({"reads": reads, "seen": sorted(seen), "errors": errors}), flush=True)
"""


@SIZES
def test_reader_process_sees_whole_snapshots_during_reconciles(
    tmp_path: Path, size: int, cycles: int
) -> None:
    root = make_vault(tmp_path)
    db = tmp_path / "state.db"
    stop = tmp_path / "stop"
    store = temporal.Store.open(db)
    try:
        reconciler = temporal.Reconciler(store, root, CONFIG)
        reconciler.reconcile(now_us=NOW_US)
        batch = Batch(tmp_path, root, size)
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        child = subprocess.Popen(
            [sys.executable, "-c", CHILD, str(db), str(stop), str(size)],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        committed: set[str] = set()
        try:
            assert child.stdout is not None
            ready = child.stdout.readline() == "ready\n"  # it has read once before we write
            if ready:
                committed = run_cycles(store, reconciler, batch, cycles)
        finally:
            stop.touch()
            try:
                out, err = child.communicate(timeout=30)
            except subprocess.TimeoutExpired:
                child.kill()
                out, err = child.communicate()
        assert ready and child.returncode == 0, err
        report = json.loads(out.splitlines()[-1])
        assert report["errors"] == [], report["errors"]
        assert report["reads"] > 0
        check_reads(set(report["seen"]), committed, size)
        assert len(report["seen"]) >= 2, "the reader process never saw a reconcile land"
    finally:
        store.close()
