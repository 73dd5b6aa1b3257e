"""Almanac from Python: `almanac.open(vault)` and the GraphQL API in process, or typed helpers
over the same resolvers.

    import almanac

    with almanac.open("notes/") as kb:
        for path in kb.paths("people/samuel-okafor", "orgs/kestrel-cloud").paths:
            print(" -> ".join(path.nodes))

The result types and the enumerations are in `almanac.types`.
"""

from __future__ import annotations

import typing

from almanac.vault import (
    AlmanacError,
    Forbidden,
    IndexUnavailable,
    InvalidInput,
    NotFound,
    QueryTooComplex,
    SnapshotChanged,
    StartupError,
)

__all__ = [
    "Almanac",
    "AlmanacError",
    "Forbidden",
    "IndexUnavailable",
    "InvalidInput",
    "NotFound",
    "QueryTooComplex",
    "SnapshotChanged",
    "StartupError",
    "open",
]

if typing.TYPE_CHECKING:
    from almanac.client import Almanac, open


def __getattr__(name: str) -> object:
    # `almanac.open` and `Almanac` bring in the API (strawberry, Starlette, networkx): only when
    # asked, so that `almanac check` and the packages below import nothing they do not use.
    if name in ("Almanac", "open"):
        import almanac.client

        value = getattr(almanac.client, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'almanac' has no attribute {name!r}")
