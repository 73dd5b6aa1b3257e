from __future__ import annotations

import strawberry
from strawberry.extensions import DisableIntrospection, MaxTokensLimiter
from strawberry.schema.config import StrawberryConfig

from api.errors import ErrorCodes
from api.execution import Executor, document_extensions
from api.resolvers import records as resolvers, time
from api.resolvers.graph import graph_query, paths as graph_paths
from api.resolvers.search import search
from api.settings import Limits
from api.types.graph import GraphResult
from api.types.records import LookupResult, Record, RecordConnection, Status
from api.types.search import SearchConnection
from api.types.time import LastSeenResult, OccurrenceResult, TimelineResult

__all__ = ["Query", "build_schema"]


@strawberry.type
class Query:
    status: Status = strawberry.field(
        resolver=resolvers.status,
        description="Index state, counts and validation issues of the readable scopes.",
    )
    record: Record | None = strawberry.field(
        resolver=resolvers.record,
        description="One record by exact id, or null if it does not exist or is not eligible.",
    )
    records: RecordConnection = strawberry.field(
        resolver=resolvers.records,
        description=(
            "The exhaustive inventory, filtered."
            " Ranked search never proves completeness; this does."
        ),
    )
    lookup: LookupResult = strawberry.field(
        resolver=resolvers.lookup, description="Exact id, slug, title or alias lookup. Never fuzzy."
    )
    timeline: TimelineResult = strawberry.field(
        resolver=time.timeline,
        description="Dated records, optionally of one entity, grouped by source on request.",
    )
    chronicle_day: TimelineResult = strawberry.field(
        resolver=time.chronicle_day,
        description="Everything that occurred on one local day, or in its Monday-Sunday week.",
    )
    chronicle_since: TimelineResult = strawberry.field(
        resolver=time.chronicle_since, description="Occurrence-time range, oldest first."
    )
    chronicle_last_seen: LastSeenResult = strawberry.field(
        resolver=time.chronicle_last_seen,
        description=(
            "The latest dated record associated with an entity at or before a bound (default now)."
        ),
    )
    occurrences: OccurrenceResult = strawberry.field(
        resolver=time.occurrences,
        description="Expanded occurrences of one recurring record inside a closed range.",
    )
    search: SearchConnection = strawberry.field(
        resolver=search,
        description="FTS5/BM25 keyword search over title (8), aliases (6) and body (1).",
    )
    graph: GraphResult = strawberry.field(
        resolver=graph_query,
        description="Bounded traversal from a seed record or from exact names declared in a text.",
    )
    paths: GraphResult = strawberry.field(
        resolver=graph_paths,
        description="Simple paths between two records, under the same bounds as graph.",
    )


def build_schema(limits: Limits | None = None, *, introspection: bool = True) -> strawberry.Schema:
    """The GraphQL schema with its protections as extensions."""
    limits = limits or Limits()
    extensions: list[object] = [
        ErrorCodes,
        lambda: MaxTokensLimiter(max_token_count=limits.max_tokens),
    ]
    if not introspection:
        extensions.append(DisableIntrospection)
    extensions += document_extensions(max_depth=limits.max_depth, max_aliases=limits.max_aliases)
    return strawberry.Schema(
        query=Query,
        extensions=extensions,  # type: ignore[arg-type]
        config=StrawberryConfig(disable_field_suggestions=not introspection),
        execution_context_class=Executor,
    )
