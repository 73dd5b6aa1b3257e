"""Reading `almanac.types` dataclasses as GraphQL answers: the selection a dataclass asks for,
and its value in the JSON shape of a response, so a helper's answer compares with a document's
field by field."""

from __future__ import annotations

import dataclasses
import enum
import types
import typing
from typing import Any

from strawberry.utils.str_converters import to_camel_case


def graphql_name(name: str) -> str:
    return "from" if name == "from_" else to_camel_case(name)


def _inner(hint: Any) -> Any:
    """The type a field's values have: without None, without the tuple around them."""
    origin = typing.get_origin(hint)
    if origin in (types.UnionType, typing.Union):
        (hint,) = [a for a in typing.get_args(hint) if a is not type(None)]
        return _inner(hint)
    if origin is tuple:
        return _inner(typing.get_args(hint)[0])
    return hint


def public_fields(cls: type) -> list[tuple[str, Any]]:
    hints = typing.get_type_hints(cls)
    return [(f.name, hints[f.name]) for f in dataclasses.fields(cls) if not f.name.startswith("_")]


def selection(cls: type) -> str:
    """The GraphQL selection of every field of `cls`, nested types included."""
    parts = []
    for name, hint in public_fields(cls):
        inner = _inner(hint)
        if dataclasses.is_dataclass(inner):
            parts.append(f"{graphql_name(name)} {{ {selection(inner)} }}")  # type: ignore[arg-type]
        else:
            parts.append(graphql_name(name))
    return " ".join(parts)


def as_json(value: Any) -> Any:
    """A dataclass answer as the JSON of the matching GraphQL answer."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {graphql_name(n): as_json(getattr(value, n)) for n, _ in public_fields(type(value))}
    if isinstance(value, tuple | list):
        return [as_json(v) for v in value]
    if isinstance(value, enum.Enum):
        return value.name
    return value


def timeless(value: Any, *, clock: bool = False) -> Any:
    """An answer without its `freshness` instants (they are the clock of each call), nor its
    `asOf` when that is the clock too (`clock`)."""
    dropped = {"freshness", "asOf"} if clock else {"freshness"}
    if isinstance(value, dict):
        return {k: timeless(v, clock=clock) for k, v in value.items() if k not in dropped}
    if isinstance(value, list):
        return [timeless(v, clock=clock) for v in value]
    return value
