from __future__ import annotations

import contextlib
import hashlib
import hmac
import ipaddress
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field

import strawberry

from almanac import graph, temporal
from almanac.api.live import Feed
from almanac.api.services import Services
from almanac.api.types.common import Coverage, Freshness, ResultMeta
from almanac.vault import Forbidden, IndexUnavailable, InvalidInput, Unauthenticated

__all__ = [
    "CONTEXT",
    "Context",
    "Info",
    "is_loopback",
    "readable_scopes",
    "scopes_for_token",
]

CONTEXT = "almanac.context"  # where a request's scope keeps its `Context`, closed with it
_MINUTE_US = 60_000_000
_LOOPBACK_NAMES = frozenset({"127.0.0.1", "::1", "[::1]"})


@dataclass(slots=True)
class Context:
    """What every resolver of one request shares: one snapshot, one clock, one set of scopes."""

    services: Services
    scopes: tuple[str, ...] | None
    now_us: int
    deadline: float | None = None
    degraded: tuple[str, ...] = ()
    feed: Feed | None = None
    # A WebSocket connection's context: its subscriptions read nothing through it (a read
    # would hold one transaction for the connection's life); `fork` makes the context of one
    # query on the connection, as an HTTP request's; `drop` aborts the connection.
    live: bool = False
    fork: Callable[[], Awaitable[Context]] | None = None
    drop: Callable[[], None] | None = None
    connection_params: dict[str, object] | None = None  # set by strawberry at connection_init
    authorization: str | None = None  # the upgrade's `Authorization` header
    client: str | None = None  # the WebSocket client's address
    operation: str = "none"  # the bounded label of the operation (metrics and logs)
    errors: bool = False  # whether the answer has errors (then it is not kept)
    seen: str | None = None  # the snapshot id the request last read (for its log line)
    cache: str = "none"  # a GET's answer: "hit" (kept, or the client's 304), "miss", or none
    _stack: contextlib.ExitStack = field(default_factory=contextlib.ExitStack)
    _reader: temporal.Reader | None = None
    _view: graph.ProjectionView | None = None

    @property
    def clock_us(self) -> int:
        """The instant clocks are read at without `asOf`: the start of the request's minute.
        Clocks tick once a minute, so an answer that reads them is the same all minute long
        (its ETag and cached copy last that minute); local midnights are whole minutes."""
        return self.now_us - self.now_us % _MINUTE_US

    def reader(self) -> temporal.Reader:
        """The request's read transaction, opened on first use."""
        if self._reader is None:
            self._open()
        assert self._reader is not None
        return self._reader

    def view(self) -> graph.ProjectionView:
        """The graph projection matching the request's read transaction (I5)."""
        if self._view is None and self._reader is None:
            self._open()
        if self._view is None:
            # The read transaction was opened while the graph was warming up, or not kept (a
            # CLI run, which builds it now): the view of the generation it reads, or an error.
            assert self._reader is not None
            self._view = self.services.view_of(self._reader, deadline=self.deadline)
        return self._view

    def _open(self) -> None:
        """Open the read transaction and pick the graph view of the generation it reads."""
        services = self.services
        if self.live:
            raise InvalidInput("A WebSocket connection reads nothing itself; each query forks")
        if not services.graph_ready:
            self._reader = self._stack.enter_context(services.store.read(deadline=self.deadline))
            return
        for _ in range(3):
            attempt = contextlib.ExitStack()
            reader = attempt.enter_context(services.store.read(deadline=self.deadline))
            try:
                view = services.view_for(temporal.generation(reader), deadline=self.deadline)
            except BaseException:
                attempt.close()
                raise
            if view is not None:
                self._stack.enter_context(attempt)
                self._reader, self._view = reader, view
                return
            attempt.close()
            services.refresh_projection()  # another process wrote the database
        raise IndexUnavailable("The graph projection does not match the index; try again")

    def readable(self, scope: str | None = None) -> list[str]:
        """The scopes this request reads: all it may, or the one asked for."""
        allowed = readable_scopes(self.services, self.scopes)
        if scope is None:
            return allowed
        if scope not in allowed:
            raise Forbidden(f"Scope {scope!r} is not readable with these credentials")
        return [scope]

    def type_name(self, name: str | None) -> str | None:
        """A type asked for, with the configured type aliases expanded as notes' types are."""
        if name is None:
            return None
        return self.services.settings.config.type_aliases.get(name, name)

    def meta(self, scopes: Sequence[str], degraded: Sequence[str] = ()) -> ResultMeta:
        """The `meta` block of a result over `scopes`."""
        reader = self.reader()
        count = reader.issue_count(scopes)
        fresh = self.services.freshness
        return ResultMeta(
            snapshot=self.snapshot(scopes),
            freshness=Freshness(
                queried_at=temporal.format_instant(self.now_us),
                scanned_at=temporal.format_instant(fresh.scanned_at or self.now_us),
                indexed_at=temporal.format_instant(fresh.indexed_at or self.now_us),
            ),
            coverage=Coverage(
                complete=not count,
                issue_count=count,
                _issues=lambda first: reader.issues(scopes, limit=first),
            ),
            degraded=sorted({*degraded, *self.degraded}),
        )

    def snapshot(self, scopes: Sequence[str]) -> str:
        """The snapshot id of `scopes` as read by this request."""
        reader = self.reader()
        self.seen = temporal.snapshot_id(reader.digests(), scopes, reader.fingerprint)
        return self.seen

    def close(self) -> None:
        """End the read transaction."""
        self._stack.close()
        self._reader = None
        self._view = None


Info = strawberry.Info[Context, None]


def readable_scopes(services: Services, granted: tuple[str, ...] | None) -> list[str]:
    """Every scope there is (configured, and `default`), or those a token grants."""
    if granted is None:
        return services.settings.config.all_scopes()
    return sorted(set(granted))


def scopes_for_token(
    services: Services, authorization: str | None, client_host: str | None
) -> tuple[str, ...] | None:
    """The scopes a request may read; None means all.

    Raises:
        Unauthenticated: tokens are configured and the request has no valid one.
        Forbidden: no tokens are configured and the client is not on loopback.
    """
    tokens = services.settings.tokens
    if not tokens:
        # No client address: a Unix socket.
        if client_host is not None and not is_loopback(client_host):
            raise Forbidden("Without configured tokens Almanac answers loopback clients only")
        return None
    if not authorization or not authorization.startswith("Bearer "):
        raise Unauthenticated("A bearer token is required")
    digest = hashlib.sha256(authorization[7:].strip().encode()).hexdigest()
    for known, scopes in tokens.items():
        if hmac.compare_digest(known, digest):
            return scopes
    raise Unauthenticated("The bearer token is not valid")


def is_loopback(name: str) -> bool:
    """Whether a host name or address is this machine's: exactly `localhost`, or an IP literal
    (IPv6 with or without brackets) that is a loopback address."""
    if name in _LOOPBACK_NAMES or name.lower() == "localhost":
        return True  # the usual names, without parsing an address each request
    if name.startswith("[") and name.endswith("]"):
        name = name[1:-1]
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False
