from __future__ import annotations

from typing import Annotated

import strawberry

from almanac import graph, temporal
from almanac.api.args import optional_bound_us, zone
from almanac.api.bundle import (
    MAX_BUDGET,
    MIN_BUDGET,
    ContextPart,
    Item,
    nearest_first,
    pack,
    pin_text,
    recall_text,
    time_text,
)
from almanac.api.context import Context, Info
from almanac.api.types.context import ContextBundle, ContextItem, ContextPartCount
from almanac.api.types.search import Retrieval
from almanac.vault import InvalidInput

__all__ = ["context"]

MAX_PINS = 50
MAX_ENTITIES = 10  # named entities whose timelines are read, in id order
TIME_POOL = 20  # rows read per entity and time field, nearest `asOf` first
RECALL_POOL = 20  # search hits read
# The time fields whose rows a turn wants: when something happens or is due.
TIME_FIELDS = (temporal.TimeField.OCCURRED_AT, temporal.TimeField.DUE_AT)


def context(
    info: Info,
    query: str | None = None,
    pins: list[strawberry.ID] | None = None,
    budget: Annotated[
        int | None,
        strawberry.argument(description="Characters (Unicode code points), 200..100000."),
    ] = 6000,
    as_of: str | None = None,
    timezone: str | None = "UTC",
    scope: str | None = None,
) -> ContextBundle:
    """Evidence for one turn inside one budget of characters (200..100000): the pinned
    records, then the dated rows nearest asOf of the entities the query names exactly, then
    search hits. Whole items that do not fit are counted in omitted, never cut."""
    ctx = info.context
    size = 6000 if budget is None else budget
    if not MIN_BUDGET <= size <= MAX_BUDGET:
        raise InvalidInput(
            f"Argument 'budget' must be between {MIN_BUDGET} and {MAX_BUDGET}, not {size}"
        )
    if pins is not None and len(pins) > MAX_PINS:
        raise InvalidInput(f"Argument 'pins' takes at most {MAX_PINS} ids, not {len(pins)}")
    if query is not None and len(query) > graph.MAX_SEED_TEXT:
        raise InvalidInput(f"Argument 'query' takes at most {graph.MAX_SEED_TEXT} characters")
    tz = zone(timezone)
    as_of_us = optional_bound_us(as_of, name="asOf")
    now_us = as_of_us if as_of_us is not None else ctx.clock_us
    scopes = ctx.readable(scope)
    pinned, missing = _pins(ctx, [str(p) for p in pins or []], scopes)
    candidates = [*pinned]
    retrieval = None
    if query is not None and query.strip():
        candidates += _time(ctx, query, scopes, now_us, tz)
        recalled, retrieval = _recall(ctx, query, scopes)
        candidates += recalled
    bundle = pack(_once(candidates), size)
    return ContextBundle(
        items=[ContextItem.from_domain(item) for item in bundle.items],
        budget=size,
        used=bundle.used,
        parts=[ContextPartCount.from_domain(count) for count in bundle.parts],
        omitted=bundle.omitted,
        retrieval=Retrieval.from_domain(retrieval) if retrieval is not None else None,
        missing_pins=[strawberry.ID(p) for p in missing],
        as_of=temporal.format_instant(now_us),
        timezone=tz,
        meta=ctx.meta(scopes, ["conflict"] if any(i.conflicted for i in bundle.items) else []),
    )


def _pins(ctx: Context, ids: list[str], scopes: list[str]) -> tuple[list[Item], list[str]]:
    reader = ctx.reader()
    items, missing = [], []
    for record_id in dict.fromkeys(ids):
        record = reader.record(record_id, scopes)
        if record is None:
            missing.append(record_id)
            continue
        ref = temporal.RecordRef(record.id, record.kind, record.type, record.title)
        items.append(
            Item(
                part=ContextPart.PIN,
                record=ref,
                text=pin_text(record),
                locator=record.locator,
                date=None,
                clock=None,
                lifecycle=record.lifecycle,
                conflicted=record.conflicted,
            )
        )
    return items, missing


def _time(ctx: Context, query: str, scopes: list[str], now_us: int, tz: str) -> list[Item]:
    reader = ctx.reader()
    named = graph.seeds_by_text(reader, query, scopes).found
    entities = sorted({ref.id for _, ref in named})[:MAX_ENTITIES]
    rows = [
        (field, entry)
        for entity in entities
        for field in TIME_FIELDS
        for entry in temporal.timeline(
            reader,
            temporal.TimelineQuery(
                entity=entity, time_field=field, as_of_us=now_us, tz=tz, nearest=True
            ),
            scopes,
            now_us=now_us,
            first=TIME_POOL,
        ).entries
    ]
    chosen = nearest_first(rows, now_us)
    conflicted = reader.conflicted((e.locator.path for _, e in chosen), as_of_us=now_us)
    return [
        Item(
            part=ContextPart.TIME,
            record=entry.record,
            text=time_text(field, entry),
            locator=entry.locator,
            date=entry.date,
            clock=entry.clock,
            lifecycle=temporal.Lifecycle.ACTIVE,
            conflicted=entry.locator.path in conflicted,
        )
        for field, entry in chosen
    ]


def _recall(ctx: Context, query: str, scopes: list[str]) -> tuple[list[Item], temporal.Retrieval]:
    reader = ctx.reader()
    page = temporal.search_records(
        reader,
        query,
        mode=temporal.MatchMode.ALL,
        flt=temporal.RecordFilter(),
        scopes=scopes,
        first=RECALL_POOL,
        strategy=temporal.SearchStrategy.AUTO,
    )
    conflicted = reader.conflicted(h.locator.path for h in page.hits)
    items = []
    for hit in page.hits:
        record = reader.record(hit.record.id, [hit.scope])
        items.append(
            Item(
                part=ContextPart.RECALL,
                record=hit.record,
                text=recall_text(hit, record.body if record is not None else None),
                locator=hit.locator,
                date=None,
                clock=None,
                lifecycle=record.lifecycle if record is not None else temporal.Lifecycle.ACTIVE,
                conflicted=hit.locator.path in conflicted,
            )
        )
    return items, page.retrieval


def _once(candidates: list[Item]) -> list[Item]:
    """Each record once, where the first part that brings it puts it."""
    seen: set[str] = set()
    unique = []
    for item in candidates:
        if item.record.id not in seen:
            seen.add(item.record.id)
            unique.append(item)
    return unique
