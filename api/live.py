"""Live updates: the snapshot events of `subscription { snapshots }`, followed from the state file.

Events come from the commits the state file holds, not from this process's reconciles: each
reconcile leaves a log entry per commit in the file (`temporal.commits`: its instant, the digests
it leaves, the changed ids per scope), and a `Feed` reads the entries after the last generation
it saw. So every process serving one state file (each worker of `--workers N`) sends the same
events, whichever process reconciled. While it has subscribers the feed also asks its services
to freshen (as a query would: a watched vault costs nothing when quiet) every `interval`
seconds, and a reconcile of its own process wakes it at once.

Each subscription has a bounded queue of events: a client that stops reading fills it and is
dropped (its connection aborted), never buffered without end. A failed reconcile leaves the
subscriptions open; their next events say `index_stale`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import anyio.to_thread

from almanac import temporal
from almanac.api.services import Services, now_us
from almanac.vault import AlmanacError

__all__ = ["EVENT_IDS", "Feed", "SnapshotEvent", "Subscription"]

log = logging.getLogger("almanac")

EVENT_IDS = 100  # ids an event lists at most (the contract's)
_KEPT = 64  # recent commits kept for a subscription that read its state just before them


@dataclass(frozen=True, slots=True)
class SnapshotEvent:
    """One event of a subscription: a commit as the subscriber's scopes see it."""

    snapshot: str
    previous: str | None
    committed_at: str
    changed_count: int
    changed: tuple[str, ...]
    truncated: bool
    degraded: tuple[str, ...]


class Subscription:
    """One subscriber's scopes, where it stands, and its bounded queue of events."""

    def __init__(
        self,
        scopes: Sequence[str],
        *,
        snapshot: str,
        generation: int,
        queue_size: int,
        drop: Callable[[], None] | None,
    ) -> None:
        self.scopes = tuple(scopes)
        self.snapshot = snapshot
        self.generation = generation
        self.dropped = False
        self._queue: asyncio.Queue[SnapshotEvent] = asyncio.Queue(queue_size)
        self._drop = drop

    def offer(self, event: SnapshotEvent) -> None:
        """Queue `event`; a full queue (the client stopped reading) drops the subscriber."""
        if self.dropped:
            return
        try:
            self._queue.put_nowait(event)
        except asyncio.QueueFull:
            self.dropped = True
            log.warning("A subscriber stopped reading (%d events queued): dropped", self.queued)
            if self._drop is not None:
                self._drop()

    @property
    def queued(self) -> int:
        """Events waiting to be sent."""
        return self._queue.qsize()

    async def next(self) -> SnapshotEvent:
        """The next event.

        Raises:
            ConnectionAbortedError: the subscriber was dropped.
        """
        if self.dropped:
            raise ConnectionAbortedError("The subscriber stopped reading")
        return await self._queue.get()


class Feed:
    """Follows the state file's commits and hands each subscription its events."""

    def __init__(self, services: Services, *, interval: float, queue_size: int) -> None:
        self.services = services
        self.interval = interval
        self.queue_size = queue_size
        self.stale = False
        self._subscriptions: set[Subscription] = set()
        self._seen = 0
        self._recent: deque[temporal.Commit] = deque(maxlen=_KEPT)
        self._wake: asyncio.Event | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._task: asyncio.Task[None] | None = None

    @property
    def count(self) -> int:
        """Open subscriptions."""
        return len(self._subscriptions)

    def start(self) -> None:
        """Begin following (in the running event loop)."""
        self._loop = asyncio.get_running_loop()
        self._wake = asyncio.Event()
        self.services.reconcile_listeners.append(self._nudge)
        self._task = asyncio.create_task(self._follow(), name="almanac-feed")

    async def stop(self) -> None:
        """Stop following."""
        if self._nudge in self.services.reconcile_listeners:
            self.services.reconcile_listeners.remove(self._nudge)
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    async def subscribe(
        self, scopes: Sequence[str], *, drop: Callable[[], None] | None
    ) -> tuple[Subscription, SnapshotEvent]:
        """A new subscription to `scopes`, and its first event (the current snapshot).

        Args:
            drop: Ends the subscriber's connection (called when its queue overflows).
        """
        stale = await self._freshen()
        latest = await anyio.to_thread.run_sync(self._latest)
        snapshot = self._snapshot(latest.digests, scopes)
        subscription = Subscription(
            scopes,
            snapshot=snapshot,
            generation=latest.generation,
            queue_size=self.queue_size,
            drop=drop,
        )
        at = latest.at_us or self.services.freshness.indexed_at or now_us()
        first = SnapshotEvent(
            snapshot, None, temporal.format_instant(at), 0, (), False, _degraded(stale)
        )
        self._subscriptions.add(subscription)
        for commit in self._recent:  # committed between the read above and now: not missed
            self._deliver(subscription, commit)
        return subscription, first

    def unsubscribe(self, subscription: Subscription) -> None:
        """Forget `subscription`."""
        self._subscriptions.discard(subscription)

    async def _follow(self) -> None:
        assert self._wake is not None
        while True:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), self.interval)
            self._wake.clear()
            if not self._subscriptions:
                continue
            self.stale = await self._freshen()
            try:
                found = await anyio.to_thread.run_sync(self._read)
            except AlmanacError:
                self.stale = True
                continue
            except Exception:  # the feed goes on: its subscribers wait for the next commit
                log.exception("Reading the state file's commits failed")
                continue
            for commit in found:
                self._seen = max(self._seen, commit.generation)
                self._recent.append(commit)
                for subscription in list(self._subscriptions):
                    self._deliver(subscription, commit)

    async def _freshen(self) -> bool:
        """Bring the index up to date; True when that failed (the index is stale)."""
        try:
            await self.services.ensure_fresh(now_us=now_us())
        except AlmanacError:
            return True
        return False

    def _nudge(self, result: temporal.ReconcileResult | None, seconds: float) -> None:
        """A reconcile of this process ended (called from its thread): a commit wakes the feed."""
        wake, loop = self._wake, self._loop
        if result is not None and result.changed and loop is not None and wake is not None:
            with contextlib.suppress(RuntimeError):  # the loop is closing
                loop.call_soon_threadsafe(wake.set)

    def _read(self) -> list[temporal.Commit]:
        with self.services.store.read() as reader:
            return temporal.commits(reader, after=self._seen)

    def _latest(self) -> temporal.Commit:
        with self.services.store.read() as reader:
            return temporal.latest_commit(reader)

    def _snapshot(self, digests: Mapping[str, int], scopes: Sequence[str]) -> str:
        return temporal.snapshot_id(digests, scopes, self.services.store.fingerprint)

    def _deliver(self, subscription: Subscription, commit: temporal.Commit) -> None:
        if commit.generation <= subscription.generation:
            return
        subscription.generation = commit.generation
        snapshot = self._snapshot(commit.digests, subscription.scopes)
        if snapshot == subscription.snapshot:
            return  # nothing this subscriber may read changed: it hears nothing
        changed: tuple[str, ...] = ()
        count, truncated = 0, True
        if commit.changes is not None:
            parts = [commit.changes[s] for s in subscription.scopes if s in commit.changes]
            count = sum(part.count for part in parts)
            ids = sorted({i for part in parts for i in part.ids})
            changed = tuple(ids[:EVENT_IDS])
            truncated = len(ids) > EVENT_IDS or any(p.count > len(p.ids) for p in parts)
        at = commit.at_us or now_us()
        event = SnapshotEvent(
            snapshot,
            subscription.snapshot,
            temporal.format_instant(at),
            count,
            changed,
            truncated,
            _degraded(self.stale),
        )
        subscription.snapshot = snapshot
        subscription.offer(event)


def _degraded(stale: bool) -> tuple[str, ...]:
    return ("index_stale",) if stale else ()
