from __future__ import annotations

from collections.abc import Callable

from almanac.temporal.calendar import DateValue, RecurrenceSet, parse_date_value, timezone
from almanac.vault import (
    AmbiguousTime,
    InvalidDate,
    InvalidRecurrence,
    Issue,
    Note,
    UnknownTimezone,
)

__all__ = ["note_dates"]


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
        # A field read from another name (`[fields]`) is reported under the name written, with
        # the field it was read as: the user finds the first, the second explains why it counts.
        written = note.written.get(field, field)
        named = field if written == field else f"{written} (read as {field})"
        try:
            dates[field] = parse_date_value(text, tz=tz)
        except AmbiguousTime:
            issues.append(
                Issue(
                    note.path,
                    note.lines.get(field),
                    written,
                    "ambiguous_time",
                    f"{named} {text!r} has no zone and no timezone is set",
                    note.id,
                )
            )
        except InvalidDate as exc:
            message = str(exc) if written == field else f"{named}: {exc}"
            issues.append(
                Issue(note.path, note.lines.get(field), written, "invalid_date", message, note.id)
            )
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
