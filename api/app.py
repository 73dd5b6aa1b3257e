from __future__ import annotations

import contextlib
import hashlib
import json
import os
import socket
import time
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable
from typing import Any
from urllib.parse import parse_qs

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Mount, Route, WebSocketRoute, request_response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from almanac.api.context import CONTEXT, is_loopback, scopes_for_token
from almanac.api.errors import PayloadTooLarge, UnsupportedMediaType, error_response
from almanac.api.explorer import GraphQLDoor, Pages
from almanac.api.live import Feed
from almanac.api.metrics import BEGAN, Logged, Metrics, RequestLines, RequestLog
from almanac.api.persisted import PersistedQueries
from almanac.api.polling import Answers
from almanac.api.schema import build_schema
from almanac.api.services import Services, now_us
from almanac.api.settings import Limits, Settings
from almanac.api.view import ABORT, AlmanacGraphQL
from almanac.vault import AlmanacError, Forbidden, InvalidInput

__all__ = ["app_from_env", "check_body", "create_app"]

_FOLLOW_SECONDS = 0.25  # how often subscriptions look for changes, the vault watched
_SCAN_SECONDS = 1.0  # the same when every look scans the vault
_SOCKET_BUFFER = 64 * 1024  # a WebSocket's kernel send buffer (SO_SNDBUF; Linux doubles it)
_PASSED_BYTES = 256 * 1024  # query strings known to pass the checks, at most this many bytes
_ENTRY_BYTES = 128  # what remembering one costs besides its own bytes


def create_app(
    settings: Settings,
    *,
    graph: bool = True,
    request_log: str | None = None,
    clock: Callable[[], int] = now_us,
    on_warm: Callable[[str], None] | None = None,
) -> Starlette:
    """The Starlette app: the explorer page at `/`, GraphQL (and GraphiQL) at `/graphql`
    (WebSocket subscriptions too), `/static/...` (the pages' files), `/metrics`, `/healthz`.

    The store is opened and reconciled before the first request; with `graph`, the graph
    projection is loaded in the background from then on (`Services.open`), else built on the
    first request that traverses. With `request_log` (`text` or `json`), one line per request
    on the `almanac.requests` logger (`RequestLines`). `clock` stamps each request (UTC
    microseconds; tests pass their own to cross a midnight).
    """
    services = Services.open(settings, now_us=now_us(), graph=graph, on_warm=on_warm)
    schema = build_schema(settings.limits, introspection=settings.introspection)
    feed = Feed(
        services,
        interval=_FOLLOW_SECONDS if services.watch_mode == "inotify" else _SCAN_SECONDS,
        queue_size=settings.limits.send_queue,
    )
    schema_id = hashlib.sha256(schema.as_str().encode()).hexdigest()[:16]
    graphql = AlmanacGraphQL(
        schema,
        services=services,
        graphql_ide=None,  # GraphiQL is served by `Pages`, from the package
        feed=feed,
        answers=Answers(schema_id=schema_id, max_bytes=settings.limits.cache_bytes),
        persisted=PersistedQueries(
            max_entries=settings.limits.persisted_queries,
            max_bytes=settings.limits.max_body_bytes,
        ),
        clock=clock,
    )
    metrics = Metrics(services, feed)
    lines = RequestLines(json_lines=request_log == "json") if request_log else None

    async def healthz(request: Request) -> Response:
        return JSONResponse({"status": "ok"})

    pages = Pages(lambda scope: _site_headers(scope, tokens=bool(settings.tokens)))

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        feed.start()
        try:
            yield
        finally:
            await feed.stop()
            if lines is not None:
                lines.flush()
            schema.shutdown()  # no operation runs on past the store
            services.close()

    guard = Guard(graphql, services, settings.limits)
    log = RequestLog(metrics=metrics, lines=lines)
    app = _App(
        routes=[
            Route("/", pages, methods=["GET"]),
            Route(
                "/graphql",
                GraphQLDoor(guard, pages if settings.graphiql else None),
                methods=["GET", "POST"],
            ),
            Mount("/static", pages),
            WebSocketRoute("/graphql", guard),
            Route("/metrics", Guard(request_response(metrics.endpoint), services, settings.limits)),
            Route("/healthz", healthz),
        ],
        middleware=[
            Middleware(_Abortable),
            Middleware(Logged, log=log),
        ],
        lifespan=lifespan,
    )
    app.unchanged = _Unchanged(guard=guard, view=graphql, log=log)
    app.state.services = services
    app.state.feed = feed
    app.state.metrics = metrics
    app.state.graphql = graphql
    return app


def app_from_env() -> Starlette:
    """`uvicorn --factory api.app:app_from_env`: settings from `ALMANAC_*` variables."""
    return create_app(Settings.from_env(os.environ))


class Guard:
    """ASGI protections in front of strawberry: host, origin, credentials, size, type, JSON."""

    def __init__(self, app: ASGIApp, services: Services, limits: Limits) -> None:
        self.app = app
        self.services = services
        self.limits = limits
        # Query strings that passed the checks (a poll sends the same one again and again).
        self._passed: OrderedDict[bytes, None] = OrderedDict()
        self._passed_bytes = 0

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "websocket":
            try:
                self._admit_socket(scope)
            except AlmanacError:
                await send({"type": "websocket.close", "code": 1008})  # refused: HTTP 403
                return
            await self.app(scope, receive, send)
            return
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        try:
            receive = await self._admit(scope, receive)
        except AlmanacError as error:
            await error_response(error)(scope, receive, send)
            return
        await self.app(scope, receive, send)

    def _admit_socket(self, scope: Scope) -> None:
        """A WebSocket upgrade passes the host, origin and loopback rules of HTTP; a token in
        its `Authorization` header must be valid (one may come in `connection_init` instead).

        Raises:
            AlmanacError: the first check it fails (the handshake is answered 403).
        """
        headers = _site_headers(scope, tokens=bool(self.services.settings.tokens))
        client = scope.get("client")
        authorization = headers.get("authorization")
        if authorization is not None or not self.services.settings.tokens:
            scopes_for_token(self.services, authorization, client[0] if client else None)

    async def _admit(self, scope: Scope, receive: Receive) -> Receive:
        """The request's `receive` once it passes every check (a POST's body read and checked,
        then replayed).

        Raises:
            AlmanacError: the first check it fails, answered with the class's status and code.
        """
        headers = self.check(scope)
        if scope["method"] == "GET":
            return receive
        kind = headers.get("content-type", "").split(";")[0].strip().lower()
        if kind != "application/json":
            raise UnsupportedMediaType("POST bodies must be application/json")
        body = await _read_body(receive, self.limits.max_body_bytes, headers)
        check_body(body, self.limits)
        sent = False

        async def replay() -> Message:
            nonlocal sent
            if sent:
                return await receive()
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}

        return replay

    def check(self, scope: Scope) -> dict[str, str]:
        """An HTTP request's headers once it passes the host, site and credential checks (its
        readable scopes put in `scope`) and, for a GET, the checks of its query string.

        Raises:
            AlmanacError: the first check it fails.
        """
        headers = _site_headers(scope, tokens=bool(self.services.settings.tokens))
        client = scope.get("client")
        scope["almanac.scopes"] = scopes_for_token(
            self.services, headers.get("authorization"), client[0] if client else None
        )
        if scope["method"] == "GET":
            query_string = scope.get("query_string", b"")
            if query_string not in self._passed:
                if len(query_string) > self.limits.max_body_bytes:
                    raise PayloadTooLarge("Query string too large")
                _check_query_params(query_string, self.limits.max_json_depth)
                self._pass(query_string)
        return headers

    def _pass(self, query_string: bytes) -> None:
        """Remember a query string that passed (the most recent, at most `_PASSED_BYTES`)."""
        if len(query_string) > _PASSED_BYTES // 64:
            return
        self._passed[query_string] = None
        self._passed_bytes += _ENTRY_BYTES + len(query_string)
        while self._passed_bytes > _PASSED_BYTES:
            old, _ = self._passed.popitem(last=False)
            self._passed_bytes -= _ENTRY_BYTES + len(old)


def check_body(body: bytes, limits: Limits) -> None:
    """What a POST body must be: within the size limit, UTF-8, one JSON object nested no deeper
    than the limit.

    Raises:
        PayloadTooLarge: over `max_body_bytes`.
        InvalidInput: not such a JSON object.
    """
    if len(body) > limits.max_body_bytes:
        raise PayloadTooLarge(f"Request body larger than {limits.max_body_bytes} bytes")
    _check_json(body, limits.max_json_depth)


class _Unchanged:
    """Before anything else (Starlette's own middleware included): a `GET /graphql` that
    passes the guard's checks and whose answer has not changed since its tag was worked out is
    answered at once (`304`, or the kept answer: `AlmanacGraphQL.answer_unchanged`), with its
    request id, metrics and line as `RequestLog` gives every other answer. Everything else goes
    the whole way, refusals too (the guard refuses them there, as it does every request)."""

    def __init__(self, *, guard: Guard, view: AlmanacGraphQL, log: RequestLog) -> None:
        self.guard = guard
        self.view = view
        self.log = log

    async def answered(self, scope: Scope, send: Send) -> bool:
        """Whether the request was answered here. Unanswered, it goes on with the context made
        here (its freshness checked once); answered, its context is closed."""
        began = scope[BEGAN] = time.perf_counter()  # `Logged` times the whole way from here
        try:
            self.guard.check(scope)
            response = await self.view.answer_unchanged(scope)
        except AlmanacError:
            return False  # the whole way answers it, with the error of its class
        if response is None:
            return False
        scope[CONTEXT].close()
        request_id = self.log.request_id(scope)
        start = {
            "type": "http.response.start",
            "status": response.status_code,
            "headers": [*response.raw_headers, (b"x-request-id", request_id)],
        }
        try:
            await send(start)
            await send({"type": "http.response.body", "body": response.body})
        finally:
            self.log.record(scope, request_id, response.status_code, began)
        return True


class _App(Starlette):
    """Starlette, with an unchanged poll answered before its middleware (`_Unchanged`)."""

    unchanged: _Unchanged | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if (
            self.unchanged is not None
            and scope["type"] == "http"
            and scope["method"] == "GET"
            and scope["path"] == "/graphql"
            and await self.unchanged.answered(scope, send)
        ):
            return
        await super().__call__(scope, receive, send)


class _Abortable:
    """Outermost: a WebSocket's scope gets the call that aborts its connection (`ABORT`), when
    the server's `send` reveals its transport (uvicorn's does); a client that stops reading is
    dropped through it, without a close handshake it would never read."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "websocket":
            transport = getattr(getattr(send, "__self__", None), "transport", None)
            abort = getattr(transport, "abort", None)
            if callable(abort):
                scope[ABORT] = abort
            sock = getattr(transport, "get_extra_info", lambda name: None)("socket")
            if sock is not None:  # what the kernel holds for a client that does not read
                with contextlib.suppress(OSError):
                    sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, _SOCKET_BUFFER)
        await self.app(scope, receive, send)


def _site_headers(scope: Scope, *, tokens: bool) -> dict[str, str]:
    """A request's headers (names lower-cased) once its host and site pass: without configured
    tokens only a loopback host name is answered (by name too, so DNS rebinding cannot read the
    vault), and never a cross-site request (pages, `/graphql`, WebSocket upgrades alike).

    Raises:
        Forbidden: the first rule it breaks.
    """
    headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
    if not tokens and not _loopback_host(headers):
        raise Forbidden("Without configured tokens only loopback host names are answered")
    _same_site(headers)
    return headers


def _loopback_host(headers: dict[str, str]) -> bool:
    """Whether the `Host` header names this machine (DNS rebinding cannot pass it)."""
    name = _host_name(headers.get("host", ""))
    return name is not None and is_loopback(name)


def _host_name(host: str) -> str | None:
    """The name of a `Host` header without its port, or None when it is not of that form."""
    if host.startswith("["):
        name, bracket, rest = host[1:].partition("]")
        if not bracket or (rest and not (rest[0] == ":" and rest[1:].isdigit())):
            return None
        return name
    name, colon, port = host.partition(":")
    if colon and not port.isdigit():
        return None
    return name


def _same_site(headers: dict[str, str]) -> None:
    """Refuse what a browser sends for another site's page (GET and POST alike).

    Raises:
        Forbidden: a cross-site fetch, or an `Origin` that is not this server.
    """
    if headers.get("sec-fetch-site") == "cross-site":
        raise Forbidden("Cross-site requests are refused")
    origin = headers.get("origin")
    if origin and origin != "null" and origin.split("://", 1)[-1] != headers.get("host", ""):
        raise Forbidden(f"Origin {origin!r} is not this server")


async def _read_body(receive: Receive, cap: int, headers: dict[str, str]) -> bytes:
    too_large = PayloadTooLarge(f"Request body larger than {cap} bytes")
    length = headers.get("content-length")
    if length is not None and (not length.isdigit() or int(length) > cap):
        raise too_large
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise InvalidInput("Client disconnected")
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > cap:
            raise too_large
        chunks.append(chunk)
        if not message.get("more_body"):
            return b"".join(chunks)


def _check_query_params(query_string: bytes, max_depth: int) -> None:
    try:
        params = parse_qs(query_string.decode("latin-1"), errors="strict")
    except (UnicodeDecodeError, ValueError):
        raise InvalidInput("Query string is not valid") from None
    for name in ("variables", "extensions"):
        for value in params.get(name, []):
            _check_json(value.encode("utf-8", "surrogateescape"), max_depth, what=name)


def _check_json(body: bytes, max_depth: int, *, what: str = "Request body") -> None:
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        raise InvalidInput(f"{what} is not UTF-8") from None
    if _too_deep(text, max_depth):
        raise InvalidInput(f"{what}: JSON nested deeper than {max_depth}")
    try:
        data: Any = json.loads(text)
        # Lone surrogates (from \ud800-style escapes) are not text any store can hold.
        json.dumps(data, ensure_ascii=False).encode("utf-8")
    except (ValueError, RecursionError):
        raise InvalidInput(f"{what} is not valid JSON") from None
    if not isinstance(data, dict):
        raise InvalidInput(f"{what} must be one JSON object (batching is off)")


def _too_deep(text: str, max_depth: int) -> bool:
    depth = 0
    in_string = escaped = False
    for char in text:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            if depth > max_depth:
                return True
        elif char in "]}":
            depth -= 1
    return False
