from __future__ import annotations

import contextlib
import hashlib
import hmac
import ipaddress
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import strawberry
from cross_web import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import Receive, Scope, Send
from starlette.websockets import WebSocket
from strawberry.asgi import GraphQL

import graph
import temporal
from api.errors import error_response, http_refusal
from api.services import Services, now_us
from api.types.common import Coverage, Freshness, ResultMeta
from vault import AlmanacError, Forbidden, IndexUnavailable, Unauthenticated

__all__ = [
    "AlmanacGraphQL",
    "Context",
    "Info",
    "is_loopback",
    "readable_scopes",
    "scopes_for_token",
]

_CONTEXT = "almanac.context"  # where a request's scope keeps its `Context`, closed with it


@dataclass(slots=True)
class Context:
    """What every resolver of one request shares: one snapshot, one clock, one set of scopes."""

    services: Services
    scopes: tuple[str, ...] | None
    now_us: int
    deadline: float | None = None
    degraded: tuple[str, ...] = ()
    _stack: contextlib.ExitStack = field(default_factory=contextlib.ExitStack)
    _reader: temporal.Reader | None = None
    _view: graph.ProjectionView | None = None

    def reader(self) -> temporal.Reader:
        """The request's read transaction, opened on first use."""
        if self._reader is None:
            self._open()
        assert self._reader is not None
        return self._reader

    def view(self) -> graph.ProjectionView:
        """The graph projection matching the request's read transaction (I5)."""
        if self._view is None and self._reader is not None:
            # The read transaction was opened while the graph was not kept (a CLI run): build
            # it now, for the generation this transaction reads.
            self.services.refresh_projection()
            generation = temporal.generation(self._reader)
            self._view = self.services.view_for(generation, deadline=self.deadline)
            if self._view is None:
                raise IndexUnavailable("The index changed while the graph was built; try again")
        if self._view is None:
            self._open()
        assert self._view is not None
        return self._view

    def _open(self) -> None:
        """Open the read transaction and pick the graph view of the generation it reads."""
        services = self.services
        if not services.keeps_graph:
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
        return temporal.snapshot_id(reader.digests(), scopes, reader.fingerprint)

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


class AlmanacGraphQL(GraphQL[Context, None]):
    """strawberry's ASGI app with Almanac's request context."""

    def __init__(
        self, schema: strawberry.Schema, *, services: Services, graphql_ide: str | None
    ) -> None:
        super().__init__(
            schema,
            graphql_ide=graphql_ide,  # type: ignore[arg-type]
            allow_queries_via_get=True,
            multipart_uploads_enabled=False,
        )
        self.services = services

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await super().__call__(scope, receive, send)
            return
        try:
            response = await self.run(Request(scope=scope, receive=receive))
        except HTTPException as exc:  # strawberry's own refusals, rendered as every error is
            response = error_response(http_refusal(exc.status_code, exc.reason))
        finally:
            # The request's context (made by `get_context`, if it got that far) ends with it:
            # its read transaction is closed here, whatever the operation did.
            context = scope.get(_CONTEXT)
            if context is not None:
                context.close()
        await response(scope, receive, send)

    async def get_context(
        self, request: Request | WebSocket, response: Response | WebSocket
    ) -> Context:
        services = self.services
        stamp = now_us()
        deadline = time.monotonic() + services.settings.limits.request_seconds
        context = Context(services, request.scope.get("almanac.scopes"), stamp, deadline=deadline)
        request.scope[_CONTEXT] = context
        try:
            await services.ensure_fresh(now_us=stamp)
        except AlmanacError:
            # The last committed snapshot is still consistent: answer from it, and say so.
            context.degraded = ("index_stale",)
        return context


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
        # No client address: a Unix socket. "testclient": starlette's in-process TestClient.
        if client_host not in (None, "testclient") and not is_loopback(client_host):
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
    if name.lower() == "localhost":
        return True
    if name.startswith("[") and name.endswith("]"):
        name = name[1:-1]
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False
