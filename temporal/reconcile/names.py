from __future__ import annotations

import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass

__all__ = ["NameIndex", "Resolution", "normalize_name", "slug_suffixes"]

_Paths = str | set[str]


def normalize_name(text: str) -> str:
    """A title or alias as compared: NFKC, lower-case, trimmed, inner whitespace collapsed."""
    if not text.isascii():
        text = unicodedata.normalize("NFKC", text)
    return " ".join(text.lower().split())


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
        # Key -> one path, or a set of paths when several share the key (rare): no set per note.
        self._by_id: dict[str, _Paths] = {}
        self._by_slug: dict[str, _Paths] = {}
        self._by_file: dict[str, _Paths] = {}
        self._by_name: dict[str, _Paths] = {}
        self._by_fold: dict[str, _Paths] = {}
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
        nfc = unicodedata.normalize("NFC", target)
        if kind == "markdown":
            return self._pick(self._by_slug.get(nfc), scope)
        for found in (self._by_id.get(target), self._by_slug.get(nfc)):
            result = self._pick(found, scope)
            if result is not _MISSING:
                return result
        wanted = nfc.lower()
        same_name = self._in_scope(self._by_file.get(wanted.rpartition("/")[2]), scope)
        by_file = [p for p in same_name if _ends_with_path(self._slug[p].lower(), wanted)]
        if len(by_file) > 1:
            return by_file
        if by_file:
            return Resolution("resolved", by_file[0])
        return self._pick(self._by_name.get(normalize_name(target)), scope)

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

    def _pick(self, paths: _Paths | None, scope: str) -> Resolution:
        found = self._in_scope(paths, scope)
        return _one_or_ambiguous(found) if found else _MISSING


def _file_name(slug: str) -> str:
    return slug.rpartition("/")[2].lower()


def _ends_with_path(slug: str, target: str) -> bool:
    """`a/b/c` ends with `c` and `b/c`, not with `/c` or `x/b/c`."""
    return slug == target or slug.endswith("/" + target)


def _fold(note_id: str) -> str:
    if note_id.isascii():
        return note_id.lower()
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


def _one_or_ambiguous(paths: list[str]) -> Resolution:
    return Resolution("resolved", paths[0]) if len(paths) == 1 else Resolution("ambiguous")


def _discard(index: dict[str, _Paths], key: str, path: str) -> None:
    found = index.get(key)
    if found == path:
        del index[key]
    elif isinstance(found, set):
        found.discard(path)
        if len(found) == 1:
            index[key] = found.pop()
