"""Resolution and eligibility: guards, references resolved by name, the eligibility fixpoint."""

from __future__ import annotations

import hashlib

from almanac.temporal.reconcile.attachments import Files
from almanac.temporal.reconcile.derived import chains
from almanac.temporal.reconcile.intake import affected, committed_seen
from almanac.temporal.reconcile.memory import Guard, NoteState
from almanac.temporal.reconcile.names import Resolution
from almanac.temporal.reconcile.plan import Found, Plan, RowEnd, Target
from almanac.temporal.store import NameRule

__all__ = ["read_by_referrers", "resolve_links", "run"]

_REQUIRED = {"relationship": ("from", "to"), "claim": ("subject",)}
_MISSING = Resolution("missing")
_FILE_LINKS = ("wiki", "embed")  # the links that may name an attachment


def run(plan: Plan) -> None:
    """Work out what the files taken affect: resolution, eligibility, digests."""
    plan.affected = affected(plan)
    _guard_and_block(plan)
    for path in sorted(plan.affected):
        _resolve(plan, path)
    _eligibility(plan)


def resolve_links(plan: Plan) -> None:
    """Resolve the links of every note `run` resolved (in memory: no database read)."""
    for path, links in sorted(plan.links.items()):
        state = plan.entries[path]
        rows = _target_rows(plan, path, state, links)
        state.ambiguous_links = tuple(
            (line or 0, text)
            for (_f, _o, _k, text, _t, line), row in zip(links, rows, strict=True)
            if row[-1] == "ambiguous"
        )
        files = tuple((int(str(r[2])), str(r[-2])) for r in rows if r[-1] == "file")
        if files != state.file_links:
            # The attachments a record's links reach are part of what it says: its digest
            # contribution (worked out before its links were) changes, and it counts as changed.
            before = _contribution(state)
            state.file_links = files
            if state.eligible:
                plan.digests[state.scope] = (
                    plan.digests.get(state.scope, 0) ^ before ^ _contribution(state)
                )
            plan.affected_ids.add(state.id)
        plan.rows[path] += rows
    plan.links = {}
    plan.digests = {scope: value for scope, value in plan.digests.items() if value}


def _guard_and_block(plan: Plan) -> None:
    """Guard ids seen withdrawn or superseded; block the active copies a guard covers."""
    for path in sorted(plan.guarded):
        note = plan.notes[path]
        guard = plan.guards.get(note.id)
        if guard is None or _was_live(plan, note.id):
            # A new guard (or a new withdrawal after a reinstatement): every content seen
            # so far for this id is stale from now on.
            guard = Guard(note.lifecycle, plan.now_us, _seen_revisions(plan, note.id))
        else:
            guard = Guard(note.lifecycle, guard.seen_at, {*guard.hashes, note.revision})
        plan.guards[note.id] = guard
    for path in sorted(plan.affected):
        state = plan.own(path)
        guard = plan.guards.get(state.id)
        reinstated = state.reinstated_us
        state.blocked = (
            guard is not None
            and state.lifecycle == "active"
            and (
                state.revision in guard.hashes or reinstated is None or reinstated <= guard.seen_at
            )
        )


def _was_live(plan: Plan, note_id: str) -> bool:
    """Whether an active copy of this id was being served (so a guard starts afresh)."""
    before = [old for _, old in plan.undo if old is not None and old.id == note_id]
    before += [plan.entries[p] for p in plan.names.paths_with_id(note_id) if p not in plan.notes]
    return any(e.eligible and e.lifecycle == "active" and not e.blocked for e in before)


def _seen_revisions(plan: Plan, note_id: str) -> set[str]:
    if plan.seen_before is None:
        plan.seen_before = committed_seen(plan)
    committed = plan.seen_before.get(note_id, set())
    return committed | {rev for i, rev in plan.seen if i == note_id}


def _resolve(plan: Plan, path: str) -> None:
    """Resolve a note's references, which eligibility needs; its links wait for the write."""
    state = plan.own(path)
    for old in state.resolved.values():
        if old.path is not None and old.path in plan.referrers:
            plan.referrers_of(old.path).discard(path)
    state.resolved = {}
    links: list[Target]
    if path in plan.notes:
        note = plan.notes[path]
        refs: list[Target] = [(f, o, "ref", t, t, note.lines.get(f)) for f, o, t in state.refs]
        links = [
            ("link", i, link.kind, link.text, link.target, link.line)
            for i, link in enumerate(note.links)
        ]
    else:
        items = plan.conn.execute(
            "SELECT field, ord, kind, text, target, line FROM targets WHERE path = ?"
            " ORDER BY field, ord",
            (path,),
        ).fetchall()
        refs = [item for item in items if item[0] != "link"]
        links = [item for item in items if item[0] == "link"]
        state.refs = tuple((f, o, t) for f, o, _k, _x, t, _l in refs)
    plan.rows[path] = _target_rows(plan, path, state, refs)
    plan.links[path] = links


def _target_rows(
    plan: Plan, path: str, state: NoteState, items: list[Target]
) -> list[tuple[object, ...]]:
    """Resolve targets of the note at `path`: its `targets` rows; references are remembered."""
    rows: list[tuple[object, ...]] = []
    folder = path.rpartition("/")[0]
    cache = plan.resolved
    scope = state.scope if state.valid else None  # an invalid note's targets resolve nothing
    for fld, ord_, kind, text, target, line in items:
        found = cache.get((target, kind, scope))
        if found is None:
            found = cache[(target, kind, scope)] = _resolution(plan, target, kind, scope)
        if isinstance(found, list):  # several files of one name: the folder decides
            found = _with_row_end(plan, target, plan.names.in_folder(found, folder))
        elif isinstance(found, Files):  # attachments: the folder, else the shortest path
            found = _with_row_end(plan, target, plan.attachments.pick(found, folder))
        res, end = found
        if fld != "link":
            state.resolved[(fld, ord_)] = res
            if res.path is not None:
                plan.referrers_of(res.path).add(path)
        rows.append((path, fld, ord_, kind, text, line, target, *end))
    return rows


def _resolution(plan: Plan, target: str, kind: str, scope: str | None) -> Found:
    """How a target resolves in a scope (None: nothing), or the files of its name."""
    if scope is None:
        return _with_row_end(plan, target, _MISSING)
    found = plan.names.resolve(target, kind=kind, scope=scope)
    if isinstance(found, list):
        return found
    if found.status == "missing" and kind in _FILE_LINKS:
        # No note answers it: an attachment may (a link makes no edge to it).
        files = plan.attachments.find(target, scope=scope)
        if files is not None:
            return files
    return _with_row_end(plan, target, found)


def _with_row_end(plan: Plan, target: str, res: Resolution) -> tuple[Resolution, RowEnd]:
    """A resolution and the end of its `targets` row: keys of the text, and what it found."""
    # The keys that `affected` matches names which appear or vanish against (NameIndex.keys).
    keys = (NameRule.FILE.key(target), NameRule.TITLE.key(target))
    resolved_id = plan.entries[res.path].id if res.path and res.status == "resolved" else None
    return res, (*keys, resolved_id, res.path, res.status)


def _eligibility(plan: Plan) -> None:
    for path in plan.affected:
        state = plan.own(path)
        state.dup = state.valid and len(plan.same_id(state)) > 1
    # Fixpoint: a flip re-queues every note that depends on the flipped one, until none flips.
    pending = set(plan.affected)
    committed = plan.memory.entries
    for _ in range(len(committed) + len(plan.notes) + 2):
        if not pending:
            break
        memo: dict[str, bool] = {}
        flipped: set[str] = set()
        for path in sorted(pending):
            state = plan.own(path)
            if path in plan.derived:
                before: bool | None = state.eligible
            else:
                old = committed.get(path)
                before = old.eligible if old is not None else None
            value = _eligible(plan, path, memo, set(), pending)
            if value != before:
                flipped.add(path)
            state.eligible = value
            plan.derived.add(path)
        pending = set()
        plan.affected_ids.update(plan.entries[path].id for path in flipped)
        if plan.first_load:
            break  # every note was worked out in this first round: none to revisit
        for path in flipped:
            # A referrer worked out in this round already saw the new value (memo).
            pending |= {
                r for r in plan.referrers.get(path) or () if r in plan.entries and r not in memo
            }
    # Dangling references and supersession cycles are read off the targets' state: the
    # referrers of every changed or derived note whose part of it they read changed, and
    # whole superseded_by chains through them, get their derived issues recomputed too.
    if not plan.first_load:
        touched = plan.derived | set(plan.notes) | {p for p, _ in plan.undo}
        extra: set[str] = set()
        for path in touched:
            if read_by_referrers(plan.memory.entries.get(path)) == read_by_referrers(
                plan.entries.get(path)
            ):
                continue  # (a hub's body edited: its thousands of referrers stay as they are)
            extra.update(plan.referrers.get(path) or ())
            extra.update(plan.memory.referrers.get(path, ()))
        plan.derived |= {p for p in extra if p in plan.entries}
        plan.derived |= chains(plan, plan.derived)
    _digest(plan)


def read_by_referrers(state: NoteState | None) -> tuple[object, ...] | None:
    """What the rows a note's referrers derive read of it: while it is the same, a change of
    the note leaves them as they are, and they are not derived again.

    A referrer's rows read of the note it resolves a reference to (and the reconcile keeps
    them right otherwise):

    - whether it is there and eligible: the referrer's own eligibility (when the field is
      required: `_eligible`; a flip re-queues the referrers anyway) and its
      `dangling_reference` issues (`derived_issues`, for any reference field);
    - the path its `superseded_by` resolves to: the `supersession_cycle` issues of the notes
      on a chain through it (`chains` takes those whole chains in any case);
    - its id: the `resolved_id` of the referrer's `targets` rows; a new id re-resolves every
      target that may name it (`intake._names_changed`), so it is kept here only to be safe.

    Nothing else: `duplicate_id`, `case_collision` and `resurrection_blocked` read the
    referrer's own id and guard (notes sharing an id are affected: `intake.affected`);
    messages and lines are the referrer's own; a referrer's `spans`, `sources` and `facts`
    rows hold its own values and eligibility. The rows that carry the note's own values are
    keyed by its path and made again with it: its `spans`, and its `associations`, among them
    those through the claims that name it as `source` (its span under each entity the claims
    are about, read by `ASSOCIATE` from `sources` for every path rewritten: the source shows
    at its own date on their timelines, where a `source_event` claim stands for it when
    asked); the claims' own rows do not change.

    Each of the three is also caught elsewhere (as noted), and the reconcile fuzz passes with
    no referrer taken here at all: they are taken to be safe, at the cost of a rare edit.
    """
    if state is None:
        return None
    successor = state.resolved.get(("superseded_by", 0))
    return (state.id, state.eligible, successor.path if successor is not None else None)


def _eligible(
    plan: Plan, path: str, memo: dict[str, bool], visiting: set[str], pending: set[str]
) -> bool:
    if path in memo:
        return memo[path]
    state = plan.entries[path]
    if path not in pending and path not in plan.derived:
        return state.eligible
    ok = state.valid and not state.dup and not state.blocked and state.lifecycle != "withdrawn"
    if ok:
        visiting.add(path)
        for fld in _REQUIRED.get(state.kind, ()):
            res = state.resolved.get((fld, 0))
            target = res.path if res is not None else None
            if target is None or target not in plan.entries or target in visiting:
                ok = False
                break
            if not _eligible(plan, target, memo, visiting, pending):
                ok = False
                break
        visiting.discard(path)
    memo[path] = ok
    return ok


def _digest(plan: Plan) -> None:
    touched = {p for p, _ in plan.undo} | plan.derived
    digests = plan.digests
    changed = plan.changed_records
    for path in touched:
        old = plan.memory.entries.get(path)
        new = plan.entries.get(path)
        before = (old.scope, old.id, old.revision) if old is not None and old.eligible else None
        after = (new.scope, new.id, new.revision) if new is not None and new.eligible else None
        if before == after:
            continue
        if old is not None and before is not None:
            digests[old.scope] = digests.get(old.scope, 0) ^ _contribution(old)
            changed.add(before[:2])
        if new is not None and after is not None:
            digests[new.scope] = digests.get(new.scope, 0) ^ _contribution(new)
            changed.add(after[:2])
    plan.digests = {scope: value for scope, value in digests.items() if value}


def _contribution(state: NoteState) -> int:
    text = f"{state.id}\0{state.revision}"
    if state.file_links:  # (a note without links to attachments keeps its former contribution)
        text += "\0" + "\0".join(f"{ord_}:{path}" for ord_, path in state.file_links)
    digest = hashlib.sha256(text.encode()).digest()
    return int.from_bytes(digest[:16], "big")
