from __future__ import annotations

from typing import Annotated

import strawberry

import graph
import temporal
from api.args import page_size
from api.context import Info
from api.types.graph import GraphResult, GraphSeedInput
from vault import InvalidInput

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
    limits = _limits(hops, max_paths, fan_out, hops_name="hops", hops_default=2)
    edges = _filter(direction, relations, history, as_of)
    if (seed.id is None) == (seed.text is None):
        raise InvalidInput("Argument 'seed' must have exactly one of 'id' and 'text'")
    scopes = context.readable(scope)
    reader = context.reader()
    if seed.id is not None:
        seeds = graph.seeds_by_id(reader, str(seed.id), scopes)
    else:
        text = seed.text or ""
        if not text.strip() or len(text) > graph.MAX_SEED_TEXT:
            raise InvalidInput(
                f"Argument 'seed.text' must have 1 to {graph.MAX_SEED_TEXT} characters,"
                f" not {len(text)}"
            )
        seeds = graph.seeds_by_text(reader, text, scopes)
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
    limits = _limits(max_hops, max_paths, fan_out, hops_name="maxHops", hops_default=3)
    edges = _filter(direction, relations, history, as_of)
    scopes = context.readable(scope)
    reader = context.reader()
    source = graph.seeds_by_id(reader, str(from_), scopes)
    target = graph.seeds_by_id(reader, str(to), scopes)
    result = graph.find_paths(
        context.view(), source, target, limits=limits, edges=edges, deadline=context.deadline
    )
    return GraphResult.from_domain(result, context.meta(scopes, result.degraded))


def _limits(
    hops: int | None,
    max_paths: int | None,
    fan_out: int | None,
    *,
    hops_name: str,
    hops_default: int,
) -> graph.TraversalLimits:
    return graph.TraversalLimits(
        hops=page_size(hops, default=hops_default, name=hops_name, limit=3),
        max_paths=page_size(max_paths, default=50, name="maxPaths", limit=100),
        fan_out=page_size(fan_out, default=25, name="fanOut", limit=100),
    )


def _filter(
    direction: graph.Direction | None,
    relations: list[str] | None,
    history: bool | None,
    as_of: str | None,
) -> graph.EdgeFilter:
    instant = None
    if as_of is not None:
        try:
            instant = temporal.parse_query_bound(as_of)
        except InvalidInput as exc:
            raise InvalidInput(f"Argument 'asOf': {exc}") from exc
    if relations is not None and len(relations) > 100:
        raise InvalidInput(f"Argument 'relations' takes at most 100 names, not {len(relations)}")
    return graph.EdgeFilter(
        direction=direction or graph.Direction.BOTH,
        relations=frozenset(relations) if relations is not None else None,
        as_of=instant,
        history=bool(history),
    )
