from __future__ import annotations

from typing import Self

import strawberry

import temporal
from api.types.common import Locator, PageInfo, RecordRef, ResultMeta

__all__ = ["SearchConnection", "SearchHit", "Snippet"]


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

    @classmethod
    def from_domain(cls, hit: temporal.SearchHit) -> Self:
        return cls(
            record=RecordRef.from_domain(hit.record),
            score=hit.score,
            matches=list(hit.matches),
            snippet=Snippet.from_domain(hit.snippet) if hit.snippet is not None else None,
            via=RecordRef.from_domain(hit.via) if hit.via is not None else None,
            locator=Locator.from_domain(hit.locator),
        )


@strawberry.type
class SearchConnection:
    hits: list[SearchHit]
    total: int
    page_info: PageInfo
    meta: ResultMeta
