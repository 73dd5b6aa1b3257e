"""How to read an existing vault as it is: the user's own names for the date fields, and daily
notes dated by their file names (Obsidian's `date:` and `created:`, its Daily notes folder)."""

from __future__ import annotations

import datetime
import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from almanac.vault.errors import StartupError

__all__ = ["DATE_FIELDS", "DailyNotes", "ReadOptions", "daily_date", "field_map"]

# Almanac's date fields, the names `[fields]` may map (`vault.note` reads them).
DATE_FIELDS = (
    "occurred_at",
    "ends_at",
    "recorded_at",
    "updated_at",
    "due_at",
    "valid_from",
    "valid_until",
    "reinstated_at",
)
_MONTHS: tuple[str, ...] = ("january", "february", "march", "april", "may", "june", "july")
_MONTHS += ("august", "september", "october", "november", "december")
_DAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
# Moment.js tokens (the format Obsidian's Daily notes plugin uses), longest first.
_TOKENS = {
    "YYYY": r"(?P<year>[0-9]{4})",
    "MMMM": "(?P<month_name>" + "|".join(_MONTHS) + ")",
    "MMM": "(?P<month_abbr>" + "|".join(m[:3] for m in _MONTHS) + ")",
    "MM": r"(?P<month>[0-9]{2})",
    "M": r"(?P<month>[0-9]{1,2})",
    "Do": r"(?P<day>[0-9]{1,2})(?:st|nd|rd|th)",
    "DD": r"(?P<day>[0-9]{2})",
    "D": r"(?P<day>[0-9]{1,2})",
    "dddd": "(?:" + "|".join(_DAYS) + ")",
    "ddd": "(?:" + "|".join(d[:3] for d in _DAYS) + ")",
}
_TOKEN = re.compile(r"\[([^\]]*)\]|(" + "|".join(_TOKENS) + r")|([A-Za-z]+)|(.)", re.S)


@dataclass(frozen=True, slots=True)
class DailyNotes:
    """Notes in `folder` whose file name is a date in `format` occur on that day.

    Args:
        folder: Vault-relative folder ("" is the whole vault).
        format: A Moment.js date format (YYYY, MM, M, DD, D, Do, MMMM, MMM, dddd, ddd and
            `[literal]` text); with a `/` it is matched against the path below the folder,
            else against the file name alone.
    """

    folder: str
    format: str = "YYYY-MM-DD"
    pattern: str = field(default="", compare=False)

    @classmethod
    def of(cls, folder: str, format: str = "YYYY-MM-DD") -> DailyNotes:
        """Checked settings.

        Raises:
            StartupError: the format has a token that is not supported, or no year, month or day.
        """
        return cls(folder.strip("/"), format, _compile(format))


@dataclass(frozen=True, slots=True)
class ReadOptions:
    """What of the configuration changes how a note is read (plain dicts: it is pickled).

    Args:
        type_aliases: Written type to ontology type (`people` -> `person`).
        fields: Almanac date field to the user's names for it, in order (the first present wins).
        daily_notes: Daily notes, dated by file name.
    """

    type_aliases: Mapping[str, str] = field(default_factory=dict)
    fields: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    daily_notes: DailyNotes | None = None


def field_map(value: object, *, known: frozenset[str]) -> dict[str, tuple[str, ...]]:
    """The `[fields]` section of a config: Almanac date field -> the user's names for it.

    Args:
        value: The section as TOML read it (`occurred_at = ["date"]`; a single string is a list
            of one).
        known: Every field name Almanac reads itself (none may be mapped onto another).

    Raises:
        StartupError: naming the bad key or name.
    """
    if not isinstance(value, dict):
        raise StartupError("Config [fields] must map Almanac time fields to lists of names")
    mapped: dict[str, tuple[str, ...]] = {}
    owner: dict[str, str] = {}
    for name, names in value.items():
        if name not in DATE_FIELDS:
            raise StartupError(
                f"Config [fields] key {name!r} is not an Almanac time field"
                f" ({', '.join(DATE_FIELDS)})"
            )
        if isinstance(names, str):
            names = [names]
        if not isinstance(names, list) or not names or not all(isinstance(n, str) for n in names):
            raise StartupError(f"Config [fields] {name} must be a non-empty list of field names")
        for written in names:
            if not written.strip() or written in known:
                raise StartupError(
                    f"Config [fields] {name} = {written!r}: a name must be non-empty and not"
                    " one Almanac reads itself"
                )
            if owner.setdefault(written, name) != name:
                raise StartupError(
                    f"Config [fields] maps {written!r} to both {owner[written]} and {name}"
                )
        mapped[name] = tuple(dict.fromkeys(names))
    return mapped


def daily_date(path: str, daily: DailyNotes) -> tuple[str | None, str | None]:
    """The day a daily note's path names, as `YYYY-MM-DD`.

    Returns:
        (the date, None) when the path is a daily note; (None, a reason) when its name has the
        format's shape but is no calendar date (`2024-02-30`); (None, None) otherwise (another
        note in the folder, such as a template).
    """
    prefix = daily.folder + "/" if daily.folder else ""
    if not path.startswith(prefix) or not path.endswith(".md"):
        return None, None
    below = path[len(prefix) : -3]
    if "/" not in daily.format:
        below = below.rpartition("/")[2]
    match = re.fullmatch(daily.pattern or _compile(daily.format), below, re.I)
    if match is None:
        return None, None
    found = match.groupdict()
    if found.get("month_name"):
        month = _MONTHS.index(found["month_name"].lower()) + 1
    elif found.get("month_abbr"):
        month = [m[:3] for m in _MONTHS].index(found["month_abbr"].lower()) + 1
    else:
        month = int(found["month"])
    try:
        day = datetime.date(int(found["year"]), month, int(found["day"]))
    except ValueError:
        return None, f"Daily note name {below!r} is not a date (format {daily.format!r})"
    return day.isoformat(), None


def _compile(format: str) -> str:
    parts: list[str] = []
    seen: set[str] = set()
    for literal, token, word, other in _TOKEN.findall(format):
        if token:
            pattern = _TOKENS[token]
            group = re.search(r"\?P<(\w+)>", pattern)
            unit = group.group(1).split("_")[0] if group else ""
            if unit in seen:  # a nested format names the year or month again: its first wins
                pattern = re.sub(r"\?P<\w+>", "?:", pattern)
            seen.add(unit)
            parts.append(pattern)
        elif word:
            raise StartupError(
                f"Config [daily_notes] format {format!r}: {word!r} is not a supported token"
                f" ({', '.join(_TOKENS)}, or text in [brackets])"
            )
        else:
            parts.append(re.escape(literal or other))
    if not {"year", "month", "day"} <= seen:
        raise StartupError(f"Config [daily_notes] format {format!r} needs a year, month and day")
    return "".join(parts)
