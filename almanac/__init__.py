"""Almanac from Python: `almanac.open(vault)` and the GraphQL API in process, or typed helpers
over the same resolvers.

    import almanac

    with almanac.open("notes/") as kb:
        for path in kb.paths("people/samuel-okafor", "orgs/kestrel-cloud").paths:
            print(" -> ".join(path.nodes))

The result types and the enumerations are in `almanac.types`.
"""

from __future__ import annotations

from almanac.client import Almanac, open
from vault import (
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
