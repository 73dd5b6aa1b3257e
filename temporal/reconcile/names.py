from __future__ import annotations

import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from functools import partial
from typing import TypeVar

from almanac.temporal.store import (
    LINK_RULES,
    NameRule,
    designate,
    ends_with_path,
    normalize_name,
    slug_suffixes,
)

__all__ = ["NameIndex", "Paths", "Resolution", "discard_path", "paths_of", "put_path"]

# The paths under one key of an index: one path, or a set when several share the key. Most keys
# have one, and a set of one costs 216 bytes (~40 MB at 100,000 notes).
Paths = str | set[str]
K = TypeVar("K")


@dataclass(frozen=True, slots=True)
class Resolution:
    """How one link or reference target resolved: `resolved`, `ambiguous` or `missing`."""

    status: str
    path: str | None = None


_MISSING = Resolution("missing")
_FILE = NameRule.FILE
_MARKDOWN_RULES = (NameRule.SLUG,)  # a Markdown link names its path: `temporal.store.names`


class NameIndex:
    """Ids, slugs, file names, titles and aliases of the usable notes, for link resolution.

    A target resolves, inside the linking note's scope, by the rules of names
    (`temporal.store.designate`): exact id, then slug, then file name (the linking note's own
    folder wins among several), then normalised title or alias; the first rule that finds
    anything decides.
    """

    def __init__(self) -> None:
        self.scope: dict[str, str] = {}
        # Key -> one path, or a set of paths when several share the key (rare): no set per note.
        self._by_id: dict[str, Paths] = {}
        self._by_slug: dict[str, Paths] = {}
        self._by_file: dict[str, Paths] = {}
        self._by_name: dict[str, Paths] = {}
        self._by_fold: dict[str, Paths] = {}
        self._by_rule = {
            NameRule.ID: self._by_id,
            NameRule.SLUG: self._by_slug,
            NameRule.TITLE: self._by_name,
        }
        self._slug: dict[str, str] = {}
        self._keys: dict[str, tuple[str, tuple[str, ...]]] = {}

    def add(
        self,
        path: str,
        *,
        id: str,
        slug: str,
        scope: str,
        names: Iterable[str],
        norms: Iterable[str] = (),
    ) -> None:
        """Index one usable note, by its titles and aliases (`names`) or their normalised keys."""
        norms = tuple(sorted({*norms, *(key for n in names if (key := normalize_name(n)))}))
        self.scope[path] = scope
        self._slug[path] = slug
        self._keys[path] = (id, norms)
        put_path(self._by_id, id, path)
        put_path(self._by_fold, _fold(id), path)
        put_path(self._by_slug, slug, path)
        put_path(self._by_file, _file_name(slug), path)
        for norm in norms:
            put_path(self._by_name, norm, path)

    def remove(self, path: str) -> None:
        """Forget one note (no-op when absent)."""
        if path not in self._keys:
            return
        note_id, norms = self._keys.pop(path)
        slug = self._slug.pop(path)
        del self.scope[path]
        discard_path(self._by_id, note_id, path)
        discard_path(self._by_fold, _fold(note_id), path)
        discard_path(self._by_slug, slug, path)
        discard_path(self._by_file, _file_name(slug), path)
        for norm in norms:
            discard_path(self._by_name, norm, path)

    def keys(self, path: str) -> tuple[set[str], set[str]]:
        """The lower-case and normalised keys under which targets may reach `path`."""
        if path not in self._keys:
            return set(), set()
        note_id, norms = self._keys[path]
        lower = {note_id.lower(), *slug_suffixes(self._slug[path])}
        return lower, set(norms)

    def paths_with_id(self, note_id: str) -> set[str]:
        """Every usable note that carries `note_id`."""
        return set(paths_of(self._by_id.get(note_id)))

    def case_twins(self, note_id: str) -> set[str]:
        """Usable notes whose id differs from `note_id` only by case or normalisation."""
        found = self._by_fold.get(_fold(note_id))
        if isinstance(found, str):  # one note, most likely the one asking
            return set() if self._keys[found][0] == note_id else {found}
        return {p for p in paths_of(found) if self._keys[p][0] != note_id}

    def resolve(self, target: str, *, kind: str, scope: str) -> Resolution | list[str]:
        """Resolve a link or reference target written in a note of `scope`.

        Returns:
            The resolution, or the paths of several files whose names match: the linking
            note's folder decides among those (`in_folder`).
        """
        rules = _MARKDOWN_RULES if kind == "markdown" else LINK_RULES
        named = designate(target, partial(self._find, scope=scope), rules=rules, first=True)
        found = named.found
        if len(found) > 1:
            return list(found) if named.rule is NameRule.FILE else Resolution("ambiguous")
        return Resolution("resolved", found[0]) if found else _MISSING

    def in_folder(self, paths: list[str], folder: str) -> Resolution:
        """Among several files of one name, the one in `folder`; else the target is ambiguous."""
        local = [p for p in paths if self._slug[p].rpartition("/")[0] == folder]
        return Resolution("resolved", local[0]) if len(local) == 1 else Resolution("ambiguous")

    def _in_scope(self, paths: Paths | None, scope: str) -> list[str]:
        if paths is None:
            return []
        if isinstance(paths, str):
            return [paths] if self.scope[paths] == scope else []
        return sorted(p for p in paths if self.scope[p] == scope)

    def _find(self, rule: NameRule, key: str, *, scope: str) -> list[str]:
        """The notes of `scope` that `rule` finds under `key`, sorted."""
        if rule is _FILE:
            same_name = self._in_scope(self._by_file.get(key.rpartition("/")[2]), scope)
            return [p for p in same_name if ends_with_path(self._slug[p].lower(), key)]
        return self._in_scope(self._by_rule[rule].get(key), scope)


def _file_name(slug: str) -> str:
    return slug.rpartition("/")[2].lower()


def _fold(note_id: str) -> str:
    if note_id.isascii():
        folded = note_id.lower()
        return note_id if folded == note_id else folded  # most ids: no second string kept
    return unicodedata.normalize("NFKC", note_id).casefold()


def put_path(index: dict[K, Paths], key: K, path: str) -> None:
    """Add `path` under `key`."""
    found = index.get(key)
    if found is None:
        index[key] = path
    elif isinstance(found, str):
        if found != path:
            index[key] = {found, path}
    else:
        found.add(path)


def discard_path(index: dict[K, Paths], key: K, path: str) -> None:
    """Remove `path` from under `key`, if there."""
    found = index.get(key)
    if found == path:
        del index[key]
    elif isinstance(found, set):
        found.discard(path)
        if len(found) == 1:
            index[key] = found.pop()


def paths_of(found: Paths | None) -> tuple[str, ...] | set[str]:
    """The paths of one key's entry (the index's own set: not to be changed)."""
    if found is None:
        return ()
    return (found,) if isinstance(found, str) else found
