from __future__ import annotations

import strawberry
from strawberry.extensions import (
    DisableIntrospection,
    MaxAliasesLimiter,
    MaxTokensLimiter,
    QueryDepthLimiter,
)
from strawberry.schema.config import StrawberryConfig

from api.errors import ErrorCodes
from api.resolvers import records as resolvers
from api.resolvers.graph import graph_query, paths as graph_paths
from api.settings import Limits
from api.types.graph import GraphResult
from api.types.records import LookupResult, Record, RecordConnection, Status

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
        lambda: QueryDepthLimiter(max_depth=limits.max_depth),
        lambda: MaxAliasesLimiter(max_alias_count=limits.max_aliases),
    ]
    if not introspection:
        extensions.append(DisableIntrospection)
    return strawberry.Schema(
        query=Query,
        extensions=extensions,  # type: ignore[arg-type]
        config=StrawberryConfig(disable_field_suggestions=not introspection),
    )
