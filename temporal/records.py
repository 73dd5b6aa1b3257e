from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from enum import Enum

from temporal.dates import DateValue, parse_date_value, timezone
from temporal.recurrence import RecurrenceSet
from vault import AmbiguousTime, InvalidDate, InvalidRecurrence, Issue, Note, UnknownTimezone

__all__ = [
    "Lifecycle",
    "LifecycleFilter",
    "LinkRef",
    "Locator",
    "Record",
    "RecordKind",
    "RecordRef",
    "TimeField",
    "note_dates",
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
    """A body link and the eligible record it resolves to, if any."""

    text: str
    line: int
    target: RecordRef | None


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


def note_dates(note: Note) -> tuple[dict[str, DateValue], str | None, list[Issue]]:
    """Read a note's date fields, zone and recurrence; bad values become absent with issues.

    Returns:
        The parsed date fields, the valid IANA zone (or None) and the issues.
    """
    issues: list[Issue] = []

    def issue(field: str, code: str, message: str) -> None:
        issues.append(Issue(note.path, note.lines.get(field), field, code, message, note.id))

    tz = note.timezone
    if tz is not None:
        try:
            timezone(tz)
        except UnknownTimezone:
            issue("timezone", "unknown_timezone", f"Unknown timezone {tz!r}")
            tz = None
    dates: dict[str, DateValue] = {}
    for field, text in note.dates.items():
        try:
            dates[field] = parse_date_value(text, tz=tz)
        except AmbiguousTime:
            issue(field, "ambiguous_time", f"{field} {text!r} has no zone and no timezone is set")
        except InvalidDate as exc:
            issue(field, "invalid_date", str(exc))
    for field in ("exdates", "rdates"):
        for text in getattr(note, field):
            try:
                parse_date_value(text, tz=tz)
            except AmbiguousTime:
                issue(
                    field, "ambiguous_time", f"{field} {text!r} has no zone and no timezone is set"
                )
            except InvalidDate as exc:
                issue(field, "invalid_date", str(exc))
    if note.recurrence is not None or note.rdates:
        _check_recurrence(note, dates.get("occurred_at"), tz, issue)
    return dates, tz, issues


def _check_recurrence(
    note: Note, anchor: DateValue | None, tz: str | None, issue: Callable[[str, str, str], None]
) -> None:
    """Report what `RecurrenceSet.of` refuses: validation and expansion are one rule."""
    field = "recurrence" if note.recurrence is not None else "rdates"
    if anchor is None:
        issue(field, "invalid_recurrence", "A recurrence needs an occurred_at anchor")
        return
    try:
        RecurrenceSet.of(
            anchor=anchor, rule=note.recurrence, exdates=note.exdates, rdates=note.rdates, tz=tz
        )
    except InvalidRecurrence as exc:
        blamed = exc.field
        if exc.issue == "recurrence_needs_timezone" and "timezone" in note.lines:
            blamed = "timezone"
        issue(blamed, exc.issue, str(exc))
