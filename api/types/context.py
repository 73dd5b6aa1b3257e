from __future__ import annotations

from typing import Self

import strawberry

from almanac.api.bundle import ContextPart, Item, PartCount
from almanac.api.types.common import DateValue, Locator, RecordRef, ResultMeta
from almanac.api.types.search import Retrieval
from almanac.temporal import ClockRelation, Lifecycle

__all__ = ["ContextBundle", "ContextItem", "ContextPart", "ContextPartCount"]

strawberry.enum(ContextPart)


@strawberry.type
class ContextItem:
    part: ContextPart
    record: RecordRef
    text: str = strawberry.field(
        description=(
            "The item as it counts against the budget: a compact, whole-line view of the record."
        )
    )
    chars: int
    locator: Locator
    date: DateValue | None
    clock: ClockRelation | None
    lifecycle: Lifecycle
    conflicted: bool

    @classmethod
    def from_domain(cls, item: Item) -> Self:
        return cls(
            part=item.part,
            record=RecordRef.from_domain(item.record),
            text=item.text,
            chars=item.chars,
            locator=Locator.from_domain(item.locator),
            date=DateValue.from_domain(item.date) if item.date is not None else None,
            clock=item.clock,
            lifecycle=item.lifecycle,
            conflicted=item.conflicted,
        )


@strawberry.type
class ContextPartCount:
    part: ContextPart
    returned: int = strawberry.field(
        description="What retrieval found for this part before the budget."
    )
    included: int
    omitted: int

    @classmethod
    def from_domain(cls, count: PartCount) -> Self:
        return cls(
            part=count.part, returned=count.returned, included=count.included, omitted=count.omitted
        )


@strawberry.type
class ContextBundle:
    items: list[ContextItem]
    budget: int
    used: int
    parts: list[ContextPartCount]
    omitted: int
    retrieval: Retrieval | None = strawberry.field(
        description="Why the recall part found what it found (the search's retrieval)."
    )
    missing_pins: list[strawberry.ID] = strawberry.field(
        description="Pins that name no record readable here (absent, ineligible or out of scope)."
    )
    as_of: str
    timezone: str
    meta: ResultMeta
