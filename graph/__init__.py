"""The networkx projection of the state and everything asked of it by connection."""

from __future__ import annotations

from graph.lookup import LookupResult, LookupStatus, lookup
from graph.projection import (
    Adjacency,
    Edge,
    Node,
    Projection,
    ProjectionView,
    ScopeGraph,
)
from graph.sharded import Sharded
from graph.traverse import (
    MAX_SEED_TEXT,
    Direction,
    EdgeFilter,
    GraphNode,
    GraphPath,
    GraphResult,
    GraphStep,
    LimitHit,
    Seeds,
    TraversalLimits,
    find_paths,
    seeds_by_id,
    seeds_by_text,
    traverse,
)

__all__ = [
    "MAX_SEED_TEXT",
    "Adjacency",
    "Direction",
    "Edge",
    "EdgeFilter",
    "GraphNode",
    "GraphPath",
    "GraphResult",
    "GraphStep",
    "LimitHit",
    "LookupResult",
    "LookupStatus",
    "Node",
    "Projection",
    "ProjectionView",
    "ScopeGraph",
    "Seeds",
    "Sharded",
    "TraversalLimits",
    "find_paths",
    "lookup",
    "seeds_by_id",
    "seeds_by_text",
    "traverse",
]
