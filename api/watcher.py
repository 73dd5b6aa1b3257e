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

from vault import is_ignored_name

__all__ = ["Watcher"]

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
except ImportError:  # not Linux: the service scans instead
    INotify = None


class Watcher:
    """Recursive inotify watches over a vault's folders."""

    def __init__(self, root: str) -> None:
        if INotify is None:
            raise OSError("inotify is not available on this system")
        self.root = os.path.realpath(root)
        self._inotify = INotify()
        self._folders: dict[int, str] = {}
        self._watch(self.root, "")

    def close(self) -> None:
        """Stop watching."""
        self._inotify.close()

    def drain(self) -> set[str] | None:
        """Vault-relative note paths changed since the last call; None: scan everything."""
        changed: set[str] = set()
        rescan = False
        for event in self._inotify.read(timeout=0):
            if event.mask & flags.Q_OVERFLOW or event.mask & (flags.DELETE_SELF | flags.MOVE_SELF):
                rescan = True
                continue
            folder = self._folders.get(event.wd)
            if folder is None or is_ignored_name(event.name):
                continue
            if event.mask & flags.ISDIR:
                if event.mask & (flags.CREATE | flags.MOVED_TO):
                    self._watch(
                        os.path.join(self.root, folder, event.name), folder + event.name + "/"
                    )
                rescan = True
            elif event.name.endswith(".md"):
                changed.add(folder + event.name)
        return None if rescan else changed

    def _watch(self, fspath: str, prefix: str) -> None:
        wd = self._inotify.add_watch(fspath, _MASK)
        self._folders[wd] = prefix
        with os.scandir(fspath) as entries:
            for entry in entries:
                if is_ignored_name(entry.name):
                    continue
                if entry.is_symlink():
                    raise OSError(f"Symlink {prefix + entry.name!r} in the vault: scanning instead")
                if entry.is_dir(follow_symlinks=False):
                    self._watch(entry.path, prefix + entry.name + "/")
