from __future__ import annotations

import contextlib
import json
import os
from collections.abc import AsyncIterator
from typing import Any
from urllib.parse import parse_qs

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from api.context import AlmanacGraphQL, scopes_for_token
from api.schema import build_schema
from api.services import Services, now_us
from api.settings import Limits, Settings
from vault import AlmanacError

__all__ = ["app_from_env", "create_app"]


def create_app(settings: Settings, *, graph: bool = True) -> Starlette:
    """The Starlette app: GraphQL (and GraphiQL) at `/graphql`, `/healthz`.

    The store is opened and reconciled before the first request; with `graph`, the graph
    projection is built then too, else on the first request that traverses.
    """
    services = Services.open(settings, now_us=now_us(), graph=graph)
    schema = build_schema(settings.limits, introspection=settings.introspection)
    graphql = AlmanacGraphQL(
        schema, services=services, graphql_ide="graphiql" if settings.graphiql else None
    )

    async def healthz(request: Request) -> Response:
        return JSONResponse({"status": "ok"})

    async def home(request: Request) -> Response:
        return RedirectResponse("/graphql")

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        try:
            yield
        finally:
            services.close()

    app = Starlette(
        routes=[
            Route("/", home),
            Route("/graphql", Guard(graphql, services, settings.limits), methods=["GET", "POST"]),
            Route("/healthz", healthz),
        ],
        lifespan=lifespan,
    )
    app.state.services = services
    return app


def app_from_env() -> Starlette:
    """`uvicorn --factory api.app:app_from_env`: settings from `ALMANAC_*` variables."""
    return create_app(Settings.from_env(os.environ))


class Guard:
    """ASGI protections in front of strawberry: size, type, JSON shape, origin, credentials."""

    def __init__(self, app: ASGIApp, services: Services, limits: Limits) -> None:
        self.app = app
        self.services = services
        self.limits = limits

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        client = scope.get("client")
        if not self.services.settings.tokens and not _loopback_host(headers, client):
            # No tokens: loopback only, and by name too, so DNS rebinding cannot read the vault.
            message = "Without configured tokens only loopback host names are answered"
            await _error(403, message, "FORBIDDEN")(scope, receive, send)
            return
        try:
            scope["almanac.scopes"] = scopes_for_token(
                self.services, headers.get("authorization"), client[0] if client else None
            )
        except AlmanacError as exc:
            status = 401 if exc.code == "UNAUTHENTICATED" else 403
            await _error(status, str(exc), exc.code or "FORBIDDEN")(scope, receive, send)
            return
        if scope["method"] == "GET":
            query_string = scope.get("query_string", b"")
            if len(query_string) > self.limits.max_body_bytes:
                await _error(413, "Query string too large", "QUERY_TOO_COMPLEX")(
                    scope, receive, send
                )
                return
            problem = _query_params_problem(query_string, self.limits.max_json_depth)
            if problem:
                await _error(*problem)(scope, receive, send)
                return
            await self.app(scope, receive, send)
            return
        problem = _cross_site(headers) or _content_type(headers)
        if problem:
            await _error(*problem)(scope, receive, send)
            return
        body, problem = await _read_body(receive, self.limits.max_body_bytes, headers)
        if problem is None:
            problem = _json_problem(body, self.limits.max_json_depth)
        if problem:
            await _error(*problem)(scope, receive, send)
            return
        sent = False

        async def replay() -> Message:
            nonlocal sent
            if sent:
                return await receive()
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}

        await self.app(scope, replay, send)


def _loopback_host(headers: dict[str, str], client: tuple[str, int] | None) -> bool:
    host = headers.get("host", "")
    name = host.rsplit(":", 1)[0] if not host.endswith("]") else host
    if name in ("127.0.0.1", "localhost", "[::1]") or name.startswith("127."):
        return True
    # Starlette's in-process TestClient (and `almanac query`) talk to "testserver".
    return name == "testserver" and client is not None and client[0] == "testclient"


def _cross_site(headers: dict[str, str]) -> tuple[int, str, str] | None:
    if headers.get("sec-fetch-site") == "cross-site":
        return 403, "Cross-site requests are refused", "FORBIDDEN"
    origin = headers.get("origin")
    if origin and origin != "null":
        host = headers.get("host", "")
        if origin.split("://", 1)[-1] != host:
            return 403, f"Origin {origin!r} is not this server", "FORBIDDEN"
    return None


def _content_type(headers: dict[str, str]) -> tuple[int, str, str] | None:
    kind = headers.get("content-type", "").split(";")[0].strip().lower()
    if kind != "application/json":
        return 415, "POST bodies must be application/json", "BAD_USER_INPUT"
    return None


async def _read_body(
    receive: Receive, cap: int, headers: dict[str, str]
) -> tuple[bytes, tuple[int, str, str] | None]:
    too_large = (413, f"Request body larger than {cap} bytes", "QUERY_TOO_COMPLEX")
    length = headers.get("content-length")
    if length is not None and (not length.isdigit() or int(length) > cap):
        return b"", too_large
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return b"", (400, "Client disconnected", "BAD_USER_INPUT")
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > cap:
            return b"", too_large
        chunks.append(chunk)
        if not message.get("more_body"):
            return b"".join(chunks), None


def _query_params_problem(query_string: bytes, max_depth: int) -> tuple[int, str, str] | None:
    try:
        params = parse_qs(query_string.decode("latin-1"), errors="strict")
    except (UnicodeDecodeError, ValueError):
        return 400, "Query string is not valid", "BAD_USER_INPUT"
    for name in ("variables", "extensions"):
        for value in params.get(name, []):
            problem = _json_problem(value.encode("utf-8", "surrogateescape"), max_depth, what=name)
            if problem:
                return problem
    return None


def _json_problem(
    body: bytes, max_depth: int, *, what: str = "Request body"
) -> tuple[int, str, str] | None:
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        return 400, f"{what} is not UTF-8", "BAD_USER_INPUT"
    if _too_deep(text, max_depth):
        return 400, f"{what}: JSON nested deeper than {max_depth}", "BAD_USER_INPUT"
    try:
        data: Any = json.loads(text)
        # Lone surrogates (from \ud800-style escapes) are not text any store can hold.
        json.dumps(data, ensure_ascii=False).encode("utf-8")
    except (ValueError, RecursionError):
        return 400, f"{what} is not valid JSON", "BAD_USER_INPUT"
    if not isinstance(data, dict):
        return 400, f"{what} must be one JSON object (batching is off)", "BAD_USER_INPUT"
    return None


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


def _error(status: int, message: str, code: str) -> Response:
    return JSONResponse({"errors": [{"message": message, "extensions": {"code": code}}]}, status)
