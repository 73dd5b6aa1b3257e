"""The one SQL toolkit: placeholders, chunks of parameters, statements with errors translated."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence
from typing import TypeVar

from vault import InvalidInput

__all__ = ["CHUNK", "chunks", "marks", "run"]

CHUNK = 500  # parameters per `IN (...)`: well under SQLite's limit, large enough to be cheap
T = TypeVar("T")


def marks(items: Sequence[object]) -> str:
    """SQL placeholders for `items` (`NULL` for none, so `IN (NULL)` matches nothing)."""
    return ",".join("?" * len(items)) or "NULL"


def chunks(items: Sequence[T], size: int = CHUNK) -> Iterator[Sequence[T]]:
    """`items` in slices of at most `size`, for statements with one placeholder per item."""
    for i in range(0, len(items), size):
        yield items[i : i + size]


def run(conn: sqlite3.Connection, sql: str, params: Sequence[object] = ()) -> sqlite3.Cursor:
    """Execute one statement; text SQLite cannot take is the caller's `InvalidInput`."""
    try:
        return conn.execute(sql, params)
    except UnicodeEncodeError as exc:
        raise InvalidInput("Text arguments must be valid Unicode (no lone surrogates)") from exc
