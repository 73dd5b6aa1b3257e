"""`/metrics` (the Prometheus text format, one registry per app) and one log line per request.

Operation labels are bounded: a GraphQL request is labelled with its root field when it
selects one field of the schema (`status`, `timeline`, ... `snapshots`), `multiple` when it
selects several, `invalid` when its document was refused; other paths by a fixed name. No
label value comes from what a client names (operation names, aliases, paths), so a client
cannot grow the set of series.
"""

from __future__ import annotations

import asyncio
import bisect
import itertools
import json
import logging
import os
import re
import secrets
import time
from collections.abc import Iterator
from typing import Any

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    ProcessCollector,
    generate_latest,
)
from prometheus_client.core import CounterMetricFamily, HistogramMetricFamily, Metric
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from almanac import temporal
from almanac.api.context import CONTEXT, readable_scopes
from almanac.api.live import Feed
from almanac.api.services import Services, now_us

__all__ = [
    "BEGAN",
    "Logged",
    "Metrics",
    "RequestLines",
    "RequestLog",
    "log_requests",
    "process_memory",
]

log = logging.getLogger("almanac.requests")

BEGAN = "almanac.began"  # where a request's scope keeps when it began (`time.perf_counter`)
_REQUEST_ID = re.compile(r"[A-Za-z0-9._-]{1,64}\Z")
_PATHS = {"/graphql": "graphql", "/metrics": "metrics", "/healthz": "healthz", "/": "home"}
_TIMES = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
_BOUNDS = (*(repr(bound) for bound in _TIMES), "+Inf")  # their `le` labels


class Metrics:
    """The app's metrics, in a registry of its own (never the process-wide default one)."""

    def __init__(self, services: Services, feed: Feed) -> None:
        self.services = services
        self.registry = registry = CollectorRegistry()
        self.requests = _Requests()
        registry.register(self.requests)
        self.reconcile_duration = Histogram(
            "almanac_reconcile_duration_seconds",
            "Time of a reconcile (quiet ones included)",
            buckets=_TIMES,
            registry=registry,
        )
        self.reconcile_notes = Counter(
            "almanac_reconcile_notes",
            "Notes a reconcile read (parsed) or found gone (deleted)",
            ["change"],
            registry=registry,
        )
        self.reconcile_failures = Counter(
            "almanac_reconcile_failures", "Reconciles that failed", registry=registry
        )
        self.records = Gauge(
            "almanac_records",
            "Eligible records in the scopes the scraper may read",
            registry=registry,
        )
        self.issues = Gauge(
            "almanac_validation_issues",
            "Validation issues in the scopes the scraper may read",
            registry=registry,
        )
        self.snapshot_age = Gauge(
            "almanac_snapshot_age_seconds",
            "Time since the state file's last commit",
            registry=registry,
        )
        self.subscriptions = Gauge(
            "almanac_subscriptions", "Open subscriptions (this process)", registry=registry
        )
        self.subscriptions.set_function(lambda: feed.count)
        ProcessCollector(registry=registry)
        # With `--workers`, each answer comes from one worker: which one, and what it costs.
        pid = Gauge("almanac_worker_pid", "The id of the process answering", registry=registry)
        pid.set_function(os.getpid)
        pss = Gauge(
            "almanac_proportional_memory_bytes",
            "Resident bytes of this process, pages shared with others counted by share (PSS)",
            registry=registry,
        )
        pss.set_function(lambda: process_memory()[1])
        # How this process kept up with commits of other processes: followed (re-reading what
        # each names), or loaded again in full (seconds at 100,000 notes).
        Gauge(
            "almanac_memory_loads", "Full loads of the reconciler's memory", registry=registry
        ).set_function(lambda: services.reconciler.loads)
        Gauge(
            "almanac_commits_followed",
            "Times this process followed other processes' commits incrementally",
            registry=registry,
        ).set_function(lambda: services.reconciler.follows)
        services.reconcile_listeners.append(self._reconciled)

    def count(self, operation: str, status: int, seconds: float, *, hit: bool) -> None:
        """One answered request: its count, its duration, and a cache hit."""
        self.requests.add(operation, status, seconds, hit=hit)

    def _reconciled(self, result: temporal.ReconcileResult | None, seconds: float) -> None:
        self.reconcile_duration.observe(seconds)
        if result is None:
            self.reconcile_failures.inc()
            return
        self.reconcile_notes.labels("parsed").inc(result.parsed)
        self.reconcile_notes.labels("deleted").inc(result.deleted)

    async def endpoint(self, request: Request) -> Response:
        """`GET /metrics` (admitted by the same rules as `/graphql`)."""
        scopes = readable_scopes(self.services, request.scope.get("almanac.scopes"))
        with self.services.store.read() as reader:
            self.records.set(reader.counts(scopes).records)
            self.issues.set(reader.issue_count(scopes))
            at = temporal.latest_commit(reader).at_us or self.services.freshness.indexed_at
        self.snapshot_age.set(max(0.0, (now_us() - at) / 1e6) if at else 0.0)
        return Response(generate_latest(self.registry), media_type=CONTENT_TYPE_LATEST)


class _Requests:
    """`almanac_requests_total`, `almanac_request_duration_seconds` and
    `almanac_cache_hits_total`: counted in plain numbers on the event loop's thread (where every
    request ends, and `/metrics` is answered) and made into families when scraped.
    prometheus-client's own metrics take a lock per sample: a tenth of a polled 304's time."""

    def __init__(self) -> None:
        self.counts: dict[tuple[str, str], int] = {}
        self.buckets: dict[str, list[int]] = {}  # per operation: per bucket of `_TIMES`, +Inf
        self.sums: dict[str, float] = {}
        self.hits = 0

    def add(self, operation: str, status: int, seconds: float, *, hit: bool) -> None:
        key = (operation, str(status))
        self.counts[key] = self.counts.get(key, 0) + 1
        buckets = self.buckets.get(operation)
        if buckets is None:
            buckets = self.buckets[operation] = [0] * (len(_TIMES) + 1)
            self.sums[operation] = 0.0
        buckets[bisect.bisect_left(_TIMES, seconds)] += 1
        self.sums[operation] += seconds
        if hit:
            self.hits += 1

    def collect(self) -> Iterator[Metric]:
        requests = CounterMetricFamily(
            "almanac_requests", "HTTP requests answered", labels=["operation", "code"]
        )
        for labels, count in sorted(self.counts.items()):
            requests.add_metric(labels, count)
        yield requests
        duration = HistogramMetricFamily(
            "almanac_request_duration_seconds",
            "Time to answer an HTTP request",
            labels=["operation"],
        )
        for operation, buckets in sorted(self.buckets.items()):
            duration.add_metric(
                [operation],
                list(zip(_BOUNDS, itertools.accumulate(buckets), strict=True)),
                self.sums[operation],
            )
        yield duration
        yield CounterMetricFamily(
            "almanac_cache_hits",
            "GET answers served from the cache or as 304 Not Modified",
            value=self.hits,
        )


class RequestLog:
    """What every HTTP answer gets: an `X-Request-Id` (the client's, when it is a short token,
    else a new one), the request metrics, and one log line in `lines` (`RequestLines`), when
    given. `Logged` gives them to every request; `api.app`'s unchanged poll, answered before
    any middleware, takes them from here too."""

    def __init__(self, *, metrics: Metrics, lines: RequestLines | None = None) -> None:
        self.metrics = metrics
        self.lines = lines
        # A made request id: this process's random prefix and a count (unique across workers,
        # without a random draw per request).
        self._prefix = secrets.token_hex(8)
        self._made = itertools.count(1)

    def request_id(self, scope: Scope) -> bytes:
        """The request's id: the client's `X-Request-Id` when it is a short token, else a new
        one (this process's random prefix and a count)."""
        for key, value in scope["headers"]:
            if key == b"x-request-id":
                if _REQUEST_ID.match(value.decode("latin-1")):
                    return bytes(value)
                break
        return f"{self._prefix}{next(self._made):016x}".encode()

    def record(self, scope: Scope, request_id: bytes, status: int, began: float) -> None:
        """An answered request (`began`: its `time.perf_counter()`): its metrics, and its line."""
        seconds = time.perf_counter() - began
        context = scope.get(CONTEXT)
        operation = _label(scope, context)
        cache = getattr(context, "cache", "none")
        self.metrics.count(operation, status, seconds, hit=cache == "hit")
        if self.lines is not None:
            self.lines.add(scope, request_id.decode(), operation, seconds, status, context, cache)


class Logged:
    """ASGI middleware: `RequestLog` for every HTTP request."""

    def __init__(self, app: ASGIApp, *, log: RequestLog) -> None:
        self.app = app
        self.log = log

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        began = scope.setdefault(BEGAN, time.perf_counter())  # set first by a poll's shortcut
        request_id = self.log.request_id(scope)
        status = 500

        async def tagged(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                # The app's own answers never set this header: it is added, not replaced.
                headers = [*message.get("headers", ()), (b"x-request-id", request_id)]
                message = {**message, "headers": headers}
            await send(message)

        try:
            await self.app(scope, receive, tagged)
        finally:
            self.log.record(scope, request_id, status, began)


class RequestLines:
    """One line per request on the `almanac.requests` logger, as text (the client, method,
    path without its query string, status, operation, duration, cache, request id) or as a
    JSON object (`json`: time, request id, operation, duration, status, snapshot, cache).

    Lines are handed to the logger in batches, one record of several lines at most every
    `interval` seconds (or at `max_lines`), and all at once by `flush` (at shutdown): a
    logging record costs ~15 µs, a line ~1 µs as text and ~6 µs as JSON, where a poll
    answered `304` costs ~100 µs in all. A line appears at most `interval` late; a process
    killed outright loses at most that much."""

    def __init__(self, *, json_lines: bool, interval: float = 0.2, max_lines: int = 1000) -> None:
        self.json_lines = json_lines
        self.interval = interval
        self.max_lines = max_lines
        self._pending: list[str] = []
        self._timer: asyncio.TimerHandle | None = None
        self._second = -1
        self._second_text = ""

    def add(
        self,
        scope: Scope,
        request_id: str,
        operation: str,
        seconds: float,
        status: int,
        context: Any,  # Any: a Context, or None before one was made
        cache: str,
    ) -> None:
        """Queue one request's line."""
        if self.json_lines:
            line = json.dumps(
                {
                    "time": self._time(),
                    "request_id": request_id,
                    "operation": operation,
                    "duration_ms": round(seconds * 1000, 3),
                    "status": status,
                    "snapshot": getattr(context, "seen", None),
                    "cache": cache,
                }
            )
        else:
            client = scope.get("client")
            line = (
                f"INFO:     {f'{client[0]}:{client[1]}' if client else '-'} - "
                f'"{scope["method"]} {scope["path"]} HTTP/{scope.get("http_version", "1.1")}" '
                f"{status} {operation} {seconds * 1000:.1f}ms cache={cache} id={request_id}"
            )
        self._pending.append(line)
        if len(self._pending) >= self.max_lines:
            self.flush()
        elif self._timer is None:
            self._timer = asyncio.get_running_loop().call_later(self.interval, self.flush)

    def _time(self) -> str:
        """Now, ISO 8601 in UTC to the microsecond (the date and time of the second are
        formatted once a second)."""
        stamp = now_us()
        second, micro = divmod(stamp, 1_000_000)
        if second != self._second:
            self._second = second
            self._second_text = temporal.format_instant(second * 1_000_000).removesuffix("Z")
        return f"{self._second_text}.{micro:06d}Z"

    def flush(self) -> None:
        """Hand every queued line to the logger now."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._pending:
            batch, self._pending = self._pending, []
            log.info("%s", "\n".join(batch))


def log_requests() -> None:
    """Send the `almanac.requests` lines to stderr (`almanac serve`)."""
    handler = logging.StreamHandler()
    handler.setFormatter(logging.Formatter("%(message)s"))
    requests = logging.getLogger("almanac.requests")
    requests.addHandler(handler)
    requests.setLevel(logging.INFO)
    requests.propagate = False


def process_memory(pid: int | str = "self") -> tuple[int, int]:
    """The resident (RSS) and proportional (PSS: a page shared by n processes counts 1/n)
    set size of a process in bytes, from `/proc/<pid>/smaps_rollup`; (0, 0) where there is
    none (not Linux, or the process is gone)."""
    found = {"Rss:": 0, "Pss:": 0}
    try:
        with open(f"/proc/{pid}/smaps_rollup", encoding="ascii") as rollup:
            for line in rollup:
                name, _, rest = line.partition(" ")
                if name in found:
                    found[name] = int(rest.split()[0]) * 1024
    except (OSError, ValueError):
        return 0, 0
    return found["Rss:"], found["Pss:"]


def _label(scope: Scope, context: Any) -> str:  # Any: a Context, or None before one was made
    if context is not None and scope.get("path") == "/graphql":
        return str(context.operation) if context.operation != "none" else "graphql"
    return _PATHS.get(scope.get("path", ""), "other")
