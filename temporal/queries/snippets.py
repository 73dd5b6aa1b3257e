"""Hits made of matched rows: the body's snippet around the first match; the hits of
replacements, `via` their superseded matches."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from almanac.temporal.queries.results import MatchQuality, SearchHit, Snippet
from almanac.temporal.store import Matched, Reader, bodies, by_table, marks

__all__ = ["hits", "snippet"]

_SNIPPET_BEFORE = 60  # characters of context kept before the first match
_SNIPPET_CHARS = 200  # longest snippet
# Marker pairs for highlight(): the first pair that no body of the page contains is used.
_MARKERS = (("\ue000", "\ue001"), ("\ue002", "\ue003"), ("\U000f0000", "\U000f0001"))
# `+rowid IN (...)`, not `rowid IN (...)`: given the rowids, FTS5 seeks each one in every
# phrase's doclist, which costs far more on common words (7 ms for 20 rows of a word in 68 % of
# 5,000 notes) than reading the expression's matches once and keeping those rows (0.8 ms).


def hits(
    reader: Reader,
    rows: Sequence[Matched],
    match: str,
    matches: Mapping[int, tuple[str, ...]],
    *,
    quality: MatchQuality = MatchQuality.EXACT,
    replaced: Sequence[tuple[Matched, Matched]] = (),
) -> list[SearchHit]:
    """The hits of these rows, each with its snippet around the first match of `match` (a
    MATCH expression every row matches) and its `matches` (by rowid); then those of the
    `replaced` pairs (superseded match, its current replacement): each replacement `via` its
    superseded match and with that one's matches."""
    return _hits(reader, rows, match, matches, quality) + [
        SearchHit(
            record=new.ref,
            scope=new.scope,
            score=None,
            matches=matches[old.rowid],
            snippet=snippet(bodies(reader, [new.rowid])[new.rowid], None, new.body_line),
            via=old.ref,
            locator=new.locator,
        )
        for old, new in replaced
    ]


def _hits(
    reader: Reader,
    rows: Sequence[Matched],
    match: str,
    matches: Mapping[int, tuple[str, ...]],
    quality: MatchQuality,
) -> list[SearchHit]:
    if not rows:
        return []
    found = bodies(reader, [r.rowid for r in rows])
    opening, closing = next(
        (
            pair
            for pair in _MARKERS
            if not any(pair[0] in b or pair[1] in b for b in found.values())
        ),
        ("", ""),
    )
    marked: dict[int, str] = {}
    if opening:
        for table, rowids in by_table(rows).items():
            sql = (
                f"SELECT rowid, highlight({table}, 2, ?, ?) FROM {table}"
                f" WHERE {table} MATCH ? AND +rowid IN ({marks(rowids)})"
            )
            marked.update(reader.run(sql, [opening, closing, match, *rowids]).fetchall())
    out = []
    for row in rows:
        span = _first_span(marked.get(row.rowid, ""), opening, closing)
        out.append(
            SearchHit(
                record=row.ref,
                scope=row.scope,
                score=row.score,
                matches=matches[row.rowid],
                snippet=snippet(found[row.rowid], span, row.body_line),
                via=None,
                locator=row.locator,
                match_quality=quality,
            )
        )
    return out


def snippet(body: str, span: tuple[int, int] | None, body_line: int) -> Snippet | None:
    """Up to 200 characters of the body around `span` (its opening when None)."""
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


def _first_span(marked: str, opening: str, closing: str) -> tuple[int, int] | None:
    """Body offsets of the first highlighted match, or None when the body holds none."""
    at = marked.find(opening) if opening else -1
    if at < 0:
        return None
    stop = marked.find(closing, at)
    return at, stop - len(opening)


def _cut_end(body: str, start: int, end: int) -> int:
    """`end`, moved back to the end of a word when the body goes on past it."""
    if end >= len(body):
        return len(body.rstrip())
    space = max(body.rfind(" ", start, end + 1), body.rfind("\n", start, end + 1))
    return space if space > start else end
