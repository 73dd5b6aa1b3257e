"""A change set's intake: each changed file on its own, then the notes it affects."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping

from almanac.temporal.reconcile.attachments import attachment_keys
from almanac.temporal.reconcile.dates import note_dates
from almanac.temporal.reconcile.memory import NoteState
from almanac.temporal.reconcile.plan import Plan
from almanac.temporal.store import chunks, marks, normalize_name
from almanac.vault import Note, ParsedNote

__all__ = ["affected", "committed_seen", "take", "take_attachments"]


def take(plan: Plan, path: str, parsed: ParsedNote | None) -> None:
    """Take one changed file (None: gone) into the plan: what it says on its own.

    A reconcile takes each file as soon as it is parsed (in any order), then runs the plan.
    """
    plan.changes[path] = parsed
    old = plan.entries.get(path)
    old_keys: tuple[set[str], set[str]] = (set(), set())
    if old is not None:
        # What it referred to no longer has it as a referrer (a new version resolves afresh).
        for res in old.resolved.values():
            if res.path is not None and res.path in plan.referrers:
                plan.referrers_of(res.path).discard(path)
        old_keys = plan.names.keys(path)
        plan.id_keys.add(old.id)
        plan.affected_ids.add(old.id)
        plan.names.remove(path)
        del plan.entries[path]
    plan.undo.append((path, old))
    plan.file_issues[path] = list(parsed.issues) if parsed else []
    if parsed is None or parsed.note is None:
        _names_changed(plan, old, None, old_keys, (set(), set()))
        return
    note = parsed.note
    id_ok = not any(i.code == "invalid_id" for i in parsed.issues)
    dates, tz, date_issues = note_dates(note)
    plan.zones[path] = tz
    plan.file_issues[path].extend(date_issues)
    plan.notes[path] = note
    plan.dates[path] = dates
    reinstated = dates.get("reinstated_at")
    refs = tuple(
        [(f, 0, t) for f, t in sorted(note.refs.items())]
        + [("entities", i, t) for i, t in enumerate(note.entities)]
        + [("derived_from", i, t) for i, t in enumerate(note.derived_from)]
    )
    state = NoteState(
        path,
        note.id,
        plan.scope_of(path),
        note.kind,
        note.valid,
        note.lifecycle,
        note.revision,
        reinstated.start_us if reinstated else None,
        refs,
    )
    plan.entries[path] = state
    # Its row (but for eligibility) and name keys are made here, while the worker parses.
    plan.note_rows[path] = _note_row(note, state.scope, tz)
    if note.valid:
        plan.names_of[path] = _name_keys(note)
    plan.affected_ids.add(note.id)
    if id_ok:
        plan.id_keys.add(note.id)
        plan.seen.append((note.id, note.revision))
        if note.lifecycle != "active":
            plan.guarded.append(path)
    # Withdrawn notes take no part in resolution: they are out of every query.
    new_keys: tuple[set[str], set[str]] = (set(), set())
    if note.valid and note.lifecycle != "withdrawn":
        plan.names.add(
            path,
            id=note.id,
            slug=note.slug,
            scope=state.scope,
            names=(),
            norms=[key for key, _ in plan.names_of[path]],
        )
        if not plan.first_load:
            new_keys = plan.names.keys(path)
    _names_changed(plan, old, note.id, old_keys, new_keys)


def _names_changed(
    plan: Plan,
    old: NoteState | None,
    new_id: str | None,
    old_keys: tuple[set[str], set[str]],
    new_keys: tuple[set[str], set[str]],
) -> None:
    """The keys under which committed targets may now reach another note, or this one.

    A note rewritten under its id keeps the keys it kept: only those that appeared or vanished
    can change what a target resolves to, so editing a hub's body leaves its thousands of
    referrers alone. A new id may change the rule a kept key matches by (a target that
    matched the file name matches the exact id now): all of its keys count then.
    """
    if old is not None and old.id == new_id:
        plan.lower_keys |= old_keys[0] ^ new_keys[0]
        plan.norm_keys |= old_keys[1] ^ new_keys[1]
    else:
        plan.lower_keys |= old_keys[0] | new_keys[0]
        plan.norm_keys |= old_keys[1] | new_keys[1]


def take_attachments(plan: Plan, added: Iterable[str], removed: Iterable[str]) -> None:
    """Take the attachments that appeared and vanished (before any note is resolved): the notes
    whose links may mean them are resolved again."""
    for path in sorted(removed):
        plan.attachments.remove(path)
        plan.files_removed.append(path)
        _file_changed(plan, path)
    for path in sorted(added):
        scope = plan.scope_of(path)
        plan.attachments.add(path, scope)
        plan.files_added.append((path, scope))
        _file_changed(plan, path)


def affected(plan: Plan) -> set[str]:
    """The notes the files taken affect: themselves, the notes whose targets match a name that
    appeared or vanished, and the notes sharing an id (or its case twin) with a changed one."""
    found = set(plan.notes) | _targets_matching(plan, plan.lower_keys, plan.norm_keys)
    for note_id in () if plan.first_load else plan.id_keys:
        found |= plan.names.paths_with_id(note_id) | plan.names.case_twins(note_id)
    return {p for p in found if p in plan.entries}


def committed_seen(plan: Plan) -> dict[str, set[str]]:
    """Every revision committed as seen for the ids of the withdrawn or superseded notes."""
    ids = json.dumps(sorted({plan.notes[p].id for p in plan.guarded}))
    found: dict[str, set[str]] = {}
    sql = "SELECT id, revision FROM seen WHERE id IN (SELECT value FROM json_each(?))"
    for note_id, revision in plan.conn.execute(sql, [ids]):
        found.setdefault(note_id, set()).add(revision)
    return found


def _file_changed(plan: Plan, path: str) -> None:
    # The notes whose link targets may mean it are resolved again (`affected`); a file nothing
    # links to changes no record, so no snapshot (`resolve_links` sees to that).
    plan.lower_keys.update(attachment_keys(path))


def _targets_matching(plan: Plan, lower: set[str], norm: set[str]) -> set[str]:
    found: set[str] = set()
    for column, keys in (("key_lower", lower), ("key_norm", norm)):
        for chunk in chunks(sorted(keys)):
            sql = f"SELECT DISTINCT path FROM targets WHERE {column} IN ({marks(chunk)})"
            found.update(row[0] for row in plan.conn.execute(sql, chunk))
    return found


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
        n.fact_key,
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


def _json(value: object) -> str:
    """JSON text of a tuple or mapping; empty ones (most of them) cost nothing."""
    if not value:
        return "{}" if isinstance(value, Mapping) else "[]"
    if isinstance(value, Mapping):
        value = dict(value)
    return _ENCODER.encode(value)


_ENCODER = json.JSONEncoder(default=str)  # (`json.dumps(default=...)` makes one per call)
