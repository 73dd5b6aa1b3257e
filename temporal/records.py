from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from enum import Enum

from almanac.temporal.calendar import DateValue

__all__ = [
    "Lifecycle",
    "LifecycleFilter",
    "LinkRef",
    "Locator",
    "Record",
    "RecordKind",
    "RecordRef",
    "TimeField",
    "supersession_chain",
]


class RecordKind(Enum):
    """Derived from the type; member names are the GraphQL values."""

    PAGE = "page"
    CLAIM = "claim"
    RELATIONSHIP = "relationship"


class LifecycleFilter(Enum):
    """Which lifecycles a query returns."""

    ACTIVE = "active"
    SUPERSEDED = "superseded"
    ALL = "all"


class TimeField(Enum):
    """The date field a time query reads."""

    OCCURRED_AT = "occurred_at"
    RECORDED_AT = "recorded_at"
    UPDATED_AT = "updated_at"
    DUE_AT = "due_at"


class Lifecycle(Enum):
    """A record's written lifecycle."""

    ACTIVE = "active"
    SUPERSEDED = "superseded"
    WITHDRAWN = "withdrawn"


@dataclass(frozen=True, slots=True)
class Locator:
    """Where a record or a piece of evidence stands in the vault."""

    path: str
    start_line: int
    end_line: int
    revision: str


@dataclass(frozen=True, slots=True)
class RecordRef:
    """A compact record identity: no body."""

    id: str
    kind: RecordKind
    type: str
    title: str


@dataclass(frozen=True, slots=True)
class LinkRef:
    """A body link and the eligible record it resolves to, if any, or the attachment (the
    vault-relative path of a file that is not a note) it resolves to."""

    text: str
    line: int
    target: RecordRef | None
    file: str | None = None


@dataclass(frozen=True, slots=True)
class Record:
    """One eligible record as the state store holds it."""

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
    refs: Mapping[str, RecordRef]
    relation: str | None
    weight: float | None
    source_event: bool
    dates: Mapping[str, DateValue]
    timezone: str | None
    recurrence: str | None
    exdates: tuple[str, ...]
    rdates: tuple[str, ...]
    state: str | None
    links: tuple[LinkRef, ...]
    extra: Mapping[str, object]
    fact_key: str | None
    derived_from: tuple[RecordRef, ...]
    # Other claims this one conflicts with (sorted by id), and whether it conflicts directly or
    # through derived_from (temporal/store/conflicts.py).
    conflicts: tuple[RecordRef, ...]
    conflicted: bool


def supersession_chain(start: str, successor: Callable[[str], str | None]) -> Iterator[str]:
    """Each record after `start` along its `superseded_by` chain, in order, each once.

    Args:
        successor: The record a record's `superseded_by` resolves to, or None.

    The walk ends where the chain ends or where it would visit a record again (a cycle): the
    chain loops back to `start` when the successor of the last record yielded is `start`.
    """
    seen = {start}
    current = successor(start)
    while current is not None and current not in seen:
        yield current
        seen.add(current)
        current = successor(current)
