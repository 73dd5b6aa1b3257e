"""The vault's attachments (every file that is not a note): what a link may resolve to when no
note answers it, as Obsidian resolves `![[diagram.png]]`."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from almanac.temporal.reconcile.names import Resolution
from almanac.temporal.store import NameRule, ends_with_path, slug_suffixes

__all__ = ["Attachments", "Files", "attachment_keys"]


@dataclass(frozen=True, slots=True)
class Files:
    """The attachments of a scope whose path ends with a link's target: the linking note's
    folder picks among several (`Attachments.pick`)."""

    paths: tuple[str, ...]


def attachment_keys(path: str) -> list[str]:
    """The lower-case keys under which link targets may reach an attachment (as `targets`
    rows keep them): its file name and every longer tail of its path."""
    return slug_suffixes(NameRule.FILE.key(path))


class Attachments:
    """Attachment paths by scope and lower-case file name; changed in place by a plan (a failed
    reconcile loads memory again)."""

    def __init__(self) -> None:
        self.scope: dict[str, str] = {}
        self._lower: dict[str, str] = {}  # path -> NFC lower-case path
        self._by_name: dict[str, set[str]] = {}

    def __contains__(self, path: object) -> bool:
        return path in self.scope

    def __iter__(self) -> Iterator[str]:
        return iter(self.scope)

    def __len__(self) -> int:
        return len(self.scope)

    def add(self, path: str, scope: str) -> None:
        """List one attachment."""
        lower = NameRule.FILE.key(path)
        self.scope[path] = scope
        self._lower[path] = lower
        self._by_name.setdefault(lower.rpartition("/")[2], set()).add(path)

    def remove(self, path: str) -> None:
        """Forget one attachment (no-op when absent)."""
        if path not in self.scope:
            return
        del self.scope[path]
        name = self._lower.pop(path).rpartition("/")[2]
        paths = self._by_name[name]
        paths.discard(path)
        if not paths:
            del self._by_name[name]

    def update(self, added: Iterable[tuple[str, str]], removed: Iterable[str]) -> None:
        """Add (path, scope) pairs and remove paths."""
        for path in removed:
            self.remove(path)
        for path, scope in added:
            self.add(path, scope)

    def find(self, target: str, *, scope: str) -> Files | None:
        """The attachments of `scope` a wiki link target may mean: its whole path, or a tail
        of it at a `/` (`lucide-send.svg`, `Attachments/lucide-send.svg`), case-insensitive."""
        wanted = NameRule.FILE.key(target)
        named = self._by_name.get(wanted.rpartition("/")[2])
        if not named:
            return None
        found = sorted(
            p for p in named if self.scope[p] == scope and ends_with_path(self._lower[p], wanted)
        )
        return Files(tuple(found)) if found else None

    def pick(self, files: Files, folder: str) -> Resolution:
        """One of several attachments of a name, as Obsidian picks: the one in the linking
        note's folder, else the one with the shortest path (fewest folders); a tie is
        ambiguous."""
        paths = files.paths
        if len(paths) > 1:
            local = [p for p in paths if p.rpartition("/")[0] == folder]
            if len(local) == 1:
                paths = tuple(local)
            else:
                depth = min(p.count("/") for p in paths)
                paths = tuple(p for p in paths if p.count("/") == depth)
        if len(paths) == 1:
            return Resolution("file", paths[0])
        return Resolution("ambiguous")
