"""How a name designates records: each rule's normalisation, and one way to match them.

A name (a link or reference target, a `lookup`, a graph seed) is compared by rules, in this
order of precedence: the exact id (case-sensitive), the slug, the file name (links only: a note
whose slug equals the name or ends in `/name`, compared case-insensitively), and the title or
an alias after normalisation (NFKC, lower-case, trimmed, inner whitespace collapsed). Ids and
slugs are NFC (vault/note.py), so a name is compared in NFC too.

Who asks decides, deliberately (SPEC sections 1 and 5), and passes it to `designate`:
- which records are candidates: a link, the usable notes (valid, not withdrawn) of the linking
  note's scope, so that a link to an ineligible record is a dangling reference; `lookup` and
  graph seeds, the eligible records of the readable scopes;
- which rules apply: links all four (a Markdown link only the slug); `lookup` all but the file
  name; a seed by id the id and slug, a seed text the titles and aliases;
- whether the first rule that finds anything decides (links), or every match counts together
  (`lookup`, seeds), so that a name that is one record's id and another's alias is ambiguous.
Either way, a name designating several candidates is ambiguous (but for several files of one
name, among which the linking note's folder decides), and a blank name designates nothing.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Generic, TypeVar

__all__ = [
    "LINK_RULES",
    "LOOKUP_RULES",
    "SEED_RULES",
    "Designation",
    "NameRule",
    "designate",
    "ends_with_path",
    "normalize_name",
    "slug_suffixes",
]

T = TypeVar("T")


class NameRule(Enum):
    """One way a name may designate a record; members in order of precedence."""

    ID = "id"
    SLUG = "slug"
    FILE = "file"
    TITLE = "title"

    def key(self, name: str) -> str:
        """`name` as this rule compares it: NFC (id, slug), NFC lower-case (file name), or
        normalised (title or alias)."""
        return _key(self, name, unicodedata.normalize("NFC", name))


_FILE, _TITLE = NameRule.FILE, NameRule.TITLE  # (read in the hot loop of a first load)
LINK_RULES = (NameRule.ID, NameRule.SLUG, NameRule.FILE, NameRule.TITLE)
LOOKUP_RULES = (NameRule.ID, NameRule.SLUG, NameRule.TITLE)
SEED_RULES = (NameRule.ID, NameRule.SLUG)


@dataclass(frozen=True, slots=True)
class Designation(Generic[T]):
    """What a name designates: every candidate found, each once, and the first rule that found
    any (None: nothing found). One candidate is found, several are ambiguous."""

    rule: NameRule | None
    found: tuple[T, ...]


def designate(
    name: str,
    find: Callable[[NameRule, str], Collection[T]],
    *,
    rules: Sequence[NameRule],
    first: bool,
) -> Designation[T]:
    """The candidates that `name` designates; the one function of names (see the module).

    Args:
        find: The caller's candidates (its scopes, its eligibility) that one rule finds under
            its key of the name; a key is never empty.
        rules: The rules that apply, in order of precedence.
        first: The first rule that finds anything decides (links); else the matches of every
            rule count together (`lookup`, seeds).
    """
    if not name or name.isspace():
        return Designation(None, ())
    nfc = unicodedata.normalize("NFC", name)
    decided: NameRule | None = None
    found: list[T] = []
    for rule in rules:
        key = _key(rule, name, nfc)
        matches = find(rule, key) if key else ()
        if not matches:
            continue
        if first:
            return Designation(rule, tuple(matches))
        decided = decided or rule
        for match in matches:
            if match not in found:
                found.append(match)
    return Designation(decided, tuple(found))


def normalize_name(text: str) -> str:
    """A title or alias as compared: NFKC, lower-case, trimmed, inner whitespace collapsed."""
    if not text.isascii():
        text = unicodedata.normalize("NFKC", text)
    return " ".join(text.lower().split())


def slug_suffixes(slug: str) -> list[str]:
    """`a/b/c` -> `c`, `b/c`, `a/b/c`, lower-cased: the file names by which a link may reach
    the slug (or an attachment's path)."""
    parts = slug.lower().split("/")
    return ["/".join(parts[i:]) for i in range(len(parts) - 1, -1, -1)]


def ends_with_path(path: str, wanted: str) -> bool:
    """Whether a lower-case slug or path ends with a file-name key: `a/b/c` ends with `c` and
    `b/c`, not with `/c` or `x/b/c`."""
    return path == wanted or path.endswith("/" + wanted)


def _key(rule: NameRule, name: str, nfc: str) -> str:
    if rule is _TITLE:
        return normalize_name(name)
    return nfc.lower() if rule is _FILE else nfc
