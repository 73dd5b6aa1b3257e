from __future__ import annotations

from typing import Annotated

import strawberry

from almanac import temporal
from almanac.api.args import page_size, search_cursor, search_position, search_variants
from almanac.api.context import Info
from almanac.api.types.common import MatchMode, PageInfo
from almanac.api.types.records import RecordFilter
from almanac.api.types.search import Retrieval, SearchConnection, SearchHit, SearchStrategy

__all__ = ["search"]


def search(
    info: Info,
    query: str,
    mode: MatchMode | None = temporal.MatchMode.ALL,
    filter: RecordFilter | None = None,
    variants: Annotated[
        list[str] | None,
        strawberry.argument(
            description=(
                "Up to 5 more keyword sets (each at most 100 characters), fused with the query"
                " by reciprocal rank."
            )
        ),
    ] = None,
    strategy: SearchStrategy | None = temporal.SearchStrategy.STRICT,
    first: int | None = 20,
    after: str | None = None,
) -> SearchConnection:
    """FTS5/BM25 keyword search over title (8), aliases (6) and body (1)."""
    context = info.context
    size = page_size(first)
    extra = search_variants(variants)
    chosen = strategy or temporal.SearchStrategy.STRICT
    flt = filter or RecordFilter()
    scopes = context.readable(flt.scope)
    snapshot = context.snapshot(scopes)
    offset, relaxed = 0, False
    if after is not None:
        offset, relaxed = search_position(after, snapshot=snapshot)
    domain = flt.to_domain(context.type_name)
    page = temporal.search_records(
        context.reader(),
        query,
        mode=mode or temporal.MatchMode.ALL,
        flt=domain,
        scopes=scopes,
        first=size,
        offset=offset,
        variants=extra,
        strategy=chosen,
        relaxed=relaxed,
    )
    end = offset + len(page.hits)
    conflicted = context.reader().conflicted(h.locator.path for h in page.hits)
    return SearchConnection(
        hits=[SearchHit.from_domain(h, conflicted=h.locator.path in conflicted) for h in page.hits],
        total=page.total,
        page_info=PageInfo(
            has_next_page=end < page.total,
            end_cursor=search_cursor(snapshot, end, relaxed=page.relaxed) if page.hits else None,
        ),
        retrieval=Retrieval.from_domain(page.retrieval),
        meta=context.meta(scopes, ["conflict"] if conflicted else []),
    )
