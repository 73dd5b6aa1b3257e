"""What the graph projection reads from the state database: nodes and edges.

The `edges` view (temporal/store/tables.py) holds every edge of every valid note, eligible or not;
the projection in `graph` keeps those whose ends and evidence are eligible. Rows are turned
into dataclasses here, so no SQLite row leaves `temporal`.
"""

from __future__ import annotations

import sys
from collections.abc import Collection
from dataclasses import dataclass

from almanac.temporal.records import RecordKind
from almanac.temporal.store import Reader, Store, chunks, marks

__all__ = [
    "EdgeRow",
    "NodeRow",
    "commit_stamp",
    "edge_rows",
    "generation",
    "node_rows",
]


@dataclass(frozen=True, slots=True)
class NodeRow:
    """One valid note as the projection sees it (eligible or not)."""

    path: str
    scope: str
    id: str
    kind: RecordKind
    type: str
    title: str
    lifecycle: str
    eligible: bool


@dataclass(frozen=True, slots=True)
class EdgeRow:
    """One row of the `edges` view with its evidence file's scope and revision."""

    scope: str
    path: str
    src: str
    dst: str
    relation: str
    evidence: str
    line: int
    line_end: int
    revision: str
    valid_from: int | None
    valid_until: int | None


def generation(source: Store | Reader) -> str:
    """Which committed write the connection reads ("0" before the first): pairs a read
    transaction with the graph projection built from the same state."""
    row = source.conn.execute("SELECT value FROM meta WHERE key = 'generation'").fetchone()
    return str(row[0]) if row else "0"


def commit_stamp(source: Store | Reader) -> tuple[str, str]:
    """The generation and the random token of the last commit the connection reads ("0" and
    "" before the first): together they name one committed state of one database."""
    rows = dict(
        source.conn.execute("SELECT key, value FROM meta WHERE key IN ('generation', 'commit')")
    )
    return str(rows.get("generation", "0")), str(rows.get("commit", ""))


def node_rows(
    source: Store | Reader,
    *,
    paths: Collection[str] | None = None,
    ids: Collection[str] | None = None,
) -> list[NodeRow]:
    """Valid notes: all of them (both filters None), or those with one of `paths` or `ids`."""
    sql = (
        "SELECT path, scope, id, kind, type, title, lifecycle, eligible FROM notes WHERE valid = 1"
    )
    if paths is None and ids is None:
        return [_node(r) for r in source.conn.execute(sql)]
    found: dict[str, NodeRow] = {}
    for column, keys in (("path", paths or ()), ("id", ids or ())):
        for chunk in chunks(sorted(set(keys))):
            query = f"{sql} AND {column} IN ({marks(chunk)})"
            for row in source.conn.execute(query, chunk):
                found[row[0]] = _node(row)
    return [found[p] for p in sorted(found)]


def edge_rows(source: Store | Reader, *, paths: Collection[str] | None = None) -> list[EdgeRow]:
    """Rows of the `edges` view, each with its scope and evidence revision.

    Args:
        paths: Only edges whose evidence is one of these files; None for every edge.
    """
    sql = (
        "SELECT n.scope, e.path, e.src, e.dst, e.relation, e.evidence, e.line, e.line_end,"
        " n.revision, e.valid_from, e.valid_until FROM edges e JOIN notes n ON n.path = e.path"
    )
    if paths is None:
        return [_edge(row) for row in source.conn.execute(sql)]
    out: list[EdgeRow] = []
    for chunk in chunks(sorted(set(paths))):
        query = f"{sql} WHERE e.path IN ({marks(chunk)})"
        out.extend(_edge(row) for row in source.conn.execute(query, chunk))
    return out


# Ids, paths, scopes and relation names are interned (`sys.intern`): SQLite returns a new
# string per row, and a hub's id would otherwise be held once per edge that names it (at
# 100,000 notes, ~130 MB of copies in the graph projection).
_intern = sys.intern


def _node(row: tuple[str, str, str, str, str, str, str, int]) -> NodeRow:
    path, scope, rid, kind, rtype, title, lifecycle, eligible = row
    return NodeRow(
        _intern(path),
        _intern(scope),
        _intern(rid),
        RecordKind(kind),
        _intern(rtype),
        title,
        _intern(lifecycle),
        bool(eligible),
    )


def _edge(
    row: tuple[str, str, str, str, str, str, int, int, str, int | None, int | None],
) -> EdgeRow:
    scope, path, src, dst, relation, evidence, line, line_end, revision, since, until = row
    return EdgeRow(
        _intern(scope),
        _intern(path),
        _intern(src),
        _intern(dst),
        _intern(relation),
        _intern(evidence),
        line,
        line_end,
        _intern(revision),
        since,
        until,
    )
