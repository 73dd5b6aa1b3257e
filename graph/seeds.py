"""Where a question starts: records named exactly, by id, slug, title or alias; never fuzzy."""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from enum import Enum

from almanac import temporal
from almanac.temporal import NameRule, Reader, RecordRef

__all__ = [
    "MAX_SEED_TEXT",
    "LookupResult",
    "LookupStatus",
    "Seeds",
    "lookup",
    "seeds_by_id",
    "seeds_by_text",
]

MAX_SEED_TEXT = 500
_MAX_NAME_CHARS = 200
_MAX_NAME_SPACES = 12
_WORD = re.compile(r"\w")
_Key = tuple[str, str]  # (scope, record id)


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
    found = reader.designated(name, scopes, rules=temporal.LOOKUP_RULES)
    if len(found) == 1:
        return LookupResult(LookupStatus.FOUND, found[0][1], ())
    if not found:
        return LookupResult(LookupStatus.MISSING, None, ())
    return LookupResult(LookupStatus.AMBIGUOUS, None, tuple(ref for _, ref in found))


@dataclass(frozen=True, slots=True)
class Seeds:
    """How a seed resolved: FOUND with its records, AMBIGUOUS with candidates, or MISSING."""

    status: LookupStatus
    found: tuple[tuple[str, RecordRef], ...]  # (scope, record)
    candidates: tuple[RecordRef, ...] = ()


def seeds_by_id(reader: Reader, name: str, scopes: Sequence[str]) -> Seeds:
    """The eligible record whose exact id or slug is `name` in the readable scopes.

    A name that designates several records (an id and another's slug, or one id in two
    scopes) is AMBIGUOUS: a traversal never guesses where to start.
    """
    found = reader.designated(name, scopes, rules=temporal.SEED_RULES)
    if not found:
        return Seeds(LookupStatus.MISSING, ())
    if len(found) > 1:
        return Seeds(LookupStatus.AMBIGUOUS, (), tuple(ref for _, ref in found))
    return Seeds(LookupStatus.FOUND, tuple(found))


def seeds_by_text(reader: Reader, text: str, scopes: Sequence[str]) -> Seeds:
    """The records whose declared exact names (titles, aliases) occur in `text`.

    Names match as whole words after normalisation (NFKC, lower case, whitespace collapsed),
    scanning left to right and taking the longest name at each position; nothing fuzzy.
    A name that designates several records makes the result AMBIGUOUS with every candidate
    of every ambiguous name; no name at all is MISSING.
    """
    # Spans of the text normalised once as titles and aliases are (the TITLE rule's key), each
    # looked up as that rule finds names (`Reader.named`), all at once.
    norm = NameRule.TITLE.key(text)
    spans = list(_spans(norm))
    known = reader.named(NameRule.TITLE, {norm[i:j] for i, j in spans}, scopes)
    found: dict[_Key, RecordRef] = {}
    ambiguous: dict[str, RecordRef] = {}
    position = 0
    for start, end in sorted(spans, key=lambda s: (s[0], -s[1])):
        matches = known.get(norm[start:end]) if start >= position else None
        if not matches:
            continue
        if len(matches) > 1:
            ambiguous.update((ref.id, ref) for _, ref in matches)
        else:
            scope, ref = matches[0]
            found[(scope, ref.id)] = ref
        position = end
    ordered = tuple(sorted(((s, r) for (s, _), r in found.items()), key=lambda x: (x[1].id, x[0])))
    if ambiguous:
        return Seeds(
            LookupStatus.AMBIGUOUS, ordered, tuple(ambiguous[k] for k in sorted(ambiguous))
        )
    if not found:
        return Seeds(LookupStatus.MISSING, ())
    return Seeds(LookupStatus.FOUND, ordered)


def _spans(norm: str) -> Iterator[tuple[int, int]]:
    """Every whole-word span of `norm` that could be a name (bounded in length and words)."""
    size = len(norm)
    word = [_WORD.match(c) is not None for c in norm]
    ends = [
        j
        for j in range(1, size + 1)
        if norm[j - 1] != " " and not (j < size and word[j] and word[j - 1])
    ]
    starts = [i for i in range(size) if norm[i] != " " and not (i and word[i] and word[i - 1])]
    for start in starts:
        for end in ends[bisect.bisect_right(ends, start) :]:
            if end - start > _MAX_NAME_CHARS or norm.count(" ", start, end) > _MAX_NAME_SPACES:
                break
            yield start, end
