from __future__ import annotations

from collections.abc import Callable
from typing import Self

import strawberry

from almanac import graph, temporal, vault
from almanac.api.args import page_size
from almanac.graph import LookupStatus
from almanac.temporal import (
    DatePrecision,
    Lifecycle,
    LifecycleFilter,
    MatchMode,
    RecordKind,
    TimeField,
)

__all__ = [
    "Count",
    "Coverage",
    "DatePrecision",
    "DateValue",
    "Freshness",
    "Lifecycle",
    "LifecycleFilter",
    "Link",
    "Locator",
    "LookupStatus",
    "MatchMode",
    "PageInfo",
    "RecordKind",
    "RecordRef",
    "ResultMeta",
    "TimeField",
    "ValidationIssue",
]

# The domain enums are the GraphQL enums: registered once, member names as the contract's values.
for _enum in (
    temporal.RecordKind,
    temporal.Lifecycle,
    temporal.LifecycleFilter,
    temporal.DatePrecision,
    temporal.TimeField,
    graph.LookupStatus,
    temporal.MatchMode,
):
    strawberry.enum(_enum)


@strawberry.type
class ValidationIssue:
    code: str
    path: str
    line: int | None
    field: str | None
    record_id: str | None
    message: str

    @classmethod
    def from_domain(cls, issue: vault.Issue) -> Self:
        return cls(
            code=issue.code,
            path=issue.path,
            line=issue.line,
            field=issue.field,
            record_id=issue.record_id,
            message=issue.message,
        )


@strawberry.type
class Freshness:
    queried_at: str
    scanned_at: str
    indexed_at: str


@strawberry.type
class Coverage:
    complete: bool
    issue_count: int
    # Read only when asked for, inside the request's read transaction.
    _issues: strawberry.Private[Callable[[int], list[vault.Issue]]]

    @strawberry.field
    def issues(self, first: int | None = 20) -> list[ValidationIssue]:
        size = page_size(first, name="first", limit=1000)
        return [ValidationIssue.from_domain(i) for i in self._issues(size)]


@strawberry.type
class ResultMeta:
    snapshot: str
    freshness: Freshness
    coverage: Coverage
    degraded: list[str]


@strawberry.type
class PageInfo:
    has_next_page: bool
    end_cursor: str | None


@strawberry.type
class Locator:
    path: str
    start_line: int
    end_line: int
    revision: str

    @classmethod
    def from_domain(cls, value: temporal.Locator) -> Self:
        return cls(
            path=value.path,
            start_line=value.start_line,
            end_line=value.end_line,
            revision=value.revision,
        )


@strawberry.type
class DateValue:
    text: str
    precision: DatePrecision
    start: str
    end: str

    @classmethod
    def from_domain(cls, value: temporal.DateValue) -> Self:
        return cls(
            text=value.text,
            precision=value.precision,
            start=temporal.format_instant(value.start_us),
            end=temporal.format_instant(value.end_us),
        )


@strawberry.type
class RecordRef:
    id: strawberry.ID
    kind: RecordKind
    type: str
    title: str

    @classmethod
    def from_domain(cls, ref: temporal.RecordRef) -> Self:
        return cls(id=strawberry.ID(ref.id), kind=ref.kind, type=ref.type, title=ref.title)


@strawberry.type
class Link:
    text: str
    line: int
    resolved: bool
    target: RecordRef | None
    file: str | None = strawberry.field(
        description=(
            "Vault-relative path of an existing non-note file (an attachment) the link points to."
        )
    )

    @classmethod
    def from_domain(cls, link: temporal.LinkRef) -> Self:
        target = RecordRef.from_domain(link.target) if link.target else None
        resolved = target is not None or link.file is not None
        return cls(text=link.text, line=link.line, resolved=resolved, target=target, file=link.file)


@strawberry.type
class Count:
    key: str
    count: int

    @classmethod
    def from_domain(cls, value: temporal.Count) -> Self:
        return cls(key=value.key, count=value.count)
