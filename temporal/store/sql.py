"""The one SQL toolkit: placeholders, chunks of parameters, statements with errors translated."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence
from typing import TypeVar

from almanac.vault import AlmanacError, IndexUnavailable, InvalidInput, QueryTooComplex

__all__ = ["CHUNK", "chunks", "marks", "run", "sqlite_error"]

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
    """Execute one statement; text SQLite cannot take is the caller's `InvalidInput`, SQLite's
    own errors are the project's (`sqlite_error`)."""
    try:
        return conn.execute(sql, params)
    except UnicodeEncodeError as exc:
        raise InvalidInput("Text arguments must be valid Unicode (no lone surrogates)") from exc
    except sqlite3.Error as exc:
        raise sqlite_error(exc) from exc


def sqlite_error(exc: sqlite3.Error) -> AlmanacError:
    """The project's error for one of SQLite's: a statement interrupted at its deadline (by the
    read's progress handler) is `QueryTooComplex`, anything else `IndexUnavailable`. Rows are
    read lazily, so a statement can fail after `run` returned: `api.errors.render` asks here
    too."""
    if isinstance(exc, sqlite3.OperationalError) and "interrupted" in str(exc):
        return QueryTooComplex("The query ran past its time limit")
    return IndexUnavailable(f"State database error: {exc}")
