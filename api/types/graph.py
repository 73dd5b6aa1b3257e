from __future__ import annotations

from typing import Self

import strawberry

from almanac import graph
from almanac.api.types.common import Locator, LookupStatus, RecordKind, RecordRef, ResultMeta

__all__ = [
    "Direction",
    "GraphEdge",
    "GraphNode",
    "GraphPath",
    "GraphResult",
    "GraphSeedInput",
    "LimitHit",
]

Direction = strawberry.enum(graph.Direction)


@strawberry.input(description="Exactly one of id and text.")
class GraphSeedInput:
    id: strawberry.ID | None = None
    text: str | None = None


@strawberry.type
class GraphNode:
    id: strawberry.ID
    kind: RecordKind
    type: str
    title: str
    hop: int = strawberry.field(description="Fewest hops from a seed.")

    @classmethod
    def from_domain(cls, node: graph.GraphNode) -> Self:
        ref = node.ref
        return cls(
            id=strawberry.ID(ref.id), kind=ref.kind, type=ref.type, title=ref.title, hop=node.hop
        )


@strawberry.type
class GraphEdge:
    relation: str
    from_: strawberry.ID = strawberry.field(
        name="from", description="Stored direction of the edge."
    )
    to: strawberry.ID
    direction: Direction = strawberry.field(  # type: ignore[valid-type]
        description="OUT if the traversal followed the edge forward, IN if backward."
    )
    record: strawberry.ID = strawberry.field(
        description="Id of the evidence record (relationship, claim or linking record)."
    )
    locator: Locator

    @classmethod
    def from_domain(cls, step: graph.GraphStep) -> Self:
        return cls(
            relation=step.relation,
            from_=strawberry.ID(step.src),
            to=strawberry.ID(step.dst),
            direction=step.direction,
            record=strawberry.ID(step.record),
            locator=Locator.from_domain(step.locator),
        )


@strawberry.type(description="edges[i] joins nodes[i] and nodes[i+1].")
class GraphPath:
    nodes: list[strawberry.ID]
    edges: list[GraphEdge]

    @classmethod
    def from_domain(cls, path: graph.GraphPath) -> Self:
        return cls(
            nodes=[strawberry.ID(n) for n in path.nodes],
            edges=[GraphEdge.from_domain(e) for e in path.edges],
        )


@strawberry.type
class LimitHit:
    reason: str = strawberry.field(description="hop_limit, fan_out_limit or path_limit.")
    node_id: strawberry.ID | None = strawberry.field(
        description="The node where a fan-out limit cut neighbours, if any."
    )
    available: int | None = strawberry.field(
        description="Neighbours or paths that existed at that point."
    )

    @classmethod
    def from_domain(cls, hit: graph.LimitHit) -> Self:
        node = strawberry.ID(hit.node_id) if hit.node_id is not None else None
        return cls(reason=hit.reason, node_id=node, available=hit.available)


@strawberry.type
class GraphResult:
    status: LookupStatus
    seeds: list[RecordRef]
    candidates: list[RecordRef]
    nodes: list[GraphNode]
    paths: list[GraphPath]
    limits: list[LimitHit]
    meta: ResultMeta

    @classmethod
    def from_domain(cls, result: graph.GraphResult, meta: ResultMeta) -> Self:
        return cls(
            status=result.status,
            seeds=[RecordRef.from_domain(r) for r in result.seeds],
            candidates=[RecordRef.from_domain(r) for r in result.candidates],
            nodes=[GraphNode.from_domain(n) for n in result.nodes],
            paths=[GraphPath.from_domain(p) for p in result.paths],
            limits=[LimitHit.from_domain(h) for h in result.limits],
            meta=meta,
        )
