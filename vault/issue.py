from __future__ import annotations

import operator
from dataclasses import dataclass, fields
from typing import Any

__all__ = ["Issue", "reduce_by_fields"]


_GETTERS: dict[type, operator.attrgetter[Any]] = {}


def reduce_by_fields(obj: Any) -> tuple[type, tuple[object, ...]]:
    """`__reduce__` of a frozen slots dataclass: pickled as a call of its constructor.

    A cold reconcile sends parsed notes between processes; a slots dataclass's default state
    is loaded one `object.__setattr__` at a time, about three times slower.
    """
    cls = type(obj)
    getter = _GETTERS.get(cls)
    if getter is None:
        getter = _GETTERS[cls] = operator.attrgetter(*(f.name for f in fields(cls)))
    return cls, getter(obj)


@dataclass(frozen=True, slots=True)
class Issue:
    """A validation issue: a problem in the vault, reported as data, never raised.

    Args:
        path: Vault-relative POSIX path of the file.
        line: 1-based line, counting frontmatter, when one line is to blame.
        field: The frontmatter field, when one is to blame.
        code: A stable snake_case code such as `invalid_date`.
        message: What is wrong, naming the value.
        record_id: The id of the record concerned, when it has one.
    """

    path: str
    line: int | None
    field: str | None
    code: str
    message: str
    record_id: str | None = None

    __reduce__ = reduce_by_fields
