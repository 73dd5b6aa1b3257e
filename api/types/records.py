from __future__ import annotations

from collections.abc import Callable
from typing import Self

import strawberry

from almanac import temporal
from almanac.api.args import optional_bound_us
from almanac.api.types.common import (
    Count,
    Coverage,
    DateValue,
    Freshness,
    Lifecycle,
    LifecycleFilter,
    Link,
    Locator,
    LookupStatus,
    PageInfo,
    RecordKind,
    RecordRef,
    ResultMeta,
    TimeField,
)

__all__ = ["LookupResult", "Record", "RecordConnection", "RecordFilter", "Status"]


def _date(value: temporal.DateValue | None) -> DateValue | None:
    return DateValue.from_domain(value) if value is not None else None


def _ref(value: temporal.RecordRef | None) -> RecordRef | None:
    return RecordRef.from_domain(value) if value is not None else None


@strawberry.type
class Record:
    id: strawberry.ID
    scope: str
    kind: RecordKind
    type: str
    title: str
    aliases: list[str]
    tags: list[str]
    lifecycle: Lifecycle
    superseded_by: strawberry.ID | None
    body: str
    locator: Locator
    entities: list[RecordRef]
    owner: RecordRef | None
    subject: RecordRef | None
    source: RecordRef | None
    from_: RecordRef | None = strawberry.field(name="from")
    to: RecordRef | None
    relation: str | None
    weight: float | None
    source_event: bool
    occurred_at: DateValue | None
    ends_at: DateValue | None
    recorded_at: DateValue | None
    updated_at: DateValue | None
    due_at: DateValue | None
    valid_from: DateValue | None
    valid_until: DateValue | None
    timezone: str | None
    recurrence: str | None
    state: str | None
    links: list[Link]
    fact_key: str | None = strawberry.field(
        description="Claims: the fact this claim states a value of (frontmatter fact_key)."
    )
    derived_from: list[RecordRef] = strawberry.field(
        description="Records this one summarises (frontmatter derived_from)."
    )
    conflicts: list[RecordRef] = strawberry.field(
        description="Other active claims with the same subject and factKey whose validity"
        " overlaps this one's and whose\nbody differs. Empty when there is no conflict."
    )
    conflicted: bool = strawberry.field(
        description="In conflict directly, or through derivedFrom (up to three levels)."
    )

    @classmethod
    def from_domain(cls, r: temporal.Record) -> Self:
        d = r.dates
        return cls(
            id=strawberry.ID(r.id),
            scope=r.scope,
            kind=r.kind,
            type=r.type,
            title=r.title,
            aliases=list(r.aliases),
            tags=list(r.tags),
            lifecycle=r.lifecycle,
            superseded_by=strawberry.ID(r.superseded_by) if r.superseded_by else None,
            body=r.body,
            locator=Locator.from_domain(r.locator),
            entities=[RecordRef.from_domain(e) for e in r.entities],
            owner=_ref(r.refs.get("owner")),
            subject=_ref(r.refs.get("subject")),
            source=_ref(r.refs.get("source")),
            from_=_ref(r.refs.get("from")),
            to=_ref(r.refs.get("to")),
            relation=r.relation,
            weight=r.weight,
            source_event=r.source_event,
            occurred_at=_date(d.get("occurred_at")),
            ends_at=_date(d.get("ends_at")),
            recorded_at=_date(d.get("recorded_at")),
            updated_at=_date(d.get("updated_at")),
            due_at=_date(d.get("due_at")),
            valid_from=_date(d.get("valid_from")),
            valid_until=_date(d.get("valid_until")),
            timezone=r.timezone,
            recurrence=r.recurrence,
            state=r.state,
            links=[Link.from_domain(link) for link in r.links],
            fact_key=r.fact_key,
            derived_from=[RecordRef.from_domain(d) for d in r.derived_from],
            conflicts=[RecordRef.from_domain(c) for c in r.conflicts],
            conflicted=r.conflicted,
        )


@strawberry.input
class RecordFilter:
    kind: RecordKind | None = None
    type: str | None = None
    tag: str | None = None
    lifecycle: LifecycleFilter | None = temporal.LifecycleFilter.ACTIVE
    scope: str | None = None
    time_field: TimeField | None = temporal.TimeField.OCCURRED_AT
    since: str | None = None
    until: str | None = None

    def to_domain(self, type_name: Callable[[str | None], str | None]) -> temporal.RecordFilter:
        """The store's filter: defaults filled, bounds checked, the type's alias expanded."""
        return temporal.RecordFilter(
            kind=self.kind,
            type=type_name(self.type),
            tag=self.tag,
            lifecycle=self.lifecycle or temporal.LifecycleFilter.ACTIVE,
            scope=self.scope,
            time_field=self.time_field or temporal.TimeField.OCCURRED_AT,
            since_us=optional_bound_us(self.since, name="filter.since"),
            until_us=optional_bound_us(self.until, name="filter.until", upper=True),
        )


@strawberry.type
class RecordConnection:
    nodes: list[Record]
    total: int
    page_info: PageInfo
    meta: ResultMeta


@strawberry.type
class LookupResult:
    status: LookupStatus
    record: RecordRef | None
    candidates: list[RecordRef]
    meta: ResultMeta


@strawberry.type
class Status:
    snapshot: str
    freshness: Freshness
    coverage: Coverage
    record_count: int
    scopes: list[str]
    counts_by_kind: list[Count]
    counts_by_type: list[Count]
    fingerprint: str
    watch_mode: str = strawberry.field(
        description="How the service learns of vault changes now: inotify or scan."
    )
