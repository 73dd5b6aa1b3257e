"""The keyword index read: the per-scope statements that count, rank and fetch the matches of
one MATCH expression, and the notes they match (`Matched`, their bodies).

The queries parse the keywords and write the MATCH expressions (temporal/queries/matching.py)
and make the hits (temporal/queries/snippets.py); these read the index and the notes, so that
a search goes down to the store and comes back with rows.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from almanac.temporal.records import LifecycleFilter, Locator, RecordKind, RecordRef
from almanac.temporal.store.reader import Reader, RecordFilter
from almanac.temporal.store.sql import marks
from almanac.temporal.store.tables import search_table

__all__ = [
    "MATCHED_COLUMNS",
    "Matched",
    "Part",
    "bodies",
    "by_table",
    "count",
    "details",
    "matching",
    "parts",
    "ranked",
    "row",
    "scope_counts",
    "top",
]

# Column weights of SPEC section 5: title, aliases, body (the order of the index's columns).
_WEIGHTS = "8.0, 6.0, 1.0"
MATCHED_COLUMNS = (
    "n.rowid, n.path, n.id, n.kind, n.type, n.title, n.scope, n.body_line, n.line_count, n.revision"
)


@dataclass(frozen=True, slots=True)
class Matched:
    """A matched note, with the score its strategy gave it."""

    rowid: int
    path: str
    ref: RecordRef
    scope: str
    score: float | None
    body_line: int
    locator: Locator


@dataclass(frozen=True, slots=True)
class Part:
    """The matches of one scope: `FROM ... WHERE ...` over its index and `search_keys`; the
    MATCH expression and the filter (`where` over `search_keys n`) apart, for `top`."""

    table: str
    base: str
    params: list[object]
    match: str
    where: str
    where_params: list[object]


def parts(
    reader: Reader,
    flt: RecordFilter,
    scopes: Sequence[str],
    match: str,
    *,
    keys_first: bool = False,
) -> list[Part]:
    """One part per readable scope of the filter that has an index (a note), in scope order.

    Args:
        keys_first: Start from `search_keys` (few rows pass the filter) rather than the index.
    """
    chosen = [s for s in scopes if flt.scope is None or s == flt.scope]
    sql = f"SELECT scope FROM search_scopes WHERE scope IN ({marks(chosen)}) ORDER BY scope"
    found = []
    for (scope,) in reader.run(sql, chosen).fetchall():
        table = search_table(scope)
        where, params = reader._filter(flt, [scope])
        # `n` is search_keys: the filter's columns of notes, without the wide rows.
        if keys_first:
            base = (
                f"FROM search_keys n CROSS JOIN {table} ON {table}.rowid = n.rowid"
                f" WHERE {where} AND {table} MATCH ?"
            )
            found.append(Part(table, base, [*params, match], match, where, params))
        else:
            base = (
                f"FROM {table} CROSS JOIN search_keys n ON n.rowid = {table}.rowid"
                f" WHERE {table} MATCH ? AND {where}"
            )
            found.append(Part(table, base, [match, *params], match, where, params))
    return found


def count(reader: Reader, found: Sequence[Part], *, filtered: bool = True) -> int:
    """How many notes the parts match in all.

    Args:
        filtered: The filter leaves some note of the parts' scopes out (`scope_counts`);
            when it leaves none, each index counts its matches alone, without a join.
    """
    if not filtered:
        sql = "SELECT count(*) FROM {0} WHERE {0} MATCH ?"
        return sum(int(reader.run(sql.format(p.table), [p.match]).fetchone()[0]) for p in found)
    return sum(int(reader.run(f"SELECT count(*) {p.base}", p.params).fetchone()[0]) for p in found)


def scope_counts(reader: Reader, flt: RecordFilter, scopes: Sequence[str]) -> tuple[int, int]:
    """How many notes of the filter's scopes pass the filter, and how many it leaves out.

    A scope's notes are its index's rows, which SQLite counts from the pages alone
    (`count(*)` of the `_docsize` table: no row is read). With no filter but lifecycle, the
    notes left out are counted through `search_keys_live` (eligible, lifecycle, scope): the
    ranges of the other eligibilities and lifecycles, few notes as a rule, rather than the
    range of the notes kept.
    """
    chosen = [s for s in scopes if flt.scope is None or s == flt.scope]
    sql = f"SELECT scope FROM search_scopes WHERE scope IN ({marks(chosen)})"
    indexed = [scope for (scope,) in reader.run(sql, chosen).fetchall()]
    in_scope = sum(
        int(reader.run(f"SELECT count(*) FROM {search_table(s)}_docsize").fetchone()[0])
        for s in indexed
    )
    others = (flt.kind, flt.type, flt.tag, flt.since_us, flt.until_us)
    if any(value is not None for value in others) or not indexed:
        where, params = reader._filter(flt, scopes)
        kept = int(
            reader.run(f"SELECT count(*) FROM search_keys n WHERE {where}", params).fetchone()[0]
        )
        return kept, in_scope - kept
    ranges: list[tuple[str, list[object]]] = [("n.eligible < 1", []), ("n.eligible > 1", [])]
    if flt.lifecycle is not LifecycleFilter.ALL:
        ranges += [
            ("n.eligible = 1 AND n.lifecycle < ?", [flt.lifecycle.value]),
            ("n.eligible = 1 AND n.lifecycle > ?", [flt.lifecycle.value]),
        ]
    among = f"n.scope IN ({marks(indexed)})"
    out = sum(
        int(
            reader.run(
                f"SELECT count(*) FROM search_keys n WHERE {clause} AND {among}",
                [*params, *indexed],
            ).fetchone()[0]
        )
        for clause, params in ranges
    )
    return in_scope - out, out


def ranked(
    reader: Reader, found: Sequence[Part], *, limit: int, offset: int = 0
) -> list[tuple[int, float]]:
    """(rowid, score) of the parts' matches, each scored in its scope (BM25, negated so that
    higher is better), merged by score, then record id, then scope."""
    if not found:
        return []
    # One scope sorts by the columns themselves (selecting them too costs ~40 ms on 68,000
    # matches); a compound by its result columns.
    keys, order = (
        ("", "n.id, n.scope")
        if len(found) == 1
        else (", n.id AS id, n.scope AS scope", "id, scope")
    )
    selects = [
        f"SELECT n.rowid, -bm25({p.table}, {_WEIGHTS}) AS score{keys} {p.base}" for p in found
    ]
    sql = " UNION ALL ".join(selects) + f" ORDER BY score DESC, {order} LIMIT ? OFFSET ?"
    params = [value for p in found for value in p.params]
    return [(r[0], r[1]) for r in reader.run(sql, [*params, limit, offset])]


def top(
    reader: Reader,
    found: Sequence[Part],
    *,
    limit: int,
    offset: int = 0,
    matches: int | None = None,
) -> list[tuple[int, float]]:
    """What `ranked` returns. Past a few thousand matches, without joining every match to its
    filter: each scope's index ranks its matches alone and stops at a limit (`ORDER BY bm25
    LIMIT`), and only those rows are filtered; when the filter leaves too few, the limit
    doubles (see `_best`).

    Args:
        matches: A ceiling of how many notes pass the filter and match (None: unknown). Below
            `_JOIN_BELOW`, joining them all costs less than one more statement.
    """
    if not found or limit <= 0:
        return []
    if matches is not None and matches <= _JOIN_BELOW:
        return ranked(reader, found, limit=limit, offset=offset)
    need = offset + limit
    best = [key for part in found for key in _best(reader, part, need)]
    best.sort()
    return [(rowid, -bm25) for bm25, _, _, rowid in best[offset:need]]


_JOIN_BELOW = 2000
# The first limit of `_best` is this many times what it needs (plus _SPARE): most filters keep
# most matches, so one statement is enough; the rows at the limit's score may be cut off.
_OVER_FETCH = 2
_SPARE = 16
# Rounds of doubling before `_best` joins every match instead: each round ranks every match
# again, so a filter that keeps few matches is cheaper to join.
_ROUNDS = 3

_Key = tuple[float, str, str, int]  # (bm25, id, scope, rowid): the order of hits (bm25 < 0)


def _best(reader: Reader, part: Part, need: int) -> list[_Key]:
    """The `need` best matches of one scope that pass its filter, in the order of hits.

    A statement with `LIMIT k` returns the k best scores, but of the rows that tie with the
    last one some may be cut off: only the rows scoring strictly better are known to be all
    there are. When fewer than `need` of them pass the filter and the index had more, k
    doubles; after `_ROUNDS` rounds every match is joined to the filter and ranked instead.
    """
    table = part.table
    sql = (
        f"SELECT rowid, bm25({table}, {_WEIGHTS}) AS s FROM {table} WHERE {table} MATCH ?"
        " ORDER BY s LIMIT ?"
    )
    # NOT INDEXED: by rowid, never through search_keys_live (25 times slower per row); the
    # rowids as one JSON array, however many (SQLite takes at most 32,766 parameters).
    keep_sql = (
        "SELECT n.rowid, n.id, n.scope FROM search_keys n NOT INDEXED"
        f" WHERE n.rowid IN (SELECT value FROM json_each(?)) AND {part.where}"
    )
    kept: dict[int, tuple[str, str] | None] = {}  # rowid: (id, scope) if the filter keeps it
    limit = _OVER_FETCH * need + _SPARE
    for _ in range(_ROUNDS):
        rows = reader.run(sql, [part.match, limit]).fetchall()
        done = len(rows) < limit
        known = rows if done else [(r, s) for r, s in rows if s < rows[-1][1]]
        fresh = [r for r, _ in known if r not in kept]
        kept.update(dict.fromkeys(fresh))
        if fresh:
            for rowid, rid, scope in reader.run(keep_sql, [json.dumps(fresh), *part.where_params]):
                kept[rowid] = (rid, scope)
        keys = [(s, *key, r) for r, s in known if (key := kept[r]) is not None]
        if done or len(keys) >= need:
            keys.sort()
            return keys[:need]
        limit *= 2
    joined = (
        f"SELECT n.rowid, bm25({table}, {_WEIGHTS}) AS s, n.id, n.scope {part.base}"
        " ORDER BY s, n.id, n.rowid LIMIT ?"
    )
    return [(s, rid, scope, r) for r, s, rid, scope in reader.run(joined, [*part.params, need])]


def details(reader: Reader, scored: Sequence[tuple[int, float | None]]) -> list[Matched]:
    """The rows of these (rowid, score) pairs, in their order."""
    if not scored:
        return []
    sql = f"SELECT {MATCHED_COLUMNS} FROM notes n WHERE n.rowid IN ({marks(scored)})"
    found = {r[0]: r for r in reader.run(sql, [rowid for rowid, _ in scored])}
    return [row(found[rowid], score) for rowid, score in scored]


def row(values: Sequence[object], score: float | None) -> Matched:
    """A `Matched` of the `MATCHED_COLUMNS` of one note."""
    rowid, path, rid, kind, rtype, title, scope, body_line, line_count, revision = values
    assert isinstance(path, str) and isinstance(rid, str) and isinstance(kind, str)
    assert isinstance(rtype, str) and isinstance(title, str) and isinstance(scope, str)
    assert isinstance(rowid, int) and isinstance(body_line, int) and isinstance(line_count, int)
    assert isinstance(revision, str)
    return Matched(
        rowid,
        path,
        RecordRef(rid, RecordKind(kind), rtype, title),
        scope,
        score,
        body_line,
        Locator(path, 1, line_count, revision),
    )


# `+rowid IN (...)`, not `rowid IN (...)`: given the rowids, FTS5 seeks each one in every
# phrase's doclist, which costs far more on common words (7 ms for 20 rows of a word in 68 % of
# 5,000 notes) than reading the expression's matches once and keeping those rows (0.8 ms).
def matching(reader: Reader, rows: Sequence[Matched], match: str) -> set[int]:
    """The rowids of the rows that match the MATCH expression `match`."""
    found: set[int] = set()
    for table, rowids in by_table(rows).items():
        sql = f"SELECT rowid FROM {table} WHERE {table} MATCH ? AND +rowid IN ({marks(rowids)})"
        found.update(rowid for (rowid,) in reader.run(sql, [match, *rowids]))
    return found


def bodies(reader: Reader, rowids: Sequence[int]) -> dict[int, str]:
    """The body of each of these notes."""
    sql = f"SELECT rowid, body FROM notes WHERE rowid IN ({marks(rowids)})"
    return dict(reader.run(sql, list(rowids)).fetchall())


def by_table(rows: Sequence[Matched]) -> dict[str, list[int]]:
    """The rows' rowids by the full-text index of their scope."""
    found: dict[str, list[int]] = {}
    for row in rows:
        found.setdefault(search_table(row.scope), []).append(row.rowid)
    return found
