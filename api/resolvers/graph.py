from __future__ import annotations

from typing import Annotated

import strawberry

from almanac import graph
from almanac.api.args import edge_filter, graph_seed, traversal_limits
from almanac.api.context import Info
from almanac.api.types.graph import GraphResult, GraphSeedInput

__all__ = ["graph_query", "paths"]


def graph_query(
    info: Info,
    seed: GraphSeedInput,
    hops: int | None = 2,
    direction: graph.Direction | None = graph.Direction.BOTH,
    relations: list[str] | None = None,
    max_paths: int | None = 50,
    fan_out: int | None = 25,
    history: bool | None = False,
    as_of: str | None = None,
    scope: str | None = None,
) -> GraphResult:
    """Bounded traversal from a seed record or from exact names declared in a text."""
    context = info.context
    limits = traversal_limits(hops, max_paths, fan_out, hops_name="hops", hops_default=2)
    edges = edge_filter(direction, relations, history, as_of)
    seed_id, text = graph_seed(None if seed.id is None else str(seed.id), seed.text)
    scopes = context.readable(scope)
    reader = context.reader()
    if seed_id is not None:
        seeds = graph.seeds_by_id(reader, seed_id, scopes)
    else:
        seeds = graph.seeds_by_text(reader, text or "", scopes)
    result = graph.traverse(
        context.view(), seeds, limits=limits, edges=edges, deadline=context.deadline
    )
    return GraphResult.from_domain(result, context.meta(scopes, result.degraded))


def paths(
    info: Info,
    from_: Annotated[strawberry.ID, strawberry.argument(name="from")],
    to: strawberry.ID,
    max_hops: int | None = 3,
    direction: graph.Direction | None = graph.Direction.BOTH,
    relations: list[str] | None = None,
    max_paths: int | None = 50,
    fan_out: int | None = 25,
    history: bool | None = False,
    as_of: str | None = None,
    scope: str | None = None,
) -> GraphResult:
    """Simple paths between two records, under the same bounds as graph."""
    context = info.context
    limits = traversal_limits(max_hops, max_paths, fan_out, hops_name="maxHops", hops_default=3)
    edges = edge_filter(direction, relations, history, as_of)
    scopes = context.readable(scope)
    reader = context.reader()
    source = graph.seeds_by_id(reader, str(from_), scopes)
    target = graph.seeds_by_id(reader, str(to), scopes)
    result = graph.find_paths(
        context.view(), source, target, limits=limits, edges=edges, deadline=context.deadline
    )
    return GraphResult.from_domain(result, context.meta(scopes, result.degraded))
