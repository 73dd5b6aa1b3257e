from __future__ import annotations

import asyncio
import gc
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime

import anyio.to_thread

from almanac import temporal
from almanac.api.changes import Readiness, StateVersion
from almanac.api.heap import release_free_memory
from almanac.api.settings import Settings
from almanac.graph import CompactFile, CompactStamp, Edge, Projection, ProjectionView
from almanac.temporal import (
    FINGERPRINT,
    NodeRow,
    Reconciler,
    ReconcileResult,
    Store,
    WriterLock,
    from_datetime,
)
from almanac.vault import AlmanacError, GraphWarming, IndexUnavailable
from almanac.vault.watcher import Watcher

__all__ = ["Freshness", "Services", "now_us"]

log = logging.getLogger("almanac")

_KEPT_VIEWS = 4  # published graph versions kept for requests whose read began before the last
_PUBLISH_WAIT_S = 5.0


@dataclass(frozen=True, slots=True)
class Freshness:
    """When the vault was last checked and when the index last changed (microseconds)."""

    scanned_at: int
    indexed_at: int


class Services:
    """The store, its reconciler and the watcher, shared by every request of one app.

    `ensure_fresh` is what every query awaits first. Concurrent callers share
    one reconcile: a caller waits only for a reconcile that *started* after it
    arrived, so it sees every change that finished before it arrived, and a
    burst of callers costs one reconcile, not one each.

    Each reconcile also updates the graph projection and publishes an immutable view of it
    under the *generation* it committed (a counter in the state database). A request pairs its
    read transaction with the view of the generation that transaction reads (`view_for`), so
    (snapshot, graph) always match: a request whose read began just after a commit waits the
    few milliseconds until that commit's view is published, and one that began before keeps
    the previous view, which is never modified.

    Counters are public, for tests and a future `/metrics`: `arrivals` (queries that awaited
    `ensure_fresh`), `reconciles` (reconciles begun, failed ones included), `view_waits`
    (requests that waited for a reconcile to publish their graph view) and `follows`.
    """

    def __init__(self, settings: Settings, store: Store, reconciler: Reconciler) -> None:
        self.settings = settings
        self.store = store
        self.reconciler = reconciler
        self.watcher: Watcher | None = None
        self.state_version = StateVersion(store)
        # The watcher's descriptor and the state files': one look at both per freshness check.
        self._readiness = Readiness()
        if (state := self.state_version.fileno()) is not None:
            self._readiness.add(state)
        self._lock = asyncio.Lock()
        self._thread_lock = threading.Lock()
        self._arrival_lock = threading.Lock()  # the blocking callers' tickets
        self._fresh_lock = threading.Lock()  # one blocking caller checks freshness at a time
        self.arrivals = 0
        self.reconciles = 0
        self.view_waits = 0
        self.follows = 0  # other processes' commits followed outside a reconcile
        self._covered = 0
        self._pending: set[str] = set()
        self._rescan = True
        self.freshness = Freshness(0, 0)
        self.projection: Projection | None = None
        # Whether reconciles keep the graph projection; a CLI run builds it only if asked.
        self.keeps_graph = True
        self._views: dict[str, ProjectionView] = {}
        self._published = threading.Condition()
        self._applying = False
        # Called (from the reconcile's thread) after each reconcile with its result (None when
        # it failed) and its duration in seconds: metrics, and subscriptions woken by a commit.
        self.reconcile_listeners: list[Callable[[ReconcileResult | None, float], None]] = []
        # While the graph warms up in the background (`warm_graph`), reconcile results wait
        # here to be applied to it; `graph_source` says where it came from ("compact",
        # "database"), for tests and start-up messages.
        self._warming = False
        self._backlog: list[ReconcileResult | None] = []
        self._warmer: threading.Thread | None = None
        self._stamp: CompactStamp | None = None  # the state the projection is of
        self.compact = CompactFile(settings.db_path)  # the graph's rows, for the next start
        self.graph_source = ""

    @classmethod
    def open(
        cls,
        settings: Settings,
        *,
        now_us: int,
        progress: Callable[[int, int], None] | None = None,
        graph: bool = True,
        on_warm: Callable[[str], None] | None = None,
    ) -> Services:
        """Open the state database, start the watcher and reconcile once.

        Args:
            graph: Keep the graph projection with every reconcile (a server): it is loaded in
                the background from the compact file (else built from the database), and
                graph queries wait for it; False leaves it until a request asks for it (a CLI
                run: seconds saved at 100k).
            on_warm: Called by the background load with "before-load" as it begins (where
                tests hold it, to see a server answer before its graph is ready).

        Raises:
            IndexUnavailable: the state database cannot be used.
        """
        # Workers starting together on a new (or outdated) state file make its tables one at
        # a time: SQLite alone would refuse one of them at once (a read upgraded to a write).
        lock = WriterLock(settings.db_path)
        try:
            with lock.held():
                store = Store.open(
                    settings.db_path, fingerprint=settings.config.fingerprint(FINGERPRINT)
                )
        finally:
            lock.close()
        services = cls(settings, store, Reconciler(store, settings.vault, settings.config))
        services.keeps_graph = graph
        if settings.watch:
            try:
                services.watcher = Watcher(str(settings.vault))
                services._readiness.add(services.watcher.fileno())
            except OSError as exc:
                log.warning("File watcher unavailable (%s); every query scans the vault", exc)
        # The graph of the state as found (before the start-up scan changes it) comes from the
        # compact file in the background; the scan's changes wait in the backlog for it.
        found = CompactFile.stamp_of(services.store) if graph else None
        services._warming = graph
        services.reconcile_now(now_us=now_us, progress=progress)
        if graph:
            services._warmer = threading.Thread(
                target=services._warm, args=(found, on_warm), name="almanac-graph", daemon=True
            )
            services._warmer.start()
        return services

    @property
    def watch_mode(self) -> str:
        """How the service learns of vault changes now: `inotify`, or `scan` (every query)."""
        return "inotify" if self.watcher is not None else "scan"

    def wait_graph(self) -> None:
        """Wait until the graph's warm-up at start (if any) has ended."""
        if self._warmer is not None:
            self._warmer.join()

    def close(self) -> None:
        """Release the watcher and the database (once the graph has warmed up, keeping it in
        the compact file for the next start)."""
        if self._warmer is not None:
            self._warmer.join()
        self._keep_compact()
        if self.watcher is not None:
            self.watcher.close()
        self._readiness.close()
        self.state_version.close()
        self.reconciler.lock.close()
        self.store.close()

    def reconcile_now(
        self, *, now_us: int, progress: Callable[[int, int], None] | None = None
    ) -> ReconcileResult:
        """Reconcile synchronously (startup, CLI, tests), then publish the matching graph."""
        with self._thread_lock:
            self.reconciles += 1
            self._set_applying(True)
            began = time.monotonic()
            result: ReconcileResult | None = None
            try:
                try:
                    paths = self._take_changes()
                    result = self.reconciler.reconcile(
                        now_us=now_us, paths=paths, progress=progress
                    )
                except BaseException:
                    self._rescan = True  # what the watcher said is not applied: look at everything
                    self.projection = None  # may have committed: rebuild the graph next time
                    self._stamp = None
                    if self._warming:
                        self._backlog.append(None)
                    raise
                self._rescan = False
                self._note(result, now_us)
                # A reconciler that followed other processes' commits says what they changed,
                # and the graph follows them with its own changes; one that had to load its
                # memory again in full cannot say: the graph is then built again from scratch.
                self._project(None if result.reloaded else result.with_followed())
                self.store.unmap()  # the file pages it read count in RSS while mapped
                if result.changed:
                    release_free_memory()
                return result
            finally:
                self.state_version.forget()  # it may have committed
                self._set_applying(False)
                for listener in list(self.reconcile_listeners):
                    listener(result, time.monotonic() - began)

    def view_for(self, generation: str, *, deadline: float | None) -> ProjectionView | None:
        """The graph view published for `generation`, waiting while a reconcile publishes it
        or the graph warms up (then until `deadline`).

        Returns None when no view of that generation exists or is on its way (the database
        was written by another process), or the deadline came first.
        """
        limit = time.monotonic() + _PUBLISH_WAIT_S
        if deadline is not None:
            limit = min(limit, deadline)
        with self._published:
            if generation not in self._views and (self._applying or self._warming):
                self.view_waits += 1
            while generation not in self._views:
                until = deadline if self._warming and deadline is not None else limit
                remaining = until - time.monotonic()
                if not (self._applying or self._warming) or remaining <= 0:
                    return None
                self._published.wait(remaining)
            return self._views[generation]

    @property
    def graph_ready(self) -> bool:
        """Whether requests can pair their read with a graph view at once (not warming up)."""
        return self.keeps_graph and not self._warming

    def view_of(self, reader: temporal.Reader, *, deadline: float | None) -> ProjectionView:
        """The graph view of the generation `reader` reads, for a request whose read began
        without one (the graph was warming up, or is not kept: a CLI run builds it now).

        When no published view is of that generation (a reconcile committed a newer one while
        this request read the older), the view is built from `reader` itself: the answer is
        of the request's snapshot, as every other field of it, and never an error.

        Raises:
            GraphWarming: the graph was still warming up when `deadline` came.
        """
        generation = temporal.generation(reader)
        if not self.keeps_graph:
            self.refresh_projection()
        view = self.view_for(generation, deadline=deadline)
        if view is None and self._warming:
            raise GraphWarming("The graph projection is still loading; try again shortly")
        if view is None and self.projection is None:
            self.refresh_projection()  # the warm-up failed: build it here
            view = self.view_for(generation, deadline=deadline)
        if view is None:
            view = Projection.build(reader).view  # this request's own, never published
        return view

    def refresh_projection(self) -> None:
        """Bring the graph projection in step with what the database holds now (and keep
        it): another process's commits are followed (`Reconciler.follow`), else it is built
        again."""
        with self._thread_lock:
            self.keeps_graph = True
            if temporal.generation(self.store) in self._views:
                return  # a reconcile published it while this caller waited for the lock
            self._set_applying(True)
            try:
                found = None
                if self.projection is not None and self.reconciler.behind():
                    found = self.reconciler.follow()  # else the graph lags for another reason
                self.follows += found is not None
                self._project(None if found is None else ReconcileResult.of_followed(found))
            finally:
                self._set_applying(False)

    def _project(self, result: ReconcileResult | None) -> None:
        if not self.keeps_graph:
            return
        if self._warming:
            self._backlog.append(result)  # applied when the warm-up ends (`_warm`)
            return
        projection = self.projection
        view: ProjectionView | None = None
        if projection is not None and result is not None:
            try:
                view = projection.apply(self.store, result)
            except Exception:
                log.exception("Graph projection update failed; building it again")
        if view is None or projection is None:
            projection = Projection.build(self.store)
            view = projection.view
        self._publish(projection, view)

    def _publish(self, projection: Projection, view: ProjectionView) -> None:
        """Make `view` the graph of the committed state, for requests to pair with."""
        self.projection = projection
        self._stamp = stamp = CompactFile.stamp_of(self.store)
        generation = stamp.generation
        with self._published:
            self._views.pop(generation, None)  # the newest goes last, the oldest is dropped
            self._views[generation] = view
            for old in list(self._views)[:-_KEPT_VIEWS]:
                del self._views[old]
            self._published.notify_all()

    # -- the graph at start-up, and its compact file ---------------------------------------

    def _warm(self, found: CompactStamp | None, on_warm: Callable[[str], None] | None) -> None:
        """Read the rest of the reconciler's memory; load (or build) the graph of the state
        found at start, apply what reconciles did since, publish it; then, if it had to be
        built, write the compact file."""
        built: tuple[CompactStamp, list[NodeRow], list[tuple[str, Edge]]] | None = None
        self._complete_memory()
        try:
            if on_warm is not None:
                on_warm("before-load")
            loaded = self.compact.load(self.store, found)
            if loaded is not None:
                projection, self.graph_source = loaded
            else:
                with self.store.read() as reader:
                    generation, commit = temporal.commit_stamp(reader)
                    projection = Projection.build(reader)
                stamp = CompactStamp(self.store.fingerprint, generation, commit)
                built = (stamp, *projection.rows())  # as read, before the changes below
                self.graph_source = "database"
            with self._thread_lock:
                backlog, self._backlog = self._backlog, []
                # Applying, then warm no more: a request that finds no view meanwhile waits for
                # this one (as for a reconcile's), never builds its own.
                self._set_applying(True)
                self._warming = False
                try:
                    if None in backlog:  # another process wrote, or a reconcile failed
                        self._project(None)
                    else:
                        for result in backlog:
                            if result is not None and result.changed:
                                projection.apply(self.store, result)
                        self._publish(projection, projection.view)
                finally:
                    self._set_applying(False)
            if gc.get_freeze_count():
                # The server froze what start-up made (`almanac serve`): the graph joins it, so
                # the collector never walks its millions of objects (a second's pause each).
                gc.freeze()
        except Exception:
            log.exception("The graph projection could not be loaded; it is built on first use")
            with self._thread_lock, self._published:
                self.projection = None
                self._warming = False
                self._published.notify_all()
            return
        if built is not None:
            self.compact.write(*built)

    def _complete_memory(self) -> None:
        """Read the rest of the reconciler's memory (start-up read only what a scan finding
        nothing needs), so that the first edit is not the one that waits for it."""
        try:
            # Read outside the lock: queries meanwhile check freshness (a reconcile each, with
            # watching off) without waiting for the seconds this takes at 100,000 notes.
            self.reconciler.complete(lock=self._thread_lock)
        except Exception:
            log.exception("The reconciler's memory could not be read; the next reconcile reads it")

    def _keep_compact(self) -> None:
        """At close: keep the current graph in the compact file, unless it is there already."""
        with self._thread_lock:
            projection, stamp = self.projection, self._stamp
            if projection is None or stamp is None or stamp == self.compact.written:
                return
            if stamp != CompactFile.stamp_of(self.store):
                return  # not the graph of the committed state (another process wrote)
            self.compact.write(stamp, *projection.rows())

    def _set_applying(self, value: bool) -> None:
        with self._published:
            self._applying = value
            self._published.notify_all()

    async def ensure_fresh(self, *, now_us: int) -> None:
        """Make the index reflect every vault change that finished before this call.

        Raises:
            IndexUnavailable: the reconcile failed; the previous snapshot is still there to read,
                and the next call tries again with a full scan.
        """
        self.arrivals += 1
        ticket = self.arrivals
        ready = self._look()
        if not self._lock.locked() and self._quiet(ready):
            self.freshness = Freshness(now_us, self.freshness.indexed_at)
            self._covered = ticket
            return
        async with self._lock:
            if self._covered >= ticket:
                return
            start = self.arrivals
            await anyio.to_thread.run_sync(lambda: self._catch_up(now_us))
            self._covered = start

    def ensure_fresh_blocking(self, *, now_us: int) -> None:
        """`ensure_fresh` for callers on threads of their own (the Python API, `almanac`): the
        same promise, and concurrent callers share one reconcile in the same way. One
        `Services` is driven by this or by `ensure_fresh`, never both.

        Raises:
            IndexUnavailable: as `ensure_fresh`.
        """
        with self._arrival_lock:
            self.arrivals += 1
            ticket = self.arrivals
        with self._fresh_lock:
            if self._covered >= ticket:
                return
            start = self.arrivals
            if self._quiet(self._look()):
                self.freshness = Freshness(now_us, self.freshness.indexed_at)
                self._covered = start
                return
            self._catch_up(now_us)
            self._covered = start

    def _catch_up(self, now_us: int) -> None:
        """The reconcile a freshness check waits for; an unexpected failure is logged and is
        the caller's `IndexUnavailable`."""
        try:
            self.reconcile_now(now_us=now_us)
        except AlmanacError:
            raise
        except Exception as exc:
            log.exception("Reconcile failed")
            raise IndexUnavailable(f"Reconcile failed: {type(exc).__name__}") from exc

    def _look(self) -> bool:
        """One system call: whether the vault watcher has changes queued (the state files'
        news goes to `state_version`)."""
        ready = self._readiness.ready()
        state, watcher = self.state_version.fileno(), self.watcher
        self.state_version.look(state is not None and state in ready)
        return watcher is not None and watcher.fileno() in ready

    def _quiet(self, ready: bool) -> bool:
        """True when the watcher proves nothing changed (`ready`: it has changes queued);
        collects what did otherwise."""
        if self.watcher is None or self._rescan:
            return False
        if not ready:
            return not self._pending  # nothing was queued since the last drain
        changes = self.watcher.drain()
        if changes is None:
            self._rescan = True
            return False
        self._pending |= changes
        return not self._pending

    def _take_changes(self) -> set[str] | None:
        if self.watcher is not None and self.watcher.broken:
            log.warning("File watcher can no longer follow the vault; every query scans it")
            self.watcher.close()
            self.watcher = None
        if self.watcher is None:
            return None
        rescan = self._rescan
        self._rescan = True  # until the reconcile of what is drained here succeeds
        changes = self.watcher.drain()
        pending = self._pending | (changes or set())
        self._pending = set()
        return None if rescan or changes is None else pending

    def _note(self, result: ReconcileResult, now_us: int) -> None:
        indexed = (
            now_us if result.changed or not self.freshness.indexed_at else self.freshness.indexed_at
        )
        self.freshness = Freshness(now_us, indexed)


def now_us() -> int:
    """The wall clock in microseconds: read only here, in `api`. Every request reads it: the
    standard library's clock (pendulum's `now` took 20 us, a fifth of a polled 304)."""
    return from_datetime(datetime.now(UTC))
