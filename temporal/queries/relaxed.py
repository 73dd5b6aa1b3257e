"""The one bounded relaxed pass of an `AUTO` search, run when the strict queries found nothing.

The query and its variants are taken apart into keyword fragments (their distinct tokens,
query first). A fragment that matches no record in scope cannot help, and one in more than
half of the scoped records cannot tell records apart (its BM25 IDF is FTS5's floor), so both
are dropped; of the rest, the 12 rarest are kept. They are recalled with OR (at most 200
candidates, best BM25 first), and a candidate survives when it holds at least half of them
(rounded up, at least one): a record that shares one common word with a long query is not a
hit. Every figure is reported, so a client can tell a thin relaxed answer from a strong one.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from almanac.temporal.queries.results import RelaxedFallback
from almanac.temporal.store import Part, Reader, RecordFilter, marks, parts, top

__all__ = ["MAX_KEYWORDS", "MAX_RECALL", "Relaxed", "relaxed"]

MAX_KEYWORDS = 12
MAX_RECALL = 200


@dataclass(frozen=True, slots=True)
class Relaxed:
    """The survivors of a relaxed pass in their order, what each holds, and every figure."""

    scored: tuple[tuple[int, float], ...]  # (rowid, BM25 of the recall), in order
    held: dict[int, tuple[str, ...]]
    match: str  # the OR expression of the keywords (every survivor matches it)
    fallback: RelaxedFallback


def relaxed(
    reader: Reader,
    fragments: Mapping[str, str],
    *,
    flt: RecordFilter,
    scopes: Sequence[str],
    scoped_active: int,
    outside: int,
) -> Relaxed:
    """The relaxed pass over these fragments (distinct tokens, in query order, each with its
    own MATCH expression, `matching.Query.quoted`).

    `scoped_active` notes of the filter's scopes pass the filter, `outside` do not
    (`scope_counts`).

    Survivors are ordered by how many keywords they hold, then BM25 of the OR recall
    (higher first), then record id, then scope; their score is that BM25.
    """
    cap = scoped_active // 2 + 1  # this many holders make a fragment too common
    frequency: dict[str, int] = {}
    no_match: list[str] = []
    too_common: list[str] = []
    for fragment in fragments:
        match = fragments[fragment]
        found = parts(reader, flt, scopes, match)
        # Each scope's index holds all its notes, so a fragment's matches in the indexes,
        # less the notes the filter leaves out, are a floor of its holders (and, when it
        # leaves none out, their number): most words are told from the index alone, without
        # a join per match.
        indexed = _indexed(reader, found, match, limit=cap + outside)
        if indexed - outside >= cap:
            too_common.append(fragment)
            continue
        held_by = _count(reader, found, limit=cap) if indexed and outside else indexed
        if not held_by:
            no_match.append(fragment)
        elif held_by >= cap:
            too_common.append(fragment)
        else:
            frequency[fragment] = held_by
    order = {fragment: at for at, fragment in enumerate(fragments)}
    usable = sorted(frequency, key=lambda f: (frequency[f], order[f]))
    keywords, by_cap = usable[:MAX_KEYWORDS], usable[MAX_KEYWORDS:]
    required = max(1, -(-len(keywords) // 2))
    survivors: list[tuple[int, float]] = []
    held: dict[int, tuple[str, ...]] = {}
    scored: list[tuple[int, float]] = []
    match = " OR ".join(fragments[k] for k in keywords)  # `expression(keywords, ANY)`
    if keywords:
        recall = parts(reader, flt, scopes, match)
        ceiling = sum(frequency[k] for k in keywords)
        scored = top(reader, recall, limit=MAX_RECALL + 1, matches=ceiling)
        in_query_order = sorted(keywords, key=order.__getitem__)
        recalled_rows = [rowid for rowid, _ in scored[:MAX_RECALL]]
        holders = {k: _holding(reader, recall, fragments[k], recalled_rows) for k in in_query_order}
        for rowid in recalled_rows:
            held[rowid] = tuple(k for k in in_query_order if rowid in holders[k])
        # A stable sort: within one coverage, the recall's order (BM25, id, scope) stands.
        survivors = sorted(
            (pair for pair in scored[:MAX_RECALL] if len(held[pair[0]]) >= required),
            key=lambda pair: -len(held[pair[0]]),
        )
    recalled = min(len(scored), MAX_RECALL)
    fallback = RelaxedFallback(
        keywords=tuple(keywords),
        dropped_no_match=tuple(no_match),
        dropped_too_common=tuple(too_common),
        dropped_by_cap=tuple(by_cap),
        coverage_required=required,
        recalled=recalled,
        rejected=recalled - len(survivors),
        survived=len(survivors),
        candidate_limit_reached=len(scored) > MAX_RECALL,
    )
    return Relaxed(tuple(survivors), {r: held[r] for r, _ in survivors}, match, fallback)


def _indexed(reader: Reader, found: Sequence[Part], match: str, *, limit: int) -> int:
    """How many notes the parts' indexes match (filter or not), counting no more than `limit`."""
    indexed = 0
    for part in found:
        sql = f"SELECT count(*) FROM (SELECT 1 FROM {part.table} WHERE {part.table} MATCH ?"
        sql += " LIMIT ?)"
        indexed += int(reader.run(sql, [match, limit - indexed]).fetchone()[0])
    return indexed


def _count(reader: Reader, found: Sequence[Part], *, limit: int) -> int:
    """How many notes the parts match (the filter applied), counting no more than `limit`."""
    held = 0
    for part in found:
        sql = f"SELECT count(*) FROM (SELECT 1 {part.base} LIMIT ?)"
        held += int(reader.run(sql, [*part.params, limit - held]).fetchone()[0])
        if held >= limit:
            break
    return held


def _holding(reader: Reader, found: Sequence[Part], match: str, rowids: Sequence[int]) -> set[int]:
    """Which of these rowids (notes of the parts' scopes) hold the keyword (its `match`)."""
    held: set[int] = set()
    for part in found:
        # `+rowid`: read the keyword's matches once, rather than seek each row
        # (temporal/store/fts.py).
        sql = f"SELECT rowid FROM {part.table} WHERE {part.table} MATCH ? AND +rowid IN"
        held.update(r for (r,) in reader.run(f"{sql} ({marks(rowids)})", [match, *rowids]))
    return held
