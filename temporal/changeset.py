"""One reconcile's change set, worked out in memory before anything is written.

Given the notes whose files changed, a change set finds the *affected* notes:
notes whose links or references may now resolve differently (their target
text matches a name that appeared or vanished), notes sharing an id (or an id
that differs only by case) with a changed note, and, transitively, notes
whose eligibility depends on a note whose eligibility flipped. For exactly
those it recomputes resolution, eligibility, derived issues and the snapshot
digests; it then writes their rows inside the caller's transaction and, once
that committed, becomes the reconciler's memory. Memory shared with the
reconciler is copied on first change, so a failed write leaves it as committed.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import sqlite3
import unicodedata
from collections.abc import Callable, Iterable, Iterator, Mapping, MutableMapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TypeVar

from temporal.dates import DateValue
from temporal.names import Resolution, normalize_name
from temporal.records import note_dates
from temporal.spans import span_rows
from temporal.store import Bulk, marks
from temporal.tables import ASSOCIATE
from vault import Issue, Note, ParsedNote

if TYPE_CHECKING:
    from temporal.reconcile import Reconciler

__all__ = ["ChangeSet", "Entry", "Guard", "Summary", "issue_key", "snapshot_id"]

_REQUIRED = {"relationship": ("from", "to"), "claim": ("subject",)}
# A link or reference as written: (field, ord, kind, text, target, line).
_Target = tuple[str, int, str, str, str, int | None]
_MISSING = Resolution("missing")
# The end of a `targets` row: (key_lower, key_norm, resolved id, resolved path, status).
_RowEnd = tuple[str, str, str | None, str | None, str]
# A target resolved with its row's end, or the paths of several files of its name.
_Found = tuple[Resolution, _RowEnd] | list[str]


@dataclass(slots=True)
class Entry:
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


@dataclass(frozen=True, slots=True)
class Summary:
    """What a change set did, sorted (for the reconcile's result)."""

    changed_paths: tuple[str, ...]
    affected_ids: tuple[str, ...]
    resolved_paths: tuple[str, ...]  # notes whose links and references were resolved again
    parsed: int
    deleted: int


@dataclass(slots=True)
class Guard:
    """What is remembered of an id once seen withdrawn or superseded."""

    lifecycle: str
    seen_at: int
    hashes: set[str]


class ChangeSet:
    """The in-memory part of one reconcile: what to write, computed before writing."""

    def __init__(self, rec: Reconciler, now_us: int) -> None:
        self.rec = rec
        self.changes: dict[str, ParsedNote | None] = {}  # path -> parsed note, None when gone
        self.now_us = now_us
        self.notes: dict[str, Note] = {}
        self._note_row: dict[str, tuple[object, ...]] = {}  # a notes row but for `eligible`
        self._names_of: dict[str, list[tuple[str, str]]] = {}  # (name key, title|alias)
        self.file_issues: dict[str, list[Issue]] = {}
        self.dates: dict[str, dict[str, DateValue]] = {}
        self.zones: dict[str, str | None] = {}
        # Overlays: a change set touches a handful of notes, so it keeps its changes apart
        # from the reconciler's memory (100,000 notes) instead of copying it.
        self.entries: Overlay[str, Entry] = Overlay(rec.entries)
        self.digests = dict(rec.digests)
        self.guards: Overlay[str, Guard] = Overlay(rec.guards)  # a changed guard is a new object
        self.referrers: Overlay[str, set[str]] = Overlay(rec.referrers)  # see _referrers_of
        self.affected: set[str] = set()
        self.guarded: list[str] = []  # changed notes with a usable id, withdrawn or superseded
        self.derived: set[str] = set()
        self.affected_ids: set[str] = set()
        self.rows: dict[str, list[tuple[object, ...]]] = {}
        self.seen: list[tuple[str, str]] = []
        self.names = rec.names
        # Targets repeat (hubs): resolve each (target, kind, scope) once per plan, after every
        # name of the change set is in the index.
        self._resolved: dict[tuple[str, str, str | None], _Found] = {}
        self._links: dict[str, list[_Target]] = {}  # links of the notes resolved, until the write
        # Read before the write's background work, which must have the connection to itself.
        self._seen_before: dict[str, set[str]] | None = None  # seen revisions of guarded ids
        self._lines_before: dict[str, Mapping[str, int]] = {}  # lines of notes not rewritten
        self._undo: list[tuple[str, Entry | None]] = []
        # Keys under which committed targets may reach a changed note, and the changed ids.
        self._lower_keys: set[str] = set()
        self._norm_keys: set[str] = set()
        self._id_keys: set[str] = set()
        # Nothing committed is usable: every note is in this change set, so no committed target
        # can match a name, and every note is affected and derived anyway.
        self.first_load = not rec.entries

    def take(self, path: str, parsed: ParsedNote | None) -> None:
        """Take one changed file (None: gone) into the plan: what it says on its own.

        A reconcile takes each file as soon as it is parsed (in any order), then `run()`s.
        """
        self.changes[path] = parsed
        old = self.entries.get(path)
        if old is not None:
            lower, norm = self.names.keys(path)
            self._lower_keys |= lower
            self._norm_keys |= norm
            self._id_keys.add(old.id)
            self.affected_ids.add(old.id)
            self.names.remove(path)
            del self.entries[path]
        self._undo.append((path, old))
        self.file_issues[path] = list(parsed.issues) if parsed else []
        if parsed is None or parsed.note is None:
            return
        note = parsed.note
        id_ok = not any(i.code == "invalid_id" for i in parsed.issues)
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
        entry = Entry(
            path,
            note.id,
            self.rec.config.scope_of(path),
            note.kind,
            note.valid,
            note.lifecycle,
            note.revision,
            reinstated.start_us if reinstated else None,
            refs,
        )
        self.entries[path] = entry
        # Its row (but for eligibility) and name keys are made here, while the worker parses.
        self._note_row[path] = _note_row(note, entry.scope, tz)
        if note.valid:
            self._names_of[path] = _name_keys(note)
        self.affected_ids.add(note.id)
        if id_ok:
            self._id_keys.add(note.id)
            self.seen.append((note.id, note.revision))
            if note.lifecycle != "active":
                self.guarded.append(path)
        # Withdrawn notes take no part in resolution: they are out of every query.
        if note.valid and note.lifecycle != "withdrawn":
            self.names.add(
                path,
                id=note.id,
                slug=note.slug,
                scope=entry.scope,
                names=(),
                norms=[key for key, _ in self._names_of[path]],
            )
            if not self.first_load:
                lower, norm = self.names.keys(path)
                self._lower_keys |= lower
                self._norm_keys |= norm

    def run(self) -> None:
        """Work out what the files taken affect: resolution, eligibility, digests."""
        self.affected = set(self.notes) | self._targets_matching(self._lower_keys, self._norm_keys)
        for note_id in () if self.first_load else self._id_keys:
            self.affected |= self.names.paths_with_id(note_id) | self.names.case_twins(note_id)
        self.affected = {p for p in self.affected if p in self.entries}
        self._guard_and_block()
        for path in sorted(self.affected):
            self._resolve(path)
        self._eligibility()

    def _targets_matching(self, lower: set[str], norm: set[str]) -> set[str]:
        if not lower and not norm:
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
        """Guard ids seen withdrawn or superseded; block the active copies a guard covers."""
        for path in sorted(self.guarded):
            note = self.notes[path]
            guard = self.guards.get(note.id)
            if guard is None or self._was_live(note.id):
                # A new guard (or a new withdrawal after a reinstatement): every content seen
                # so far for this id is stale from now on.
                guard = Guard(note.lifecycle, self.now_us, self._seen_revisions(note.id))
            else:
                guard = Guard(note.lifecycle, guard.seen_at, {*guard.hashes, note.revision})
            self.guards[note.id] = guard
        for path in sorted(self.affected):
            entry = self._own(path)
            guard = self.guards.get(entry.id)
            reinstated = entry.reinstated_us
            entry.blocked = (
                guard is not None
                and entry.lifecycle == "active"
                and (
                    entry.revision in guard.hashes
                    or reinstated is None
                    or reinstated <= guard.seen_at
                )
            )

    def _was_live(self, note_id: str) -> bool:
        """Whether an active copy of this id was being served (so a guard starts afresh)."""
        before = [old for _, old in self._undo if old is not None and old.id == note_id]
        before += [
            self.entries[p] for p in self.names.paths_with_id(note_id) if p not in self.notes
        ]
        return any(e.eligible and e.lifecycle == "active" and not e.blocked for e in before)

    def _seen_revisions(self, note_id: str) -> set[str]:
        if self._seen_before is None:
            self._seen_before = self._committed_seen(self.rec.store.conn)
        committed = self._seen_before.get(note_id, set())
        return committed | {rev for i, rev in self.seen if i == note_id}

    def _own(self, path: str) -> Entry:
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
        """Resolve a note's references, which eligibility needs; its links wait for the write."""
        entry = self._own(path)
        for old in entry.resolved.values():
            if old.path is not None and old.path in self.referrers:
                self._referrers_of(old.path).discard(path)
        entry.resolved = {}
        links: list[_Target]
        if path in self.notes:
            note = self.notes[path]
            refs: list[_Target] = [(f, o, "ref", t, t, note.lines.get(f)) for f, o, t in entry.refs]
            links = [
                ("link", i, link.kind, link.text, link.target, link.line)
                for i, link in enumerate(note.links)
            ]
        else:
            items = self.rec.store.conn.execute(
                "SELECT field, ord, kind, text, target, line FROM targets WHERE path = ?"
                " ORDER BY field, ord",
                (path,),
            ).fetchall()
            refs = [item for item in items if item[0] != "link"]
            links = [item for item in items if item[0] == "link"]
            entry.refs = tuple((f, o, t) for f, o, _k, _x, t, _l in refs)
        self.rows[path] = self._target_rows(path, entry, refs)
        self._links[path] = links

    def _resolve_links(self) -> None:
        """Resolve the links of every note `_resolve` saw (in memory: no database read)."""
        for path, links in sorted(self._links.items()):
            entry = self.entries[path]
            rows = self._target_rows(path, entry, links)
            entry.ambiguous_links = tuple(
                (line or 0, text)
                for (_f, _o, _k, text, _t, line), row in zip(links, rows, strict=True)
                if row[-1] == "ambiguous"
            )
            self.rows[path] += rows
        self._links = {}

    def _target_rows(
        self, path: str, entry: Entry, items: list[_Target]
    ) -> list[tuple[object, ...]]:
        """Resolve targets of the note at `path`: its `targets` rows; references are remembered."""
        rows: list[tuple[object, ...]] = []
        folder = path.rpartition("/")[0]
        cache = self._resolved
        scope = entry.scope if entry.valid else None  # an invalid note's targets resolve nothing
        for fld, ord_, kind, text, target, line in items:
            found = cache.get((target, kind, scope))
            if found is None:
                found = cache[(target, kind, scope)] = self._resolution(target, kind, scope)
            if isinstance(found, list):  # several files of one name: the folder decides
                found = self._with_row_end(target, self.names.in_folder(found, folder))
            res, end = found
            if fld != "link":
                entry.resolved[(fld, ord_)] = res
                if res.path is not None:
                    self._referrers_of(res.path).add(path)
            rows.append((path, fld, ord_, kind, text, line, target, *end))
        return rows

    def _resolution(self, target: str, kind: str, scope: str | None) -> _Found:
        """How a target resolves in a scope (None: nothing), or the files of its name."""
        if scope is None:
            return self._with_row_end(target, _MISSING)
        found = self.names.resolve(target, kind=kind, scope=scope)
        return found if isinstance(found, list) else self._with_row_end(target, found)

    def _with_row_end(self, target: str, res: Resolution) -> tuple[Resolution, _RowEnd]:
        """A resolution and the end of its `targets` row: keys of the text, and what it found."""
        lower = unicodedata.normalize("NFC", target).lower()
        resolved_id = self.entries[res.path].id if res.path else None
        return res, (lower, normalize_name(target), resolved_id, res.path, res.status)

    def _eligibility(self) -> None:
        for path in self.affected:
            entry = self._own(path)
            entry.dup = entry.valid and len(self._same_id(entry)) > 1
        # Fixpoint: a flip re-queues every note that depends on the flipped one, until none flips.
        pending = set(self.affected)
        for _ in range(len(self.rec.entries) + len(self.notes) + 2):
            if not pending:
                break
            memo: dict[str, bool] = {}
            flipped: set[str] = set()
            for path in sorted(pending):
                entry = self._own(path)
                if path in self.derived:
                    before: bool | None = entry.eligible
                else:
                    old = self.rec.entries.get(path)
                    before = old.eligible if old is not None else None
                value = self._eligible(path, memo, set(), pending)
                if value != before:
                    flipped.add(path)
                entry.eligible = value
                self.derived.add(path)
            pending = set()
            self.affected_ids.update(self.entries[path].id for path in flipped)
            if self.first_load:
                break  # every note was worked out in this first round: none to revisit
            for path in flipped:
                # A referrer worked out in this round already saw the new value (memo).
                pending |= {
                    r for r in self.referrers.get(path) or () if r in self.entries and r not in memo
                }
        # Dangling references and supersession cycles are read off the targets' state: the
        # referrers of every changed or derived note, and whole superseded_by chains through
        # them, get their derived issues recomputed too.
        if not self.first_load:
            touched = self.derived | set(self.notes) | {p for p, _ in self._undo}
            extra: set[str] = set()
            for path in touched:
                extra.update(self.referrers.get(path) or ())
                extra.update(self.rec.referrers.get(path, ()))
            self.derived |= {p for p in extra if p in self.entries}
            self.derived |= self._chains(self.derived)
        self._digest()

    def _same_id(self, entry: Entry) -> list[str]:
        """Usable notes of the entry's scope that carry its id (ids are unique per scope)."""
        scope = self.names.scope
        return [p for p in self.names.paths_with_id(entry.id) if scope[p] == entry.scope]

    def _chains(self, paths: set[str]) -> set[str]:
        """Every note on a superseded_by chain that runs through one of `paths`."""
        found: set[str] = set()
        todo = [p for p in paths if p in self.entries]
        while todo:
            path = todo.pop()
            if path in found:
                continue
            found.add(path)
            res = self.entries[path].resolved.get(("superseded_by", 0))
            if res is not None and res.path is not None and res.path in self.entries:
                todo.append(res.path)
            for ref in self.referrers.get(path) or ():
                ref_entry = self.entries.get(ref)
                back = ref_entry.resolved.get(("superseded_by", 0)) if ref_entry else None
                if back is not None and back.path == path:
                    todo.append(ref)
        return found

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
                target = res.path if res is not None else None
                if target is None or target not in self.entries or target in visiting:
                    ok = False
                    break
                if not self._eligible(target, memo, visiting, pending):
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

    def write(self, conn: sqlite3.Connection, bulk: Bulk) -> None:
        """Replace the rows of every changed and affected note, in the caller's transaction.

        A first load runs the plan itself, once its notes are written; any other plan must
        have `run()` before (it reads committed rows, through indexes a bulk write drops).
        A bulk write's indexes are built in the background (`bulk`) as the rows they index
        go in; meanwhile this works out the next rows without touching the connection.
        """
        removed = [p for p, _ in self._undo]
        bulk.scopes({self.entries[p].scope for p in self.notes})
        if self.first_load:
            # Every row to replace is of a file taken. The notes go in before `run`, with the
            # eligibility they have unless their references say otherwise, so that their
            # full-text index fills meanwhile; the notes that differ are updated after.
            self._delete(conn, removed, removed, removed)
            self._seen_before = self._committed_seen(conn)
            conn.executemany(_INSERT_NOTE, self._note_rows(provisional=True))
            bulk.search()
            own = _meanwhile(bulk, self._run_and_own_rows)
            flipped = [
                (int(e.eligible), p)
                for p in sorted(self.notes)
                if (e := self.entries[p]).eligible != _provisional(e)
            ]
            conn.executemany("UPDATE notes SET eligible = ? WHERE path = ?", flipped)
            _insert(conn, own)
            bulk.index("notes", *own)
            derived = self._rederived(removed)
            rows = _meanwhile(bulk, lambda: self._linked_rows(derived))
            unwritten: list[tuple[int, str]] = []
            associated = set(derived)
        else:
            rewrite = sorted(set(self.rows) | set(removed))
            derived = self._rederived(removed)
            # Whose associations may change: every path rewritten or re-derived, and the
            # sources their claims and relationships name, before (read here) and after.
            associated = set(derived) | _sources_of(conn, derived)
            self._delete(conn, removed, rewrite, derived)
            conn.executemany(_INSERT_NOTE, self._note_rows())
            # Notes whose rows stay, but whose eligibility was worked out again.
            unwritten = [
                (int(self.entries[p].eligible), p)
                for p in derived
                if p in self.entries and p not in self.notes
            ]
            conn.executemany("UPDATE notes SET eligible = ? WHERE path = ?", unwritten)
            self._lines_before = _committed_lines(conn, [p for _, p in unwritten])
            bulk.index("notes")
            rows = _meanwhile(bulk, lambda: {**self._own_rows(), **self._linked_rows(derived)})
        _insert(conn, rows)
        conn.executemany("UPDATE spans SET eligible = ? WHERE path = ?", unwritten)
        conn.executemany("UPDATE sources SET eligible = ? WHERE path = ?", unwritten)
        again = json.dumps(sorted(associated | _sources_of(conn, derived)))
        conn.execute(
            "DELETE FROM associations WHERE path IN (SELECT value FROM json_each(?))", [again]
        )
        conn.execute(ASSOCIATE, {"paths": again})
        conn.executemany("INSERT OR IGNORE INTO seen VALUES (?, ?)", self.seen)
        conn.executemany(
            "INSERT OR REPLACE INTO guards VALUES (?, ?, ?, ?)",
            [
                (k, g.lifecycle, g.seen_at, json.dumps(sorted(g.hashes)))
                for k, g in sorted(self.guards.changes.items())
                if isinstance(g, Guard)
            ],
        )

    def _rederived(self, removed: list[str]) -> list[str]:
        """Paths whose derived issues (and associations) are made again: those derived, taken
        or resolved again."""
        return sorted(self.derived | set(removed) | set(self.rows))

    def _delete(
        self, conn: sqlite3.Connection, removed: list[str], rewrite: list[str], derived: list[str]
    ) -> None:
        """Delete the committed rows about to be replaced: those of the files taken
        (`removed`), the links of the notes resolved again, the issues derived again."""
        committed = self.rec.keys
        if not committed:
            return
        for table, paths, where in (
            ("notes", removed, ""),
            ("dates", removed, ""),
            ("spans", removed, ""),
            ("names", removed, ""),
            ("issues", removed, " AND origin = 'file'"),
            ("targets", rewrite, ""),
            ("sources", rewrite, ""),
            ("issues", derived, " AND origin = 'derived'"),
        ):
            listed = [p for p in paths if p in committed]
            if listed:
                sql = f"DELETE FROM {table} WHERE path IN (SELECT value FROM json_each(?)){where}"
                conn.execute(sql, [json.dumps(listed)])

    def _committed_seen(self, conn: sqlite3.Connection) -> dict[str, set[str]]:
        """Every revision committed as seen for the ids of the withdrawn or superseded notes."""
        ids = json.dumps(sorted({self.notes[p].id for p in self.guarded}))
        found: dict[str, set[str]] = {}
        sql = "SELECT id, revision FROM seen WHERE id IN (SELECT value FROM json_each(?))"
        for note_id, revision in conn.execute(sql, [ids]):
            found.setdefault(note_id, set()).add(revision)
        return found

    def _run_and_own_rows(self) -> dict[str, list[tuple[object, ...]]]:
        self.run()
        return self._own_rows()

    def _own_rows(self) -> dict[str, list[tuple[object, ...]]]:
        """The rows each changed note makes on its own (spans carry its eligibility)."""
        return {
            "dates": list(self._date_rows()),
            "spans": list(self._span_rows()),
            "names": list(self._name_rows()),
        }

    def _linked_rows(self, derived: list[str]) -> dict[str, list[tuple[object, ...]]]:
        """The rows that depend on other notes: links, sources, issues (file, then derived)."""
        self._resolve_links()
        scope_of = self.rec.config.scope_of
        return {
            "targets": [row for p in sorted(self.rows) for row in self.rows[p]],
            "sources": list(self._source_rows()),
            "issues": [
                (i.path, i.line, i.field, i.code, i.message, i.record_id, "file", scope)
                for p in sorted(self.file_issues)
                for i in self.file_issues[p]
                for scope in (scope_of(i.path),)
            ]
            + [
                (*row, "derived", scope_of(p))
                for p in derived
                if p in self.entries
                for row in self._derived_issues(p)
            ],
        }

    def summary(self) -> Summary:
        """What this plan did, once written."""
        changes = self.changes
        parsed = sum(1 for c in changes.values() if c is not None)
        return Summary(
            tuple(sorted(changes)),
            tuple(sorted(self.affected_ids)),
            tuple(sorted(set(self.rows) | set(changes))),
            parsed,
            len(changes) - parsed,
        )

    def commit(self) -> None:
        """Make the plan the reconciler's memory, once the transaction committed."""
        rec = self.rec
        self.entries.apply()
        self.referrers.apply()
        self.guards.apply()
        rec.digests = self.digests

    def _note_rows(self, *, provisional: bool = False) -> Iterator[tuple[object, ...]]:
        """The notes rows, eligible as worked out, or as `_provisional` (before `run`)."""
        for path in sorted(self.notes):
            e = self.entries[path]
            yield (*self._note_row[path], int(_provisional(e) if provisional else e.eligible))

    def _date_rows(self) -> Iterator[tuple[object, ...]]:
        for path in sorted(self.dates):
            for fld, value in sorted(self.dates[path].items()):
                yield (path, fld, value.text, value.precision.value, value.start_us, value.end_us)

    def _span_rows(self) -> Iterator[tuple[object, ...]]:
        for path in sorted(self.notes):
            e = self.entries[path]
            yield from span_rows(
                path,
                self.notes[path],
                self.dates[path],
                self.zones[path],
                scope=e.scope,
                eligible=e.eligible,
            )

    def _source_rows(self) -> Iterator[tuple[str, str, str, int]]:
        """(claim or relationship, entity it is about, its source): timelines' source links."""
        for path in sorted(self.rows):
            entry = self.entries.get(path)
            if entry is None or entry.kind == "page":
                continue
            rows = self.rows[path]
            about = sorted(
                {str(r[10]) for r in rows if r[1] in ("from", "to", "subject") and r[10]}
            )
            sources = sorted({str(r[10]) for r in rows if r[1] == "source" and r[10]})
            for entity in about:
                for source in sources:
                    yield (path, entity, source, int(entry.eligible))

    def _name_rows(self) -> Iterator[tuple[str, str, str]]:
        for path in sorted(self.notes):
            for key, source in self._names_of.get(path, ()):
                yield (path, key, source)

    def _derived_issues(self, path: str) -> list[tuple[object, ...]]:
        e = self.entries[path]
        if not e.valid or e.lifecycle == "withdrawn":
            return []  # out of every query; its own file issues still show
        entries, scope = self.entries, self.names.scope
        unmet = [
            (key, res)
            for key, res in e.resolved.items()
            if res.status == "ambiguous"
            or res.path is None
            or (target_entry := entries.get(res.path)) is None
            or not target_entry.eligible
        ]
        twins = [p for p in self.names.case_twins(e.id) if scope[p] == e.scope]
        chained = ("superseded_by", 0) in e.resolved
        if not (e.dup or twins or e.blocked or unmet or e.ambiguous_links or chained):
            return []  # (most notes)
        out: list[tuple[object, ...]] = []

        def add(line: int | None, fld: str | None, code: str, message: str) -> None:
            out.append((path, line, fld, code, message, e.id))

        if e.dup:
            others = sorted(self._same_id(e))
            add(
                None,
                "id",
                "duplicate_id",
                f"Id {e.id!r} is used by {', '.join(others)}: all copies are excluded",
            )
        if twins:
            add(
                None,
                "id",
                "case_collision",
                f"Id {e.id!r} differs only by case or normalisation from"
                f" {', '.join(sorted(twins))}: the files collide on case-insensitive checkouts",
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
        for (fld, ord_), res in sorted(unmet, key=lambda item: item[0]):
            target = next((t for f, o, t in e.refs if (f, o) == (fld, ord_)), "")
            if res.status == "ambiguous":
                add(
                    lines.get(fld),
                    fld,
                    "ambiguous_link",
                    f"{fld} {target!r} matches several records",
                )
            else:
                add(
                    lines.get(fld),
                    fld,
                    "dangling_reference",
                    f"{fld} {target!r} resolves to nothing eligible",
                )
        for line, text in e.ambiguous_links:
            add(line, None, "ambiguous_link", f"Link {text} matches several records")
        if chained and self._in_cycle(path):
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
        while True:  # `seen` ends the walk
            res = current.resolved.get(("superseded_by", 0))
            if res is None or res.path is None:
                return False
            if res.path == path:
                return True
            if res.path in seen:
                return False
            seen.add(res.path)
            current = self.entries[res.path]

    def _lines(self, path: str) -> Mapping[str, int]:
        if path in self.notes:
            return self.notes[path].lines
        return self._lines_before.get(path, {})


_GONE = object()
K = TypeVar("K")
V = TypeVar("V")
T = TypeVar("T")


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


def _json(value: object) -> str:
    """JSON text of a tuple or mapping; empty ones (most of them) cost nothing."""
    if not value:
        return "{}" if isinstance(value, Mapping) else "[]"
    if isinstance(value, Mapping):
        value = dict(value)
    return _ENCODER.encode(value)


_ENCODER = json.JSONEncoder(default=str)  # (`json.dumps(default=...)` makes one per call)


_INSERT_NOTE = "INSERT INTO notes VALUES (" + ",".join("?" * 27) + ")"


def _note_row(n: Note, scope: str, zone: str | None) -> tuple[object, ...]:
    """A note's `notes` row, but for its last column (`eligible`)."""
    return (
        n.path,
        n.id,
        scope,
        n.slug,
        n.kind,
        n.type,
        n.title,
        _json(n.aliases),
        _json(n.tags),
        n.lifecycle,
        n.refs.get("superseded_by"),
        n.state,
        n.relation,
        n.weight,
        int(n.source_event),
        zone,
        n.recurrence,
        _json(n.exdates),
        _json(n.rdates),
        n.body,
        n.body_line,
        n.line_count,
        n.revision,
        _json(n.extra),
        json.dumps(dict(n.lines)),
        int(n.valid),
    )


def _name_keys(note: Note) -> list[tuple[str, str]]:
    """The normalised title and aliases of a note, each with where it came from, sorted."""
    keys = {normalize_name(note.title): "title"}
    for alias in note.aliases:
        keys.setdefault(normalize_name(alias), "alias")
    return sorted((key, source) for key, source in keys.items() if key)


def _provisional(entry: Entry) -> bool:
    """A note's eligibility unless its references or id say otherwise (as most do not)."""
    return entry.valid and entry.lifecycle != "withdrawn"


def _meanwhile(bulk: Bulk, work: Callable[[], T]) -> T:
    """Do `work` while the bulk's background statements run, then wait for them."""
    try:
        result = work()
    except BaseException:
        bulk.stop()
        raise
    bulk.wait()
    return result


def _insert(conn: sqlite3.Connection, rows: Mapping[str, list[tuple[object, ...]]]) -> None:
    for table, items in rows.items():
        if items:
            conn.executemany(f"INSERT INTO {table} VALUES ({marks(items[0])})", items)


def _committed_lines(conn: sqlite3.Connection, paths: list[str]) -> dict[str, Mapping[str, int]]:
    """The field lines of committed notes (what their derived issues point at)."""
    sql = "SELECT path, lines FROM notes WHERE path IN (SELECT value FROM json_each(?))"
    return {path: json.loads(lines) for path, lines in conn.execute(sql, [json.dumps(paths)])}


def _sources_of(conn: sqlite3.Connection, paths: list[str]) -> set[str]:
    """The sources named by the claims and relationships among `paths` (table `sources`)."""
    sql = "SELECT source FROM sources WHERE path IN (SELECT value FROM json_each(?))"
    return {r[0] for r in conn.execute(sql, [json.dumps(paths)])}


def snapshot_id(digests: Mapping[str, int], scopes: Iterable[str] | None, fingerprint: str) -> str:
    """The snapshot id of `scopes` (all when None): changes when their eligible content does."""
    chosen = sorted(digests) if scopes is None else sorted(set(scopes))
    blob = fingerprint + "|" + "|".join(f"{s}:{digests[s]:x}" for s in chosen if digests.get(s))
    return hashlib.sha256(blob.encode()).hexdigest()[:20]


def issue_key(issue: Issue) -> tuple[str, str, str]:
    """How scan issues are compared between two scans."""
    return (issue.path, issue.code, issue.message)


def _contribution(entry: Entry) -> int:
    digest = hashlib.sha256(f"{entry.id}\0{entry.revision}".encode()).digest()
    return int.from_bytes(digest[:16], "big")
