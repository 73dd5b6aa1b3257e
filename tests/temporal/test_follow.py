"""A reconciler following another process's commits (`Reconciler.follow`): its memory and a
graph projection that follows the same commits equal a fresh load and a fresh build."""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from almanac import graph, temporal
from almanac.temporal.reconcile.follow import Followed, WriterLock
from almanac.temporal.reconcile.memory import Memory
from tests.graph.test_projection import state as graph_state
from tests.temporal.test_reconcile import NOTES, NOW, write

# Paths the random edits pick from; names and ids the notes refer to one another by.
PATHS = [
    "people/ada.md",
    "people/bob.md",
    "people/Bob.md",
    "orgs/acme.md",
    "orgs/acme2.md",
    "notes/n1.md",
    "notes/n2.md",
    "other/n1.md",
]
TARGETS = ["Ada L", "Bob", "people/ada", "orgs/acme", "Acme", "n1", "notes/n2", "Nobody", "d.png"]
KINDS = [
    "plain",
    "aliases",
    "links",
    "owner",
    "supersede",
    "withdraw",
    "reinstate",
    "duplicate-id",
    "broken",
    "delete",
    "rename",
    "attachment",
    "claim",
]


def _note(rng: random.Random, kind: str) -> str:
    """A note of one kind of edit (its frontmatter and body), with random targets."""
    links = " ".join(f"[[{rng.choice(TARGETS)}]]" for _ in range(rng.randint(0, 3)))
    title = rng.choice(["Ada Lopez", "Bob", "Acme", "n1", "Dee"])
    front = {
        "plain": "type: person",
        "aliases": f"type: person\naliases: [{rng.choice(TARGETS)}, Dee]",
        "links": "type: note",
        "owner": f"type: organization\nowner: {rng.choice(TARGETS)}",
        "supersede": f"type: organization\nsuperseded_by: {rng.choice(['orgs/acme', 'acme2'])}",
        "withdraw": "type: person\nlifecycle: withdrawn",
        "reinstate": f"type: person\nreinstated_at: {rng.choice(['2000-01-01', '2100-01-01'])}",
        "duplicate-id": f"id: {rng.choice(['people/ada', 'orgs/acme', 'Bob'])}\ntype: person",
        "broken": "type: [unclosed",
        "claim": f"type: claim\nsubject: '[[{rng.choice(TARGETS)}]]'\nsource: people/bob",
    }[kind]
    return f"---\n{front}\ntitle: {title}\n---\n# {title}\n{links}\n"


def _edit(root: Path, rng: random.Random) -> str:
    """One random edit of the vault; returns its kind (for failure messages)."""
    kind = rng.choice(KINDS)
    path = rng.choice(PATHS)
    target = root / path
    if kind == "delete":
        if target.exists():
            target.unlink()
    elif kind == "rename":
        other = root / rng.choice(PATHS)
        if target.exists() and not other.exists():
            other.parent.mkdir(parents=True, exist_ok=True)
            target.rename(other)
    elif kind == "attachment":
        picture = root / "files/d.png"
        if picture.exists():
            picture.unlink()
        else:
            picture.parent.mkdir(parents=True, exist_ok=True)
            picture.write_bytes(b"\x89PNG")
    else:
        write(root, {path: _note(rng, kind)})
    return kind


def _memory(memory: Memory) -> dict[str, object]:
    """Everything a plan reads of memory."""
    return {
        "entries": dict(sorted(memory.entries.items())),
        "referrers": {k: v for k, v in sorted(memory.referrers.items()) if v},
        "guards": dict(sorted(memory.guards.items())),
        "digests": memory.digests,
        "keys": dict(memory.keys.items()),
        "folders": memory.keys.folders,
        "revisions": memory.revisions,
        "scan_issues": sorted(memory.scan_issues, key=repr),
        "names": vars(memory.names),
        "attachments": vars(memory.attachments),
        "generation": memory.generation,
    }


class Pair:
    """Two reconcilers on one state file, as two workers of a server hold them."""

    def __init__(self, tmp_path: Path, *, complete: bool = True) -> None:
        self.root = tmp_path / "vault"
        write(self.root, NOTES)
        db = tmp_path / "state.db"
        self.a_store, self.b_store = temporal.Store.open(db), temporal.Store.open(db)
        self.a = temporal.Reconciler(self.a_store, self.root, temporal.VaultConfig())
        self.a.reconcile(now_us=NOW)
        self.b = temporal.Reconciler(self.b_store, self.root, temporal.VaultConfig())
        if complete:  # as a server's, once its background read is done
            self.b.complete()
        self.projection = graph.Projection.build(self.b_store)

    def follow(self) -> Followed | None:
        """B follows A's commits, memory and graph."""
        found = self.b.follow()
        if found is None:
            self.projection = graph.Projection.build(self.b_store)
        else:
            self.projection.apply(self.b_store, temporal.ReconcileResult.of_followed(found))
        return found

    def check(self, why: str) -> None:
        fresh = Memory.load(self.b_store.conn)
        assert _memory(self.b.memory) == _memory(fresh), why
        assert _memory(self.a.memory) == _memory(fresh), why
        assert graph_state(self.projection) == graph_state(graph.Projection.build(self.b_store))

    def close(self) -> None:
        self.a_store.close()
        self.b_store.close()


@pytest.fixture
def pair(tmp_path: Path) -> Iterator[Pair]:
    found = Pair(tmp_path)
    yield found
    found.close()


@pytest.mark.parametrize("seed", range(4))
def test_a_follower_equals_a_fresh_load_after_random_edits(pair: Pair, seed: int) -> None:
    rng = random.Random(seed)
    loads = pair.b.loads
    for step in range(20):
        kinds = [_edit(pair.root, rng) for _ in range(rng.randint(1, 3))]
        pair.a.reconcile(now_us=NOW + step + 1)
        if rng.random() < 0.7:  # and sometimes B follows two or three commits at once
            assert pair.follow() is not None
            pair.check(f"seed {seed} step {step}: {kinds}")
    assert pair.follow() is not None
    pair.check(f"seed {seed} at the end")
    assert pair.b.loads == loads  # never loaded in full


def test_writers_take_turns_and_each_follows_the_other(pair: Pair) -> None:
    rng = random.Random(7)
    for step in range(20):
        kinds = [_edit(pair.root, rng) for _ in range(2)]
        if step % 2:
            result = pair.a.reconcile(now_us=NOW + step + 1)
            pair.follow()
        else:  # B's projection takes B's own reconcile, with what it followed on the way
            result = pair.b.reconcile(now_us=NOW + step + 1)
            pair.projection.apply(pair.b_store, result.with_followed())
        assert not result.reloaded, kinds
        pair.a.follow()
        pair.check(f"step {step}: {kinds}")


def test_a_commit_followed_reports_what_the_graph_reads(pair: Pair) -> None:
    write(pair.root, {"people/cy.md": "---\ntype: person\n---\n# Cy\nMet [[Bob]].\n"})
    pair.a.reconcile(now_us=NOW + 1)
    write(pair.root, {"people/dee.md": "# Dee\n"})
    result = pair.b.reconcile(now_us=NOW + 2)  # follows A's commit on its way
    assert not result.reloaded
    assert "people/cy.md" in result.followed.changed_paths
    assert result.changed_paths == ("people/dee.md",)
    merged = result.with_followed()
    assert {"people/cy.md", "people/dee.md"} <= set(merged.changed_paths)


def test_a_gap_in_the_log_loads_everything(pair: Pair, monkeypatch: Any) -> None:
    monkeypatch.setattr(temporal.reconcile.follow, "FOLLOW_PATHS", 0)  # nothing is named
    write(pair.root, {"people/cy.md": "# Cy\n"})
    pair.a.reconcile(now_us=NOW + 1)
    loads = pair.b.loads
    assert pair.follow() is None
    assert pair.b.loads == loads + 1
    pair.check("after a full load")


def test_a_file_indexed_by_another_process_is_not_written_again(pair: Pair) -> None:
    write(pair.root, {"people/cy.md": "# Cy\n"})
    pair.a.reconcile(now_us=NOW + 1, paths=["people/cy.md"])
    generation = temporal.generation(pair.b_store)
    result = pair.b.reconcile(now_us=NOW + 2, paths=["people/cy.md"])  # its watcher saw it too
    assert not result.changed
    assert temporal.generation(pair.b_store) == generation


def test_the_writer_lock_excludes_another_process(tmp_path: Path) -> None:
    import multiprocessing

    lock = WriterLock(tmp_path / "state.db")
    context = multiprocessing.get_context("fork")
    with lock.held():
        child = context.Process(target=_try_lock, args=(tmp_path / "state.db",))
        child.start()
        child.join(10)
        assert child.exitcode == 1  # the lock was held
    child = context.Process(target=_try_lock, args=(tmp_path / "state.db",))
    child.start()
    child.join(10)
    assert child.exitcode == 0
    lock.close()


def _try_lock(state: Path) -> None:
    import fcntl
    import os

    fd = os.open(WriterLock(state).path, os.O_RDWR | os.O_CREAT)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os._exit(1)
    os._exit(0)


def test_following_alone_does_not_wait_for_the_writer_lock(pair: Pair) -> None:
    import threading

    write(pair.root, {"people/cy.md": "# Cy\n"})
    pair.a.reconcile(now_us=NOW + 1)
    results: list[temporal.ReconcileResult] = []
    writer = WriterLock(pair.b_store.path)  # another writer, planning at length
    with writer.held():
        follower = threading.Thread(
            target=lambda: results.append(pair.b.reconcile(now_us=NOW + 2, paths=[])),
            daemon=True,
        )
        follower.start()
        follower.join(10)
        assert results, "the follower waited for the writer lock"
    writer.close()
    assert "people/cy.md" in results[0].followed.changed_paths
    assert not results[0].changed


_FILES_PART = (
    "digests",
    "keys",
    "folders",
    "revisions",
    "scan_issues",
    "attachments",
    "generation",
)


def test_a_follower_not_yet_complete_follows_its_files_part_then_reads_the_rest(
    tmp_path: Path,
) -> None:
    pair = Pair(tmp_path, complete=False)
    rng = random.Random(3)
    for step in range(12):
        kinds = [_edit(pair.root, rng) for _ in range(rng.randint(1, 3))]
        pair.a.reconcile(now_us=NOW + step + 1)
        assert pair.follow() is not None
        assert not pair.b.memory.complete and not pair.b.memory.entries
        mine, fresh = _memory(pair.b.memory), _memory(Memory.load(pair.b_store.conn))
        assert {k: mine[k] for k in _FILES_PART} == {k: fresh[k] for k in _FILES_PART}, kinds
    pair.b.complete()
    assert pair.b.memory.complete
    pair.check("completed after following")
