"""Incremental reconcile of the vault into the state database.

A reconcile (1) finds candidate files: every file of a scan, or only the
paths a watcher named; (2) skips files whose size, mtime and inode are
unchanged, hashes the others and re-parses only those whose SHA-256 changed;
(3) works out which other notes are *affected*: notes whose links or
references may now resolve differently (their target text matches a name
that appeared or vanished), notes sharing an id with a changed note
(duplicates), and, transitively, notes whose eligibility depends on a note
whose eligibility flipped; (4) recomputes resolution, eligibility and derived
issues for exactly those notes, in memory; (5) writes everything in
one `BEGIN IMMEDIATE` transaction, safeguards included, and only then
updates the in-memory mirror. A crash at any point leaves the previous
snapshot intact, and the next reconcile starts from what was committed.
"""

from __future__ import annotations

import contextlib
import dataclasses
import gc
import hashlib
import json
import os
import sqlite3
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

import vault
from temporal.dates import DateValue
from temporal.names import NameIndex, Resolution, normalize_name
from temporal.records import note_dates
from temporal.store import Store
from vault import Issue, Note, NoteFile, ParsedNote

__all__ = ["ReconcileResult", "Reconciler", "VaultConfig"]

_REQUIRED = {"relationship": ("from", "to"), "claim": ("subject",)}
_SENTINEL_HOOK = "ALMANAC_CRASH_AT"
_MISSING = Resolution("missing")
_BULK = 2000  # parsed notes above which a reconcile rebuilds the secondary indexes once


@dataclass(frozen=True, slots=True)
class VaultConfig:
    """What of the configuration shapes the projections (part of the fingerprint)."""

    scopes: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    type_aliases: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))

    def scope_of(self, path: str) -> str:
        """The scope of a vault-relative path: the longest matching folder, else `default`."""
        best, best_len = "default", -1
        for name, folder in self.scopes.items():
            prefix = folder.strip("/") + "/"
            if (path.startswith(prefix) or prefix == "/") and len(prefix) > best_len:
                best, best_len = name, len(prefix)
        return best

    def fingerprint(self, base: str) -> str:
        """`base` combined with the scopes and type aliases."""
        blob = json.dumps([base, sorted(self.scopes.items()), sorted(self.type_aliases.items())])
        return hashlib.sha256(blob.encode()).hexdigest()[:16]


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

    @property
    def changed(self) -> bool:
        """Whether anything was written."""
        return bool(self.changed_paths or self.affected_ids)


@dataclass(slots=True)
class _Entry:
    """What the reconciler remembers of one usable note."""

    path: str
    id: str
    scope: str
    kind: str
    valid: bool
    lifecycle: str
    revision: str
    reinstated_us: int | None
    refs: tuple[tuple[str, int, str], ...]
    resolved: dict[tuple[str, int], Resolution] = field(default_factory=dict)
    ambiguous_links: tuple[tuple[int, str], ...] = ()
    dup: bool = False
    blocked: bool = False
    eligible: bool = False


@dataclass(slots=True)
class _Guard:
    lifecycle: str
    seen_at: int
    hashes: set[str]


class Reconciler:
    """Keeps the state database equal to the vault; one per state file and process."""

    def __init__(self, store: Store, root: str | os.PathLike[str], config: VaultConfig) -> None:
        self.store = store
        self.root = os.path.realpath(root)
        self.config = config
        self.names = NameIndex()
        self.entries: dict[str, _Entry] = {}
        self.stats: dict[str, tuple[int, int, int, str]] = {}
        self.referrers: dict[str, set[str]] = {}
        self.guards: dict[str, _Guard] = {}
        self.digests: dict[str, int] = {}
        self.scan_issues: list[Issue] = []
        self._load()

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
        stats = self.stats
        if paths is None:
            result = vault.scan(self.root, ordered=False)
            scan_issues: list[Issue] = list(result.issues)
            files: dict[str, NoteFile] = {}
            todo: list[str] = []
            for f in result.files:
                files[f.path] = f
                known = stats.get(f.path)
                if known is None or known[:3] != (f.size, f.mtime_ns, f.ino):
                    todo.append(f.path)
            if len(files) != len(stats) or todo:
                todo.extend(stats.keys() - files.keys())
        else:
            files, scan_issues = {}, []
            for path in paths:
                found = vault.stat_note(self.root, path)
                if isinstance(found, NoteFile):
                    files[path] = found
                elif isinstance(found, Issue):
                    scan_issues.append(found)
            todo = [p for p in set(paths) if self._stat_changed(p, files.get(p))]
        todo.sort()
        changes: dict[str, ParsedNote | None] = {}
        new_stats: dict[str, tuple[int, int, int, str] | None] = {}
        checked = read = 0
        gc_was = gc.isenabled()
        if len(todo) > 1000:
            gc.disable()
        try:
            for done, path in enumerate(todo, 1):
                checked += 1
                file = files.get(path)
                if file is None:
                    changes[path] = None
                    new_stats[path] = None
                    continue
                read += 1
                content = vault.read_bytes(file)
                if isinstance(content, Issue):
                    changes[path] = ParsedNote(path, "", None, (content,))
                    new_stats[path] = (file.size, file.mtime_ns, file.ino, "")
                elif self.stats.get(path, (0, 0, 0, None))[3] == content.sha256:
                    new_stats[path] = (content.size, content.mtime_ns, content.ino, content.sha256)
                else:
                    changes[path] = vault.parse_note(
                        path,
                        content.data,
                        revision=content.sha256,
                        type_aliases=self.config.type_aliases,
                    )
                    new_stats[path] = (content.size, content.mtime_ns, content.ino, content.sha256)
                if progress is not None and done % 500 == 0:
                    progress(done, len(todo))
            if progress is not None:
                progress(len(todo), len(todo))
            return self._apply(changes, new_stats, scan_issues, paths, now_us, checked, read)
        finally:
            if gc_was:
                gc.enable()

    def snapshot(self, scopes: Iterable[str] | None = None) -> str:
        """The snapshot id of the given scopes (all when None)."""
        return _snapshot(self.digests, scopes, self.store.fingerprint)

    # -- steps --------------------------------------------------------------------------

    def _stat_changed(self, path: str, file: NoteFile | None) -> bool:
        known = self.stats.get(path)
        if file is None:
            return known is not None
        return known is None or known[:3] != (file.size, file.mtime_ns, file.ino)

    def _apply(
        self,
        changes: dict[str, ParsedNote | None],
        new_stats: Mapping[str, tuple[int, int, int, str] | None],
        scan_issues: list[Issue] | None,
        paths: Collection[str] | None,
        now_us: int,
        checked: int,
        read: int,
    ) -> ReconcileResult:
        scan_changed = self._scan_issues_changed(scan_issues, paths)
        if not changes and not new_stats and not scan_changed:
            return ReconcileResult(self.snapshot(), (), (), checked, read, 0, 0)
        try:
            plan = self._write(
                changes, new_stats, scan_issues if scan_changed else None, paths, now_us
            )
        except BaseException:
            self._reset()
            raise
        for path, stat in new_stats.items():
            if stat is None:
                self.stats.pop(path, None)
            else:
                self.stats[path] = stat
        parsed = sum(1 for c in changes.values() if c is not None)
        deleted = sum(1 for c in changes.values() if c is None)
        return ReconcileResult(
            self.snapshot(),
            tuple(sorted(changes)),
            tuple(sorted(plan.affected_ids)),
            checked,
            read,
            parsed,
            deleted,
        )

    def _scan_issues_changed(
        self, scan_issues: list[Issue] | None, paths: Collection[str] | None
    ) -> bool:
        if paths is None:
            new = sorted(scan_issues or [], key=_issue_key)
            return new != sorted(self.scan_issues, key=_issue_key)
        old = [i for i in self.scan_issues if i.path in set(paths)]
        return bool(old or scan_issues)

    def _write(
        self,
        changes: dict[str, ParsedNote | None],
        new_stats: Mapping[str, tuple[int, int, int, str] | None],
        scan_issues: list[Issue] | None,
        paths: Collection[str] | None,
        now_us: int,
    ) -> _Plan:
        plan = _Plan(self, changes, now_us)
        plan.run()
        bulk = len(plan.notes) > _BULK and len(plan.notes) > len(self.entries)
        with self.store.write() as conn:
            _hook("before-write")
            with self.store.bulk(conn) if bulk else contextlib.nullcontext():
                plan.write(conn)
            conn.executemany(
                "DELETE FROM files WHERE path = ?",
                [(p,) for p, s in new_stats.items() if s is None],
            )
            conn.executemany(
                "INSERT OR REPLACE INTO files VALUES (?, ?, ?, ?, ?)",
                [(p, *s) for p, s in new_stats.items() if s is not None],
            )
            if scan_issues is not None:
                if paths is None:
                    conn.execute("DELETE FROM issues WHERE origin = 'scan'")
                else:
                    conn.executemany(
                        "DELETE FROM issues WHERE path = ? AND origin = 'scan'",
                        [(p,) for p in paths],
                    )
                conn.executemany(
                    "INSERT INTO issues VALUES (?, ?, ?, ?, ?, ?, 'scan')",
                    [
                        (i.path, i.line, i.field, i.code, i.message, i.record_id)
                        for i in scan_issues
                    ],
                )
            elif paths is not None:
                conn.executemany(
                    "DELETE FROM issues WHERE path = ? AND origin = 'scan'", [(p,) for p in paths]
                )
            conn.execute(
                "INSERT OR REPLACE INTO meta VALUES ('digests', ?)",
                (json.dumps({k: format(v, "x") for k, v in plan.digests.items()}),),
            )
            _hook("before-commit")
        plan.commit()
        if scan_issues is not None:
            if paths is None:
                self.scan_issues = list(scan_issues)
            else:
                chosen = set(paths)
                self.scan_issues = [
                    i for i in self.scan_issues if i.path not in chosen
                ] + scan_issues
        return plan

    def _reset(self) -> None:
        """Forget memory and reload what was committed (after a failed write)."""
        self.__init__(self.store, self.root, self.config)  # type: ignore[misc]

    def _load(self) -> None:
        conn = self.store.conn
        for path, size, mtime_ns, ino, revision in conn.execute("SELECT * FROM files"):
            self.stats[path] = (size, mtime_ns, ino, revision)
        for row in conn.execute(
            "SELECT path, id, scope, kind, valid, lifecycle, revision, eligible, slug, title,"
            " aliases FROM notes"
        ):
            (
                path,
                note_id,
                scope,
                kind,
                valid,
                lifecycle,
                revision,
                eligible,
                slug,
                title,
                aliases,
            ) = row
            entry = _Entry(path, note_id, scope, kind, bool(valid), lifecycle, revision, None, ())
            entry.eligible = bool(eligible)
            self.entries[path] = entry
            if valid:
                names = [title, *json.loads(aliases)]
                self.names.add(path, id=note_id, slug=slug, scope=scope, names=names)
        for path, start in conn.execute(
            "SELECT path, start FROM dates WHERE field = 'reinstated_at'"
        ):
            self.entries[path].reinstated_us = start
        refs: dict[str, list[tuple[str, int, str]]] = {}
        for path, fld, ord_, _kind, text, line, target, resolved_path, status in conn.execute(
            "SELECT path, field, ord, kind, text, line, target, resolved_path, status"
            " FROM targets ORDER BY path, field, ord"
        ):
            entry = self.entries[path]
            if fld == "link":
                if status == "ambiguous":
                    entry.ambiguous_links += ((line, text),)
                continue
            refs.setdefault(path, []).append((fld, ord_, target))
            entry.resolved[(fld, ord_)] = Resolution(status, resolved_path)
            if resolved_path is not None:
                self.referrers.setdefault(resolved_path, set()).add(path)
        for path, items in refs.items():
            self.entries[path].refs = tuple(items)
        for path, code in conn.execute("SELECT path, code FROM issues WHERE origin = 'derived'"):
            if code == "resurrection_blocked":
                self.entries[path].blocked = True
            elif code == "duplicate_id":
                self.entries[path].dup = True
        for row in conn.execute(
            "SELECT path, line, field, code, message, record_id FROM issues WHERE origin = 'scan'"
        ):
            self.scan_issues.append(Issue(*row))
        for note_id, lifecycle, seen_at, hashes in conn.execute("SELECT * FROM guards"):
            self.guards[note_id] = _Guard(lifecycle, seen_at, set(json.loads(hashes)))
        row = conn.execute("SELECT value FROM meta WHERE key = 'digests'").fetchone()
        if row:
            self.digests = {k: int(v, 16) for k, v in json.loads(row[0]).items()}


class _Plan:
    """The in-memory part of one reconcile: what to write, computed before writing."""

    def __init__(self, rec: Reconciler, changes: dict[str, ParsedNote | None], now_us: int) -> None:
        self.rec = rec
        self.changes = changes
        self.now_us = now_us
        self.notes: dict[str, Note] = {}
        self.file_issues: dict[str, list[Issue]] = {}
        self.dates: dict[str, dict[str, DateValue]] = {}
        self.zones: dict[str, str | None] = {}
        self.entries = dict(rec.entries)
        self.digests = dict(rec.digests)
        self.guards = {
            k: _Guard(g.lifecycle, g.seen_at, set(g.hashes)) for k, g in rec.guards.items()
        }
        self.referrers = dict(rec.referrers)  # sets are copied on first change: _referrers_of
        self.affected: set[str] = set()
        self.derived: set[str] = set()
        self.affected_ids: set[str] = set()
        self.rows: dict[str, list[tuple[object, ...]]] = {}
        self.seen: list[tuple[str, str]] = []
        self.names = rec.names
        # Targets repeat (hubs): resolve each (target, kind, scope, folder) once per plan,
        # after every name of the change set is in the index.
        self._resolved: dict[tuple[str, str, str, str], Resolution] = {}

    def run(self) -> None:
        rec = self.rec
        lower_keys: set[str] = set()
        norm_keys: set[str] = set()
        id_keys: set[str] = set()
        self._undo: list[tuple[str, _Entry | None]] = []
        for path, parsed in self.changes.items():
            old = self.entries.get(path)
            if old is not None:
                lower, norm = self.names.keys(path)
                lower_keys |= lower
                norm_keys |= norm
                id_keys.add(old.id)
                self.affected_ids.add(old.id)
                self.names.remove(path)
                del self.entries[path]
            self._undo.append((path, old))
            self.file_issues[path] = list(parsed.issues) if parsed else []
            note = parsed.note if parsed else None
            if note is None:
                continue
            dates, tz, date_issues = note_dates(note)
            self.zones[path] = tz
            self.file_issues[path].extend(date_issues)
            self.notes[path] = note
            self.dates[path] = dates
            reinstated = dates.get("reinstated_at")
            refs = tuple(
                [(f, 0, t) for f, t in sorted(note.refs.items())]
                + [("entities", i, t) for i, t in enumerate(note.entities)]
            )
            entry = _Entry(
                path,
                note.id,
                rec.config.scope_of(path),
                note.kind,
                note.valid,
                note.lifecycle,
                note.revision,
                reinstated.start_us if reinstated else None,
                refs,
            )
            self.entries[path] = entry
            self.affected_ids.add(note.id)
            if note.valid:
                self.names.add(
                    path,
                    id=note.id,
                    slug=note.slug,
                    scope=entry.scope,
                    names=(note.title, *note.aliases),
                )
                lower, norm = self.names.keys(path)
                lower_keys |= lower
                norm_keys |= norm
                id_keys.add(note.id)
                self.seen.append((note.id, note.revision))
        self.affected = set(self.notes) | self._targets_matching(lower_keys, norm_keys)
        for note_id in id_keys:
            self.affected |= self.names.paths_with_id(note_id) | self.names.case_twins(note_id)
        self.affected &= set(self.entries)
        self._guard_and_block()
        for path in sorted(self.affected):
            self._resolve(path)
        self._eligibility()

    def _targets_matching(self, lower: set[str], norm: set[str]) -> set[str]:
        if not lower and not norm:
            return set()
        if len(self.rec.entries) == 0:
            return set()
        conn = self.rec.store.conn
        found: set[str] = set()
        for column, keys in (("key_lower", lower), ("key_norm", norm)):
            items = sorted(keys)
            for i in range(0, len(items), 500):
                chunk = items[i : i + 500]
                marks = ",".join("?" * len(chunk))
                sql = f"SELECT DISTINCT path FROM targets WHERE {column} IN ({marks})"
                found.update(row[0] for row in conn.execute(sql, chunk))
        return found

    def _guard_and_block(self) -> None:
        for path in sorted(self.notes):
            note, entry = self.notes[path], self.entries[path]
            if not note.valid:
                continue
            guard = self.guards.get(note.id)
            if note.lifecycle != "active":
                if guard is None or self._was_reinstated(note.id, guard):
                    seen = {r for r in self._seen_revisions(note.id)}
                    guard = _Guard(note.lifecycle, self.now_us, seen)
                    self.guards[note.id] = guard
                guard.lifecycle = note.lifecycle
                guard.hashes.update(self._seen_revisions(note.id))
                guard.hashes.add(note.revision)
            elif guard is not None:
                reinstated = entry.reinstated_us
                entry.blocked = note.revision in guard.hashes or (
                    reinstated is None or reinstated <= guard.seen_at
                )

    def _was_reinstated(self, note_id: str, guard: _Guard) -> bool:
        previous = [
            old
            for path, old in self._undo
            if old is not None and old.id == note_id and old.eligible
        ]
        return any(o.lifecycle == "active" and not o.blocked for o in previous)

    def _seen_revisions(self, note_id: str) -> set[str]:
        rows = self.rec.store.conn.execute("SELECT revision FROM seen WHERE id = ?", (note_id,))
        return {r[0] for r in rows} | {rev for i, rev in self.seen if i == note_id}

    def _own(self, path: str) -> _Entry:
        """The plan's own copy of an entry, so the reconciler's memory stays as committed."""
        entry = self.entries[path]
        if self.rec.entries.get(path) is entry:
            entry = dataclasses.replace(entry, resolved=dict(entry.resolved))
            self.entries[path] = entry
        return entry

    def _referrers_of(self, path: str) -> set[str]:
        """The plan's own set of notes whose references resolve to `path`."""
        found = self.referrers.get(path)
        if found is None or found is self.rec.referrers.get(path):
            found = self.referrers[path] = set(found or ())
        return found

    def _resolve(self, path: str) -> None:
        entry = self._own(path)
        for old in entry.resolved.values():
            if old.path is not None and old.path in self.referrers:
                self._referrers_of(old.path).discard(path)
        entry.resolved = {}
        rows: list[tuple[object, ...]] = []
        links: Iterable[tuple[str, int, str, str, str, int | None]]
        if path in self.notes:
            note = self.notes[path]
            links = [
                ("link", i, link.kind, link.text, link.target, link.line)
                for i, link in enumerate(note.links)
            ]
            refs = [(f, o, "ref", t, t, note.lines.get(f)) for f, o, t in entry.refs]
            items = [*refs, *links]
        else:
            items = list(
                self.rec.store.conn.execute(
                    "SELECT field, ord, kind, text, target, line FROM targets WHERE path = ?"
                    " ORDER BY field, ord",
                    (path,),
                )
            )
            entry.refs = tuple((f, o, t) for f, o, k, _x, t, _l in items if f != "link")
        ambiguous: list[tuple[int, str]] = []
        folder = path.rpartition("/")[0]
        cache = self._resolved
        for fld, ord_, kind, text, target, line in items:
            key = (target, kind, entry.scope, folder)
            res: Resolution | None = cache.get(key) if entry.valid else _MISSING
            if res is None:
                res = cache[key] = self.names.resolve(
                    target, kind=kind, scope=entry.scope, from_path=path
                )
            if fld == "link":
                if res.status == "ambiguous":
                    ambiguous.append((line or 0, text))
            else:
                entry.resolved[(fld, ord_)] = res
                if res.path is not None:
                    self._referrers_of(res.path).add(path)
            resolved_id = self.entries[res.path].id if res.path else None
            rows.append(
                (
                    path,
                    fld,
                    ord_,
                    kind,
                    text,
                    line,
                    target,
                    target.lower(),
                    normalize_name(target),
                    resolved_id,
                    res.path,
                    res.status,
                )
            )
        entry.ambiguous_links = tuple(ambiguous)
        self.rows[path] = rows

    def _eligibility(self) -> None:
        for path in self.affected:
            entry = self._own(path)
            entry.dup = entry.valid and len(self.names.paths_with_id(entry.id)) > 1
        pending = set(self.affected)
        rounds = 0
        while pending:
            rounds += 1
            memo: dict[str, bool] = {}
            flipped: set[str] = set()
            for path in sorted(pending):
                entry = self._own(path)
                value = self._eligible(path, memo, set(), pending)
                old = self.rec.entries.get(path)
                if old is None or old.eligible != value:
                    flipped.add(path)
                entry.eligible = value
                self.derived.add(path)
            pending = set()
            for path in flipped:
                for ref in self.referrers.get(path, ()):
                    if ref not in self.derived and ref in self.entries:
                        pending.add(ref)
                        self.affected_ids.add(self.entries[ref].id)
                self.affected_ids.add(self.entries[path].id)
            pending -= self.derived
        # Supersession cycles and dangling references are read off targets' eligibility:
        # referrers of every derived note get their derived issues recomputed too.
        extra = set()
        for path in self.derived | set(self.notes):
            extra |= self.referrers.get(path, set())
        for path, old in self._undo:
            if old is not None:
                extra |= self.referrers.get(path, set()) | self.rec.referrers.get(path, set())
        self.derived |= {p for p in extra if p in self.entries}
        self._digest()

    def _eligible(
        self, path: str, memo: dict[str, bool], visiting: set[str], pending: set[str]
    ) -> bool:
        if path in memo:
            return memo[path]
        entry = self.entries[path]
        if path not in pending and path not in self.derived:
            return entry.eligible
        ok = entry.valid and not entry.dup and not entry.blocked and entry.lifecycle != "withdrawn"
        if ok:
            visiting.add(path)
            for fld in _REQUIRED.get(entry.kind, ()):
                res = entry.resolved.get((fld, 0))
                if res is None or res.path is None or res.path in visiting:
                    ok = False
                    break
                if not self._eligible(res.path, memo, visiting, pending):
                    ok = False
                    break
            visiting.discard(path)
        memo[path] = ok
        return ok

    def _digest(self) -> None:
        touched = {p for p, _ in self._undo} | self.derived
        for path in touched:
            old = self.rec.entries.get(path)
            if old is not None and old.eligible:
                self.digests[old.scope] = self.digests.get(old.scope, 0) ^ _contribution(old)
            new = self.entries.get(path)
            if new is not None and new.eligible:
                self.digests[new.scope] = self.digests.get(new.scope, 0) ^ _contribution(new)
        self.digests = {scope: value for scope, value in self.digests.items() if value}

    # -- writing ------------------------------------------------------------------------

    def write(self, conn: sqlite3.Connection) -> None:
        """Replace the rows of every changed and affected note, in the caller's transaction."""
        removed = [(p,) for p, _ in self._undo]
        for table in ("notes", "dates", "names"):
            conn.executemany(f"DELETE FROM {table} WHERE path = ?", removed)
        conn.executemany("DELETE FROM issues WHERE path = ? AND origin = 'file'", removed)
        rewrite = [(p,) for p in sorted(set(self.rows) | {p for p, _ in self._undo})]
        conn.executemany("DELETE FROM targets WHERE path = ?", rewrite)
        derived = [(p,) for p in sorted(self.derived | {p for p, _ in self._undo} | set(self.rows))]
        conn.executemany("DELETE FROM issues WHERE path = ? AND origin = 'derived'", derived)
        conn.executemany("INSERT INTO notes VALUES (" + ",".join("?" * 27) + ")", self._note_rows())
        conn.executemany("INSERT INTO dates VALUES (?, ?, ?, ?, ?, ?)", self._date_rows())
        conn.executemany("INSERT INTO names VALUES (?, ?, ?)", self._name_rows())
        conn.executemany(
            "INSERT INTO targets VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [row for p in sorted(self.rows) for row in self.rows[p]],
        )
        conn.executemany(
            "INSERT INTO issues VALUES (?, ?, ?, ?, ?, ?, 'file')",
            [
                (i.path, i.line, i.field, i.code, i.message, i.record_id)
                for p in sorted(self.file_issues)
                for i in self.file_issues[p]
            ],
        )
        derived_paths = sorted(p for (p,) in derived if p in self.entries)
        conn.executemany(
            "UPDATE notes SET eligible = ? WHERE path = ?",
            [(int(self.entries[p].eligible), p) for p in derived_paths if p not in self.notes],
        )
        conn.executemany(
            "INSERT INTO issues VALUES (?, ?, ?, ?, ?, ?, 'derived')",
            [row for p in derived_paths for row in self._derived_issues(p)],
        )
        conn.executemany("INSERT OR IGNORE INTO seen VALUES (?, ?)", self.seen)
        conn.executemany(
            "INSERT OR REPLACE INTO guards VALUES (?, ?, ?, ?)",
            [
                (k, g.lifecycle, g.seen_at, json.dumps(sorted(g.hashes)))
                for k, g in sorted(self.guards.items())
                if k not in self.rec.guards
                or g.hashes != self.rec.guards[k].hashes
                or g.seen_at != self.rec.guards[k].seen_at
                or g.lifecycle != self.rec.guards[k].lifecycle
            ],
        )

    def commit(self) -> None:
        """Make the plan the reconciler's memory, once the transaction committed."""
        rec = self.rec
        rec.entries = self.entries
        rec.referrers = self.referrers
        rec.guards = self.guards
        rec.digests = self.digests

    def _note_rows(self) -> Iterator[tuple[object, ...]]:
        for path in sorted(self.notes):
            n, e = self.notes[path], self.entries[path]
            yield (
                path,
                n.id,
                e.scope,
                n.slug,
                n.kind,
                n.type,
                n.title,
                json.dumps(n.aliases),
                json.dumps(n.tags),
                n.lifecycle,
                n.refs.get("superseded_by"),
                n.state,
                n.relation,
                n.weight,
                int(n.source_event),
                self.zones[path],
                n.recurrence,
                json.dumps(n.exdates),
                json.dumps(n.rdates),
                n.body,
                n.body_line,
                n.line_count,
                n.revision,
                json.dumps(dict(n.extra), default=str),
                json.dumps(dict(n.lines)),
                int(n.valid),
                int(e.eligible),
            )

    def _date_rows(self) -> Iterator[tuple[object, ...]]:
        for path in sorted(self.dates):
            for fld, value in sorted(self.dates[path].items()):
                yield (path, fld, value.text, value.precision.value, value.start_us, value.end_us)

    def _name_rows(self) -> Iterator[tuple[str, str, str]]:
        for path in sorted(self.notes):
            note = self.notes[path]
            if not note.valid:
                continue
            keys = {normalize_name(note.title): "title"}
            for alias in note.aliases:
                keys.setdefault(normalize_name(alias), "alias")
            for key, source in sorted(keys.items()):
                if key:
                    yield (path, key, source)

    def _derived_issues(self, path: str) -> list[tuple[object, ...]]:
        e = self.entries[path]
        if not e.valid:
            return []
        out: list[tuple[object, ...]] = []

        def add(line: int | None, fld: str | None, code: str, message: str) -> None:
            out.append((path, line, fld, code, message, e.id))

        if e.dup:
            others = sorted(self.names.paths_with_id(e.id))
            add(
                None,
                "id",
                "duplicate_id",
                f"Id {e.id!r} is used by {', '.join(others)}: all copies are excluded",
            )
        twins = sorted(self.names.case_twins(e.id))
        if twins:
            add(
                None,
                "id",
                "case_collision",
                f"Id {e.id!r} differs only by case or normalisation from {', '.join(twins)}:"
                " the files collide on case-insensitive checkouts",
            )
        if e.blocked:
            add(
                None,
                "lifecycle",
                "resurrection_blocked",
                f"Id {e.id!r} was withdrawn or superseded; this active copy stays out until it"
                " carries a reinstated_at later than that",
            )
        lines = self._lines(path)
        for (fld, ord_), res in sorted(e.resolved.items()):
            target = next((t for f, o, t in e.refs if (f, o) == (fld, ord_)), "")
            if res.status == "ambiguous":
                add(
                    lines.get(fld),
                    fld,
                    "ambiguous_link",
                    f"{fld} {target!r} matches several records",
                )
            elif res.path is None or not self.entries[res.path].eligible:
                add(
                    lines.get(fld),
                    fld,
                    "dangling_reference",
                    f"{fld} {target!r} resolves to nothing eligible",
                )
        for line, text in e.ambiguous_links:
            add(line, None, "ambiguous_link", f"Link {text} matches several records")
        if self._in_cycle(path):
            add(
                lines.get("superseded_by"),
                "superseded_by",
                "supersession_cycle",
                f"superseded_by of {e.id!r} leads back to itself",
            )
        return out

    def _in_cycle(self, path: str) -> bool:
        seen = {path}
        current = self.entries[path]
        for _ in range(len(self.entries) + 1):
            res = current.resolved.get(("superseded_by", 0))
            if res is None or res.path is None:
                return False
            if res.path == path:
                return True
            if res.path in seen:
                return False
            seen.add(res.path)
            current = self.entries[res.path]
        return False

    def _lines(self, path: str) -> Mapping[str, int]:
        if path in self.notes:
            return self.notes[path].lines
        row = self.rec.store.conn.execute(
            "SELECT lines FROM notes WHERE path = ?", (path,)
        ).fetchone()
        return json.loads(row[0]) if row else {}


def _issue_key(issue: Issue) -> tuple[str, str, str]:
    return (issue.path, issue.code, issue.message)


def _contribution(entry: _Entry) -> int:
    digest = hashlib.sha256(f"{entry.id}\0{entry.revision}".encode()).digest()
    return int.from_bytes(digest[:16], "big")


def _snapshot(digests: Mapping[str, int], scopes: Iterable[str] | None, fingerprint: str) -> str:
    chosen = sorted(digests) if scopes is None else sorted(set(scopes))
    blob = fingerprint + "|" + "|".join(f"{s}:{digests.get(s, 0):x}" for s in chosen)
    return hashlib.sha256(blob.encode()).hexdigest()[:20]


def _hook(name: str) -> None:
    """Crash-consistency tests kill the process at a named point of the reconcile."""
    if os.environ.get(_SENTINEL_HOOK) == name:
        os.kill(os.getpid(), 9)
