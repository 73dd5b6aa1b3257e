"""Which vault files changed, from the kernel's own queue of events.

inotify queues an event when the changing system call completes, so draining
the queue without blocking at the moment a query arrives yields every change
that finished before it: strict freshness at the cost of one `read`. A
watcher with its own thread and debounce (watchfiles) cannot promise that
without a round trip through that thread. Anything the watcher cannot follow
exactly (queue overflow, a folder created, moved or deleted, a symlink, no
watches left) makes it answer `None`: scan everything.
"""

from __future__ import annotations

import os

from almanac.vault import is_ignored_name

__all__ = ["FileWatch", "Watcher"]

try:
    from inotify_simple import INotify, flags  # type: ignore[import-untyped]

    _MASK = (
        flags.CREATE
        | flags.DELETE
        | flags.MODIFY
        | flags.MOVED_FROM
        | flags.MOVED_TO
        | flags.CLOSE_WRITE
        | flags.ATTRIB
        | flags.DELETE_SELF
        | flags.MOVE_SELF
    )
    _FILE_MASK = flags.MODIFY | flags.DELETE_SELF | flags.MOVE_SELF  # a commit writes (MODIFY)
    _GONE = flags.DELETE_SELF | flags.MOVE_SELF | flags.IGNORED
except ImportError:  # not Linux: the service scans instead
    INotify = None


class Watcher:
    """Recursive inotify watches over a vault's folders.

    `broken` turns true when the watcher can no longer follow the vault exactly
    (the vault folder itself moved or vanished, a symlink appeared, no watches
    are left): its owner then scans instead, for good.
    """

    def __init__(self, root: str) -> None:
        if INotify is None:
            raise OSError("inotify is not available on this system")
        self.root = os.path.realpath(root)
        self.broken = False
        self.drains = 0  # reads of the queue (tests: a server reads it only when it has events)
        self._inotify = INotify()
        self._fileno = int(self._inotify.fileno())
        self._folders: dict[int, str] = {}
        self._root_wd = self._watch(self.root, "")

    def close(self) -> None:
        """Stop watching."""
        self._inotify.close()

    def fileno(self) -> int:
        """The inotify descriptor's number: readable while changes wait to be drained (kept,
        so that it can be asked for after another thread closed it)."""
        return self._fileno

    def drain(self) -> set[str] | None:
        """Vault-relative file paths (notes and attachments) changed since the last call; None:
        scan everything."""
        if self.broken:
            return None
        changed: set[str] = set()
        rescan = False
        self.drains += 1
        try:
            events = self._inotify.read(timeout=0)
        except OSError:
            self.broken = True
            return None
        for event in events:
            if event.mask & flags.Q_OVERFLOW:
                rescan = True
                continue
            if event.wd == self._root_wd and event.mask & (
                flags.DELETE_SELF | flags.MOVE_SELF | flags.IGNORED
            ):
                self.broken = True
                return None
            folder = self._folders.get(event.wd)
            if folder is None or is_ignored_name(event.name):
                continue
            fspath = os.path.join(self.root, folder, event.name)
            if event.mask & flags.ISDIR:
                rescan = True
                if event.mask & (flags.CREATE | flags.MOVED_TO):
                    self._watch_new(fspath, folder + event.name + "/")
            elif event.mask & (flags.CREATE | flags.MOVED_TO) and os.path.islink(fspath):
                self.broken = True  # symlinks are followed by scans only
                return None
            else:  # a note, or an attachment that links may resolve to
                changed.add(folder + event.name)
        return None if rescan or self.broken else changed

    def _watch_new(self, fspath: str, prefix: str) -> None:
        try:
            self._watch(fspath, prefix)
        except FileNotFoundError:
            pass  # gone again already; the rescan that follows sees what is there
        except OSError:
            self.broken = True

    def _watch(self, fspath: str, prefix: str) -> int:
        wd: int = self._inotify.add_watch(fspath, _MASK)
        self._folders[wd] = prefix
        with os.scandir(fspath) as entries:
            for entry in entries:
                if is_ignored_name(entry.name):
                    continue
                if entry.is_symlink():
                    raise OSError(f"Symlink {prefix + entry.name!r} in the vault: scanning instead")
                if entry.is_dir(follow_symlinks=False):
                    self._watch(entry.path, prefix + entry.name + "/")
        return wd


class FileWatch:
    """inotify watches on a few files (a database and its write-ahead log): readable
    (`fileno`) once any of them was written since the last `drain`. `broken` turns true once
    one of them was deleted, moved or replaced, or could not be watched: from then on nothing
    says when the new file is written, and its owner must look every time."""

    def __init__(self, paths: list[str]) -> None:
        if INotify is None:
            raise OSError("inotify is not available on this system")
        self.broken = False
        self._inotify = INotify()
        for path in paths:
            self._inotify.add_watch(path, _FILE_MASK)

    def close(self) -> None:
        """Stop watching."""
        self._inotify.close()

    def fileno(self) -> int:
        """The inotify descriptor: readable while writes wait to be drained."""
        return int(self._inotify.fileno())

    def drain(self) -> None:
        """Read what is queued (`broken` if it says a file went away)."""
        try:
            events = self._inotify.read(timeout=0)
        except OSError:
            self.broken = True
            return
        if any(event.mask & _GONE for event in events):
            self.broken = True
