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

Nothing here depends on how the scheduler shares the cores: after each commit
the writer waits (a condition for threads, a pipe for a process) until every
reader has read once since, so each reader sees every commit, in order.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from almanac import temporal

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
    store: temporal.Store,
    reconciler: temporal.Reconciler,
    batch: Batch,
    cycles: int,
    after_commit: Callable[[str], None],
) -> list[str]:
    """The writer: apply the cycle `cycles` times, one reconcile per step, checking each.

    Returns every committed state in order: this is the only writer, so what it reads right
    after each of its commits (and before the first) is the whole list of states there ever
    were. `after_commit` is called with each state (the first included) before the next
    reconcile starts: it waits until the readers have seen that state.
    """
    committed = [read_once(store, batch.size)]
    after_commit(committed[-1])
    for _ in range(cycles):
        for step in CYCLE:
            batch.apply(step)
            result = reconciler.reconcile(now_us=NOW_US)
            expected = (0, batch.size) if step == "delete" else (batch.size, 0)
            assert (result.parsed, result.deleted) == expected, step
            committed.append(read_once(store, batch.size))
            after_commit(committed[-1])
    counts = {json.loads(s)["records"] for s in committed}
    assert counts == {BASE_RECORDS, BASE_RECORDS + batch.size}
    assert len(set(committed)) == 3  # the base, and the batch in each of its two versions
    return committed


def check_reads(seen: list[str], committed: list[str]) -> None:
    """A reader's distinct states, in the order it saw them, are the committed ones in order.

    Each reader saw every state (the writer waits for it after each commit) and no other:
    no torn read (one matching no commit), none going back to an older state.
    """
    torn = set(seen) - set(committed)
    assert not torn, f"{len(torn)} reads matched no committed state, e.g. {sorted(torn)[0]}"
    changes = [state for i, state in enumerate(seen) if i == 0 or state != seen[i - 1]]
    assert changes == committed


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
    """Readers loop without pause through every reconcile; after each commit the writer waits
    (a condition, no clock) until every reader has finished a read begun after that commit, so
    each reader sees every committed state, in commit order, whatever the scheduler does."""
    root = make_vault(tmp_path)
    store = temporal.Store.open(tmp_path / "state.db")
    try:
        reconciler = temporal.Reconciler(store, root, CONFIG)
        reconciler.reconcile(now_us=NOW_US)
        batch = Batch(tmp_path, root, size)
        changed = threading.Condition()
        commits = 0  # commits the writer has announced
        caught_up = [0] * READERS  # per reader: the announced commits its last read began after
        stop = False
        seen: list[list[str]] = [[] for _ in range(READERS)]
        errors: list[str] = []

        def loop(n: int) -> None:
            while True:
                with changed:
                    if stop:
                        return
                    began_after = commits
                try:
                    state = read_once(store, size)
                except BaseException as exc:  # any exception at all is a failure of the test
                    with changed:
                        errors.append(f"reader {n}: {type(exc).__name__}: {exc}")
                        changed.notify_all()
                    return
                with changed:
                    seen[n].append(state)
                    caught_up[n] = began_after
                    changed.notify_all()

        def wait_for_readers(state: str) -> None:
            nonlocal commits
            with changed:
                commits += 1
                changed.notify_all()
                changed.wait_for(lambda: errors or min(caught_up) >= commits)
            assert errors == []

        threads = [threading.Thread(target=loop, args=(n,), daemon=True) for n in range(READERS)]
        for thread in threads:
            thread.start()
        try:
            committed = run_cycles(store, reconciler, batch, cycles, wait_for_readers)
        finally:
            with changed:
                stop = True
            for thread in threads:
                thread.join()
        assert errors == []
        for reads in seen:
            check_reads(reads, committed)
    finally:
        store.close()


CHILD = """
import json, select, sys
from almanac import temporal
from tests.temporal.test_concurrency import CONFIG, observe
db, size = sys.argv[1], int(sys.argv[2])
store = temporal.Store.open(db)
errors, reads = [], 0

def read_once():
    global reads
    reads += 1
    if reads % 25 == 0:  # now and then a fresh Store, as a CLI run would open
        other = temporal.Store.open(db)
        try:
            with other.read() as reader:
                return observe(reader, size)
        finally:
            other.close()
    with store.read() as reader:
        return observe(reader, size)

try:
    while True:
        try:
            if select.select([sys.stdin], [], [], 0)[0]:  # a line from the writer, or its end
                if not sys.stdin.readline():
                    break  # stdin closed: the writer is done (or gone)
                print(read_once(), flush=True)  # a read begun after the writer's commit
            else:
                read_once()  # racing the writer's reconciles
        except BaseException as exc:
            errors.append(f"{type(exc).__name__}: {exc}")
            break
finally:
    store.close()
print(json.dumps({"reads": reads, "errors": errors}), flush=True)
"""


@SIZES
def test_reader_process_sees_whole_snapshots_during_reconciles(
    tmp_path: Path, size: int, cycles: int
) -> None:
    """The reader process reads in a loop without pause; after each commit the writer asks it
    (a line on its stdin, no clock) for one read begun then: that read must be the state just
    committed, and no read of the loop may fail."""
    root = make_vault(tmp_path)
    db = tmp_path / "state.db"
    store = temporal.Store.open(db)
    try:
        reconciler = temporal.Reconciler(store, root, CONFIG)
        reconciler.reconcile(now_us=NOW_US)
        batch = Batch(tmp_path, root, size)
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        child = subprocess.Popen(
            [sys.executable, "-c", CHILD, str(db), str(size)],
            cwd=ROOT,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        seen: list[str] = []

        def ask_reader(state: str) -> None:
            assert child.stdin is not None and child.stdout is not None
            child.stdin.write("read\n")
            child.stdin.flush()
            line = child.stdout.readline().rstrip("\n")  # "" if the reader stopped
            seen.append(line)
            assert line == state, f"the reader saw {line[:300]!r}"

        try:
            committed = run_cycles(store, reconciler, batch, cycles, ask_reader)
        finally:
            out, err = child.communicate()  # closes its stdin: the reader stops
        assert child.returncode == 0, err
        report = json.loads(out.splitlines()[-1])
        assert report["errors"] == [], report["errors"]
        assert report["reads"] >= len(committed)
        check_reads(seen, committed)
    finally:
        store.close()
