"""What a search returns: hits, the page, and how the page was retrieved."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from almanac.temporal.records import Locator, RecordRef

__all__ = [
    "MatchQuality",
    "RelaxedFallback",
    "Retrieval",
    "RetrievalReason",
    "SearchHit",
    "SearchPage",
    "SearchStrategy",
    "Snippet",
]


class SearchStrategy(Enum):
    """STRICT: the keyword queries as given. AUTO: STRICT first, then at most one relaxed pass."""

    STRICT = "strict"
    AUTO = "auto"


class MatchQuality(Enum):
    """EXACT: the hit matches a keyword query as given; RELAXED: the relaxed pass found it."""

    EXACT = "exact"
    RELAXED = "relaxed"


class RetrievalReason(Enum):
    """Why a page holds what it holds (an empty page above all)."""

    MATCHED = "matched"
    EMPTY_SCOPE = "empty_scope"
    NO_LEXICAL_MATCH = "no_lexical_match"
    OFFSET_BEYOND_POOL = "offset_beyond_pool"
    RELAXED_MATCH = "relaxed_match"


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
    """One ranked record; `score` is None for a replacement reached `via` a superseded match.

    The score is BM25 for one keyword query and for a relaxed hit, the reciprocal-rank sum
    when variants are fused.
    """

    record: RecordRef
    scope: str
    score: float | None
    matches: tuple[str, ...]
    snippet: Snippet | None
    via: RecordRef | None
    locator: Locator
    match_quality: MatchQuality = MatchQuality.EXACT


@dataclass(frozen=True, slots=True)
class RelaxedFallback:
    """Every figure of one relaxed pass.

    `keywords` are the fragments recalled with, most discriminative (lowest document
    frequency in scope) first; `dropped_*` the fragments left out and why, `dropped_by_cap`
    in the same order as `keywords`. `recalled` candidates matched any keyword (at most 200,
    `candidate_limit_reached` when more did); `survived` of them held at least
    `coverage_required` keywords, the others were `rejected`.
    """

    keywords: tuple[str, ...]
    dropped_no_match: tuple[str, ...]
    dropped_too_common: tuple[str, ...]
    dropped_by_cap: tuple[str, ...]
    coverage_required: int
    recalled: int
    rejected: int
    survived: int
    candidate_limit_reached: bool


@dataclass(frozen=True, slots=True)
class Retrieval:
    """How a page was retrieved, so that an empty page is never read as "nothing recorded".

    `scoped_active` counts the records passing scope, filter and lifecycle; `candidate_pool`
    the hits the strategy collected (a floor when `candidate_limit_reached`);
    `per_query_matches` the exact match counts of the query, then of each variant.
    """

    reason: RetrievalReason
    scoped_active: int
    candidate_pool: int
    candidate_limit_reached: bool
    per_query_matches: tuple[int, ...]
    fallback: RelaxedFallback | None = None


@dataclass(frozen=True, slots=True)
class SearchPage:
    """One page of hits, how many hits there are in all, and how they were retrieved.

    `relaxed` says the hits (and so the positions of cursors) are those of the relaxed pass.
    """

    hits: tuple[SearchHit, ...]
    total: int
    retrieval: Retrieval
    relaxed: bool = False
