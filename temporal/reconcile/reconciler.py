"""Incremental reconcile of the vault into the state database.

A reconcile (1) finds candidate files: every file of a scan, or only the
paths a watcher named; (2) skips files whose size, mtime and inode are
unchanged, hashes the others and re-parses only those whose SHA-256 changed;
(3) hands the parsed notes to a `ChangeSet`, which works out in memory
which other notes are affected and what to write; (4) writes everything in
one `BEGIN IMMEDIATE` transaction, safeguards included, and only then
updates the in-memory mirror. A crash at any point leaves the previous
snapshot intact, and the next reconcile starts from what was committed; a
failed write makes the reconciler reload its memory from the database.
"""

from __future__ import annotations

import contextlib
import dataclasses
import gc
import hashlib
import json
import os
from collections.abc import Callable, Collection, Generator, Iterable, Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from types import MappingProxyType

from almanac import vault
from almanac.temporal.reconcile.changeset import ChangeSet, snapshot_id
from almanac.temporal.reconcile.follow import (
    Followed,
    ReconcileResult,
    WriterLock,
    follow_entry,
    followed,
    log_commit,
)
from almanac.temporal.reconcile.memory import Memory
from almanac.temporal.reconcile.plan import Summary
from almanac.temporal.store import PROJECTION_TABLES, Store
from almanac.vault import IndexUnavailable, Issue, NoteFile
from almanac.vault.batch import Outcome, read_and_parse, read_in_workers

__all__ = ["Reconciler", "VaultConfig"]

_BULK = 2000  # parsed notes above which a reconcile rebuilds the secondary indexes once
_PARALLEL = 5_000  # files to read from which a worker process reads and parses some of them
_CHUNK = 500  # files per chunk (a chunk's parsed notes fit a pipe's buffer)


@dataclass(frozen=True, slots=True)
class VaultConfig:
    """What of the configuration shapes the projections (part of the fingerprint)."""

    scopes: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    type_aliases: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    # `[fields]`: Almanac date field -> the user's names for it; `[daily_notes]`.
    fields: Mapping[str, tuple[str, ...]] = field(default_factory=lambda: MappingProxyType({}))
    daily_notes: vault.DailyNotes | None = None

    def scope_of(self, path: str) -> str:
        """The scope of a vault-relative path: the longest matching folder, else `default`."""
        best, best_len = "default", -1
        for name, folder in self.scopes.items():
            prefix = folder.strip("/") + "/"
            if (path.startswith(prefix) or prefix == "/") and len(prefix) > best_len:
                best, best_len = name, len(prefix)
        return best

    def all_scopes(self) -> list[str]:
        """Every scope a note can be in: the configured ones and `default`."""
        return sorted({"default", *self.scopes})

    def fingerprint(self, base: str) -> str:
        """`base` combined with the scopes, type aliases, field names and daily notes."""
        daily = self.daily_notes
        parts: list[object] = [base, sorted(self.scopes.items()), sorted(self.type_aliases.items())]
        if self.fields or daily is not None:  # (fingerprints made before these stay the same)
            parts.append(sorted((k, list(v)) for k, v in self.fields.items()))
            parts.append([daily.folder, daily.format] if daily is not None else None)
        return hashlib.sha256(json.dumps(parts).encode()).hexdigest()[:16]

    def read_options(self) -> vault.ReadOptions:
        """How notes are read under this configuration (plain dicts: it goes to a worker)."""
        return vault.ReadOptions(dict(self.type_aliases), dict(self.fields), self.daily_notes)


class Reconciler:
    """Keeps the state database equal to the vault; one per state file and process."""

    def __init__(self, store: Store, root: str | os.PathLike[str], config: VaultConfig) -> None:
        self.store = store
        self.root = os.path.realpath(root)
        self.config = config
        self.parallel_from = _PARALLEL
        # Called with the name of each step of a write ("before-write", "before-commit"): where
        # crash-consistency tests stop a process, and a place for tracing.
        self.on_step: Callable[[str], None] = _no_step
        self.loads = 0  # how often memory was loaded from the database (public: tests, metrics)
        self.follows = 0  # how often it followed other processes' commits instead
        # Processes serving one state file plan and write one at a time (`almanac serve
        # --workers`): a plan made beside another's write would be made again.
        self.lock = WriterLock(store.path)
        self._planning = False  # whether this reconcile's plan began (memory may be ahead)
        self.reload(notes=False)

    def reload(self, *, notes: bool = True) -> None:
        """Forget memory and load what the database holds (at start, after a failed reconcile
        and after another process wrote the database). The one rollback of memory.

        Args:
            notes: Also read the notes' part. At start only the files' part is read (at 100,000
                notes: 0.3 s of 4); the notes' part is then read by the first reconcile that
                finds something to plan, or by `complete`, so a start whose scan finds nothing
                changed answers without it.
        """
        self.memory = Memory()  # a load that fails part-way leaves no version: loaded again
        # Read through a read connection, which does not map the file: through the writer's
        # map, every page of the tables read would stay in the resident size (~300 MB at
        # 100,000 notes). `data_version` is the writer's own, taken first: a commit by another
        # process during the load makes the next reconcile load again.
        version = self.store.conn.execute("PRAGMA data_version").fetchone()[0]
        with self.store.read() as reader:
            memory = Memory.load(reader.conn, notes=notes)
        memory.data_version = version
        self.memory = memory
        self.loads += 1

    def complete(self, lock: AbstractContextManager[object] | None = None) -> None:
        """Read the notes' part of memory if it is not read yet (a server does it in the
        background after start, reading outside `lock`, the lock its reconciles hold, and
        taking what it read inside it).

        What was read is dropped, and memory stays incomplete, if another process wrote since
        the files' part was read, or a reconcile meanwhile read it itself: the next reconcile
        then reads everything again, or has it already.
        """
        memory = self.memory
        if memory.complete:
            return
        with self.store.read() as reader:
            part = Memory.notes_of(reader.conn)
        with lock if lock is not None else contextlib.nullcontext():
            if self.memory is memory and not memory.complete and not self._other_writer():
                memory.adopt(part)

    # -- public -------------------------------------------------------------------------

    def reconcile(
        self,
        *,
        now_us: int,
        paths: Collection[str] | None = None,
        progress: Callable[[int, int], None] | None = None,
    ) -> ReconcileResult:
        """Bring the state database up to date with the vault.

        Args:
            now_us: The request's clock (microseconds), stamped on new guards.
            paths: Vault-relative paths a watcher reported; None scans the whole vault.
            progress: Called with (done, total) while files are read.
        """
        # Everything allocated here is short-lived or lives as long as the reconciler; the cyclic
        # collector would only rescan the large index again and again (seconds at 100k notes).
        gc_was = gc.isenabled()
        gc.disable()
        loads = self.loads
        seen = Followed()
        touched: set[str] = set()
        try:
            if paths is not None and not paths:
                # Nothing to read (the watcher named nothing; another process committed): follow
                # it without waiting for the writer lock, which a long reconcile may hold.
                seen = self.follow() or Followed()
                return ReconcileResult(
                    self.snapshot(), (), (), 0, 0, 0, 0, reloaded=self.loads != loads, followed=seen
                )
            with self.lock.held():
                for _ in range(3):
                    seen |= self.follow(also=touched) or Followed()
                    touched = set()
                    self._planning = False
                    try:
                        result = self._reconcile(now_us, paths, progress)
                        return dataclasses.replace(
                            result, reloaded=self.loads != loads, followed=seen
                        )
                    except _OtherWriter as exc:
                        # Follow what the other process wrote, and plan again; what this plan
                        # changed in memory on its way is read again too.
                        touched = exc.paths
                    except BaseException:
                        # A plan changes the name index as it goes, and a failed write leaves
                        # memory ahead of the database: it is loaded again. A failure before
                        # the plan began (the vault could not be listed) changed nothing.
                        if self._planning:
                            self.reload()
                        raise
            raise IndexUnavailable("Another process keeps writing the state database")
        finally:
            if gc_was:
                gc.enable()

    def follow(self, *, also: Collection[str] = ()) -> Followed | None:
        """Bring memory in step with what other processes committed since it was loaded or
        last written: only the paths their log entries name are read again.

        Args:
            also: Paths to read again as well (an abandoned plan changed their names).

        Returns:
            What they changed (empty when nothing), or None when memory had to be loaded
            again in full (the log has a gap, or a commit named too many paths).
        """
        if not also and not self._other_writer():
            return Followed()
        version = self.store.conn.execute("PRAGMA data_version").fetchone()[0]
        memory = self.memory
        try:
            with self.store.read() as reader:
                found = followed(reader.conn, after=memory.generation)
                if found is not None:
                    memory.refresh(reader.conn, found.paths | set(also), found.guard_ids)
        except BaseException:
            self.reload()  # memory may be half refreshed
            raise
        if found is None:
            self.reload()
            return None
        memory.data_version = version
        self.follows += 1
        return found

    def behind(self) -> bool:
        """Whether another process committed since memory was loaded, written or followed."""
        return self._other_writer()

    def _other_writer(self) -> bool:
        """Whether another connection committed since this reconciler last read or wrote."""
        version = self.store.conn.execute("PRAGMA data_version").fetchone()[0]
        return bool(version != self.memory.data_version)

    def _reconcile(
        self,
        now_us: int,
        paths: Collection[str] | None,
        progress: Callable[[int, int], None] | None,
    ) -> ReconcileResult:
        if paths is None:
            result = vault.scan(self.root, ordered=False, known=self.memory.keys)
            scan_issues: list[Issue] = list(result.issues)
            files: dict[str, NoteFile] = {f.path: f for f in result.files}
            # `known` left the unchanged regular files out; a symlinked note is compared here.
            keys = self.memory.keys
            todo = [p for p, f in files.items() if keys.get(p) != (f.size, f.mtime_ns, f.ino)]
            todo.extend(result.gone)
            listed = set(result.attachments)
            known_files = self.memory.attachments
            added = listed.difference(known_files)
            removed = [p for p in known_files if p not in listed]
        else:
            files, scan_issues = {}, []
            for path in paths:
                found = vault.stat_note(self.root, path)
                if isinstance(found, NoteFile):
                    files[path] = found
                elif isinstance(found, Issue):
                    scan_issues.append(found)
            # A watcher named these: hash them even when size and mtime look the same (a
            # same-size edit within one timestamp tick of a coarse-time file system).
            todo = [p for p in set(paths) if p in files or p in self.memory.keys]
            known_files = self.memory.attachments
            now = {p for p in set(paths) - files.keys() if vault.is_attachment(self.root, p)}
            added = now.difference(known_files)
            removed = [p for p in set(paths) if p in known_files and p not in now]
        todo.sort()
        if not self.memory.complete and (
            todo or added or removed or self._scan_issues_changed(scan_issues, paths)
        ):
            self.complete()  # something to plan: with the whole memory
            if not self.memory.complete:
                raise _OtherWriter(set())  # the keys compared above are not the database's
        # Each changed file goes into the plan as soon as it is parsed (`take`), while the worker
        # process parses on: that work shares the two cores too. The plan changes the name
        # index as it goes, so a failure on the way reloads memory (`reconcile`).
        self._planning = True
        plan = ChangeSet(self.memory, self.store.conn, self.config.scope_of, now_us)
        plan.take_attachments(added, removed)
        new_stats: dict[str, tuple[int, int, int, str] | None] = {}
        unread: list[Issue] = []
        present = [files[p] for p in todo if p in files]
        revisions = self.memory.revisions
        known = {f.path: revisions[f.path] for f in present if f.path in revisions}
        options = self.config.read_options()
        chunks: Iterable[list[Outcome]] = ()
        try:
            for path in todo:
                if path not in files:
                    plan.take(path, None)
                    new_stats[path] = None
            if len(present) >= self.parallel_from:
                # Two cores: a worker process reads and parses chunks while this one does others.
                chunks = read_in_workers(present, known, options, chunk=_CHUNK, progress=progress)
            else:
                chunks = [read_and_parse(present, known, options, progress=progress)]
            for chunk in chunks:
                for path, stat, parsed, issue in chunk:
                    if issue is not None:
                        if not os.path.lexists(files[path].fspath):
                            plan.take(path, None)  # deleted between the scan and the read
                            new_stats[path] = None
                        else:
                            # Keep what was read before (if anything) and say why; no stat is
                            # recorded, so the next reconcile tries again.
                            unread.append(issue)
                        continue
                    new_stats[path] = stat
                    if parsed is not None:
                        plan.take(path, parsed)
        except BaseException:
            if isinstance(chunks, Generator):
                chunks.close()  # stops the worker now, not when the traceback goes
            raise
        scan_issues += sorted(unread, key=lambda i: i.path)  # chunks come in any order
        if progress is not None:
            progress(len(todo), len(todo))
        return self._apply(plan, new_stats, scan_issues, paths, now_us, len(todo), len(present))

    def snapshot(self, scopes: Iterable[str] | None = None) -> str:
        """The snapshot id of the given scopes (all when None)."""
        return snapshot_id(self.memory.digests, scopes, self.store.fingerprint)

    # -- steps --------------------------------------------------------------------------

    def _apply(
        self,
        plan: ChangeSet,
        new_stats: Mapping[str, tuple[int, int, int, str] | None],
        scan_issues: list[Issue] | None,
        paths: Collection[str] | None,
        now_us: int,
        checked: int,
        read: int,
    ) -> ReconcileResult:
        changes = plan.changes
        scan_changed = self._scan_issues_changed(scan_issues, paths)
        files_changed = plan.files_added or plan.files_removed
        keys, revisions = self.memory.keys, self.memory.revisions
        new_stats = {  # a file read again as it was (another process indexed it) writes nothing
            p: s
            for p, s in new_stats.items()
            if s is None or keys.get(p) != s[:3] or revisions.get(p) != s[3]
        }
        if not changes and not new_stats and not scan_changed and not files_changed:
            return ReconcileResult(self.snapshot(), (), (), checked, read, 0, 0)
        done = self._write(plan, new_stats, scan_issues if scan_changed else None, paths)
        memory = self.memory
        for path, stat in new_stats.items():
            if stat is None:
                memory.keys.pop(path, None)
                memory.revisions.pop(path, None)
            else:
                memory.keys[path] = stat[:3]
                memory.revisions[path] = stat[3]
        return ReconcileResult(
            self.snapshot(),
            done.changed_paths,
            done.affected_ids,
            checked,
            read,
            done.parsed,
            done.deleted,
            done.resolved_paths,
        )

    def _scan_issues_changed(
        self, scan_issues: list[Issue] | None, paths: Collection[str] | None
    ) -> bool:
        if paths is None:
            new = sorted(scan_issues or [], key=_issue_key)
            return new != sorted(self.memory.scan_issues, key=_issue_key)
        old = [i for i in self.memory.scan_issues if i.path in set(paths)]
        return bool(old or scan_issues)

    def _write(
        self,
        plan: ChangeSet,
        new_stats: Mapping[str, tuple[int, int, int, str] | None],
        scan_issues: list[Issue] | None,
        paths: Collection[str] | None,
    ) -> Summary:
        if not plan.first_load:
            plan.run()  # it reads committed rows: before a bulk write drops their indexes
        bulk = len(plan.notes) > _BULK and len(plan.notes) > len(self.memory.entries)
        with self.store.write(checkpoint_later=bulk) as conn:
            if self._other_writer():
                files = {p for p, _ in plan.files_added} | set(plan.files_removed)
                raise _OtherWriter(set(plan.changes) | files)
            self.on_step("before-write")
            with self.store.bulk(conn, active=bulk) as work:
                plan.write(conn, work)
                work.index(*PROJECTION_TABLES)  # the last indexes build while this sums up
                done = plan.summary()
            conn.executemany(
                "DELETE FROM files WHERE path = ?",
                [(p,) for p, s in new_stats.items() if s is None],
            )
            conn.executemany(
                "INSERT OR REPLACE INTO files VALUES (?, ?, ?, ?, ?)",
                [(p, *s) for p, s in new_stats.items() if s is not None],
            )
            conn.executemany(
                "DELETE FROM attachments WHERE path = ?", [(p,) for p in plan.files_removed]
            )
            conn.executemany("INSERT INTO attachments VALUES (?, ?)", plan.files_added)
            scope_of = self.config.scope_of
            if scan_issues is not None:
                if paths is None:
                    conn.execute("DELETE FROM issues WHERE origin = 'scan'")
                else:
                    conn.executemany(
                        "DELETE FROM issues WHERE path = ? AND origin = 'scan'",
                        [(p,) for p in paths],
                    )
                conn.executemany(
                    "INSERT INTO issues VALUES (?, ?, ?, ?, ?, ?, 'scan', ?)",
                    [
                        (i.path, i.line, i.field, i.code, i.message, i.record_id, scope_of(i.path))
                        for i in scan_issues
                    ],
                )
            elif paths is not None:
                conn.executemany(
                    "DELETE FROM issues WHERE path = ? AND origin = 'scan'", [(p,) for p in paths]
                )
            # A counter of committed writes: the API pairs a read transaction with the graph
            # projection published for the same generation.
            conn.execute(
                "INSERT OR REPLACE INTO meta SELECT 'generation',"
                " coalesce((SELECT value FROM meta WHERE key = 'generation'), 0) + 1"
            )
            # A random token per commit: with the generation, it names this committed state
            # apart from any other database's (a state file deleted and made again counts
            # from 1 too), so a file derived from it can say which state it is of.
            conn.execute(
                "INSERT OR REPLACE INTO meta VALUES ('commit', ?)", (os.urandom(16).hex(),)
            )
            conn.execute(
                "INSERT OR REPLACE INTO meta VALUES ('digests', ?)",
                (json.dumps({k: format(v, "x") for k, v in sorted(plan.digests.items())}),),
            )
            generation = log_commit(conn, plan, follow_entry(plan, done, new_stats))
            self.on_step("before-commit")
        plan.commit()
        self.memory.generation = generation
        if scan_issues is not None:
            if paths is None:
                self.memory.scan_issues = list(scan_issues)
            else:
                chosen = set(paths)
                self.memory.scan_issues = [
                    i for i in self.memory.scan_issues if i.path not in chosen
                ] + scan_issues
        return done


class _OtherWriter(Exception):
    """Another process committed to the state database; plan again from what it wrote."""

    def __init__(self, paths: set[str]) -> None:
        super().__init__("another process wrote the state database")
        self.paths = paths  # what the abandoned plan changed in memory (names, attachments)


def _no_step(name: str) -> None:
    """What `Reconciler.on_step` does unless set: nothing."""


def _issue_key(issue: Issue) -> tuple[str, str, str]:
    """How scan issues are compared between two scans."""
    return (issue.path, issue.code, issue.message)
