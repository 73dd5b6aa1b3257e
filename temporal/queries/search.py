"""Keyword search over the FTS5 index of the notes.

Why here and not in `graph`: search is SQL over one read transaction (the FTS5
index, the notes it ranks and the filters of the inventory), and only the
`temporal` store modules hold SQL. It reuses the inventory's filter, so a
search and `records` agree on what a filter keeps.

Each scope has its own FTS5 index (`search_table`), so BM25's corpus statistics
(IDF, average lengths) of a hit come from the notes of its scope alone: what
another scope holds never moves a score (SPEC section 1). A search over several
scopes ranks within each and merges by score, then record id, then scope.

The user's text is never FTS5 syntax. It is cut into tokens by the index's
own tokenizer (unicode61, diacritics removed, case folded), and the MATCH
expression is built here from those tokens, each quoted: `NEAR`, `*`, `^`,
`:`, column names, `AND`/`OR`/`NOT` and quotes in the input are words or
separators, nothing else.
"""

from __future__ import annotations

import dataclasses
import sqlite3
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum

from temporal.records import (
    LifecycleFilter,
    Locator,
    RecordKind,
    RecordRef,
    supersession_chain,
)
from temporal.store import Reader, RecordFilter, marks, search_table
from vault import InvalidInput

__all__ = [
    "MAX_QUERY_CHARS",
    "MAX_QUERY_TOKENS",
    "MatchMode",
    "SearchHit",
    "SearchPage",
    "Snippet",
    "search_records",
    "search_tokens",
]

MAX_QUERY_CHARS = 500
MAX_QUERY_TOKENS = 64
# Column weights of SPEC section 5: title, aliases, body (the order of the index's columns).
_WEIGHTS = "8.0, 6.0, 1.0"
_SNIPPET_BEFORE = 60  # characters of context kept before the first match
_SNIPPET_CHARS = 200  # longest snippet
# Marker pairs for highlight(): the first pair that no body of the page contains is used.
_MARKERS = (("\ue000", "\ue001"), ("\ue002", "\ue003"), ("\U000f0000", "\U000f0001"))
_TOKENIZER = "unicode61 remove_diacritics 2"  # as in temporal/store/tables.py


class MatchMode(Enum):
    """How the query's tokens must match: all of them, any of them, or in sequence."""

    ALL = "all"
    ANY = "any"
    PHRASE = "phrase"


@dataclass(frozen=True, slots=True)
class Snippet:
    """An excerpt of a record's body.

    `start`/`end` are offsets (Unicode code points, end exclusive) into the body;
    the lines are the file's, counting frontmatter. `match_located` says whether
    the excerpt contains a match: false when the query matched only the title or
    aliases, or for a replacement reached through a superseded record, and the
    excerpt is then the opening of the body.
    """

    text: str
    start: int
    end: int
    start_line: int
    end_line: int
    match_located: bool


@dataclass(frozen=True, slots=True)
class SearchHit:
    """One ranked record; `score` is None for a replacement reached `via` a superseded match."""

    record: RecordRef
    scope: str
    score: float | None
    matches: tuple[str, ...]
    snippet: Snippet | None
    via: RecordRef | None
    locator: Locator


@dataclass(frozen=True, slots=True)
class SearchPage:
    """One page of hits and how many hits there are in all."""

    hits: tuple[SearchHit, ...]
    total: int


@dataclass(frozen=True, slots=True)
class _Row:
    rowid: int
    path: str
    ref: RecordRef
    scope: str
    score: float | None
    body_line: int
    locator: Locator


def search_tokens(text: str) -> tuple[str, ...]:
    """The word tokens of a query, cut and folded exactly as the index cuts and folds text.

    Raises:
        InvalidInput: (naming `query`) the text is longer than 500 characters, holds no word
            token or more than 64, or is not valid Unicode.
    """
    if len(text) > MAX_QUERY_CHARS:
        raise InvalidInput(
            f"Argument 'query' must be at most {MAX_QUERY_CHARS} characters, not {len(text)}"
        )
    conn = _tokenizer()
    try:
        conn.execute("BEGIN")
        conn.execute("INSERT INTO q (rowid, t) VALUES (1, ?)", (text,))
        tokens = tuple(row[0] for row in conn.execute("SELECT term FROM qv ORDER BY offset"))
    except UnicodeEncodeError as exc:
        raise InvalidInput("Argument 'query' must be valid Unicode (no lone surrogates)") from exc
    finally:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
    if not 1 <= len(tokens) <= MAX_QUERY_TOKENS:
        raise InvalidInput(
            f"Argument 'query' must hold 1 to {MAX_QUERY_TOKENS} word tokens (letters or digits"
            f" between punctuation and spaces), not {len(tokens)}"
        )
    return tokens


def search_records(
    reader: Reader,
    query: str,
    *,
    mode: MatchMode,
    flt: RecordFilter,
    scopes: Sequence[str],
    first: int,
    offset: int = 0,
) -> SearchPage:
    """One page of the records matching `query`, best first, then replacements of superseded ones.

    Direct hits are ordered by BM25 score (higher is better), then record id, then scope.
    The filter and scopes decide every hit and the total; BM25's corpus statistics (IDF,
    average length) are those of each hit's scope, over every indexed note of that scope
    (see README). An ACTIVE
    search that matches superseded records adds, after every direct hit, the current record
    each one's `superseded_by` chain reaches (once, in the order of the superseded matches),
    unless the chain reaches a missing, withdrawn or filtered-out record or one already hit.

    Args:
        offset: How many hits earlier pages held.

    Raises:
        InvalidInput: the query is out of bounds (see `search_tokens`) or a filter bound is bad.
    """
    tokens = search_tokens(query)
    distinct = tuple(dict.fromkeys(tokens))
    expression = _expression(tokens if mode is MatchMode.PHRASE else distinct, mode)
    parts = _parts(reader, flt, scopes, expression)
    total = sum(int(reader.run(f"SELECT count(*) {p.base}", p.params).fetchone()[0]) for p in parts)
    rows: list[_Row] = []
    if offset < total:
        rows = _rows(reader, parts, limit=first, offset=offset)
    vias: list[tuple[_Row, _Row]] = []
    if flt.lifecycle is LifecycleFilter.ACTIVE:
        vias = _replacements(reader, expression, flt, scopes)
    total += len(vias)
    later = vias[max(0, offset - (total - len(vias))) :][: first - len(rows)]
    hits = _hits(reader, rows, expression, mode, distinct)
    hits += [
        SearchHit(
            record=new.ref,
            scope=new.scope,
            score=None,
            matches=_matched(reader, [old], mode, distinct)[old.rowid],
            snippet=_snippet(_bodies(reader, [new.rowid])[new.rowid], None, new.body_line),
            via=old.ref,
            locator=new.locator,
        )
        for old, new in later
    ]
    return SearchPage(tuple(hits), total)


@dataclass(frozen=True, slots=True)
class _Part:
    """The matches of one scope: `FROM ... WHERE ...` over its index and `search_keys`."""

    table: str
    base: str
    params: list[object]


def _parts(
    reader: Reader,
    flt: RecordFilter,
    scopes: Sequence[str],
    expression: str,
    *,
    keys_first: bool = False,
) -> list[_Part]:
    """One part per readable scope of the filter that has an index (a note), in scope order.

    Args:
        keys_first: Start from `search_keys` (few rows pass the filter) rather than the index.
    """
    chosen = [s for s in scopes if flt.scope is None or s == flt.scope]
    sql = f"SELECT scope FROM search_scopes WHERE scope IN ({marks(chosen)}) ORDER BY scope"
    parts = []
    for (scope,) in reader.run(sql, chosen).fetchall():
        table = search_table(scope)
        where, params = reader._filter(flt, [scope])
        # `n` is search_keys: the filter's columns of notes, without the wide rows.
        if keys_first:
            base = (
                f"FROM search_keys n CROSS JOIN {table} ON {table}.rowid = n.rowid"
                f" WHERE {where} AND {table} MATCH ?"
            )
            parts.append(_Part(table, base, [*params, expression]))
        else:
            base = (
                f"FROM {table} CROSS JOIN search_keys n ON n.rowid = {table}.rowid"
                f" WHERE {table} MATCH ? AND {where}"
            )
            parts.append(_Part(table, base, [expression, *params]))
    return parts


def _expression(tokens: Sequence[str], mode: MatchMode) -> str:
    quoted = ['"' + token.replace('"', '""') + '"' for token in tokens]
    if mode is MatchMode.PHRASE:
        return " + ".join(quoted)
    return (" AND " if mode is MatchMode.ALL else " OR ").join(quoted)


_COLUMNS = (
    "n.rowid, n.path, n.id, n.kind, n.type, n.title, n.scope, n.body_line, n.line_count, n.revision"
)


def _row(values: Sequence[object], score: float | None) -> _Row:
    rowid, path, rid, kind, rtype, title, scope, body_line, line_count, revision = values
    assert isinstance(path, str) and isinstance(rid, str) and isinstance(kind, str)
    assert isinstance(rtype, str) and isinstance(title, str) and isinstance(scope, str)
    assert isinstance(rowid, int) and isinstance(body_line, int) and isinstance(line_count, int)
    assert isinstance(revision, str)
    return _Row(
        rowid,
        path,
        RecordRef(rid, RecordKind(kind), rtype, title),
        scope,
        score,
        body_line,
        Locator(path, 1, line_count, revision),
    )


def _rows(reader: Reader, parts: Sequence[_Part], *, limit: int, offset: int) -> list[_Row]:
    """A page of the parts' matches: each scored in its scope, merged by score, id, scope."""
    if not parts:
        return []
    # bm25() is lower-is-better; the score shown is its negation, so higher is better.
    # One scope sorts by the columns themselves (selecting them too costs ~40 ms on 68,000
    # matches); a compound by its result columns.
    keys, order = (
        ("", "n.id, n.scope")
        if len(parts) == 1
        else (", n.id AS id, n.scope AS scope", "id, scope")
    )
    selects = [
        f"SELECT n.rowid, -bm25({p.table}, {_WEIGHTS}) AS score{keys} {p.base}" for p in parts
    ]
    sql = " UNION ALL ".join(selects) + f" ORDER BY score DESC, {order} LIMIT ? OFFSET ?"
    params = [value for p in parts for value in p.params]
    scored = [(r[0], r[1]) for r in reader.run(sql, [*params, limit, offset])]
    if not scored:
        return []
    details = f"SELECT {_COLUMNS} FROM notes n WHERE n.rowid IN ({','.join('?' * len(scored))})"
    found = {r[0]: r for r in reader.run(details, [rowid for rowid, _ in scored])}
    return [_row(found[rowid], score) for rowid, score in scored]


def _replacements(
    reader: Reader, expression: str, flt: RecordFilter, scopes: Sequence[str]
) -> list[tuple[_Row, _Row]]:
    """(superseded match, its current replacement) pairs, in the superseded matches' order."""
    old_flt = dataclasses.replace(flt, lifecycle=LifecycleFilter.SUPERSEDED)
    where, params = reader._filter(old_flt, scopes)
    # Superseded records are few: start from them (notes_live) and ask the index about each,
    # rather than walk every match of a common word.
    parts = _parts(reader, old_flt, scopes, expression, keys_first=True)
    matched = _rows(reader, parts, limit=-1, offset=0)
    if not matched:
        return []
    direct_where, direct_params = reader._filter(flt, scopes)
    keep_sql = f"SELECT {_COLUMNS} FROM notes n WHERE n.path = ? AND {direct_where}"
    pass_sql = f"SELECT 1 FROM notes n WHERE n.path = ? AND {where}"
    step_sql = (
        "SELECT t.resolved_path, m.lifecycle, m.eligible FROM targets t"
        " JOIN notes m ON m.path = t.resolved_path"
        " WHERE t.path = ? AND t.field = 'superseded_by' AND t.status = 'resolved'"
    )
    lifecycles: dict[str, str] = {}

    def successor(of: str) -> str | None:
        """The eligible record `of` is superseded by (its lifecycle remembered), or None."""
        step = reader.run(step_sql, [of]).fetchone()
        if step is None or not step[2]:
            return None
        lifecycles[step[0]] = step[1]
        return str(step[0])

    found: list[tuple[_Row, _Row]] = []
    seen: set[str] = set()
    for old in matched:
        current = None
        for path in supersession_chain(old.path, successor):
            if lifecycles[path] == "active":
                current = path
                break
            if (
                lifecycles[path] != "superseded"
                or not reader.run(pass_sql, [path, *params]).fetchone()
            ):
                break  # a chain through a filtered-out record returns nothing
        if current is None or current in seen:
            continue
        row = reader.run(keep_sql, [current, *direct_params]).fetchone()
        if row is None:
            continue  # filtered out, or outside the scopes
        new = _row(row, None)
        table = search_table(new.scope)
        hit_sql = f"SELECT 1 FROM {table} WHERE {table} MATCH ? AND rowid = ?"
        if reader.run(hit_sql, [expression, new.rowid]).fetchone() is not None:
            continue  # already a direct hit
        seen.add(current)
        found.append((old, new))
    return found


def _hits(
    reader: Reader,
    rows: Sequence[_Row],
    expression: str,
    mode: MatchMode,
    tokens: tuple[str, ...],
) -> list[SearchHit]:
    if not rows:
        return []
    ids = [r.rowid for r in rows]
    bodies = _bodies(reader, ids)
    opening, closing = next(
        (
            pair
            for pair in _MARKERS
            if not any(pair[0] in b or pair[1] in b for b in bodies.values())
        ),
        ("", ""),
    )
    marked: dict[int, str] = {}
    if opening:
        for table, rowids in _by_table(rows).items():
            sql = (
                f"SELECT rowid, highlight({table}, 2, ?, ?) FROM {table}"
                f" WHERE {table} MATCH ? AND rowid IN ({','.join('?' * len(rowids))})"
            )
            marked.update(reader.run(sql, [opening, closing, expression, *rowids]).fetchall())
    matched = _matched(reader, rows, mode, tokens)
    out = []
    for row in rows:
        body = bodies[row.rowid]
        span = _first_span(marked.get(row.rowid, ""), opening, closing)
        out.append(
            SearchHit(
                record=row.ref,
                scope=row.scope,
                score=row.score,
                matches=matched[row.rowid],
                snippet=_snippet(body, span, row.body_line),
                via=None,
                locator=row.locator,
            )
        )
    return out


def _bodies(reader: Reader, rowids: Sequence[int]) -> dict[int, str]:
    sql = f"SELECT rowid, body FROM notes WHERE rowid IN ({','.join('?' * len(rowids))})"
    return dict(reader.run(sql, list(rowids)).fetchall())


def _matched(
    reader: Reader, rows: Sequence[_Row], mode: MatchMode, tokens: tuple[str, ...]
) -> dict[int, tuple[str, ...]]:
    """The query tokens each record holds (title, aliases or body)."""
    if mode is not MatchMode.ANY:
        return {r.rowid: tokens for r in rows}  # every token matched, or the record is no hit
    found: dict[int, list[str]] = {r.rowid: [] for r in rows}
    for table, rowids in _by_table(rows).items():
        sql = (
            f"SELECT rowid FROM {table} WHERE {table} MATCH ?"
            f" AND rowid IN ({','.join('?' * len(rowids))})"
        )
        for token in tokens:
            for (rowid,) in reader.run(sql, [_expression([token], mode), *rowids]):
                found[rowid].append(token)
    return {r: tuple(ts) for r, ts in found.items()}


def _by_table(rows: Sequence[_Row]) -> dict[str, list[int]]:
    """The rows' rowids by the full-text index of their scope."""
    found: dict[str, list[int]] = {}
    for row in rows:
        found.setdefault(search_table(row.scope), []).append(row.rowid)
    return found


def _first_span(marked: str, opening: str, closing: str) -> tuple[int, int] | None:
    """Body offsets of the first highlighted match, or None when the body holds none."""
    at = marked.find(opening) if opening else -1
    if at < 0:
        return None
    stop = marked.find(closing, at)
    return at, stop - len(opening)


def _snippet(body: str, span: tuple[int, int] | None, body_line: int) -> Snippet | None:
    if not body.strip():
        return None
    lead = len(body) - len(body.lstrip())  # blank lines before the text
    if span is None:
        start = lead
        end = _cut_end(body, start, start + _SNIPPET_CHARS)
    else:
        start = max(lead, span[0] - _SNIPPET_BEFORE)
        if start > lead:
            # Start at a word: after the last space or newline before the window.
            start = max(body.rfind(" ", 0, start), body.rfind("\n", 0, start)) + 1
            start = min(max(start, lead), span[0])
        end = max(_cut_end(body, start, start + _SNIPPET_CHARS), span[1])
    first_line = body_line + body.count("\n", 0, start)
    last_line = body_line + body.count("\n", 0, max(start, end - 1))
    return Snippet(body[start:end], start, end, first_line, last_line, span is not None)


def _cut_end(body: str, start: int, end: int) -> int:
    """`end`, moved back to the end of a word when the body goes on past it."""
    if end >= len(body):
        return len(body.rstrip())
    space = max(body.rfind(" ", start, end + 1), body.rfind("\n", start, end + 1))
    return space if space > start else end


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
