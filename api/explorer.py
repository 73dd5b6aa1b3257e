"""The explorer page at `/`, GraphiQL at `/graphql` for browsers, and their static files.

Everything a page loads ships in the package under `api/static` (vendored libraries with their
licences in `static/vendor`), so the pages work without internet; each page's
Content-Security-Policy lets it reach nothing but this server. The pages hold no vault data:
they ask `/graphql` for it, where the usual checks (tokens, scopes) apply.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import mimetypes
import re
from collections.abc import Callable
from pathlib import Path
from urllib.parse import parse_qs

from starlette.responses import FileResponse, Response
from starlette.types import ASGIApp, Receive, Scope, Send

from almanac.api.errors import error_response
from almanac.vault import AlmanacError, NotFound

__all__ = ["STATIC", "GraphQLDoor", "Pages", "wants_ide"]

STATIC = Path(__file__).parent / "static"

_COMMON = "base-uri 'none'; form-action 'self'; frame-ancestors 'none'; object-src 'none'"
# The explorer sets no inline script or style; its SVG is drawn through the DOM.
_EXPLORER_CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    f"connect-src 'self'; {_COMMON}"
)
# GraphiQL (React, CodeMirror) sets style attributes and ships its fonts as data: URLs.
_GRAPHIQL_CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
    f"img-src 'self' data:; font-src 'self' data:; connect-src 'self'; {_COMMON}"
)
_TYPES = {
    ".js": "text/javascript",
    ".css": "text/css",
    ".html": "text/html",
    ".svg": "image/svg+xml",
}


class Pages:
    """ASGI app for `/`, `/graphql` (the GraphiQL page) and `/static/...`.

    Args:
        check: Raises an `AlmanacError` for a request that must not be answered (the host and
            origin rules of the GraphQL endpoint); tokens are not asked for, as no page holds
            data.
    """

    def __init__(self, check: Callable[[Scope], object]) -> None:
        self.check = check

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            self.check(scope)
            response = _response(scope["path"])
        except AlmanacError as error:
            response = error_response(error)
        await response(scope, receive, send)


class GraphQLDoor:
    """`/graphql`: the GraphiQL page for a browser's plain GET, else the GraphQL endpoint."""

    def __init__(self, endpoint: ASGIApp, pages: Pages | None) -> None:
        self.endpoint = endpoint
        self.pages = pages

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self.pages is not None and wants_ide(scope):
            await self.pages(scope, receive, send)
        else:
            await self.endpoint(scope, receive, send)


def wants_ide(scope: Scope) -> bool:
    """Whether a request is a browser opening `/graphql` (a GET without a `query`, nor
    `extensions` that may name one by hash)."""
    if scope["type"] != "http" or scope["method"] != "GET":
        return False
    accept = ""
    for key, value in scope["headers"]:
        if key.lower() == b"accept":
            accept = value.decode("latin-1")
    if "text/html" not in accept:
        return False  # not a browser's page load: no need to parse the query string
    try:
        params = parse_qs(scope.get("query_string", b"").decode("latin-1"))
    except ValueError:
        return False
    return "query" not in params and "extensions" not in params


def _response(path: str) -> Response:
    """The file for a request path, with the page's security headers.

    Raises:
        NotFound: no such file under `static` (or a path that tries to leave it).
    """
    if path == "/":
        file, csp = STATIC / "explorer" / "index.html", _EXPLORER_CSP
    elif path == "/graphql":
        file, csp = STATIC / "graphiql" / "index.html", _GRAPHIQL_CSP
    else:
        relative = path.removeprefix("/static/")
        file = (STATIC / relative).resolve()
        if relative == path or not file.is_relative_to(STATIC.resolve()) or not file.is_file():
            raise NotFound(f"No file {path}")
        csp = _inline_csp(file) if file.parent.name == "examples" else _EXPLORER_CSP
    kind = _TYPES.get(file.suffix) or mimetypes.guess_type(file.name)[0] or "text/plain"
    headers = {
        "Content-Security-Policy": csp,
        "X-Content-Type-Options": "nosniff",
        "Referrer-Policy": "no-referrer",
        "Cache-Control": "no-cache",
    }
    return FileResponse(file, media_type=kind, headers=headers)


@functools.cache  # the package's files do not change while it runs
def _inline_csp(file: Path) -> str:
    """The CSP of a one-file example page: its own inline scripts and styles (by hash), else
    what the explorer may do."""
    text = file.read_text("utf-8")

    def hashes(tag: str) -> str:
        blocks = re.findall(rf"<{tag}[^>]*>(.*?)</{tag}>", text, re.S)
        return " ".join(
            f"'sha256-{base64.b64encode(hashlib.sha256(b.encode()).digest()).decode()}'"
            for b in blocks
        )

    return (
        f"default-src 'none'; script-src {hashes('script')}; style-src {hashes('style')}; "
        f"connect-src 'self'; {_COMMON}"
    )
