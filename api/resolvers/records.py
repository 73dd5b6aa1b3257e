from __future__ import annotations

import strawberry

from almanac import graph
from almanac.api.args import decode_cursor, encode_cursor, page_size
from almanac.api.context import Info
from almanac.api.types.common import Count, PageInfo, RecordRef
from almanac.api.types.records import LookupResult, Record, RecordConnection, RecordFilter, Status

__all__ = ["lookup", "record", "records", "status"]


def status(info: Info, scope: str | None = None) -> Status:
    """Index state, counts and validation issues of the readable scopes."""
    context = info.context
    scopes = context.readable(scope)
    counts = context.reader().counts(scopes)
    meta = context.meta(scopes)
    return Status(
        snapshot=meta.snapshot,
        freshness=meta.freshness,
        coverage=meta.coverage,
        record_count=counts.records,
        scopes=scopes,
        counts_by_kind=[Count.from_domain(c) for c in counts.by_kind],
        counts_by_type=[Count.from_domain(c) for c in counts.by_type],
        fingerprint=context.reader().fingerprint,
        watch_mode=context.services.watch_mode,
    )


def record(info: Info, id: strawberry.ID, scope: str | None = None) -> Record | None:
    """One record by exact id, or null if it does not exist or is not eligible."""
    context = info.context
    found = context.reader().record(str(id), context.readable(scope))
    return Record.from_domain(found) if found is not None else None


def records(
    info: Info, filter: RecordFilter | None = None, first: int | None = 20, after: str | None = None
) -> RecordConnection:
    """The exhaustive inventory, filtered. Ranked search never proves completeness; this does."""
    context = info.context
    size = page_size(first)
    flt = filter or RecordFilter()
    scopes = context.readable(flt.scope)
    snapshot = context.snapshot(scopes)
    key = decode_cursor(after, snapshot=snapshot) if after is not None else None
    domain = flt.to_domain(context.type_name)
    found, total = context.reader().records(domain, scopes, first=size + 1, after=key)
    page = found[:size]
    more = len(found) > size
    end = encode_cursor(snapshot, context.reader().page_key(page[-1])) if page else None
    return RecordConnection(
        nodes=[Record.from_domain(r) for r in page],
        total=total,
        page_info=PageInfo(has_next_page=more, end_cursor=end),
        meta=context.meta(scopes, ["conflict"] if any(r.conflicted for r in page) else []),
    )


def lookup(info: Info, name: str, scope: str | None = None) -> LookupResult:
    """Exact id, slug, title or alias lookup. Never fuzzy."""
    context = info.context
    scopes = context.readable(scope)
    result = graph.lookup(context.reader(), name, scopes=scopes)
    return LookupResult(
        status=result.status,
        record=RecordRef.from_domain(result.record) if result.record else None,
        candidates=[RecordRef.from_domain(c) for c in result.candidates],
        meta=context.meta(scopes),
    )
