"""The GraphQL view: strawberry's ASGI app with Almanac's request context, its polling path
(`api.polling`) and its WebSocket protections."""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Callable, Mapping
from datetime import timedelta
from typing import cast

import strawberry
from cross_web import AsyncHTTPRequestAdapter, HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import Receive, Scope, Send
from starlette.websockets import WebSocket
from strawberry.asgi import ASGIWebSocketAdapter, GraphQL
from strawberry.exceptions import ConnectionRejectionError
from strawberry.http import GraphQLHTTPResponse, GraphQLRequestData
from strawberry.http.base import BaseRequestProtocol
from strawberry.http.exceptions import WebSocketDisconnected
from strawberry.subscriptions import GRAPHQL_TRANSPORT_WS_PROTOCOL
from strawberry.types import ExecutionResult
from strawberry.types.unset import UNSET, UnsetType

from almanac.api.context import CONTEXT, Context, readable_scopes, scopes_for_token
from almanac.api.errors import error_response, http_refusal
from almanac.api.live import Feed
from almanac.api.persisted import PersistedQueries
from almanac.api.polling import Answers, Kept, etag_matches
from almanac.api.services import Services, now_us
from almanac.vault import AlmanacError

__all__ = ["ABORT", "AlmanacGraphQL"]

log = logging.getLogger("almanac")

_INIT_SECONDS = 10  # a WebSocket connection has this long to send `connection_init`
ABORT = "almanac.abort"  # where a WebSocket's scope keeps the call that aborts its connection


class _Socket(ASGIWebSocketAdapter):
    """strawberry's WebSocket adapter whose sends are bounded in time: a client that stops
    reading blocks a send once the transport's buffer is full, and is dropped then."""

    async def send_json(self, message: Mapping[str, object]) -> None:
        seconds = cast("AlmanacGraphQL", self.view).services.settings.limits.send_seconds
        try:
            await asyncio.wait_for(super().send_json(message), seconds)
        except TimeoutError:
            log.warning("A WebSocket send took over %s s: client dropped", seconds)
            abort = self.ws.scope.get(ABORT)
            if abort is not None:
                abort()
            raise WebSocketDisconnected from None


class AlmanacGraphQL(GraphQL[Context, None]):
    """strawberry's ASGI app with Almanac's request context, and its WebSocket protections:
    graphql-transport-ws only, a cap on connections and on operations per connection, the
    bearer token of `connection_init` (or of the upgrade), sends bounded in time. A query on
    a connection runs in a context of its own (the connection's `fork`), as a request's."""

    websocket_adapter_class = _Socket

    def __init__(
        self,
        schema: strawberry.Schema,
        *,
        services: Services,
        graphql_ide: str | None,
        feed: Feed | None = None,
        answers: Answers | None = None,
        persisted: PersistedQueries | None = None,
        clock: Callable[[], int] = now_us,
    ) -> None:
        limits = services.settings.limits
        super().__init__(
            schema,
            graphql_ide=graphql_ide,  # type: ignore[arg-type]
            allow_queries_via_get=True,
            multipart_uploads_enabled=False,
            subscription_protocols=(GRAPHQL_TRANSPORT_WS_PROTOCOL,),
            connection_init_wait_timeout=timedelta(seconds=_INIT_SECONDS),
            max_subscriptions_per_connection=limits.max_subscriptions,
        )
        self.services = services
        self.feed = feed
        self.answers = answers
        self.persisted = persisted
        self.clock = clock  # the instant each request is stamped with (microseconds)
        self.connections = 0

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "websocket":
            if self.connections >= self.services.settings.limits.max_connections:
                await send({"type": "websocket.close", "code": 1013})  # refused: HTTP 403
                return
            self.connections += 1
            try:
                await super().__call__(scope, receive, send)
            finally:
                self.connections -= 1
            return
        if scope["type"] != "http":
            await super().__call__(scope, receive, send)
            return
        request = Request(scope=scope, receive=receive)
        try:
            if scope["method"] == "GET" and self.answers is not None:
                response = await self._poll(request, self.answers)
            else:
                response = await self.run(request)
        except HTTPException as exc:  # strawberry's own refusals, rendered as every error is
            response = error_response(http_refusal(exc.status_code, exc.reason))
        except AlmanacError as error:  # a persisted query refused (`execute_single`)
            response = error_response(error)
        finally:
            # The request's context (made by `get_context`, if it got that far) ends with it:
            # its read transaction is closed here, whatever the operation did.
            context = scope.get(CONTEXT)
            if context is not None:
                context.close()
        await response(scope, receive, send)

    async def answer_unchanged(self, scope: Scope) -> Response | None:
        """A GET answered before routing (`api.app`'s `_Unchanged`), when it can be without
        executing or reading: its freshness check first, as for every request, then the tag
        remembered for its query string while the database has not changed, and the client
        has that tag (`304`) or its answer is kept. None: it goes the whole way (`_poll`),
        with the context made here in `scope`.

        Raises:
            IndexUnavailable: the database's version cannot be read.
        """
        answers = self.answers
        if answers is None:
            return None
        context = await self._http_context(scope, self.clock())
        if context.degraded:
            return None
        known = answers.known(
            scope.get("query_string", b""),
            tuple(readable_scopes(self.services, context.scopes)),
            version=self.services.state_version.read(),
            clock_us=context.clock_us,
        )
        if known is None:
            return None
        response = self._cached(context, answers, known.tag, _if_none_match(scope))
        if response is not None:
            context.seen = known.snapshot
        return response

    async def _poll(self, request: Request, answers: Answers) -> Response:
        """A GET: freshness first (as for every request), then its tag: the one remembered
        while the database has not changed (no read at all), else worked out from the
        request's own read transaction; `304` when the client has it, the kept answer when
        there is one, else the answer executed (and kept when it has no errors)."""
        context = request.scope.get(CONTEXT)  # made before routing (`answer_unchanged`)
        if context is None:
            context = await self._http_context(request.scope, self.clock())
        tag = None if context.degraded else self._tag(request, context, answers)
        if tag is None:
            return await self.run(request, context=context)
        cached = self._cached(context, answers, tag, _if_none_match(request.scope))
        if cached is not None:
            return cached
        context.cache = "miss"
        response = await self.run(request, context=context)
        if response.status_code != 200 or context.errors:
            return response
        answers.keep(tag, Kept(bytes(response.body), context.operation))
        response.raw_headers += _tag_headers(tag)
        return response

    def _cached(
        self, context: Context, answers: Answers, tag: str, if_none_match: str | None
    ) -> Response | None:
        """`304` when the client has `tag` (`if_none_match`), the kept answer when there is
        one, else None."""
        kept = answers.get(tag)
        if kept is not None:
            context.operation = kept.operation
            context.cache = "hit"
        if etag_matches(if_none_match, tag):
            context.cache = "hit"
            return _Tagged(tag)
        if kept is not None:
            return _Tagged(tag, kept.body)
        return None

    def _tag(self, request: Request, context: Context, answers: Answers) -> str | None:
        """A GET's tag worked out from the request's read transaction, the one its execution
        reads too (a remembered tag that answers it was tried before routing:
        `answer_unchanged`)."""
        # Read before the read transaction begins: a commit after that moves the version.
        version = self.services.state_version.read()
        scopes = tuple(readable_scopes(self.services, context.scopes))
        params: Mapping[str, str] = request.query_params
        if self.persisted is not None and "extensions" in params and "query" not in params:
            try:  # a document named by its hash is tagged as if it were sent in full
                text, _ = self.persisted.resolve(None, json.loads(params["extensions"]))
            except (AlmanacError, ValueError):
                return None  # refused when it runs, with the error of its class
            params = {**params, "query": text or ""}
        known = answers.work_out(
            context.reader(),
            request.scope.get("query_string", b""),
            params,
            scopes=scopes,
            snapshot=context.snapshot(scopes),
            clock_us=context.clock_us,
            version=version,
        )
        return None if known is None else known.tag

    def should_render_graphql_ide(self, request: BaseRequestProtocol) -> bool:
        """strawberry's rule (`api.explorer` serves the page itself), except that a GET whose
        `extensions` may name its document by hash (`api.persisted`) is an operation."""
        if "extensions" in request.query_params:
            return False
        return super().should_render_graphql_ide(request)

    async def execute_single(  # strawberry's signature
        self,
        request: Request,
        request_adapter: AsyncHTTPRequestAdapter,
        sub_response: Response,
        context: Context,
        root_value: None,
        request_data: GraphQLRequestData,
    ) -> ExecutionResult:
        """strawberry's execution of one HTTP operation, with its document named by hash
        (`api.persisted`): looked up, or checked against its text and kept once it has
        validated (its operation is labelled, not `invalid`).

        Raises:
            AlmanacError: a persisted query refused (unknown hash, mismatch, version).
        """
        digest = None
        if self.persisted is not None and request_data.extensions:
            request_data.query, digest = self.persisted.resolve(
                request_data.query, request_data.extensions
            )
        result = await super().execute_single(
            request, request_adapter, sub_response, context, root_value, request_data
        )
        if digest is not None and request_data.query and context.operation != "invalid":
            assert self.persisted is not None
            self.persisted.keep(digest, request_data.query)
        return result

    async def process_result(
        self, request: Request, result: ExecutionResult
    ) -> GraphQLHTTPResponse:
        context = request.scope.get(CONTEXT)
        if context is not None and result.errors:
            context.errors = True
        return await super().process_result(request, result)

    async def get_context(
        self, request: Request | WebSocket, response: Response | WebSocket
    ) -> Context:
        services = self.services
        stamp = self.clock()
        if isinstance(request, WebSocket):
            # No scopes until `connection_init` proves them (`on_ws_connect`).
            client = request.client.host if request.client else None
            connection = Context(
                services,
                (),
                stamp,
                feed=self.feed,
                live=True,
                drop=request.scope.get(ABORT),
                authorization=request.headers.get("authorization"),
                client=client,
            )
            connection.fork = lambda: self._fresh_context(connection.scopes, self.clock())
            return connection
        return await self._http_context(request.scope, stamp)

    async def _http_context(self, scope: Scope, stamp: int) -> Context:
        """An HTTP request's context, once its freshness check is done (`stamp`: its clock)."""
        return await self._fresh_context(scope.get("almanac.scopes"), stamp, scope)

    async def _fresh_context(
        self, scopes: tuple[str, ...] | None, stamp: int, scope: Scope | None = None
    ) -> Context:
        """The context of one operation reading `scopes` (an HTTP request's, kept in its
        `scope`, or a query's on a WebSocket connection, with the connection's scopes): its
        clock `stamp`, its deadline, and its freshness check done."""
        services = self.services
        deadline = time.monotonic() + services.settings.limits.request_seconds
        context = Context(services, scopes, stamp, deadline=deadline)
        if scope is not None:
            scope[CONTEXT] = context
        try:
            await services.ensure_fresh(now_us=stamp)
        except AlmanacError:
            # The last committed snapshot is still consistent: answer from it, and say so.
            context.degraded = ("index_stale",)
        return context

    async def on_ws_connect(self, context: Context) -> UnsetType | dict[str, object] | None:
        """`connection_init`: its `Authorization` (else the upgrade's) mapped to scopes.

        Raises:
            ConnectionRejectionError: no valid token (the socket closes with 4403).
        """
        params = context.connection_params or {}
        token = params.get("Authorization", params.get("authorization"))
        if token is not None and not isinstance(token, str):
            raise ConnectionRejectionError()
        try:
            context.scopes = scopes_for_token(
                self.services, token if token is not None else context.authorization, context.client
            )
        except AlmanacError:
            raise ConnectionRejectionError() from None
        return cast(UnsetType, UNSET)


class _Tagged(Response):
    """A `304` (no `body`) or a kept answer, its headers written as bytes at once (Starlette's
    own would lower-case and encode each, and look for the length and type among them)."""

    def __init__(self, tag: str, body: bytes | None = None) -> None:
        self.background = None
        self.raw_headers = _tag_headers(tag)
        if body is None:
            self.status_code, self.body = 304, b""
            return
        self.status_code, self.body = 200, body
        self.raw_headers += [
            (b"content-length", str(len(body)).encode()),
            (b"content-type", b"application/json"),
        ]


def _tag_headers(tag: str) -> list[tuple[bytes, bytes]]:
    """The headers of a tagged answer (`304`, kept or executed), as ASGI sends them."""
    return [
        (b"etag", f'"{tag}"'.encode()),
        (b"cache-control", b"private, no-cache"),
        (b"vary", b"Authorization"),
    ]


def _if_none_match(scope: Scope) -> str | None:
    """The request's `If-None-Match`: its every occurrence, as one list (RFC 9110 allows
    several), or None."""
    found = [value for key, value in scope["headers"] if key == b"if-none-match"]
    return b", ".join(found).decode("latin-1") if found else None
