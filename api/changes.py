"""What may have changed since the last look, in one system call.

A freshness check used to drain the vault watcher's queue (an `ioctl` and a `read`), and a
poll's tag holds only while the state database's version stays (`PRAGMA data_version`: a read
transaction, two `fcntl` locks): most of an unchanged poll's cost on this kind of machine.
`Readiness` puts the watcher's inotify descriptor, and a second one on the state files
(`vault.watcher.FileWatch`), in an `epoll` set of its own, and asks it without waiting: one
`epoll_wait` says whether anything was queued on either. It asks the kernel at the moment of
the check, so it is exactly as strict as draining then: a change whose system call returned
before the check was queued before it.

A commit to the state database is the one write whose effect comes after its event: SQLite
writes the log, syncs it, and only then makes the commit visible. So `StateVersion` remembers
a version only when it was read with no writer under way (`Store.version_at_rest`).
"""

from __future__ import annotations

import logging
import select

from almanac import temporal
from almanac.vault.watcher import FileWatch

__all__ = ["Readiness", "StateVersion"]

log = logging.getLogger("almanac")


class Readiness:
    """An `epoll` set of a few descriptors, asked without waiting. A descriptor closed by its
    owner leaves the set by itself (the kernel's rule); `ready` is safe from any thread."""

    def __init__(self) -> None:
        self._epoll = select.epoll()

    def add(self, fileno: int) -> None:
        """Watch `fileno` for something to read."""
        self._epoll.register(fileno, select.EPOLLIN)

    def ready(self) -> set[int]:
        """The descriptors with something to read now."""
        return {fileno for fileno, _ in self._epoll.poll(0)}

    def close(self) -> None:
        """Stop watching."""
        self._epoll.close()


class StateVersion:
    """The state database's version (`Store.version`, which moves with every commit of any
    process), remembered from one `read` to the next while nothing wrote the state files:
    `look` is told at every freshness check whether they were written (the descriptor is
    readable), and `forget` after each reconcile of this process. Without the files watched
    (no inotify, or they were moved), every `read` reads. `reads` counts the reads of the
    database's; every `read` follows a freshness check of its request."""

    def __init__(self, store: temporal.Store) -> None:
        self.store = store
        self.reads = 0
        self._known: int | None = None
        self._forgotten = 0  # `forget` calls: a read that spans one is not remembered
        self._watch: FileWatch | None = None
        try:
            self._watch = FileWatch(store.files())
        except OSError as exc:
            log.warning("State files not watched (%s); every poll reads their version", exc)

    def fileno(self) -> int | None:
        """The descriptor that is readable once the state files were written, if watched."""
        return None if self._watch is None else self._watch.fileno()

    def look(self, written: bool) -> None:
        """A freshness check's news: whether the state files were written since the last."""
        if self._watch is None:
            self.forget()
            return
        if not written:
            return
        self._watch.drain()
        if self._watch.broken:
            log.warning("The state files were moved or replaced; every poll reads them")
            self.close()
        self.forget()

    def forget(self) -> None:
        """The next `read` reads (from any thread)."""
        self._forgotten += 1
        self._known = None

    def read(self) -> int:
        """The version, as of the last freshness check.

        Raises:
            IndexUnavailable: the database cannot be read.
        """
        known = self._known
        if known is not None:
            return known
        self.reads += 1
        forgotten = self._forgotten
        version = self.store.version_at_rest()
        if version is None:  # a commit under way: read it as it is, and again next time
            return self.store.version()
        if forgotten == self._forgotten and self._watch is not None:
            self._known = version
        return version

    def close(self) -> None:
        """Stop watching: every `read` reads again."""
        if self._watch is not None:
            self._watch.close()
            self._watch = None
        self._known = None
