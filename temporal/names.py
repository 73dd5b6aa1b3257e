from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

__all__ = ["NameIndex", "Resolution", "normalize_name", "slug_suffixes"]

_SPACES = re.compile(r"\s+")


@functools.lru_cache(maxsize=65_536)
def normalize_name(text: str) -> str:
    """A title or alias as compared: NFKC, lower-case, trimmed, inner whitespace collapsed."""
    return _SPACES.sub(" ", unicodedata.normalize("NFKC", text).lower()).strip()


def slug_suffixes(slug: str) -> list[str]:
    """`a/b/c` -> `c`, `b/c`, `a/b/c`, lower-cased: what a bare file-name link may say."""
    parts = slug.lower().split("/")
    return ["/".join(parts[i:]) for i in range(len(parts) - 1, -1, -1)]


@dataclass(frozen=True, slots=True)
class Resolution:
    """How one link or reference target resolved: `resolved`, `ambiguous` or `missing`."""

    status: str
    path: str | None = None


_MISSING = Resolution("missing")


class NameIndex:
    """Ids, slugs, file names, titles and aliases of the usable notes, for link resolution.

    A target resolves, inside the linking note's scope, by exact id, then slug,
    then file name (the linking note's own folder wins among several), then
    normalised title or alias; the first rule that finds anything decides.
    """

    def __init__(self) -> None:
        self.scope: dict[str, str] = {}
        self._by_id: dict[str, set[str]] = {}
        self._by_slug: dict[str, set[str]] = {}
        self._by_file: dict[str, set[str]] = {}
        self._by_name: dict[str, set[str]] = {}
        self._by_fold: dict[str, set[str]] = {}
        self._slug: dict[str, str] = {}
        self._keys: dict[str, tuple[str, tuple[str, ...]]] = {}

    def add(self, path: str, *, id: str, slug: str, scope: str, names: Iterable[str]) -> None:
        """Index one usable note."""
        norms = tuple(sorted({normalize_name(n) for n in names} - {""}))
        self.scope[path] = scope
        self._slug[path] = slug
        self._keys[path] = (id, norms)
        self._by_id.setdefault(id, set()).add(path)
        self._by_fold.setdefault(_fold(id), set()).add(path)
        self._by_slug.setdefault(slug, set()).add(path)
        for suffix in slug_suffixes(slug):
            self._by_file.setdefault(suffix, set()).add(path)
        for norm in norms:
            self._by_name.setdefault(norm, set()).add(path)

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
        for suffix in slug_suffixes(slug):
            _discard(self._by_file, suffix, path)
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
        return self._by_id.get(note_id, set())

    def case_twins(self, note_id: str) -> set[str]:
        """Usable notes whose id differs from `note_id` only by case or normalisation."""
        return {p for p in self._by_fold.get(_fold(note_id), set()) if self._keys[p][0] != note_id}

    def resolve(self, target: str, *, kind: str, scope: str, from_path: str) -> Resolution:
        """Resolve a link or reference target written in the note at `from_path`."""
        nfc = unicodedata.normalize("NFC", target)
        if kind == "markdown":
            return self._pick(self._by_slug.get(nfc), scope)
        for found in (self._by_id.get(target), self._by_slug.get(nfc)):
            result = self._pick(found, scope)
            if result is not _MISSING:
                return result
        by_file = self._in_scope(self._by_file.get(nfc.lower()), scope)
        if by_file:
            if len(by_file) > 1:
                folder = from_path.rpartition("/")[0]
                local = [p for p in by_file if self._slug[p].rpartition("/")[0] == folder]
                if len(local) == 1:
                    return Resolution("resolved", local[0])
            return _one_or_ambiguous(by_file)
        return self._pick(self._by_name.get(normalize_name(target)), scope)

    def _in_scope(self, paths: set[str] | None, scope: str) -> list[str]:
        if not paths:
            return []
        return sorted(p for p in paths if self.scope[p] == scope)

    def _pick(self, paths: set[str] | None, scope: str) -> Resolution:
        found = self._in_scope(paths, scope)
        return _one_or_ambiguous(found) if found else _MISSING


def _fold(note_id: str) -> str:
    return unicodedata.normalize("NFKC", note_id).casefold()


def _one_or_ambiguous(paths: list[str]) -> Resolution:
    return Resolution("resolved", paths[0]) if len(paths) == 1 else Resolution("ambiguous")


def _discard(index: Mapping[str, set[str]], key: str, path: str) -> None:
    bucket = index.get(key)
    if bucket is not None:
        bucket.discard(path)
        if not bucket:
            del index[key]  # type: ignore[attr-defined]
