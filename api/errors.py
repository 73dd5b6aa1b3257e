"""Rendering errors: the one place that decides what a client sees of an error.

A code comes from what went wrong, never from a message's words: our own errors carry their
class's `code` (and, refusing a whole HTTP request, its `http_status`); an error of the
document itself (syntax, validation, literal coercion) is `GRAPHQL_VALIDATION_FAILED`;
anything else is a bug, logged and shown only as "Unexpected error." with
`INTERNAL_SERVER_ERROR`.
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Iterator

from graphql import GraphQLError
from starlette.responses import JSONResponse, Response
from strawberry.extensions import SchemaExtension

from almanac import temporal
from almanac.vault import AlmanacError, InvalidInput, NotFound, QueryTooComplex

__all__ = [
    "ErrorCodes",
    "MethodNotAllowed",
    "PayloadTooLarge",
    "PersistedQueryNotFound",
    "UnsupportedMediaType",
    "copy_error",
    "error_body",
    "error_response",
    "http_refusal",
    "render",
]

log = logging.getLogger("almanac")

_VALIDATION_FAILED = "GRAPHQL_VALIDATION_FAILED"
_INTERNAL = "INTERNAL_SERVER_ERROR"


class PayloadTooLarge(QueryTooComplex):
    """A request body or query string over the size limit."""

    http_status = 413


class UnsupportedMediaType(InvalidInput):
    """A POST whose body is not `application/json`."""

    http_status = 415


class MethodNotAllowed(InvalidInput):
    """An HTTP method `/graphql` does not answer."""

    http_status = 405


class PersistedQueryNotFound(AlmanacError):
    """A persisted query's hash this process does not hold (Apollo's APQ: the client sends the
    document with its hash next). Answered 200, as Apollo Server does."""

    code = "PERSISTED_QUERY_NOT_FOUND"
    http_status = 200


def http_refusal(status: int, reason: str) -> AlmanacError:
    """The error for a refusal strawberry's HTTP view raised (`HTTPException`) by its status."""
    kinds: dict[int, type[AlmanacError]] = {
        404: NotFound,
        405: MethodNotAllowed,
        413: PayloadTooLarge,
        415: UnsupportedMediaType,
    }
    return kinds.get(status, InvalidInput)(reason)


def error_body(error: AlmanacError) -> dict[str, list[dict[str, object]]]:
    """The body of a refusal of a whole request: one error, its message and code."""
    return {"errors": [{"message": str(error), "extensions": {"code": error.code or _INTERNAL}}]}


def error_response(error: AlmanacError) -> Response:
    """The response refusing a whole HTTP request: the class's status and code."""
    return JSONResponse(error_body(error), error.http_status)


class ErrorCodes(SchemaExtension):
    """Sets `extensions.code` on every error of a result (`render`)."""

    def on_operation(self) -> Iterator[None]:
        yield
        result = self.execution_context.result
        errors = getattr(result, "errors", None)
        if result is None or not errors:
            return
        result.errors = [render(error) for error in errors]


def render(error: GraphQLError) -> GraphQLError:
    """The error as a client sees it, with its `extensions.code`."""
    original = error.original_error
    message = None
    if isinstance(original, sqlite3.Error):  # raised as rows were read, after `run` returned
        original = temporal.sqlite_error(original)
        message = str(original)
    if isinstance(original, AlmanacError):
        copied = copy_error(error, code=original.code or _INTERNAL, message=message)
        if original.reason is not None:
            copied.extensions["reason"] = original.reason  # type: ignore[index]
        return copied
    if original is None or (error.path is None and not isinstance(original, GraphQLError)):
        # No path: the document itself was refused (syntax, validation, literal coercion).
        return copy_error(error, code=_VALIDATION_FAILED)
    if isinstance(original, GraphQLError):
        return render(original)
    log.error("Unexpected error in %s", error.path, exc_info=original)
    return GraphQLError(
        "Unexpected error.", nodes=error.nodes, path=error.path, extensions={"code": _INTERNAL}
    )


def copy_error(
    error: GraphQLError,
    *,
    code: str | None = None,
    message: str | None = None,
    detached: bool = False,
    cause: Exception | None = None,
) -> GraphQLError:
    """A copy of `error`, with `extensions.code` set to `code` and its message to `message` if
    given; `detached`, without the syntax nodes and path it points at (its locations stay);
    `cause` as its original error."""
    extensions = dict(error.extensions or {})
    if code is not None:
        extensions["code"] = code
    return GraphQLError(
        error.message if message is None else message,
        nodes=None if detached else error.nodes,
        source=error.source,
        positions=error.positions,
        path=None if detached else error.path,
        original_error=cause or error.original_error,
        extensions=extensions,
    )
