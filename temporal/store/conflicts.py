"""Conflicting claims, worked out when asked from the rows a reconcile keeps.

Two active, eligible claims conflict when they have one subject (as resolved) and one
`fact_key`, their validity intervals overlap (an open end is open, no validity is always)
and their bodies differ (surrounding whitespace aside). A record is *conflicted* when it
conflicts, or when its `derived_from` reaches a conflicting record within `LEVELS` steps.

Nothing of this is stored: the reconcile keeps its inputs (`facts`: claim, subject,
fact_key; `derived_from` in `targets`; validity in `dates`; body, lifecycle and eligibility
in `notes`), each already kept in step by the incremental reconcile, so an edit, a deletion
or a supersession can never leave a stale conflict behind. Under `asOf` only claims valid at
that instant take part. A page asks once for all its records: a few indexed look-ups.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Mapping, Sequence
from sqlite3 import Cursor

__all__ = ["LEVELS", "conflicted_paths", "conflicting_paths"]

Run = Callable[[str, Sequence[object]], Cursor]
LEVELS = 3  # how many derived_from steps a conflict reaches

_WHITESPACE = "char(9, 10, 13, 32)"
# A validity [from, until) that holds something: open ends are open.
_NONEMPTY = "({f}.start IS NULL OR {u}.start IS NULL OR {f}.start < {u}.start)"
_AT = "({f}.start IS NULL OR {f}.start <= ?) AND ({u}.start IS NULL OR ? < {u}.start)"
_CONFLICTS = f"""
SELECT f.path, g.path FROM facts f
JOIN facts g ON g.subject = f.subject AND g.fact_key = f.fact_key AND g.path <> f.path
JOIN notes a ON a.path = f.path
JOIN notes b ON b.path = g.path
LEFT JOIN dates af ON af.path = f.path AND af.field = 'valid_from'
LEFT JOIN dates au ON au.path = f.path AND au.field = 'valid_until'
LEFT JOIN dates bf ON bf.path = g.path AND bf.field = 'valid_from'
LEFT JOIN dates bu ON bu.path = g.path AND bu.field = 'valid_until'
WHERE f.path IN (SELECT value FROM json_each(?))
  AND +a.eligible = 1 AND +a.lifecycle = 'active' AND +b.eligible = 1 AND +b.lifecycle = 'active'
  AND trim(a.body, {_WHITESPACE}) <> trim(b.body, {_WHITESPACE})
  AND {_NONEMPTY.format(f="af", u="au")} AND {_NONEMPTY.format(f="bf", u="bu")}
  AND (af.start IS NULL OR bu.start IS NULL OR af.start < bu.start)
  AND (bf.start IS NULL OR au.start IS NULL OR bf.start < au.start)
"""
_AS_OF = f" AND {_AT.format(f='af', u='au')} AND {_AT.format(f='bf', u='bu')}"
_DERIVED = """
SELECT t.path, t.resolved_path FROM targets t JOIN notes n ON n.path = t.resolved_path
WHERE t.path IN (SELECT value FROM json_each(?)) AND t.field = 'derived_from'
  AND t.status = 'resolved' AND +n.eligible = 1
"""


def conflicting_paths(
    run: Run, paths: Collection[str], *, as_of_us: int | None = None
) -> dict[str, set[str]]:
    """The claims each of `paths` conflicts with (only paths that have some).

    Args:
        run: Executes one statement in the caller's read transaction.
        as_of_us: Only claims valid at this instant take part; None: any validity.
    """
    found: dict[str, set[str]] = {}
    if not paths:
        return found
    params: list[object] = [json.dumps(sorted(paths))]
    sql = _CONFLICTS
    if as_of_us is not None:
        sql, params = sql + _AS_OF, [*params, *[as_of_us] * 4]
    for path, other in run(sql, params):
        found.setdefault(path, set()).add(other)
    return found


def conflicted_paths(
    run: Run,
    paths: Collection[str],
    *,
    as_of_us: int | None = None,
    known: Mapping[str, set[str]] | None = None,
) -> set[str]:
    """Those of `paths` that conflict, or whose `derived_from` reaches (through eligible
    records, within `LEVELS` steps) a record that does.

    Args:
        known: `conflicting_paths` of `paths` (with this `as_of_us`), when already asked.
    """
    children: dict[str, set[str]] = {}
    seen = set(paths)
    frontier = sorted(seen)
    for _ in range(LEVELS):
        if not frontier:
            break
        for path, child in run(_DERIVED, [json.dumps(frontier)]):
            children.setdefault(path, set()).add(child)
        frontier = sorted({c for p in frontier for c in children.get(p, ())} - seen)
        seen.update(frontier)
    if known is None:
        direct = set(conflicting_paths(run, seen, as_of_us=as_of_us))
    else:
        direct = set(known) | set(conflicting_paths(run, seen - set(paths), as_of_us=as_of_us))
    return {p for p in paths if _reaches(p, children, direct)}


def _reaches(start: str, children: dict[str, set[str]], direct: set[str]) -> bool:
    """Whether `start`, or a record within `LEVELS` derived_from steps of it, is in `direct`."""
    level = {start}
    visited = set(level)
    for _ in range(LEVELS + 1):
        if level & direct:
            return True
        level = {c for p in level for c in children.get(p, ())} - visited
        visited |= level
    return False
