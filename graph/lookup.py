from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum

from temporal import Reader, RecordRef, normalize_name

__all__ = ["LookupResult", "LookupStatus", "lookup"]


class LookupStatus(Enum):
    """Outcome of an exact name lookup."""

    FOUND = "found"
    AMBIGUOUS = "ambiguous"
    MISSING = "missing"


@dataclass(frozen=True, slots=True)
class LookupResult:
    """The record a name designates, or every candidate when it designates several."""

    status: LookupStatus
    record: RecordRef | None
    candidates: tuple[RecordRef, ...]


def lookup(reader: Reader, name: str, *, scopes: Sequence[str]) -> LookupResult:
    """Find eligible records by exact id (case-sensitive), slug, or normalised title or alias.

    Never fuzzy. Ambiguity is computed across all matches of all rules, so a
    name that is one record's id and another's alias is ambiguous.
    """
    key = normalize_name(name)
    found = reader.lookup(name, scopes, key) if name.strip() else []
    if len(found) == 1:
        return LookupResult(LookupStatus.FOUND, found[0], ())
    if not found:
        return LookupResult(LookupStatus.MISSING, None, ())
    return LookupResult(LookupStatus.AMBIGUOUS, None, tuple(found))
