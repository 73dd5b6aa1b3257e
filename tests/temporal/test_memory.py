"""The reconciler's memory, kept across reconciles, equals the memory loaded from the database."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from almanac import temporal
from almanac.temporal.reconcile.memory import Memory
from tests.temporal.test_reconcile import NOTES, NOW, write

# Each step: files written (None: deleted). Links, references, a withdrawal, a reinstatement
# before and after the guard, a duplicate id, a case twin, supersession and a cycle.
STEPS: list[dict[str, str | None]] = [
    {"claims/c1.md": None, "people/cy.md": "---\ntype: person\n---\n# Cy\nSee [[Ada L]].\n"},
    {"people/bob.md": "---\ntype: person\ntitle: Bob\nlifecycle: withdrawn\n---\nGone.\n"},
    {
        "people/bob.md": (
            "---\ntype: person\ntitle: Bob\nreinstated_at: 2000-01-01\n---\nBack too early.\n"
        )
    },
    {
        "people/bob.md": (
            "---\ntype: person\ntitle: Bob\nreinstated_at: 2100-01-01\n---\nBack for good.\n"
        )
    },
    {"other/ada.md": "---\nid: people/ada\ntype: person\n---\n# Ada copy\n"},
    {"people/Cy.md": "---\ntype: person\n---\n# Cy twin\n"},
    {
        "orgs/acme.md": "---\ntype: organization\nsuperseded_by: orgs/acme2\n---\n# Acme\n",
        "orgs/acme2.md": "---\ntype: organization\nsuperseded_by: orgs/acme\n---\n# Acme 2\n",
    },
    {"other/ada.md": None, "orgs/acme2.md": "---\ntype: organization\n---\n# Acme 2\n"},
]


def _state(memory: Memory) -> dict[str, object]:
    return {
        "entries": dict(sorted(memory.entries.items())),
        "referrers": {k: v for k, v in sorted(memory.referrers.items()) if v},
        "guards": dict(sorted(memory.guards.items())),
        "digests": memory.digests,
        "revisions": memory.revisions,
        "scan_issues": sorted(memory.scan_issues, key=repr),
        "names": {p: memory.names.keys(p) for p in sorted(memory.entries)},
    }


@pytest.mark.parametrize("watched", [False, True], ids=["scan", "paths"])
def test_memory_after_each_reconcile_equals_a_fresh_load(tmp_path: Path, watched: bool) -> None:
    root = tmp_path / "vault"
    write(root, NOTES)
    store = temporal.Store.open(tmp_path / "state.db")
    try:
        rec = temporal.Reconciler(store, root, temporal.VaultConfig())
        rec.reconcile(now_us=NOW)
        assert _state(rec.memory) == _state(Memory.load(store.conn))
        for i, step in enumerate(STEPS, start=1):
            for path, text in step.items():
                if text is None:
                    (root / path).unlink()
                else:
                    write(root, {path: text})
            result = rec.reconcile(now_us=NOW + i, paths=sorted(step) if watched else None)
            assert result.changed and not result.reloaded
            assert _state(rec.memory) == _state(Memory.load(store.conn)), f"step {i}"
    finally:
        store.close()


def test_a_reconcile_after_another_writer_reports_what_it_followed(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    write(root, NOTES)
    db = tmp_path / "state.db"
    mine, other = temporal.Store.open(db), temporal.Store.open(db)
    try:
        rec = temporal.Reconciler(mine, root, temporal.VaultConfig())
        rec.reconcile(now_us=NOW)
        write(root, {"people/cy.md": "# Cy\n"})
        temporal.Reconciler(other, root, temporal.VaultConfig()).reconcile(now_us=NOW + 1)
        write(root, {"people/dee.md": "# Dee\n"})
        loads = rec.loads
        result = rec.reconcile(now_us=NOW + 2)
        assert not result.reloaded and rec.loads == loads  # followed, not loaded again
        assert result.followed.changed_paths == {"people/cy.md"}
        assert result.changed_paths == ("people/dee.md",)
        assert _state(rec.memory) == _state(Memory.load(mine.conn))
    finally:
        mine.close()
        other.close()


def test_a_restart_reads_the_notes_part_only_when_something_changed(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    write(root, NOTES)
    store = temporal.Store.open(tmp_path / "state.db")
    try:
        temporal.Reconciler(store, root, temporal.VaultConfig()).reconcile(now_us=NOW)
        restarted = temporal.Reconciler(store, root, temporal.VaultConfig())
        assert not restarted.memory.complete and not restarted.memory.entries
        assert not restarted.reconcile(now_us=NOW + 1).changed
        assert not restarted.memory.complete  # a scan finding nothing needs no more
        write(root, {"people/cy.md": "---\ntype: person\n---\n# Cy\nSee [[Ada L]].\n"})
        assert restarted.reconcile(now_us=NOW + 2).changed
        assert restarted.memory.complete and restarted.loads == 1
        assert _state(restarted.memory) == _state(Memory.load(store.conn))
    finally:
        store.close()


def test_memory_not_completed_after_another_writer_follows_it_then_is_read_whole(
    tmp_path: Path,
) -> None:
    root = tmp_path / "vault"
    write(root, NOTES)
    db = tmp_path / "state.db"
    mine, other = temporal.Store.open(db), temporal.Store.open(db)
    try:
        temporal.Reconciler(other, root, temporal.VaultConfig()).reconcile(now_us=NOW)
        rec = temporal.Reconciler(mine, root, temporal.VaultConfig())
        write(root, {"people/cy.md": "# Cy\n"})
        temporal.Reconciler(other, root, temporal.VaultConfig()).reconcile(now_us=NOW + 1)
        rec.complete()  # the notes read are of a later state than the files' part: dropped
        assert not rec.memory.complete and not rec.memory.entries
        write(root, {"people/dee.md": "# Dee\n"})
        result = rec.reconcile(now_us=NOW + 2)
        assert not result.reloaded and result.changed_paths == ("people/dee.md",)
        assert rec.memory.complete and rec.loads == 1 and rec.follows == 1
        assert _state(rec.memory) == _state(Memory.load(mine.conn))
        assert rec.memory.keys == Memory.load(mine.conn).keys
    finally:
        mine.close()
        other.close()


def test_reading_the_notes_part_is_all_or_nothing(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    write(root, NOTES)
    store = temporal.Store.open(tmp_path / "state.db")
    try:
        temporal.Reconciler(store, root, temporal.VaultConfig()).reconcile(now_us=NOW)
        memory = Memory.load(store.conn, notes=False)
        broken = sqlite3.connect(tmp_path / "state.db")
        broken.execute("BEGIN")
        broken.execute("DROP TABLE guards")  # read last: the notes part fails at its end
        with pytest.raises(sqlite3.OperationalError):
            memory.load_notes(broken)
        broken.rollback()
        broken.close()
        assert not memory.complete and not memory.entries and not memory.referrers
        memory.load_notes(store.conn)
        assert _state(memory) == _state(Memory.load(store.conn))
    finally:
        store.close()
