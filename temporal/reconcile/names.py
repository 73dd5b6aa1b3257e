from __future__ import annotations

import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from functools import partial

from temporal.store import (
    LINK_RULES,
    NameRule,
    designate,
    ends_with_path,
    normalize_name,
    slug_suffixes,
)

__all__ = ["NameIndex", "Resolution"]

_Paths = str | set[str]


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
        self._by_id: dict[str, _Paths] = {}
        self._by_slug: dict[str, _Paths] = {}
        self._by_file: dict[str, _Paths] = {}
        self._by_name: dict[str, _Paths] = {}
        self._by_fold: dict[str, _Paths] = {}
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
        _put(self._by_id, id, path)
        _put(self._by_fold, _fold(id), path)
        _put(self._by_slug, slug, path)
        _put(self._by_file, _file_name(slug), path)
        for norm in norms:
            _put(self._by_name, norm, path)

    def remove(self, path: str) -> None:
        """Forget one note (no-op when absent)."""
        if path not in self._keys:
            return
        note_id, norms = self._keys.pop(path)
        slug = self._slug.pop(path)
        del self.scope[path]
        _discard(self._by_id, note_id, path)
        _discard(self._by_fold, _fold(note_id), path)
        _discard(self._by_slug, slug, path)
        _discard(self._by_file, _file_name(slug), path)
        for norm in norms:
            _discard(self._by_name, norm, path)

    def keys(self, path: str) -> tuple[set[str], set[str]]:
        """The lower-case and normalised keys under which targets may reach `path`."""
        if path not in self._keys:
            return set(), set()
        note_id, norms = self._keys[path]
        lower = {note_id.lower(), *slug_suffixes(self._slug[path])}
        return lower, set(norms)

    def paths_with_id(self, note_id: str) -> set[str]:
        """Every usable note that carries `note_id`."""
        return _members(self._by_id.get(note_id))

    def case_twins(self, note_id: str) -> set[str]:
        """Usable notes whose id differs from `note_id` only by case or normalisation."""
        found = self._by_fold.get(_fold(note_id))
        if isinstance(found, str):  # one note, most likely the one asking
            return set() if self._keys[found][0] == note_id else {found}
        return {p for p in _members(found) if self._keys[p][0] != note_id}

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

    def _in_scope(self, paths: _Paths | None, scope: str) -> list[str]:
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


def _put(index: dict[str, _Paths], key: str, path: str) -> None:
    found = index.get(key)
    if found is None:
        index[key] = path
    elif isinstance(found, str):
        if found != path:
            index[key] = {found, path}
    else:
        found.add(path)


def _members(found: _Paths | None) -> set[str]:
    if found is None:
        return set()
    return {found} if isinstance(found, str) else set(found)


def _discard(index: dict[str, _Paths], key: str, path: str) -> None:
    found = index.get(key)
    if found == path:
        del index[key]
    elif isinstance(found, set):
        found.discard(path)
        if len(found) == 1:
            index[key] = found.pop()
