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

from collections.abc import Sequence
from dataclasses import dataclass

from temporal.queries.matching import MatchMode, Row, details, expression, parts, ranked
from temporal.queries.results import RelaxedFallback
from temporal.queries.snippets import tokens_held
from temporal.store import Reader, RecordFilter

__all__ = ["MAX_KEYWORDS", "MAX_RECALL", "Relaxed", "relaxed"]

MAX_KEYWORDS = 12
MAX_RECALL = 200


@dataclass(frozen=True, slots=True)
class Relaxed:
    """The survivors of a relaxed pass in their order, what each holds, and every figure."""

    rows: tuple[Row, ...]
    held: dict[int, tuple[str, ...]]
    match: str  # the OR expression of the keywords (every survivor matches it)
    fallback: RelaxedFallback


def relaxed(
    reader: Reader,
    fragments: Sequence[str],
    *,
    flt: RecordFilter,
    scopes: Sequence[str],
    scoped_active: int,
) -> Relaxed:
    """The relaxed pass over these fragments (distinct tokens, in query order).

    Survivors are ordered by how many keywords they hold, then BM25 of the OR recall
    (higher first), then record id, then scope; their score is that BM25.
    """
    # A fragment in more than half of the scoped records is too common: counting stops there.
    cap = scoped_active // 2 + 1
    frequency: dict[str, int] = {}
    no_match: list[str] = []
    too_common: list[str] = []
    for fragment in fragments:
        df = 0
        for part in parts(reader, flt, scopes, expression([fragment], MatchMode.ANY)):
            sql = f"SELECT count(*) FROM (SELECT 1 {part.base} LIMIT ?)"
            df += int(reader.run(sql, [*part.params, cap - df]).fetchone()[0])
            if df >= cap:
                break
        if df == 0:
            no_match.append(fragment)
        elif 2 * df > scoped_active:
            too_common.append(fragment)
        else:
            frequency[fragment] = df
    order = {fragment: at for at, fragment in enumerate(fragments)}
    usable = sorted(frequency, key=lambda f: (frequency[f], order[f]))
    keywords, by_cap = usable[:MAX_KEYWORDS], usable[MAX_KEYWORDS:]
    required = max(1, -(-len(keywords) // 2))
    rows: list[Row] = []
    held: dict[int, tuple[str, ...]] = {}
    recalled: list[Row] = []
    match = expression(keywords, MatchMode.ANY)
    if keywords:
        found = parts(reader, flt, scopes, match)
        scored = ranked(reader, found, limit=MAX_RECALL + 1)
        recalled = details(reader, scored[:MAX_RECALL])
        in_query_order = sorted(keywords, key=order.__getitem__)
        held = tokens_held(reader, recalled, in_query_order)
        # A stable sort: within one coverage, the recall's order (BM25, id, scope) stands.
        rows = sorted(
            (r for r in recalled if len(held[r.rowid]) >= required),
            key=lambda r: -len(held[r.rowid]),
        )
    else:
        scored = []
    fallback = RelaxedFallback(
        keywords=tuple(keywords),
        dropped_no_match=tuple(no_match),
        dropped_too_common=tuple(too_common),
        dropped_by_cap=tuple(by_cap),
        coverage_required=required,
        recalled=len(recalled),
        rejected=len(recalled) - len(rows),
        survived=len(rows),
        candidate_limit_reached=len(scored) > MAX_RECALL,
    )
    return Relaxed(tuple(rows), {r.rowid: held[r.rowid] for r in rows}, match, fallback)
