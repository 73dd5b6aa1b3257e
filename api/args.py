"""Validation of request arguments: every bad value is an `InvalidInput` naming it."""

from __future__ import annotations

import base64
import binascii
import json
import re

from almanac import graph, temporal
from almanac.vault import InvalidCursor, InvalidInput, SnapshotChanged

__all__ = [
    "MAX_EXCERPT_LINES",
    "bound_us",
    "cited_revision",
    "decode_cursor",
    "decode_offset",
    "decode_position",
    "edge_filter",
    "encode_cursor",
    "graph_seed",
    "line_range",
    "optional_bound_us",
    "page_size",
    "search_cursor",
    "search_position",
    "search_variants",
    "source_grouping",
    "time_range",
    "traversal_limits",
    "zone",
]

MAX_EXCERPT_LINES = 1000
_REVISION = re.compile(r"[0-9a-f]{64}\Z")
_FIRST_INSTANT = temporal.parse_query_bound("0001-01-01")
_LAST_INSTANT = temporal.parse_query_bound("9999-12-31", upper=True)


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


def optional_bound_us(value: str | None, *, name: str, upper: bool = False) -> int | None:
    """`bound_us` of an optional argument (None when absent)."""
    return None if value is None else bound_us(value, name=name, upper=upper)


def zone(name: str | None) -> str:
    """A `timezone` argument: an IANA zone name, `UTC` when absent."""
    chosen = "UTC" if name is None else name
    try:
        temporal.timezone(chosen)
    except InvalidInput as exc:
        raise InvalidInput(f"Argument 'timezone': {exc}") from exc
    return chosen


def time_range(since: str | None, until: str | None) -> tuple[int | None, int | None]:
    """`since` and `until` in microseconds (inclusive), `since` not after `until`."""
    since_us = optional_bound_us(since, name="since")
    until_us = optional_bound_us(until, name="until", upper=True)
    if since_us is not None and until_us is not None and since_us > until_us:
        raise InvalidInput(f"Argument 'since' ({since}) is after 'until' ({until})")
    return since_us, until_us


def source_grouping(
    group: temporal.TimelineGroup,
    *,
    entity: object | None,
    kind: object | None,
    time_field: temporal.TimeField,
) -> None:
    """`group: SOURCE` needs an entity, takes no kind, and dates rows by occurrence time."""
    if group is not temporal.TimelineGroup.SOURCE:
        return
    if entity is None:
        raise InvalidInput("Argument 'group': SOURCE needs an 'entity'")
    if kind is not None:
        raise InvalidInput("Argument 'group': SOURCE rows are sources; drop 'kind'")
    if time_field is not temporal.TimeField.OCCURRED_AT:
        raise InvalidInput("Argument 'group': SOURCE dates rows by occurrence time only")


def line_range(start: int | None, end: int | None) -> tuple[int, int]:
    """The lines an `excerpt` asks for (1-based, inclusive): `startLine` at least 1 (1 when
    absent), `endLine` not before it and at most `MAX_EXCERPT_LINES` lines on; an absent
    `endLine` reads that many. Never clamped: a range too long is refused, whatever the file.
    """
    first = 1 if start is None else start
    if first < 1:
        raise InvalidInput(f"Argument 'startLine' must be at least 1, not {first}")
    if end is None:
        return first, first + MAX_EXCERPT_LINES - 1
    if end < first:
        raise InvalidInput(f"Argument 'endLine' ({end}) is before 'startLine' ({first})")
    if end - first + 1 > MAX_EXCERPT_LINES:
        raise InvalidInput(
            f"Argument 'endLine' asks for {end - first + 1} lines ({first} to {end});"
            f" at most {MAX_EXCERPT_LINES} per call"
        )
    return first, end


def cited_revision(value: str | None) -> str | None:
    """A `revision` argument: SHA-256 hex as locators give it (64 lower-case hex digits)."""
    if value is not None and not _REVISION.match(value):
        raise InvalidInput(
            f"Argument 'revision' must be a locator's revision (64 hex digits), not {value[:80]!r}"
        )
    return value


def traversal_limits(
    hops: int | None,
    max_paths: int | None,
    fan_out: int | None,
    *,
    hops_name: str,
    hops_default: int,
) -> graph.TraversalLimits:
    """The bounds of a `graph` or `paths` walk, each checked under its argument's name."""
    return graph.TraversalLimits(
        hops=page_size(hops, default=hops_default, name=hops_name, limit=3),
        max_paths=page_size(max_paths, default=50, name="maxPaths", limit=100),
        fan_out=page_size(fan_out, default=25, name="fanOut", limit=100),
    )


def edge_filter(
    direction: graph.Direction | None,
    relations: list[str] | None,
    history: bool | None,
    as_of: str | None,
) -> graph.EdgeFilter:
    """Which edges a walk follows: direction, relations (at most 100), history and `asOf`."""
    if relations is not None and len(relations) > 100:
        raise InvalidInput(f"Argument 'relations' takes at most 100 names, not {len(relations)}")
    return graph.EdgeFilter(
        direction=direction or graph.Direction.BOTH,
        relations=frozenset(relations) if relations is not None else None,
        as_of=optional_bound_us(as_of, name="asOf"),
        history=bool(history),
    )


def graph_seed(seed_id: str | None, text: str | None) -> tuple[str | None, str | None]:
    """A `graph` seed: exactly one of an id and a text of 1 to `graph.MAX_SEED_TEXT`
    characters, not only blanks."""
    if (seed_id is None) == (text is None):
        raise InvalidInput("Argument 'seed' must have exactly one of 'id' and 'text'")
    if text is not None and (not text.strip() or len(text) > graph.MAX_SEED_TEXT):
        raise InvalidInput(
            f"Argument 'seed.text' must have 1 to {graph.MAX_SEED_TEXT} characters, not {len(text)}"
        )
    return seed_id, text


def search_variants(variants: list[str] | None) -> tuple[str, ...]:
    """A search's `variants`: at most `temporal.MAX_VARIANTS` texts of at most
    `temporal.MAX_VARIANT_CHARS` characters each (none when absent)."""
    if variants is None:
        return ()
    if len(variants) > temporal.MAX_VARIANTS:
        raise InvalidInput(
            f"Argument 'variants' takes at most {temporal.MAX_VARIANTS} texts, not {len(variants)}"
        )
    for at, text in enumerate(variants):
        if len(text) > temporal.MAX_VARIANT_CHARS:
            raise InvalidInput(
                f"Argument 'variants' [{at}] must be at most {temporal.MAX_VARIANT_CHARS}"
                f" characters, not {len(text)}"
            )
    return tuple(variants)


def search_position(cursor: str, *, snapshot: str) -> tuple[int, bool]:
    """The position a search cursor of `snapshot` holds, and whether it counts the hits of a
    relaxed pass (see `search_cursor`; `temporal.search_records` refuses such a position
    where no relaxed pass runs).

    Raises:
        InvalidCursor: the cursor is not one of ours, or holds no search position.
        SnapshotChanged: the cursor belongs to another snapshot.
    """
    key = decode_cursor(cursor, snapshot=snapshot)
    found = re.fullmatch(r"(relaxed:)?([0-9]{1,18})", key)
    if found is None:
        raise InvalidCursor(f"Cursor {cursor[:40]!r} is not a search cursor")
    return int(found[2]), found[1] is not None


def search_cursor(snapshot: str, position: int, *, relaxed: bool) -> str:
    """A search cursor: the position in the snapshot's hit list, marked when the list is the
    relaxed pass's (so the next page continues that pass, in its order)."""
    return encode_cursor(snapshot, f"relaxed:{position}" if relaxed else str(position))


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


def decode_position(cursor: str, *, snapshot: str, query: str) -> tuple[int, int | None]:
    """The position a cursor of a clocked list (`timeline`) holds, and the `asOf` instant its
    first page was computed at (None for a cursor that holds a position alone).

    Raises:
        InvalidCursor: the cursor is not one of ours, or holds no position (another query's).
        SnapshotChanged: the cursor belongs to another snapshot.
    """
    key = decode_cursor(cursor, snapshot=snapshot)
    found = re.fullmatch(r"([0-9]{1,18})(?:@(-?[0-9]{1,18}))?", key)
    if found is None:
        raise InvalidCursor(f"Cursor {cursor[:40]!r} is not a {query} cursor")
    if found[2] is None:
        return int(found[1]), None
    as_of = int(found[2])
    if not _FIRST_INSTANT <= as_of <= _LAST_INSTANT:  # not an asOf we could have computed at
        raise InvalidCursor(f"Cursor {cursor[:40]!r} is not a {query} cursor")
    return int(found[1]), as_of
