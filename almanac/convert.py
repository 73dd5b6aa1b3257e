"""The API's answer objects as `almanac.types` dataclasses: read field by field, by name.

The dataclass says what it holds; each of its fields is read off the API's object of the same
name (a field the API computes on request, such as `Coverage.issues`, is called with its
defaults), lists become tuples, nested types are converted in turn. Nothing is computed here.
"""

from __future__ import annotations

import dataclasses
import functools
import types
import typing
from typing import Any, TypeVar, cast

__all__ = ["convert"]

T = TypeVar("T")


def convert(cls: type[T], value: object) -> T:
    """`value` (an API answer object) as a `cls` dataclass."""
    return cast(T, _value(cls, value))


@functools.cache
def _hints(cls: type) -> tuple[tuple[str, Any], ...]:  # Any: a type annotation
    hints = typing.get_type_hints(cls)
    return tuple(
        (f.name, hints[f.name]) for f in dataclasses.fields(cls) if f.init and f.name[0] != "_"
    )


def _value(kind: Any, value: Any) -> Any:  # Any: a type annotation, and what it describes
    if value is None:
        return None
    origin = typing.get_origin(kind)
    if origin in (types.UnionType, typing.Union):
        inner = [a for a in typing.get_args(kind) if a is not type(None)]
        return _value(inner[0], value) if len(inner) == 1 else value
    if origin is tuple:
        item = typing.get_args(kind)[0]
        return tuple(_value(item, v) for v in value)
    if isinstance(kind, type) and dataclasses.is_dataclass(kind):
        fields = {}
        for name, hint in _hints(kind):
            attribute = getattr(value, name)
            if callable(attribute) and not isinstance(attribute, type):
                attribute = attribute()  # a field the API computes when asked (its defaults)
            fields[name] = _value(hint, attribute)
        return kind(**fields)
    if kind is str:
        return str(value)
    return value
