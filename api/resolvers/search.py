from __future__ import annotations

import temporal
from api.args import decode_offset, encode_cursor, page_size
from api.context import Info
from api.types.common import MatchMode, PageInfo
from api.types.records import RecordFilter
from api.types.search import SearchConnection, SearchHit

__all__ = ["search"]


def search(
    info: Info,
    query: str,
    mode: MatchMode | None = temporal.MatchMode.ALL,
    filter: RecordFilter | None = None,
    first: int | None = 20,
    after: str | None = None,
) -> SearchConnection:
    """FTS5/BM25 keyword search over title (8), aliases (6) and body (1)."""
    context = info.context
    size = page_size(first)
    flt = filter or RecordFilter()
    scopes = context.readable(flt.scope)
    snapshot = context.snapshot(scopes)
    offset = 0
    if after is not None:
        offset = decode_offset(after, snapshot=snapshot, query="search")
    domain = flt.to_domain(context.type_name)
    page = temporal.search_records(
        context.reader(),
        query,
        mode=mode or temporal.MatchMode.ALL,
        flt=domain,
        scopes=scopes,
        first=size,
        offset=offset,
    )
    end = offset + len(page.hits)
    return SearchConnection(
        hits=[SearchHit.from_domain(h) for h in page.hits],
        total=page.total,
        page_info=PageInfo(
            has_next_page=end < page.total,
            end_cursor=encode_cursor(snapshot, str(end)) if page.hits else None,
        ),
        meta=context.meta(scopes),
    )
