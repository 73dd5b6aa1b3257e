"""The keyword matching that every search strategy shares: tokens, MATCH expressions, and the
per-scope statements that count, rank and fetch the matches of one expression.

The user's text is never FTS5 syntax. It is cut into tokens by the index's own tokenizer
(unicode61, diacritics removed, case folded), and the MATCH expression is built here from
those tokens, each quoted: `NEAR`, `*`, `^`, `:`, column names, `AND`/`OR`/`NOT` and quotes in
the input are words or separators, nothing else.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum

from temporal.records import LifecycleFilter, Locator, RecordKind, RecordRef
from temporal.store import Reader, RecordFilter, marks, search_table
from vault import InvalidInput

__all__ = [
    "COLUMNS",
    "MAX_QUERY_CHARS",
    "MAX_QUERY_TOKENS",
    "MatchMode",
    "Part",
    "Row",
    "count",
    "details",
    "expression",
    "parts",
    "ranked",
    "row",
    "scope_counts",
    "search_tokens",
    "text_tokens",
    "top",
]

MAX_QUERY_CHARS = 500
MAX_QUERY_TOKENS = 64
# Column weights of SPEC section 5: title, aliases, body (the order of the index's columns).
_WEIGHTS = "8.0, 6.0, 1.0"
_TOKENIZER = "unicode61 remove_diacritics 2"  # as in temporal/store/tables.py
COLUMNS = (
    "n.rowid, n.path, n.id, n.kind, n.type, n.title, n.scope, n.body_line, n.line_count, n.revision"
)


class MatchMode(Enum):
    """How the query's tokens must match: all of them, any of them, or in sequence."""

    ALL = "all"
    ANY = "any"
    PHRASE = "phrase"


@dataclass(frozen=True, slots=True)
class Row:
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


def search_tokens(text: str) -> tuple[str, ...]:
    """The word tokens of a query, cut and folded exactly as the index cuts and folds text.

    Raises:
        InvalidInput: (naming `query`) the text is longer than 500 characters, holds no word
            token or more than 64, or is not valid Unicode.
    """
    tokens = text_tokens(text, name="query", limit=MAX_QUERY_CHARS)
    if not 1 <= len(tokens) <= MAX_QUERY_TOKENS:
        raise InvalidInput(
            f"Argument 'query' must hold 1 to {MAX_QUERY_TOKENS} word tokens (letters or digits"
            f" between punctuation and spaces), not {len(tokens)}"
        )
    return tokens


def text_tokens(text: str, *, name: str, limit: int) -> tuple[str, ...]:
    """The word tokens of a text (none, maybe), cut and folded as the index does.

    Raises:
        InvalidInput: (naming the argument `name`) the text is longer than `limit` characters
            or is not valid Unicode.
    """
    if len(text) > limit:
        raise InvalidInput(f"Argument {name!r} must be at most {limit} characters, not {len(text)}")
    conn = _tokenizer()
    try:
        conn.execute("BEGIN")
        conn.execute("INSERT INTO q (rowid, t) VALUES (1, ?)", (text,))
        return tuple(row[0] for row in conn.execute("SELECT term FROM qv ORDER BY offset"))
    except UnicodeEncodeError as exc:
        raise InvalidInput(f"Argument {name!r} must be valid Unicode (no lone surrogates)") from exc
    finally:
        if conn.in_transaction:
            conn.execute("ROLLBACK")


def expression(tokens: Sequence[str], mode: MatchMode) -> str:
    """The MATCH expression of the tokens: each quoted, joined as the mode says."""
    quoted = ['"' + token.replace('"', '""') + '"' for token in tokens]
    if mode is MatchMode.PHRASE:
        return " + ".join(quoted)
    return (" AND " if mode is MatchMode.ALL else " OR ").join(quoted)


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


def details(reader: Reader, scored: Sequence[tuple[int, float | None]]) -> list[Row]:
    """The rows of these (rowid, score) pairs, in their order."""
    if not scored:
        return []
    sql = f"SELECT {COLUMNS} FROM notes n WHERE n.rowid IN ({marks(scored)})"
    found = {r[0]: r for r in reader.run(sql, [rowid for rowid, _ in scored])}
    return [row(found[rowid], score) for rowid, score in scored]


def row(values: Sequence[object], score: float | None) -> Row:
    """A `Row` of the `COLUMNS` of one note."""
    rowid, path, rid, kind, rtype, title, scope, body_line, line_count, revision = values
    assert isinstance(path, str) and isinstance(rid, str) and isinstance(kind, str)
    assert isinstance(rtype, str) and isinstance(title, str) and isinstance(scope, str)
    assert isinstance(rowid, int) and isinstance(body_line, int) and isinstance(line_count, int)
    assert isinstance(revision, str)
    return Row(
        rowid,
        path,
        RecordRef(rid, RecordKind(kind), rtype, title),
        scope,
        score,
        body_line,
        Locator(path, 1, line_count, revision),
    )


_local = threading.local()


def _tokenizer() -> sqlite3.Connection:
    """A private in-memory FTS5 table with the index's tokenizer, one per thread."""
    conn: sqlite3.Connection | None = getattr(_local, "conn", None)
    if conn is None:
        conn = sqlite3.connect(":memory:", isolation_level=None)
        conn.execute(f"CREATE VIRTUAL TABLE q USING fts5(t, tokenize='{_TOKENIZER}')")
        conn.execute("CREATE VIRTUAL TABLE qv USING fts5vocab(q, instance)")
        _local.conn = conn
    return conn
