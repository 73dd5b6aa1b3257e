"""How a process follows the commits another process made to its state file.

Several processes may serve one state file (`almanac serve --workers N`): one reconciles at
a time (`WriterLock`), the others notice its commit (`PRAGMA data_version`) and must bring
their memory and graph in step before they plan or answer. Loading memory again costs
seconds at 100,000 notes, so each commit's log entry (`commit:<generation>` in `meta`) also
says which paths had rows written or deleted and which guards changed (`follow_entry`); a
follower re-reads only those (`Memory.refresh`) and hands the graph the same change
(`Followed`). A commit that touched more than `FOLLOW_PATHS` paths, or a gap in the log (it
keeps `COMMITS_KEPT`), makes the follower load everything again, as before.
"""

from __future__ import annotations

import dataclasses
import fcntl
import json
import os
import sqlite3
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from almanac.temporal.reconcile.plan import Plan, Summary
from almanac.temporal.store import COMMIT_IDS, COMMITS_KEPT, Reader, Store

__all__ = [
    "FOLLOW_PATHS",
    "Followed",
    "ReconcileResult",
    "WriterLock",
    "follow_entry",
    "followed",
    "followed_since",
    "log_commit",
]

# Paths a commit may name for followers; more (a first load), and they load everything. Editing
# a hub note resolves its thousands of referrers again: re-reading those (and the ~35 bytes a
# path takes in the log) still costs a fraction of loading 100,000 notes.
FOLLOW_PATHS = 50_000


@dataclass(frozen=True, slots=True)
class Followed:
    """What commits made by other processes changed, for memory (`paths`, `guard_ids`) and
    the graph projection (the rest, as a `ReconcileResult` names them)."""

    paths: frozenset[str] = frozenset()
    guard_ids: frozenset[str] = frozenset()
    changed_paths: frozenset[str] = frozenset()
    affected_ids: frozenset[str] = frozenset()
    resolved_paths: frozenset[str] = frozenset()

    def __or__(self, other: Followed) -> Followed:
        return Followed(
            self.paths | other.paths,
            self.guard_ids | other.guard_ids,
            self.changed_paths | other.changed_paths,
            self.affected_ids | other.affected_ids,
            self.resolved_paths | other.resolved_paths,
        )


class WriterLock:
    """An advisory lock on `<state>.lock`, held by the process that plans and writes a
    reconcile. The kernel releases it when its holder dies (even by SIGKILL), so no lock is
    ever stale; it is opened per process (a descriptor inherited across `fork` would be
    shared, and lock nothing between parent and child)."""

    def __init__(self, state: Path) -> None:
        self.path = state.with_name(state.name + ".lock")
        self._fd: int | None = None
        self._pid = 0

    @contextmanager
    def held(self) -> Iterator[None]:
        """Hold the lock (waiting for another process to release it)."""
        fd = self._open()
        if fd is None:
            yield  # no lock file can be made beside the state (read-only folder): SQLite's own
            return
        fcntl.flock(fd, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)

    def close(self) -> None:
        """Close the lock file (releasing the lock)."""
        if self._fd is not None and self._pid == os.getpid():
            os.close(self._fd)
        self._fd = None

    def _open(self) -> int | None:
        if self._fd is None or self._pid != os.getpid():
            try:
                self._fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
            except OSError:
                return None
            self._pid = os.getpid()
        return self._fd


def follow_entry(
    plan: Plan, summary: Summary, stats: Mapping[str, object]
) -> dict[str, list[str]] | None:
    """What a follower of this commit re-reads (for its log entry), or None when it is too
    much to be worth naming (a bulk load: followers load everything)."""
    paths = (
        set(stats)
        | plan.changes.keys()
        | plan.entries.changes.keys()
        | plan.rows.keys()
        | plan.derived
        | {p for p, _ in plan.files_added}
        | set(plan.files_removed)
        | set(summary.changed_paths)
        | set(summary.resolved_paths)
    )
    if len(paths) > FOLLOW_PATHS:
        return None
    return {
        "paths": sorted(paths),
        "guards": sorted(plan.guards.changes),
        "changed": list(summary.changed_paths),
        "affected": list(summary.affected_ids),
        "resolved": list(summary.resolved_paths),
    }


def followed(conn: sqlite3.Connection, *, after: int, token: str | None = None) -> Followed | None:
    """What the commits after generation `after` changed, as the log of `conn`'s snapshot
    says, or None when it cannot say (a commit is no longer logged, or named too much). With
    `token`, the commit of `after` must be the one of that random token (its entry is still
    logged): the state a file derived from it holds, and not a generation of the same number
    in a database made again."""
    rows = dict(
        conn.execute("SELECT key, value FROM meta WHERE key >= 'commit:' AND key < 'commit;'")
    )
    row = conn.execute("SELECT value FROM meta WHERE key = 'generation'").fetchone()
    current = int(row[0]) if row else 0
    if current < after:
        return None  # a database made again from scratch
    if token is not None:
        value = rows.get(f"commit:{after}")
        if value is None or json.loads(value).get("commit") != token:
            return None
    found = Followed()
    for generation in range(after + 1, current + 1):
        value = rows.get(f"commit:{generation}")
        entry = json.loads(value).get("follow") if value is not None else None
        if not isinstance(entry, dict):
            return None
        found |= Followed(
            frozenset(entry["paths"]),
            frozenset(entry["guards"]),
            frozenset(entry["changed"]),
            frozenset(entry["affected"]),
            frozenset(entry["resolved"]),
        )
    return found


def followed_since(source: Store | Reader, generation: str, token: str) -> Followed | None:
    """What the commits after the committed state (`generation`, `token`) changed, as the log
    `source` reads says (None when it cannot say): how a file derived from an older state (the
    graph's compact file) is brought up to date."""
    try:
        after = int(generation)
    except ValueError:
        return None
    return followed(source.conn, after=after, token=token)


def log_commit(conn: sqlite3.Connection, plan: Plan, follow: dict[str, list[str]] | None) -> int:
    """Keep what this commit changed under `commit:<generation>` in `meta` (the last
    `COMMITS_KEPT`): its instant, the digests it leaves and, per scope, how many records it
    changed and the first `COMMIT_IDS` of their ids, and what another process re-reads to
    follow it (`follow_entry`). Every process that follows the state file (a server's
    subscriptions and its workers) reads its commits from there. Returns the generation."""
    generation = int(conn.execute("SELECT value FROM meta WHERE key = 'generation'").fetchone()[0])
    by_scope: dict[str, list[str]] = {}
    for scope, record_id in plan.changed_records:
        by_scope.setdefault(scope, []).append(record_id)
    token = conn.execute("SELECT value FROM meta WHERE key = 'commit'").fetchone()
    entry = {
        "commit": token[0] if token else None,  # this commit's random token
        "at": plan.now_us,
        "digests": {k: format(v, "x") for k, v in plan.digests.items()},
        "changes": {
            scope: [len(ids), sorted(ids)[:COMMIT_IDS]] for scope, ids in sorted(by_scope.items())
        },
        "follow": follow,
    }
    conn.execute(
        "INSERT OR REPLACE INTO meta VALUES (?, ?)", (f"commit:{generation}", json.dumps(entry))
    )
    conn.execute("DELETE FROM meta WHERE key = ?", (f"commit:{generation - COMMITS_KEPT}",))
    return generation


@dataclass(frozen=True, slots=True)
class ReconcileResult:
    """What one reconcile did."""

    snapshot: str
    changed_paths: tuple[str, ...]
    affected_ids: tuple[str, ...]
    checked: int
    read: int
    parsed: int
    deleted: int
    # Notes whose links and references were resolved again (changed notes and the notes whose
    # targets a changed name may now reach): the graph projection re-reads their edges.
    resolved_paths: tuple[str, ...] = ()
    # Whether memory was loaded again on the way (another process wrote the database and its
    # log could not say what): the result then says only what this reconcile changed.
    reloaded: bool = False
    # What commits of other processes changed, followed on the way (when not `reloaded`).
    followed: Followed = Followed()

    @property
    def changed(self) -> bool:
        """Whether anything was written."""
        return bool(self.changed_paths or self.affected_ids)

    @classmethod
    def of_followed(cls, found: Followed) -> ReconcileResult:
        """What other processes' commits changed, as the graph projection reads a result."""
        return cls(
            "",
            tuple(sorted(found.changed_paths)),
            tuple(sorted(found.affected_ids)),
            *(0, 0, 0, 0),
            tuple(sorted(found.resolved_paths)),
        )

    def with_followed(self) -> ReconcileResult:
        """This result with what it followed of other processes' commits (`followed`), as
        the graph projection reads it."""
        seen = self.followed
        return dataclasses.replace(
            self,
            changed_paths=tuple(sorted(seen.changed_paths.union(self.changed_paths))),
            affected_ids=tuple(sorted(seen.affected_ids.union(self.affected_ids))),
            resolved_paths=tuple(sorted(seen.resolved_paths.union(self.resolved_paths))),
        )
