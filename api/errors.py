"""Rendering errors: the one place that decides what a client sees of an error."""

from __future__ import annotations

import logging
from collections.abc import Iterator

from graphql import GraphQLError
from strawberry.extensions import SchemaExtension

from vault import AlmanacError

__all__ = ["ErrorCodes"]

log = logging.getLogger("almanac")

_TOO_COMPLEX = ("exceeds maximum operation depth", "aliases", "token", "max_tokens")


class ErrorCodes(SchemaExtension):
    """Sets `extensions.code` on every error; masks and logs unexpected ones.

    Our own errors carry their class's code; document errors (syntax,
    validation) are `GRAPHQL_VALIDATION_FAILED`, or `QUERY_TOO_COMPLEX` when a
    limiter refused the document; anything else is a bug: logged, and shown
    only as "Unexpected error." with `INTERNAL_SERVER_ERROR`.
    """

    def on_operation(self) -> Iterator[None]:
        try:
            yield
        finally:
            context = self.execution_context.context
            close = getattr(context, "close", None)
            if close is not None:
                close()
        result = self.execution_context.result
        errors = getattr(result, "errors", None)
        if result is None or not errors:
            return
        result.errors = [_render(error) for error in errors]

    def on_validate(self) -> Iterator[None]:
        yield
        errors = self.execution_context.pre_execution_errors or []
        self.execution_context.pre_execution_errors = [_render(e) for e in errors] or None


def _render(error: GraphQLError) -> GraphQLError:
    original = error.original_error
    if isinstance(original, AlmanacError):
        code = original.code or "INTERNAL_SERVER_ERROR"
        return _with_code(error, code)
    if original is None or (error.path is None and not isinstance(original, GraphQLError)):
        # No path: the document itself was refused (syntax, validation, literal coercion).
        text = error.message.lower()
        code = (
            "QUERY_TOO_COMPLEX"
            if any(k in text for k in _TOO_COMPLEX)
            else "GRAPHQL_VALIDATION_FAILED"
        )
        return _with_code(error, code)
    if isinstance(original, GraphQLError):
        return _render(original)
    log.error("Unexpected error in %s", error.path, exc_info=original)
    return GraphQLError(
        "Unexpected error.",
        nodes=error.nodes,
        path=error.path,
        extensions={"code": "INTERNAL_SERVER_ERROR"},
    )


def _with_code(error: GraphQLError, code: str) -> GraphQLError:
    extensions = dict(error.extensions or {})
    extensions["code"] = code
    return GraphQLError(
        error.message,
        nodes=error.nodes,
        source=error.source,
        positions=error.positions,
        path=error.path,
        original_error=error.original_error,
        extensions=extensions,
    )
