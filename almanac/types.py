"""What the helpers of `Almanac` return: frozen dataclasses, one for each GraphQL type they
answer with, field for field (snake_case names; `from_` for `from`). Dates and instants are the
API's own ISO 8601 text (an instant ends in `Z`; a floating date has no time), so an answer
reads and compares as the GraphQL one does; lists are tuples. Enumerations are the API's.

A list that the API returns a page at a time (records, search hits, timeline entries,
occurrences) holds its first page; iterating the result walks every page, each fetched with
the previous page's cursor, so a change to the vault during the walk raises `SnapshotChanged`
as the API does.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from almanac.api import Order
from almanac.graph import Direction, LookupStatus
from almanac.pages import Pages
from almanac.temporal import (
    ClockRelation,
    DatePrecision,
    Eligibility,
    Lifecycle,
    LifecycleFilter,
    MatchMode,
    MatchQuality,
    RecordKind,
    RetrievalReason,
    TimeField,
    TimelineGroup,
)

__all__ = [
    "ClockCount",
    "ClockRelation",
    "Count",
    "Coverage",
    "DatePrecision",
    "DateValue",
    "Direction",
    "Eligibility",
    "Excerpt",
    "ExcerptLine",
    "Freshness",
    "GraphEdge",
    "GraphNode",
    "GraphPath",
    "GraphResult",
    "LastSeenResult",
    "Lifecycle",
    "LifecycleFilter",
    "LimitHit",
    "Link",
    "Locator",
    "LookupResult",
    "LookupStatus",
    "MatchMode",
    "MatchQuality",
    "Occurrence",
    "OccurrenceResult",
    "Order",
    "PageInfo",
    "Record",
    "RecordConnection",
    "RecordKind",
    "RecordRef",
    "RelaxedFallback",
    "ResultMeta",
    "Retrieval",
    "RetrievalReason",
    "SearchConnection",
    "SearchHit",
    "Snippet",
    "Status",
    "TimeField",
    "TimelineEntry",
    "TimelineGroup",
    "TimelineResult",
    "ValidationIssue",
]


@dataclass(frozen=True, slots=True)
class ValidationIssue:
    """A problem in the vault: its code, where it is, what it is about."""

    code: str
    path: str
    line: int | None
    field: str | None
    record_id: str | None
    message: str


@dataclass(frozen=True, slots=True)
class Freshness:
    """When the call was answered, the vault last checked and the index last changed."""

    queried_at: str
    scanned_at: str
    indexed_at: str


@dataclass(frozen=True, slots=True)
class Coverage:
    """Whether the vault had validation issues; the first 20 of them."""

    complete: bool
    issue_count: int
    issues: tuple[ValidationIssue, ...]


@dataclass(frozen=True, slots=True)
class ResultMeta:
    """Which snapshot answered, how fresh it is, what it covers, what was left out."""

    snapshot: str
    freshness: Freshness
    coverage: Coverage
    degraded: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class PageInfo:
    """Whether a page follows, and the cursor (`after=`) that reads it."""

    has_next_page: bool
    end_cursor: str | None


@dataclass(frozen=True, slots=True)
class Locator:
    """Where a record is written: its file, its lines, the revision of its content."""

    path: str
    start_line: int
    end_line: int
    revision: str


@dataclass(frozen=True, slots=True)
class DateValue:
    """A date as written, its precision, and the instants it spans (`end` exclusive)."""

    text: str
    precision: DatePrecision
    start: str
    end: str


@dataclass(frozen=True, slots=True)
class RecordRef:
    """A record named by id, with its kind, type and title."""

    id: str
    kind: RecordKind
    type: str
    title: str


@dataclass(frozen=True, slots=True)
class Link:
    """A link in a record's body, and the record it reaches (None when unresolved), or the
    attachment file it reaches (`file`)."""

    text: str
    line: int
    resolved: bool
    target: RecordRef | None
    file: str | None


@dataclass(frozen=True, slots=True)
class Count:
    """A count under a key (a kind or a type)."""

    key: str
    count: int


@dataclass(frozen=True, slots=True)
class Record:
    """One record, every field of its note."""

    id: str
    scope: str
    kind: RecordKind
    type: str
    title: str
    aliases: tuple[str, ...]
    tags: tuple[str, ...]
    lifecycle: Lifecycle
    superseded_by: str | None
    body: str
    locator: Locator
    entities: tuple[RecordRef, ...]
    owner: RecordRef | None
    subject: RecordRef | None
    source: RecordRef | None
    from_: RecordRef | None
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
    links: tuple[Link, ...]
    fact_key: str | None
    derived_from: tuple[RecordRef, ...]
    conflicts: tuple[RecordRef, ...]
    conflicted: bool


@dataclass(frozen=True, slots=True)
class RecordConnection(Pages[Record]):
    """A page of the filtered inventory (`nodes`), its total; iterate for every record."""

    nodes: tuple[Record, ...]
    total: int
    page_info: PageInfo
    meta: ResultMeta
    _next: Callable[[str], RecordConnection] | None = field(default=None, repr=False, compare=False)

    def _items(self) -> tuple[Record, ...]:
        return self.nodes


@dataclass(frozen=True, slots=True)
class LookupResult:
    """What a name designates: FOUND and its record, AMBIGUOUS and candidates, or NOT_FOUND."""

    status: LookupStatus
    record: RecordRef | None
    candidates: tuple[RecordRef, ...]
    meta: ResultMeta


@dataclass(frozen=True, slots=True)
class Status:
    """Index state, counts and validation issues."""

    snapshot: str
    freshness: Freshness
    coverage: Coverage
    record_count: int
    scopes: tuple[str, ...]
    counts_by_kind: tuple[Count, ...]
    counts_by_type: tuple[Count, ...]
    fingerprint: str
    watch_mode: str


@dataclass(frozen=True, slots=True)
class Snippet:
    """The part of a body that matched, by character and by line."""

    text: str
    start: int
    end: int
    start_line: int | None
    end_line: int | None
    match_located: bool


@dataclass(frozen=True, slots=True)
class SearchHit:
    """A matching record, its score (None for a replacement reached `via` a superseded one)."""

    record: RecordRef
    score: float | None
    matches: tuple[str, ...]
    snippet: Snippet | None
    via: RecordRef | None
    locator: Locator
    match_quality: MatchQuality
    conflicted: bool


@dataclass(frozen=True, slots=True)
class RelaxedFallback:
    """The figures of a relaxed pass: keywords kept and dropped, coverage, candidates."""

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
    """How a search was retrieved: why its page holds what it holds."""

    reason: RetrievalReason
    scoped_active: int
    candidate_pool: int
    candidate_limit_reached: bool
    per_query_matches: tuple[int, ...]
    fallback: RelaxedFallback | None


@dataclass(frozen=True, slots=True)
class SearchConnection(Pages[SearchHit]):
    """A page of search hits, their total, how they were retrieved; iterate for every hit."""

    hits: tuple[SearchHit, ...]
    total: int
    page_info: PageInfo
    retrieval: Retrieval
    meta: ResultMeta
    _next: Callable[[str], SearchConnection] | None = field(default=None, repr=False, compare=False)

    def _items(self) -> tuple[SearchHit, ...]:
        return self.hits


@dataclass(frozen=True, slots=True)
class Occurrence:
    """One occurrence of a recurring record: its index, its instants, its local time."""

    index: int
    start: str
    end: str | None
    local: str


@dataclass(frozen=True, slots=True)
class TimelineEntry:
    """One dated row of a timeline or chronicle."""

    record: RecordRef
    date: DateValue | None
    occurrence: Occurrence | None
    clock: ClockRelation
    summary: str | None
    locator: Locator
    conflicted: bool
    via: RecordRef | None
    source: RecordRef | None
    note: RecordRef | None
    claims: int | None
    links: tuple[RecordRef, ...]
    sources: tuple[RecordRef, ...]


@dataclass(frozen=True, slots=True)
class ClockCount:
    """How many rows stand in one clock relation to `as_of`."""

    clock: ClockRelation
    count: int


@dataclass(frozen=True, slots=True)
class TimelineResult(Pages[TimelineEntry]):
    """A page of a timeline, chronicle day or range; iterate for every entry."""

    entries: tuple[TimelineEntry, ...]
    total: int
    page_info: PageInfo
    as_of: str
    timezone: str
    local_date: str
    clock_counts: tuple[ClockCount, ...]
    meta: ResultMeta
    _next: Callable[[str], TimelineResult] | None = field(default=None, repr=False, compare=False)

    def _items(self) -> tuple[TimelineEntry, ...]:
        return self.entries


@dataclass(frozen=True, slots=True)
class LastSeenResult:
    """The latest dated record of an entity, or why there is none (`reason`)."""

    entry: TimelineEntry | None
    reason: str | None
    meta: ResultMeta


@dataclass(frozen=True, slots=True)
class OccurrenceResult(Pages[Occurrence]):
    """A page of one record's occurrences in a range; iterate for every occurrence."""

    record: RecordRef | None
    occurrences: tuple[Occurrence, ...]
    total: int
    meta: ResultMeta
    page_info: PageInfo
    _next: Callable[[str], OccurrenceResult] | None = field(default=None, repr=False, compare=False)

    def _items(self) -> tuple[Occurrence, ...]:
        return self.occurrences


@dataclass(frozen=True, slots=True)
class GraphNode:
    """A record reached, and its fewest hops from a seed."""

    id: str
    kind: RecordKind
    type: str
    title: str
    hop: int


@dataclass(frozen=True, slots=True)
class GraphEdge:
    """One step of a path: the relation, its stored direction (`from_` -> `to`), the way it
    was followed, and its evidence record and where that is written."""

    relation: str
    from_: str
    to: str
    direction: Direction
    record: str
    locator: Locator


@dataclass(frozen=True, slots=True)
class GraphPath:
    """Records joined by edges: `edges[i]` joins `nodes[i]` and `nodes[i + 1]`."""

    nodes: tuple[str, ...]
    edges: tuple[GraphEdge, ...]


@dataclass(frozen=True, slots=True)
class LimitHit:
    """A bound a traversal reached: hop_limit, fan_out_limit or path_limit."""

    reason: str
    node_id: str | None
    available: int | None


@dataclass(frozen=True, slots=True)
class GraphResult:
    """A traversal's or a path search's answer, with the bounds it hit (`limits`)."""

    status: LookupStatus
    seeds: tuple[RecordRef, ...]
    candidates: tuple[RecordRef, ...]
    nodes: tuple[GraphNode, ...]
    paths: tuple[GraphPath, ...]
    limits: tuple[LimitHit, ...]
    meta: ResultMeta


@dataclass(frozen=True, slots=True)
class ExcerptLine:
    """One line of a note: its 1-based number (frontmatter counted) and its text."""

    number: int
    text: str


@dataclass(frozen=True, slots=True)
class Excerpt:
    """Lines of a note as the file reads now, its revision now, and whether a cited one is."""

    path: str
    revision: str
    current: bool
    line_count: int
    lines: tuple[ExcerptLine, ...]
    record: RecordRef | None
    meta: ResultMeta
