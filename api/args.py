"""Validation of request arguments: every bad value is an `InvalidInput` naming it."""

from __future__ import annotations

import base64
import binascii
import json
import re

import temporal
from vault import InvalidCursor, InvalidInput, SnapshotChanged

__all__ = [
    "bound_us",
    "decode_cursor",
    "decode_offset",
    "encode_cursor",
    "page_size",
    "query_bound",
]


def page_size(
    value: int | None, *, default: int = 20, name: str = "first", limit: int = 100
) -> int:
    """A page size in 1..limit; `default` when not given (an explicit null included)."""
    if value is None:
        return default
    if not 1 <= value <= limit:
        raise InvalidInput(f"Argument {name!r} must be between 1 and {limit}, not {value}")
    return value


def bound_us(value: str, *, name: str, upper: bool = False) -> int:
    """A `since`/`until`/`asOf` text in microseconds (inclusive; a date-only upper bound ends
    with its day).

    Raises:
        InvalidInput: not a bound, naming the argument.
    """
    try:
        return temporal.parse_query_bound(value, upper=upper)
    except InvalidInput as exc:
        raise InvalidInput(f"Argument {name!r}: {exc}") from exc


def query_bound(value: str | None, *, name: str, upper: bool = False) -> str | None:
    """A `since`/`until` text, checked (the store parses it again)."""
    if value is not None:
        bound_us(value, name=name, upper=upper)
    return value


def encode_cursor(snapshot: str, key: str) -> str:
    """An opaque cursor bound to a snapshot."""
    raw = json.dumps([snapshot, key], separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_cursor(cursor: str, *, snapshot: str) -> str:
    """The key of a cursor issued for `snapshot`.

    Raises:
        InvalidCursor: the cursor is not one of ours.
        SnapshotChanged: the cursor belongs to another snapshot.
    """
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        issued, key = json.loads(raw)
        if not isinstance(issued, str) or not isinstance(key, str):
            raise ValueError("not a cursor")
    except (ValueError, TypeError, binascii.Error, UnicodeDecodeError) as exc:
        raise InvalidCursor(f"Cursor {cursor[:40]!r} is not valid") from exc
    if issued != snapshot:
        raise SnapshotChanged(
            "The cursor belongs to another snapshot; the data changed, start again without 'after'"
        )
    return key


def decode_offset(cursor: str, *, snapshot: str, query: str) -> int:
    """The position a cursor of a positional list (search, time queries) of `snapshot` holds.

    Raises:
        InvalidCursor: the cursor is not one of ours, or holds no position (another query's).
        SnapshotChanged: the cursor belongs to another snapshot.
    """
    key = decode_cursor(cursor, snapshot=snapshot)
    if not re.fullmatch(r"[0-9]{1,18}", key):
        raise InvalidCursor(f"Cursor {cursor[:40]!r} is not a {query} cursor")
    return int(key)
