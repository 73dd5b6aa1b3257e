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
from collections.abc import Collection, Iterator, MutableMapping
from dataclasses import dataclass, field
from typing import TypeVar

import vault
from temporal.reconcile.attachments import Attachments
from temporal.reconcile.names import NameIndex, Resolution
from vault import Issue

__all__ = ["Guard", "Memory", "NoteState", "Overlay"]

K = TypeVar("K")
V = TypeVar("V")
_GONE = object()


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
    generation: int = 0  # the last commit memory holds (the `generation` in `meta`)

    @classmethod
    def load(cls, conn: sqlite3.Connection) -> Memory:
        """Read the memory of what `conn`'s database holds."""
        gc_was = gc.isenabled()
        gc.disable()  # loading makes millions of long-lived objects: nothing for the collector
        try:
            memory = cls()
            memory._load(conn)
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
        `load` of that database when the commits wrote rows of no other path.
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
            self._load(conn, sorted(paths), sorted(guard_ids))
        finally:
            if gc_was:
                gc.enable()

    def _load(
        self,
        conn: sqlite3.Connection,
        paths: list[str] | None = None,
        guard_ids: list[str] | None = None,
    ) -> None:
        """Read every row (`paths` None) or those of `paths` and `guard_ids` alone."""
        # `where` picks the rows of the paths asked for (all when None), `args` says which.
        where = "1" if paths is None else "path IN (SELECT value FROM json_each(?))"
        args: tuple[str, ...] = () if paths is None else (json.dumps(paths),)
        version = conn.execute("PRAGMA data_version").fetchone()[0]
        for path, size, mtime_ns, ino, revision in conn.execute(
            f"SELECT * FROM files WHERE {where}", args
        ):
            self.keys[path] = (size, mtime_ns, ino)
            self.revisions[path] = revision
        for path, scope in conn.execute(f"SELECT path, scope FROM attachments WHERE {where}", args):
            self.attachments.add(path, scope)
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
            refs.setdefault(path, []).append((fld, ord_, target))
            res = known.get((status, resolved_path))
            if res is None:
                res = known[(status, resolved_path)] = Resolution(status, resolved_path)
            state.resolved[(fld, ord_)] = res
            if resolved_path is not None:
                self.referrers.setdefault(resolved_path, set()).add(path)
        for path, items in refs.items():
            self.entries[path].refs = tuple(items)
        for path, code in conn.execute(
            f"SELECT path, code FROM issues WHERE origin = 'derived' AND {where}", args
        ):
            if code == "resurrection_blocked":
                self.entries[path].blocked = True
            elif code == "duplicate_id":
                self.entries[path].dup = True
        for row in conn.execute(
            "SELECT path, line, field, code, message, record_id FROM issues WHERE origin = 'scan'"
        ):
            self.scan_issues.append(Issue(*row))
        guards = "1" if guard_ids is None else "id IN (SELECT value FROM json_each(?))"
        for note_id, lifecycle, seen_at, hashes in conn.execute(
            f"SELECT * FROM guards WHERE {guards}",
            () if guard_ids is None else (json.dumps(guard_ids),),
        ):
            self.guards[note_id] = Guard(lifecycle, seen_at, set(json.loads(hashes)))
        rows = dict(
            conn.execute("SELECT key, value FROM meta WHERE key IN ('digests', 'generation')")
        )
        if "digests" in rows:
            self.digests = {k: int(v, 16) for k, v in json.loads(rows["digests"]).items()}
        self.generation = int(rows.get("generation", 0))
        self.data_version = version


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
