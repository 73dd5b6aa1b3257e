"""The networkx projection of the state and everything asked of it by connection."""

from __future__ import annotations

from almanac.graph.compact import (
    CompactFile,
    CompactRows,
    CompactStamp,
    read_rows,
    read_stamped,
    write_rows,
)
from almanac.graph.projection import Projection
from almanac.graph.seeds import (
    MAX_SEED_TEXT,
    LookupResult,
    LookupStatus,
    Seeds,
    lookup,
    seeds_by_id,
    seeds_by_text,
)
from almanac.graph.sharded import Sharded
from almanac.graph.traverse import (
    Direction,
    EdgeFilter,
    GraphNode,
    GraphPath,
    GraphResult,
    GraphStep,
    LimitHit,
    TraversalLimits,
    find_paths,
    traverse,
)
from almanac.graph.view import Adjacency, Edge, Node, ProjectionView, ScopeGraph

__all__ = [
    "MAX_SEED_TEXT",
    "Adjacency",
    "CompactFile",
    "CompactRows",
    "CompactStamp",
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
    "read_rows",
    "read_stamped",
    "seeds_by_id",
    "seeds_by_text",
    "traverse",
    "write_rows",
]
