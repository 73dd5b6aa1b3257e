"""Keyword search over the FTS5 index of the notes.

Why here and not in `graph`: search is SQL over one read transaction (the FTS5
index, the notes it ranks and the filters of the inventory), and only the
`temporal` store modules hold SQL. It reuses the inventory's filter, so a
search and `records` agree on what a filter keeps.

Each scope has its own FTS5 index (`search_table`), so BM25's corpus statistics
(IDF, average lengths) of a hit come from the notes of its scope alone: what
another scope holds never moves a score (SPEC section 1). A search over several
scopes ranks within each and merges by score, then record id, then scope.

Variants are more keyword queries, each strict and ranked on its own, fused with the
query's list by reciprocal rank: lexical fusion of several wordings, not semantic search.
Every answer says how it was retrieved (`Retrieval`), so that an empty page is never
mistaken for "nothing was ever recorded".
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass

from almanac.temporal.queries.matching import MatchMode, Query, keyword_queries
from almanac.temporal.queries.relaxed import relaxed as relaxed_pass
from almanac.temporal.queries.results import (
    MatchQuality,
    Retrieval,
    RetrievalReason,
    SearchPage,
    SearchStrategy,
)
from almanac.temporal.queries.snippets import hits
from almanac.temporal.records import LifecycleFilter
from almanac.temporal.store import (
    MATCHED_COLUMNS,
    Matched,
    Reader,
    RecordFilter,
    count,
    details,
    marks,
    matching,
    parts,
    ranked,
    row,
    scope_counts,
    search_table,
    top,
)
from almanac.vault import InvalidCursor

__all__ = ["MAX_VARIANT_HITS", "RRF_K", "search_records"]

MAX_VARIANT_HITS = 100  # candidates of each keyword query when variants are fused
RRF_K = 60  # reciprocal rank fusion: score = sum of 1 / (RRF_K + rank), rank from 1


def search_records(
    reader: Reader,
    query: str,
    *,
    mode: MatchMode,
    flt: RecordFilter,
    scopes: Sequence[str],
    first: int,
    offset: int = 0,
    variants: Sequence[str] = (),
    strategy: SearchStrategy = SearchStrategy.STRICT,
    relaxed: bool = False,
) -> SearchPage:
    """One page of the records matching `query` (and its variants), with how it was retrieved.

    Without variants, direct hits are ordered by BM25 score (higher is better), then record
    id, then scope. With variants, each of the query and the variants is a strict keyword
    query of its own (its best 100 hits), and the lists are fused: a record's score is the sum
    of 1 / (60 + rank) over the lists that hold it, ties by record id, then scope. A query or
    variant without a word token is skipped. The filter and scopes decide every hit and the
    total; BM25's corpus statistics are those of each hit's scope (see README). An ACTIVE
    search that matches superseded records adds, after every direct hit, the current record
    each one's `superseded_by` chain reaches (once, in the order of the superseded matches),
    unless the chain reaches a missing, withdrawn or filtered-out record or one already hit.

    With `AUTO`, when the strict queries find nothing and the page is the first, one relaxed
    pass runs (`temporal.queries.relaxed`).

    Args:
        offset: How many hits earlier pages held.
        relaxed: The offset counts hits of the relaxed pass (a cursor of a relaxed page).

    Raises:
        InvalidInput: the query or a variant is out of bounds (see `search_tokens`), or a
            filter bound is bad.
        InvalidCursor: `relaxed` while the strategy is STRICT or the strict queries match.
    """
    queries = keyword_queries(query, variants, mode)
    if relaxed and strategy is not SearchStrategy.AUTO:
        raise InvalidCursor("The cursor is of a relaxed pass, which only 'strategy: AUTO' takes")
    scoped, outside = scope_counts(reader, flt, scopes)
    if scoped == 0:
        zeros = tuple(0 for _ in queries)
        return SearchPage((), 0, Retrieval(RetrievalReason.EMPTY_SCOPE, 0, 0, False, zeros))
    if len(queries) == 1:
        page, counts, limited = _single(
            reader, queries[0], mode, flt, scopes, first, offset, outside
        )
    else:
        page, counts, limited = _fused(reader, queries, mode, flt, scopes, first, offset, outside)
    pool = page.total
    if pool:
        if relaxed:
            raise InvalidCursor("The cursor is of a relaxed pass, but the keywords match as given")
        reason = RetrievalReason.MATCHED if offset < pool else RetrievalReason.OFFSET_BEYOND_POOL
        retrieval = Retrieval(reason, scoped, pool, limited, counts)
        made = hits(reader, page.rows, page.match, page.matches, replaced=page.later)
        return SearchPage(tuple(made), pool, retrieval)
    if strategy is not SearchStrategy.AUTO or (offset and not relaxed):
        retrieval = Retrieval(RetrievalReason.NO_LEXICAL_MATCH, scoped, 0, False, counts)
        return SearchPage((), 0, retrieval)
    fragments = _quoted(queries)
    found = relaxed_pass(
        reader, fragments, flt=flt, scopes=scopes, scoped_active=scoped, outside=outside
    )
    rows = details(reader, found.scored[offset : offset + first])
    survived = found.fallback.survived
    reason = RetrievalReason.NO_LEXICAL_MATCH
    if survived:
        reason = (
            RetrievalReason.RELAXED_MATCH
            if offset < survived
            else RetrievalReason.OFFSET_BEYOND_POOL
        )
    retrieval = Retrieval(
        reason, scoped, survived, found.fallback.candidate_limit_reached, counts, found.fallback
    )
    page_hits = hits(reader, rows, found.match, found.held, quality=MatchQuality.RELAXED)
    return SearchPage(tuple(page_hits), survived, retrieval, relaxed=True)


@dataclass(frozen=True, slots=True)
class _Page:
    """The rows of a page, the replacements after them (each with its superseded match), the
    MATCH expression every row matches, the tokens each matched, and the hits in all."""

    rows: list[Matched]
    later: list[tuple[Matched, Matched]]
    match: str
    matches: dict[int, tuple[str, ...]]
    total: int


def _single(
    reader: Reader,
    query: Query,
    mode: MatchMode,
    flt: RecordFilter,
    scopes: Sequence[str],
    first: int,
    offset: int,
    outside: int,
) -> tuple[_Page, tuple[int, ...], bool]:
    """The page of one keyword query, every match ranked; its count; no candidate limit.

    Args:
        outside: How many notes of the scopes the filter leaves out (`scope_counts`).
    """
    found = parts(reader, flt, scopes, query.match)
    direct = count(reader, found, filtered=outside > 0)
    rows = (
        details(reader, top(reader, found, limit=first, offset=offset, matches=direct))
        if offset < direct
        else []
    )
    vias = _replacements(reader, query.match, flt, scopes)
    total = direct + len(vias)
    later = vias[max(0, offset - direct) :][: first - len(rows)]
    # Every row matched the one query: direct hits, and the superseded matches of replacements.
    everyone = [*rows, *(old for old, _ in later)]
    matches = _matches(reader, everyone, [query], [{r.rowid for r in everyone}], mode)
    return _Page(rows, later, query.match, matches, total), (direct,), False


def _fused(
    reader: Reader,
    queries: Sequence[Query],
    mode: MatchMode,
    flt: RecordFilter,
    scopes: Sequence[str],
    first: int,
    offset: int,
    outside: int,
) -> tuple[_Page, tuple[int, ...], bool]:
    """The page of the query and its variants fused by reciprocal rank; each one's count;
    whether any of them had more matches than it could bring (`outside` as in `_single`)."""
    counts: list[int] = []
    lists: list[list[int]] = []
    for query in queries:
        if not query.tokens:
            counts.append(0)
            lists.append([])
            continue
        found = parts(reader, flt, scopes, query.match)
        counts.append(count(reader, found, filtered=outside > 0))
        best = top(reader, found, limit=MAX_VARIANT_HITS, matches=counts[-1]) if counts[-1] else []
        lists.append([rowid for rowid, _ in best])
    fused = _fuse(reader, lists)
    combined = " OR ".join(f"({q.match})" for q in queries if q.tokens)
    vias = _replacements(reader, combined, flt, scopes)
    total = len(fused) + len(vias)
    rows = details(reader, fused[offset : offset + first])
    later = vias[max(0, offset - len(fused)) :][: first - len(rows)]
    # A row of a query's complete list matched it, one outside did not: only a query with
    # more matches than its list holds must ask the index.
    known = [
        set(top) if n <= MAX_VARIANT_HITS else None for top, n in zip(lists, counts, strict=True)
    ]
    matches = _matches(reader, rows, queries, known, mode)
    matches.update(
        _matches(reader, [old for old, _ in later], queries, [None] * len(queries), mode)
    )
    limited = any(n > MAX_VARIANT_HITS for n in counts)
    return _Page(rows, later, combined, matches, total), tuple(counts), limited


def _fuse(reader: Reader, lists: Sequence[Sequence[int]]) -> list[tuple[int, float]]:
    """(rowid, score) of the rows of the ranked lists (rowids), fused by reciprocal rank:
    score the sum of 1 / (60 + rank) over the lists holding a row, ties by record id, then
    scope."""
    terms: dict[int, list[float]] = {}
    for ranking in lists:
        for rank, rowid in enumerate(ranking, start=1):
            terms.setdefault(rowid, []).append(1 / (RRF_K + rank))
    # fsum is exactly rounded, so equal rank sets give equal scores whatever their list order.
    scores = {rowid: math.fsum(ts) for rowid, ts in terms.items()}
    # Ids and scopes from search_keys: the notes' rows are wide, and only a page needs them.
    sql = f"SELECT rowid, id, scope FROM search_keys WHERE rowid IN ({marks(list(scores))})"
    keys = {rowid: (rid, scope) for rowid, rid, scope in reader.run(sql, list(scores))}
    order = sorted(scores, key=lambda rowid: (-scores[rowid], *keys[rowid]))
    return [(rowid, scores[rowid]) for rowid in order]


def _matches(
    reader: Reader,
    rows: Sequence[Matched],
    queries: Sequence[Query],
    known: Sequence[set[int] | None],
    mode: MatchMode,
) -> dict[int, tuple[str, ...]]:
    """The distinct tokens (of the query, then the variants) each row matched: with ANY, the
    tokens it holds; otherwise the tokens of each keyword query it matches as a whole.

    Args:
        known: Per query, the rowids known to match it (all that do among `rows`), or None to
            ask the index.
    """
    if mode is MatchMode.ANY:
        return _tokens_held(reader, rows, queries)
    found: dict[int, dict[str, None]] = {r.rowid: {} for r in rows}
    for query, matched in zip(queries, known, strict=True):
        if not query.tokens or not rows:
            continue
        for rowid in matching(reader, rows, query.match) if matched is None else matched:
            if rowid in found:
                found[rowid].update(dict.fromkeys(query.tokens))
    return {rowid: tuple(tokens) for rowid, tokens in found.items()}


def _replacements(
    reader: Reader, match: str, flt: RecordFilter, scopes: Sequence[str]
) -> list[tuple[Matched, Matched]]:
    """(superseded match, its current replacement) pairs, in the superseded matches' order."""
    if flt.lifecycle is not LifecycleFilter.ACTIVE:
        return []
    old_flt = dataclasses.replace(flt, lifecycle=LifecycleFilter.SUPERSEDED)
    where, params = reader._filter(old_flt, scopes)
    # Superseded records are few: start from them (notes_live) and ask the index about each,
    # rather than walk every match of a common word.
    found = parts(reader, old_flt, scopes, match, keys_first=True)
    matched = details(reader, ranked(reader, found, limit=-1))
    if not matched:
        return []
    direct_where, direct_params = reader._filter(flt, scopes)
    keep_sql = f"SELECT {MATCHED_COLUMNS} FROM notes n WHERE n.path = ? AND {direct_where}"
    pass_sql = f"SELECT 1 FROM notes n WHERE n.path = ? AND {where}"
    pairs: list[tuple[Matched, Matched]] = []
    seen: set[str] = set()
    for old in matched:
        current = None
        for step in reader.chain(old.path):
            if not step.eligible:
                break  # a chain through an ineligible record returns nothing
            if step.lifecycle == "active":
                current = step.path
                break
            if (
                step.lifecycle != "superseded"
                or not reader.run(pass_sql, [step.path, *params]).fetchone()
            ):
                break  # a chain through a filtered-out record returns nothing
        if current is None or current in seen:
            continue
        values = reader.run(keep_sql, [current, *direct_params]).fetchone()
        if values is None:
            continue  # filtered out, or outside the scopes
        new = row(values, None)
        table = search_table(new.scope)
        hit_sql = f"SELECT 1 FROM {table} WHERE {table} MATCH ? AND rowid = ?"
        if reader.run(hit_sql, [match, new.rowid]).fetchone() is not None:
            continue  # already a direct hit
        seen.add(current)
        pairs.append((old, new))
    return pairs


def _tokens_held(
    reader: Reader, rows: Sequence[Matched], queries: Sequence[Query]
) -> dict[int, tuple[str, ...]]:
    """The tokens (of the query, then the variants, each once) each record holds anywhere
    (title, aliases or body), in the tokens' order."""
    found: dict[int, list[str]] = {r.rowid: [] for r in rows}
    for token, match in _quoted(queries).items():
        for rowid in matching(reader, rows, match):
            found[rowid].append(token)
    return {r: tuple(ts) for r, ts in found.items()}


def _quoted(queries: Sequence[Query]) -> dict[str, str]:
    """The distinct tokens of the query, then the variants, each with its own MATCH expression."""
    return {t: q for query in queries for t, q in zip(query.tokens, query.quoted, strict=True)}
