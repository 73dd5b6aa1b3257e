"""What the event loop already knows has not changed.

A freshness check drains the vault watcher's queue, and a poll's tag holds while the state
database's version stays: a `read` (an `ioctl`) and a read transaction (two `fcntl` locks) per
request, most of an unchanged poll's cost on this kind of machine. A `Wakeup` puts the
watcher's descriptor in the event loop's own `epoll` instead: while it is lowered, nothing has
been queued since the last drain, and looking costs nothing.

Why that is as strict as draining at the request: the kernel queues an event before the
writing system call returns, so before the writer (or whoever it told) can send the request
that must see it. The descriptor was readable before that request's bytes arrived: the
`epoll_wait` that reports the bytes reports the descriptor too, or an earlier one did, and its
callback runs in that iteration of the loop, while the request's task is only created there and
takes its first step in the next. A write that finished while a request was already on its way
is concurrent with it, and may be seen or not, as before. A commit to the state database is
the one write whose effect comes after its event: SQLite writes the log, syncs it, and only
then makes the commit visible (`StateVersion` remembers no version read meanwhile).
"""

from __future__ import annotations

import asyncio
import logging
import os

import temporal
from vault.watcher import FileWatch

__all__ = ["StateVersion", "Wakeup"]

log = logging.getLogger("almanac")


class Wakeup:
    """Whether a descriptor has become readable since `arm`, as the event loop's `epoll` saw.

    It watches its own duplicate of the descriptor, so that the owner may close the original
    from any thread without its number being reused under the loop. Every call is made on the
    loop's thread. `raised` is true until the first `arm`, and whenever the descriptor became
    readable: the owner then drains it (after `arm`, so that what comes next raises it again).
    """

    def __init__(self, loop: asyncio.AbstractEventLoop, fileno: int) -> None:
        self._loop = loop
        self._fileno = os.dup(fileno)
        self.raised = True

    def arm(self) -> None:
        """Lower it, and raise it again when the descriptor next becomes readable."""
        if self.raised and self._fileno >= 0:
            self.raised = False
            self._loop.add_reader(self._fileno, self._raise)

    def close(self) -> None:
        """Stop watching, for good (`raised` stays true)."""
        if self._fileno < 0:
            return
        if not self.raised:
            self._loop.remove_reader(self._fileno)
        self.raised = True
        os.close(self._fileno)
        self._fileno = -1

    def _raise(self) -> None:
        self._loop.remove_reader(self._fileno)
        self.raised = True


class StateVersion:
    """The state database's version (`Store.version`, which moves with every commit of any
    process), read again only when the event loop saw the database or its log written since
    it was last read (`attach`), or `forget` was called (a reconcile of this process ended).

    A commit writes its log (the event) before it makes the commit visible, so a version read
    at the event may be the one before it, and no event follows: it is remembered only when
    read with no writer under way (`Store.version_at_rest`), else read again next time.
    Unattached, every `read` reads it. `reads` counts the reads of the database's."""

    def __init__(self, store: temporal.Store) -> None:
        self.store = store
        self.reads = 0
        self._known: int | None = None
        self._forgotten = 0  # `forget` calls: a read that spans one is not remembered
        self._watch: FileWatch | None = None
        self._woken: Wakeup | None = None

    def attach(self, loop: asyncio.AbstractEventLoop | None) -> None:
        """Watch the state files from `loop` (`read` is then called on its thread only); None:
        stop watching (on that thread)."""
        self.close()
        if loop is None:
            return
        try:
            self._watch = FileWatch(self.store.files())
        except OSError as exc:
            log.warning("State files not watched (%s); every poll reads their version", exc)
            return
        self._woken = Wakeup(loop, self._watch.fileno())

    def close(self) -> None:
        """Stop watching (on the loop's thread): every `read` reads again."""
        if self._woken is not None:
            self._woken.close()
            self._woken = None
        if self._watch is not None:
            self._watch.close()
            self._watch = None

    def forget(self) -> None:
        """The next `read` reads (from any thread)."""
        self._forgotten += 1
        self._known = None

    def read(self) -> int:
        """The version, as of now.

        Raises:
            IndexUnavailable: the database cannot be read.
        """
        woken, known = self._woken, self._known
        if woken is not None and not woken.raised and known is not None:
            return known
        self._known = None
        self.reads += 1
        if woken is None or self._watch is None:
            return self.store.version()
        woken.arm()  # before draining and reading: a write after them raises it again
        self._watch.drain()
        if self._watch.broken:
            log.warning("The state files were moved or replaced; every poll reads them")
            self.close()
            return self.store.version()
        forgotten = self._forgotten
        version = self.store.version_at_rest()
        if version is None:  # a commit under way: read it as it is, and again next time
            return self.store.version()
        if forgotten == self._forgotten:  # no reconcile of this process ended meanwhile
            self._known = version
        return version
