"""Derived issues, read off the plan's state: duplicates, guards, unmet references, cycles."""

from __future__ import annotations

from collections.abc import Mapping

from almanac.temporal.reconcile.plan import Plan
from almanac.temporal.records import supersession_chain

__all__ = ["chains", "derived_issues"]


def chains(plan: Plan, paths: set[str]) -> set[str]:
    """Every note on a superseded_by chain that runs through one of `paths`."""
    found: set[str] = set()
    todo = [p for p in paths if p in plan.entries]
    while todo:
        path = todo.pop()
        if path in found:
            continue
        found.add(path)
        res = plan.entries[path].resolved.get(("superseded_by", 0))
        if res is not None and res.path is not None and res.path in plan.entries:
            todo.append(res.path)
        for ref in plan.referrers.get(path) or ():
            ref_state = plan.entries.get(ref)
            back = ref_state.resolved.get(("superseded_by", 0)) if ref_state else None
            if back is not None and back.path == path:
                todo.append(ref)
    return found


def derived_issues(plan: Plan, path: str) -> list[tuple[object, ...]]:
    """The derived issues of the note at `path`, as `issues` rows but for origin and scope."""
    e = plan.entries[path]
    if not e.valid or e.lifecycle == "withdrawn":
        return []  # out of every query; its own file issues still show
    entries, scope = plan.entries, plan.names.scope
    unmet = [
        (key, res)
        for key, res in e.resolved.items()
        if res.status == "ambiguous"
        or res.path is None
        or (target_state := entries.get(res.path)) is None
        or not target_state.eligible
    ]
    twins = [p for p in plan.names.case_twins(e.id) if scope[p] == e.scope]
    chained = ("superseded_by", 0) in e.resolved
    if not (e.dup or twins or e.blocked or unmet or e.ambiguous_links or chained):
        return []  # (most notes)
    out: list[tuple[object, ...]] = []

    def add(line: int | None, fld: str | None, code: str, message: str) -> None:
        out.append((path, line, fld, code, message, e.id))

    if e.dup:
        others = sorted(plan.same_id(e))
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
    lines = _lines(plan, path)
    for (fld, ord_), res in sorted(unmet, key=lambda item: item[0]):
        target = next((t for f, o, t in e.refs if (f, o) == (fld, ord_)), "")
        if res.status == "ambiguous":
            add(lines.get(fld), fld, "ambiguous_link", f"{fld} {target!r} matches several records")
        else:
            add(
                lines.get(fld),
                fld,
                "dangling_reference",
                f"{fld} {target!r} resolves to nothing eligible",
            )
    for line, text in e.ambiguous_links:
        add(line, None, "ambiguous_link", f"Link {text} matches several records")
    if chained and _in_cycle(plan, path):
        add(
            lines.get("superseded_by"),
            "superseded_by",
            "supersession_cycle",
            f"superseded_by of {e.id!r} leads back to itself",
        )
    return out


def _in_cycle(plan: Plan, path: str) -> bool:
    def successor(of: str) -> str | None:
        res = plan.entries[of].resolved.get(("superseded_by", 0))
        return res.path if res is not None else None

    chain = list(supersession_chain(path, successor))
    return successor(chain[-1] if chain else path) == path


def _lines(plan: Plan, path: str) -> Mapping[str, int]:
    if path in plan.notes:
        return plan.notes[path].lines
    return plan.lines_before.get(path, {})
