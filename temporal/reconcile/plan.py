"""The state of one change set: what it took, what it worked out, kept apart from memory."""

from __future__ import annotations

import dataclasses
import sqlite3
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from almanac.temporal.calendar import DateValue
from almanac.temporal.reconcile.attachments import Files
from almanac.temporal.reconcile.memory import Guard, Memory, NoteState, Overlay
from almanac.temporal.reconcile.names import Resolution
from almanac.vault import Issue, Note, ParsedNote

__all__ = ["Plan", "Summary", "Target"]

# A link or reference as written: (field, ord, kind, text, target, line).
Target = tuple[str, int, str, str, str, int | None]
# The end of a `targets` row: (key_lower, key_norm, resolved id, resolved path, status).
RowEnd = tuple[str, str, str | None, str | None, str]
# A target resolved with its row's end, or the paths of several files of its name, or the
# attachments it may mean.
Found = tuple[Resolution, RowEnd] | list[str] | Files


@dataclass(frozen=True, slots=True)
class Summary:
    """What a change set did, sorted (for the reconcile's result)."""

    changed_paths: tuple[str, ...]
    affected_ids: tuple[str, ...]
    resolved_paths: tuple[str, ...]  # notes whose links and references were resolved again
    parsed: int
    deleted: int


class Plan:
    """What one change set took and worked out; the reconciler's memory is left as committed.

    Args:
        memory: The committed memory the plan starts from (read, never changed before `commit`).
        conn: The writer's connection, for reads of committed rows.
        scope_of: The scope of a vault-relative path.
        now_us: The reconcile's clock, stamped on new guards.
    """

    def __init__(
        self,
        memory: Memory,
        conn: sqlite3.Connection,
        scope_of: Callable[[str], str],
        now_us: int,
    ) -> None:
        self.memory = memory
        self.conn = conn
        self.scope_of = scope_of
        self.now_us = now_us
        self.changes: dict[str, ParsedNote | None] = {}  # path -> parsed note, None when gone
        self.notes: dict[str, Note] = {}
        self.note_rows: dict[str, tuple[object, ...]] = {}  # a notes row but for `eligible`
        self.names_of: dict[str, list[tuple[str, str]]] = {}  # (name key, title|alias)
        self.file_issues: dict[str, list[Issue]] = {}
        self.dates: dict[str, dict[str, DateValue]] = {}
        self.zones: dict[str, str | None] = {}
        # Overlays: a change set touches a handful of notes, so it keeps its changes apart
        # from the reconciler's memory (100,000 notes) instead of copying it.
        self.entries: Overlay[str, NoteState] = Overlay(memory.entries)
        self.digests = dict(memory.digests)
        # (scope, id) of the records whose part of the digests changed: added, removed or with
        # other bytes; what a commit tells subscribers.
        self.changed_records: set[tuple[str, str]] = set()
        self.guards: Overlay[str, Guard] = Overlay(memory.guards)  # a changed guard is new
        self.referrers: Overlay[str, set[str]] = Overlay(memory.referrers)  # see referrers_of
        self.affected: set[str] = set()
        self.guarded: list[str] = []  # changed notes with a usable id, withdrawn or superseded
        self.derived: set[str] = set()
        self.affected_ids: set[str] = set()
        self.rows: dict[str, list[tuple[object, ...]]] = {}
        self.seen: list[tuple[str, str]] = []
        self.names = memory.names
        self.attachments = memory.attachments  # changed in place, like the name index
        self.files_added: list[tuple[str, str]] = []  # attachments (path, scope) to write
        self.files_removed: list[str] = []
        # Targets repeat (hubs): resolve each (target, kind, scope) once per plan, after every
        # name of the change set is in the index.
        self.resolved: dict[tuple[str, str, str | None], Found] = {}
        self.links: dict[str, list[Target]] = {}  # links of the notes resolved, until the write
        # Read before the write's background work, which must have the connection to itself.
        self.seen_before: dict[str, set[str]] | None = None  # seen revisions of guarded ids
        self.lines_before: dict[str, Mapping[str, int]] = {}  # lines of notes not rewritten
        self.undo: list[tuple[str, NoteState | None]] = []
        # Keys under which committed targets may reach a changed note, and the changed ids.
        self.lower_keys: set[str] = set()
        self.norm_keys: set[str] = set()
        self.id_keys: set[str] = set()
        # Nothing committed is usable: every note is in this change set, so no committed target
        # can match a name, and every note is affected and derived anyway.
        self.first_load = not memory.entries

    def own(self, path: str) -> NoteState:
        """The plan's own copy of a note's state, so the memory stays as committed."""
        state = self.entries[path]
        if self.memory.entries.get(path) is state:
            state = dataclasses.replace(state, resolved=dict(state.resolved))
            self.entries[path] = state
        return state

    def referrers_of(self, path: str) -> set[str]:
        """The plan's own set of notes whose references resolve to `path`."""
        found = self.referrers.get(path)
        if found is None or found is self.memory.referrers.get(path):
            found = self.referrers[path] = set(found or ())
        return found

    def same_id(self, state: NoteState) -> list[str]:
        """Usable notes of the state's scope that carry its id (ids are unique per scope)."""
        scope = self.names.scope
        return [p for p in self.names.paths_with_id(state.id) if scope[p] == state.scope]

    def summary(self) -> Summary:
        """What this plan did, once written."""
        changes = self.changes
        parsed = sum(1 for c in changes.values() if c is not None)
        files = {p for p, _ in self.files_added} | set(self.files_removed)
        return Summary(
            tuple(sorted(changes.keys() | files)),
            tuple(sorted(self.affected_ids)),
            tuple(sorted(set(self.rows) | set(changes))),
            parsed,
            len(changes) - parsed,
        )

    def commit(self) -> None:
        """Make the plan the reconciler's memory, once the transaction committed."""
        self.entries.apply()
        self.referrers.apply()
        self.guards.apply()
        self.memory.digests = self.digests
