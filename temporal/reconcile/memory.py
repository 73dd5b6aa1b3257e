"""What a reconciler remembers between reconciles: the committed state, loaded once.

The memory mirrors the projection tables closely enough to plan a change without reading
them: per-note state, the name index, who refers to whom, the guards of withdrawn ids and
the per-scope digests. It changes only when a change set commits (`ChangeSet.commit`) and is
loaded again from the database, never repaired in place, when a reconcile fails part-way.
"""

from __future__ import annotations

import gc
import json
import sqlite3
import sys
from collections.abc import Collection, Iterator, MutableMapping
from dataclasses import dataclass, field
from typing import TypeVar

from almanac import vault
from almanac.temporal.reconcile.attachments import Attachments
from almanac.temporal.reconcile.names import NameIndex, Resolution
from almanac.vault import Issue

__all__ = ["Guard", "Memory", "NoteState", "Overlay"]

K = TypeVar("K")
V = TypeVar("V")
_GONE = object()
# SQLite returns a new string per row and column: what many rows repeat (a path in four tables,
# a scope, a revision) is interned on load, so the memory (and the graph) hold each once.
_intern = sys.intern


@dataclass(slots=True)
class NoteState:
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
    file_links: tuple[tuple[int, str], ...] = ()  # (ord, attachment path) of links to files
    dup: bool = False
    blocked: bool = False
    eligible: bool = False


@dataclass(slots=True)
class Guard:
    """What is remembered of an id once seen withdrawn or superseded."""

    lifecycle: str
    seen_at: int
    hashes: set[str]


@dataclass(slots=True)
class Memory:
    """The committed state a reconcile plans from (see the module docstring)."""

    names: NameIndex = field(default_factory=NameIndex)
    attachments: Attachments = field(default_factory=Attachments)
    entries: dict[str, NoteState] = field(default_factory=dict)
    keys: vault.KnownStats = field(default_factory=vault.KnownStats)  # path -> stat key
    revisions: dict[str, str] = field(default_factory=dict)  # path -> SHA-256 last read
    referrers: dict[str, set[str]] = field(default_factory=dict)  # path -> who resolves to it
    guards: dict[str, Guard] = field(default_factory=dict)
    digests: dict[str, int] = field(default_factory=dict)
    scan_issues: list[Issue] = field(default_factory=list)
    data_version: int = -1  # the database's `data_version` when loaded or last written
    complete: bool = True  # whether the notes' part is loaded (`load_notes`)
    generation: int = 0  # the last commit memory holds (the `generation` in `meta`)

    @classmethod
    def load(cls, conn: sqlite3.Connection, *, notes: bool = True) -> Memory:
        """Read the memory of what `conn`'s database holds.

        Args:
            notes: Also read the notes' part (`load_notes`); without it the memory is enough
                for a reconcile that finds nothing changed (a server's start-up scan), and
                `complete` is False until `load_notes` reads the rest.
        """
        gc_was = gc.isenabled()
        gc.disable()  # loading makes millions of long-lived objects: nothing for the collector
        try:
            memory = cls()
            memory._load_files(conn)
            if notes:
                memory._load_notes(conn)
        finally:
            if gc_was:
                gc.enable()
        return memory

    def refresh(
        self, conn: sqlite3.Connection, paths: Collection[str], guard_ids: Collection[str]
    ) -> None:
        """Follow commits made elsewhere: forget what memory holds of `paths` (their notes,
        names, references, stats, attachment) and of the guards `guard_ids`, and read them
        again from `conn`'s database, with its scan issues and digests. Memory then equals a
        `load` of that database when the commits wrote rows of no other path. A memory whose
        notes' part is not read yet refreshes its files' part only (`load_notes` reads the
        rest later, whole).
        """
        gc_was = gc.isenabled()
        gc.disable()
        try:
            for path in paths:
                old = self.entries.pop(path, None)
                if old is not None:
                    for res in old.resolved.values():
                        if res.path is not None and (found := self.referrers.get(res.path)):
                            found.discard(path)
                            if not found:
                                del self.referrers[res.path]
                self.names.remove(path)
                self.keys.pop(path, None)
                self.revisions.pop(path, None)
                self.attachments.remove(path)
            for note_id in guard_ids:
                self.guards.pop(note_id, None)
            self.scan_issues = []
            complete = self.complete
            self._load_files(conn, sorted(paths))
            if complete:
                self._load_notes(conn, sorted(paths), sorted(guard_ids))
        finally:
            if gc_was:
                gc.enable()

    def load_notes(self, conn: sqlite3.Connection) -> None:
        """Read the notes' part of the memory (names, per-note state, referrers, guards) from
        `conn`, which must read the state the rest was loaded from. All or nothing: a read
        that fails part-way leaves this memory as it was."""
        self.adopt(Memory.notes_of(conn))

    @classmethod
    def notes_of(cls, conn: sqlite3.Connection) -> Memory:
        """A memory with only the notes' part of what `conn`'s database holds (`adopt` it)."""
        gc_was = gc.isenabled()
        gc.disable()
        try:
            part = cls()
            part._load_notes(conn)
        finally:
            if gc_was:
                gc.enable()
        return part

    def adopt(self, part: Memory) -> None:
        """Take the notes' part of `part` (from `notes_of`): this memory is then complete."""
        self.names, self.entries, self.referrers = part.names, part.entries, part.referrers
        self.guards = part.guards
        self.complete = True

    def _load_files(self, conn: sqlite3.Connection, paths: list[str] | None = None) -> None:
        """What a reconcile that finds nothing changed reads: the files' stat keys and
        revisions and the attachments (of every path, or of `paths` alone), the scan issues,
        the digests and the generation."""
        where, args = _where(paths)
        version = conn.execute("PRAGMA data_version").fetchone()[0]
        for path, size, mtime_ns, ino, revision in conn.execute(
            f"SELECT * FROM files WHERE {where}", args
        ):
            path = _intern(path)
            self.keys[path] = (size, mtime_ns, ino)
            self.revisions[path] = _intern(revision)
        for path, scope in conn.execute(f"SELECT path, scope FROM attachments WHERE {where}", args):
            self.attachments.add(_intern(path), _intern(scope))
        for row in conn.execute(
            "SELECT path, line, field, code, message, record_id FROM issues WHERE origin = 'scan'"
        ):
            self.scan_issues.append(Issue(*row))
        rows = dict(
            conn.execute("SELECT key, value FROM meta WHERE key IN ('digests', 'generation')")
        )
        if "digests" in rows:
            self.digests = {k: int(v, 16) for k, v in json.loads(rows["digests"]).items()}
        self.generation = int(rows.get("generation", 0))
        self.data_version = version
        self.complete = False

    def _load_notes(
        self,
        conn: sqlite3.Connection,
        paths: list[str] | None = None,
        guard_ids: list[str] | None = None,
    ) -> None:
        """The notes' part: of every path (`paths` None), or of `paths` and `guard_ids`."""
        where, args = _where(paths)
        # The normalised titles and aliases are stored: no need to normalise them again.
        norms: dict[str, list[str]] = {}
        for path, key in conn.execute(f"SELECT path, key FROM names WHERE {where}", args):
            norms.setdefault(path, []).append(key)
        query = (
            "SELECT path, id, scope, kind, valid, lifecycle, revision, eligible, slug FROM notes"
            f" WHERE {where}"
        )
        for path, note_id, scope, kind, valid, lifecycle, revision, eligible, slug in conn.execute(
            query, args
        ):
            path, note_id, scope = _intern(path), _intern(note_id), _intern(scope)
            kind, lifecycle, revision = _intern(kind), _intern(lifecycle), _intern(revision)
            state = NoteState(
                path, note_id, scope, kind, bool(valid), lifecycle, revision, None, ()
            )
            state.eligible = bool(eligible)
            self.entries[path] = state
            if valid and lifecycle != "withdrawn":  # as ChangeSet.take indexes them
                keys = norms.get(path, ())
                self.names.add(path, id=note_id, slug=slug, scope=scope, names=(), norms=keys)
        for path, start in conn.execute(
            f"SELECT path, start FROM dates WHERE field = 'reinstated_at' AND {where}", args
        ):
            self.entries[path].reinstated_us = start
        refs: dict[str, list[tuple[str, int, str]]] = {}
        known: dict[tuple[str, str | None], Resolution] = {}
        fields: dict[tuple[str, int], tuple[str, int]] = {}  # (field, ord), one of each
        for path, fld, ord_, _kind, text, line, target, resolved_path, status in conn.execute(
            "SELECT path, field, ord, kind, text, line, target, resolved_path, status"
            " FROM targets WHERE (field <> 'link' OR status IN ('ambiguous', 'file'))"
            f" AND {where} ORDER BY path, field, ord",
            args,
        ):
            state = self.entries[path]
            if fld == "link":
                if status == "ambiguous":
                    state.ambiguous_links += ((line, text),)
                else:
                    state.file_links += ((ord_, resolved_path),)
                continue
            key = fields.setdefault((fld, ord_), (_intern(fld), ord_))
            refs.setdefault(state.path, []).append((key[0], ord_, target))
            res = known.get((status, resolved_path))
            if res is None:
                if resolved_path is not None:
                    resolved_path = _intern(resolved_path)
                res = known[(status, resolved_path)] = Resolution(_intern(status), resolved_path)
            state.resolved[key] = res
            if res.path is not None:
                self.referrers.setdefault(res.path, set()).add(state.path)
        for path, items in refs.items():
            self.entries[path].refs = tuple(items)
        for path, code in conn.execute(
            f"SELECT path, code FROM issues WHERE origin = 'derived' AND {where}", args
        ):
            if code == "resurrection_blocked":
                self.entries[path].blocked = True
            elif code == "duplicate_id":
                self.entries[path].dup = True
        guards = "1" if guard_ids is None else "id IN (SELECT value FROM json_each(?))"
        for note_id, lifecycle, seen_at, hashes in conn.execute(
            f"SELECT * FROM guards WHERE {guards}",
            () if guard_ids is None else (json.dumps(guard_ids),),
        ):
            self.guards[note_id] = Guard(lifecycle, seen_at, set(json.loads(hashes)))
        self.complete = True


class Overlay(MutableMapping[K, V]):
    """Changes to a dict kept apart from it until `apply()` writes them into it."""

    def __init__(self, base: dict[K, V]) -> None:
        self.base = base
        self.changes: dict[K, object] = {}  # a value, or _GONE for a deleted key

    def get(self, key: K, default: V | None = None) -> V | None:  # type: ignore[override]
        if key in self.changes:
            value = self.changes[key]
            return default if value is _GONE else value  # type: ignore[return-value]
        return self.base.get(key, default)

    def __getitem__(self, key: K) -> V:
        if key in self.changes:
            value = self.changes[key]
            if value is _GONE:
                raise KeyError(key)
            return value  # type: ignore[return-value]
        return self.base[key]

    def __contains__(self, key: object) -> bool:
        if key in self.changes:
            return self.changes[key] is not _GONE
        return key in self.base

    def __setitem__(self, key: K, value: V) -> None:
        self.changes[key] = value

    def __delitem__(self, key: K) -> None:
        if key not in self:
            raise KeyError(key)
        self.changes[key] = _GONE

    def __iter__(self) -> Iterator[K]:
        yield from (k for k in self.base if k not in self.changes)
        yield from (k for k, v in self.changes.items() if v is not _GONE)

    def __len__(self) -> int:
        return sum(1 for _ in self)

    def apply(self) -> None:
        """Write the changes into the base dict."""
        gone = [key for key, value in self.changes.items() if value is _GONE]
        for key in gone:
            del self.changes[key]
            self.base.pop(key, None)
        self.base.update(self.changes)  # type: ignore[arg-type]
        self.changes = {}


def _where(paths: list[str] | None) -> tuple[str, tuple[str, ...]]:
    """The condition that picks the rows of `paths` (every row when None), and its argument."""
    if paths is None:
        return "1", ()
    return "path IN (SELECT value FROM json_each(?))", (json.dumps(paths),)
