"""The commit log each reconcile leaves in the state file (`temporal.commits`), which a server's
subscriptions follow in every worker."""

from __future__ import annotations

from pathlib import Path

from almanac import temporal
from almanac.temporal.store import COMMIT_IDS, COMMITS_KEPT

NOW = 1_800_000_000_000_000


def test_each_commit_logs_its_changed_ids_per_scope(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    (root / "work").mkdir(parents=True)
    for name in ("a", "b"):
        (root / f"{name}.md").write_text(f"# {name}\n")
    store = temporal.Store.open(tmp_path / "state.db")
    config = temporal.VaultConfig({"work": "work"}, {})
    reconciler = temporal.Reconciler(store, root, config)
    try:
        reconciler.reconcile(now_us=NOW)
        (root / "b.md").write_text("# b changed\n")
        (root / "work" / "w.md").write_text("# w\n")
        (root / "a.md").unlink()
        reconciler.reconcile(now_us=NOW + 1)
        with store.read() as reader:
            first, second = temporal.commits(reader, after=0)
            assert temporal.latest_commit(reader) == second
            assert temporal.commits(reader, after=second.generation) == []
        assert first.at_us == NOW and second.at_us == NOW + 1
        assert first.changes is not None and second.changes is not None
        assert {s: (c.count, c.ids) for s, c in first.changes.items()} == {
            "default": (2, ("a", "b"))
        }
        assert {s: (c.count, c.ids) for s, c in second.changes.items()} == {
            "default": (2, ("a", "b")),
            "work": (1, ("work/w",)),
        }
        with store.read() as reader:
            assert dict(second.digests) == reader.digests()
    finally:
        store.close()


def test_a_commit_lists_at_most_its_first_ids_and_old_commits_leave_a_gap(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    root.mkdir()
    for index in reversed(range(COMMIT_IDS + 20)):
        (root / f"n{index:03d}.md").write_text(f"# {index}\n")
    store = temporal.Store.open(tmp_path / "state.db")
    reconciler = temporal.Reconciler(store, root, temporal.VaultConfig())
    try:
        reconciler.reconcile(now_us=NOW)
        with store.read() as reader:
            (commit,) = temporal.commits(reader, after=0)
        assert commit.changes is not None
        changes = commit.changes["default"]
        assert changes.count == COMMIT_IDS + 20
        assert changes.ids == tuple(f"n{i:03d}" for i in range(COMMIT_IDS))
        for round in range(COMMITS_KEPT):
            (root / "n000.md").write_text(f"# 0 {round}\n")
            reconciler.reconcile(now_us=NOW + round + 1)
        with store.read() as reader:
            (gap,) = temporal.commits(reader, after=0)  # the first commit is no longer logged
            assert gap.changes is None and gap.generation == COMMITS_KEPT + 1
            assert dict(gap.digests) == reader.digests()
            kept = temporal.commits(reader, after=1)
        assert [c.generation for c in kept] == list(range(2, COMMITS_KEPT + 2))
    finally:
        store.close()
