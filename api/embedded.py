"""The API run in this process, without HTTP: what the Python package `almanac` stands on.

Every call is a request of its own, as one over HTTP is: the freshness promise kept first (the
watcher, else a scan), then one read transaction and its graph view, one clock stamp and the
request's deadline. `execute` runs a GraphQL document and answers what `POST /graphql` answers.
`resolve` calls the very resolver a `Query` field calls, its arguments checked first against
that field's own argument types (read off the schema, so an argument added to a resolver is
accepted here with no change), then by the resolver itself (`api/args.py`): a typed helper and
a document share every rule.

Python values stand for the API's text where an argument is a `String` or an `ID`: an aware
`datetime` is its UTC instant (`format_instant`), a `date` its ISO day, a `ZoneInfo` its name.
"""

from __future__ import annotations

import contextlib
import enum
import json
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from datetime import date, datetime, tzinfo
from typing import Any, cast

from strawberry.http import process_result
from strawberry.types.base import (
    StrawberryList,
    StrawberryOptional,
    get_object_definition,
    has_object_definition,
)
from strawberry.types.unset import UNSET
from strawberry.utils.str_converters import to_camel_case

from almanac import temporal
from almanac.api.app import check_body
from almanac.api.context import Context
from almanac.api.errors import error_body
from almanac.api.schema import Query, build_schema
from almanac.api.services import Services, now_us
from almanac.api.settings import Settings
from almanac.vault import AlmanacError, InvalidInput

__all__ = ["Embedded"]


class Embedded:
    """The store, the schema and the resolvers of one vault, called in process.

    Safe to call from several threads: each call has its own read transaction; reconciles are
    serialised and shared as the server's are.
    """

    def __init__(
        self, settings: Settings, *, progress: Callable[[int, int], None] | None = None
    ) -> None:
        """Open the state database, reconcile once (`progress(done, total)` as files are
        read) and build the graph projection. (Built now, as the server does, rather than on
        the first traversal, as `almanac query` does: a read begun before a later reconcile
        must find the graph of its own snapshot, and only a projection kept from the start
        has one.)

        Raises:
            IndexUnavailable: the state database cannot be used.
        """
        self.settings = settings
        self.services = Services.open(settings, now_us=now_us(), progress=progress)
        self.schema = build_schema(settings.limits, introspection=settings.introspection)
        self._fields = {f.python_name: f for f in get_object_definition(Query, strict=True).fields}
        self._closed = threading.Event()

    def close(self) -> None:
        """Release the watcher and the database (once; later calls do nothing)."""
        if self._closed.is_set():
            return
        self._closed.set()
        self.schema.shutdown()
        self.services.close()

    @contextlib.contextmanager
    def request(self) -> Iterator[Context]:
        """One request's context: the vault's changes so far indexed, the clock stamped; its
        read transaction ends with the block.

        Raises:
            InvalidInput: the API was closed.
        """
        if self._closed.is_set():
            raise InvalidInput("This Almanac is closed")
        stamp = now_us()
        deadline = time.monotonic() + self.settings.limits.request_seconds
        context = Context(self.services, None, stamp, deadline=deadline)
        try:
            self.services.ensure_fresh_blocking(now_us=stamp)
        except AlmanacError:
            # As the server: the last committed snapshot is consistent; answer it, and say so.
            context.degraded = ("index_stale",)
        try:
            yield context
        finally:
            context.close()

    def execute(
        self,
        document: str,
        variables: Mapping[str, object] | None = None,
        *,
        operation_name: str | None = None,
    ) -> dict[str, Any]:  # Any: the GraphQL answer's JSON
        """What `POST /graphql` answers for this body: `data` and `errors`, the same limits
        (the body's size and JSON, the document's, the request's time).

        Raises:
            InvalidInput: `document` is not a string or `variables` not a mapping (the body
                could not even be written).
        """
        if not isinstance(document, str):
            raise InvalidInput(f"The document must be a string, not {type(document).__name__}")
        if variables is not None and not isinstance(variables, Mapping):
            raise InvalidInput(f"Variables must be a mapping, not {type(variables).__name__}")
        payload: dict[str, object] = {"query": document, "variables": variables}
        if operation_name is not None:
            payload["operationName"] = operation_name
        try:
            body = json.dumps(payload, ensure_ascii=False).encode("utf-8", "surrogatepass")
        except (TypeError, ValueError) as exc:
            raise InvalidInput(f"Variables are not JSON: {exc}") from exc
        try:
            check_body(body, self.settings.limits)
        except AlmanacError as error:
            return error_body(error)
        sent = json.loads(body)  # what the server reads: JSON values only
        with self.request() as context:
            result = self.schema.execute_sync(
                sent["query"],
                variable_values=sent["variables"],
                context_value=context,
                operation_name=operation_name,
            )
            return dict(process_result(result))

    def resolve(self, context: Context, field: str, arguments: Mapping[str, object]) -> Any:
        """What the resolver of `Query.<field>` returns for `arguments` (Python names), read in
        `context` (the caller maps the answer before the context ends: some fields read lazily).

        Raises:
            InvalidInput: an argument the field does not take, or a value of the wrong type,
                naming it; or whatever the resolver raises.
        """
        definition = self._fields[field]
        known = {a.python_name: a for a in definition.arguments}
        kwargs: dict[str, object] = {}
        for key, value in arguments.items():
            argument = known.get(key)
            if argument is None:
                raise InvalidInput(f"Unknown argument {key!r} of {field!r}")
            name = argument.graphql_name or to_camel_case(key)
            kwargs[key] = _coerce(value, argument.type, name)
        resolver = definition.base_resolver
        assert resolver is not None
        # Our resolvers are plain functions (never a staticmethod or classmethod).
        function = cast("Callable[..., Any]", resolver.wrapped_func)
        return function(_Info(context), **kwargs)

    def arguments(self, field: str) -> frozenset[str]:
        """The arguments `Query.<field>` takes (Python names)."""
        return frozenset(a.python_name for a in self._fields[field].arguments)

    def defaults(self, field: str) -> dict[str, object]:
        """The default of each argument of `Query.<field>` that has one (Python names)."""
        return {
            a.python_name: a.default
            for a in self._fields[field].arguments
            if a.default is not UNSET
        }


class _Info:
    """What a resolver reads of strawberry's `Info`: the request's context, and nothing else."""

    __slots__ = ("context",)

    def __init__(self, context: Context) -> None:
        self.context = context


def _coerce(value: object, kind: object, name: str) -> object:
    """`value` as the argument type `kind` takes it, or InvalidInput naming the argument."""
    if isinstance(kind, StrawberryOptional):
        return None if value is None else _coerce(value, kind.of_type, name)
    if value is None:
        raise InvalidInput(f"Argument {name!r} is required; None is not a value of it")
    if isinstance(kind, StrawberryList):
        if isinstance(value, (str, bytes, Mapping)) or not hasattr(value, "__iter__"):
            raise InvalidInput(f"Argument {name!r} takes a list, not {type(value).__name__}")
        return [_coerce(item, kind.of_type, name) for item in value]
    kind = getattr(kind, "wrapped_cls", kind)  # an enum's strawberry definition: the enum
    if isinstance(kind, type) and issubclass(kind, enum.Enum):
        return _member(value, kind, name)
    if isinstance(kind, type) and has_object_definition(kind):
        return _input(value, kind, name)
    if kind in (int, float) and isinstance(value, bool):
        raise InvalidInput(f"Argument {name!r} takes a number, not {value!r}")
    if kind is int and isinstance(value, int):
        return value
    if kind is float and isinstance(value, (int, float)):
        return float(value)
    if kind is bool and isinstance(value, bool):
        return value
    if kind not in (int, float, bool):  # String and ID
        return _text(value, name)
    wanted = {int: "an integer", float: "a number", bool: "True or False"}[kind]
    raise InvalidInput(f"Argument {name!r} takes {wanted}, not {value!r}")


def _text(value: object, name: str) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, datetime):
        if value.tzinfo is None or value.utcoffset() is None:
            raise InvalidInput(f"Argument {name!r}: datetime {value} has no timezone")
        return temporal.format_instant(value)
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, tzinfo) and isinstance(getattr(value, "key", None), str):
        return str(value.key)  # type: ignore[attr-defined]
    raise InvalidInput(f"Argument {name!r} takes a text, not {type(value).__name__}")


def _member(value: object, kind: type[enum.Enum], name: str) -> enum.Enum:
    if isinstance(value, kind):
        return value
    if isinstance(value, str):
        for member in kind:
            if value in (member.name, member.value) or value.upper() == member.name:
                return member
    names = ", ".join(m.name for m in kind)
    raise InvalidInput(f"Argument {name!r} must be one of {names}, not {value!r}")


def _input(value: object, kind: type, name: str) -> object:
    """An input object from a mapping of its fields (Python names), each checked."""
    if isinstance(value, kind):
        return value
    if not isinstance(value, Mapping):
        raise InvalidInput(f"Argument {name!r} takes a mapping, not {type(value).__name__}")
    fields = {f.python_name: f for f in get_object_definition(kind, strict=True).fields}
    given: dict[str, object] = {}
    for key, item in value.items():
        field = fields.get(key)
        if field is None:
            raise InvalidInput(f"Unknown field {key!r} of argument {name!r}")
        inner = f"{name}.{field.graphql_name or to_camel_case(key)}"
        given[key] = _coerce(item, field.type, inner)
    return kind(**given)
