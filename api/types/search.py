from __future__ import annotations

import dataclasses
from enum import Enum
from typing import Self

import strawberry

from almanac import temporal
from almanac.api.types.common import Locator, PageInfo, RecordRef, ResultMeta
from almanac.temporal import MatchQuality, RetrievalReason, SearchStrategy

__all__ = [
    "MatchQuality",
    "RelaxedFallback",
    "Retrieval",
    "RetrievalReason",
    "SearchConnection",
    "SearchHit",
    "SearchStrategy",
    "Snippet",
]

for _enum in (SearchStrategy, MatchQuality, RetrievalReason):
    strawberry.enum(_enum)


def _describe(enum: type[Enum], descriptions: dict[str, str]) -> None:
    """Give values of a domain enum (registered with strawberry) the contract's descriptions."""
    definition = enum.__strawberry_definition__  # type: ignore[attr-defined]  # set by strawberry.enum
    definition.values[:] = [
        dataclasses.replace(v, description=descriptions.get(v.name)) for v in definition.values
    ]


_describe(
    temporal.SearchStrategy,
    {
        "STRICT": "Only the keyword queries as given.",
        "AUTO": (
            "STRICT first; only when it finds no candidate (and no page was skipped), one bounded"
            " relaxed pass."
        ),
    },
)
_describe(
    temporal.RetrievalReason,
    {
        "EMPTY_SCOPE": "No record passes scope, filter and lifecycle.",
        "NO_LEXICAL_MATCH": "Records are in scope, but none matches the keywords.",
        "OFFSET_BEYOND_POOL": "The page starts past the available candidates.",
        "RELAXED_MATCH": "The AUTO relaxed pass found these.",
    },
)


@strawberry.type
class Snippet:
    text: str
    start: int
    end: int
    start_line: int | None
    end_line: int | None
    match_located: bool

    @classmethod
    def from_domain(cls, value: temporal.Snippet) -> Self:
        return cls(
            text=value.text,
            start=value.start,
            end=value.end,
            start_line=value.start_line,
            end_line=value.end_line,
            match_located=value.match_located,
        )


@strawberry.type
class SearchHit:
    record: RecordRef
    score: float | None = strawberry.field(
        description="Null for replacements reached through a superseded match."
    )
    matches: list[str]
    snippet: Snippet | None
    via: RecordRef | None
    locator: Locator
    match_quality: MatchQuality
    conflicted: bool = strawberry.field(
        description="The record is in conflict (Record.conflicts), directly or through derivedFrom."
    )

    @classmethod
    def from_domain(cls, hit: temporal.SearchHit, *, conflicted: bool = False) -> Self:
        return cls(
            record=RecordRef.from_domain(hit.record),
            score=hit.score,
            matches=list(hit.matches),
            snippet=Snippet.from_domain(hit.snippet) if hit.snippet is not None else None,
            via=RecordRef.from_domain(hit.via) if hit.via is not None else None,
            locator=Locator.from_domain(hit.locator),
            match_quality=hit.match_quality,
            conflicted=conflicted,
        )


@strawberry.type
class RelaxedFallback:
    keywords: list[str] = strawberry.field(
        description="The fragments used for recall, most discriminative first."
    )
    dropped_no_match: list[str]
    dropped_too_common: list[str]
    dropped_by_cap: list[str]
    coverage_required: int = strawberry.field(
        description="Fragments a candidate had to contain to survive."
    )
    recalled: int
    rejected: int
    survived: int
    candidate_limit_reached: bool

    @classmethod
    def from_domain(cls, value: temporal.RelaxedFallback) -> Self:
        return cls(
            keywords=list(value.keywords),
            dropped_no_match=list(value.dropped_no_match),
            dropped_too_common=list(value.dropped_too_common),
            dropped_by_cap=list(value.dropped_by_cap),
            coverage_required=value.coverage_required,
            recalled=value.recalled,
            rejected=value.rejected,
            survived=value.survived,
            candidate_limit_reached=value.candidate_limit_reached,
        )


@strawberry.type(description="How to read an empty or short page.")
class Retrieval:
    reason: RetrievalReason
    scoped_active: int = strawberry.field(
        description="Records passing scope, filter and lifecycle, before any keyword match."
    )
    candidate_pool: int = strawberry.field(
        description="Candidates this strategy collected; a floor when candidateLimitReached."
    )
    candidate_limit_reached: bool
    per_query_matches: list[int] = strawberry.field(
        description="Exact match counts of the query, then of each variant, in order."
    )
    fallback: RelaxedFallback | None

    @classmethod
    def from_domain(cls, value: temporal.Retrieval) -> Self:
        return cls(
            reason=value.reason,
            scoped_active=value.scoped_active,
            candidate_pool=value.candidate_pool,
            candidate_limit_reached=value.candidate_limit_reached,
            per_query_matches=list(value.per_query_matches),
            fallback=(
                RelaxedFallback.from_domain(value.fallback) if value.fallback is not None else None
            ),
        )


@strawberry.type
class SearchConnection:
    hits: list[SearchHit]
    total: int
    page_info: PageInfo
    retrieval: Retrieval
    meta: ResultMeta
