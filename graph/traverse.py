"""Bounded traversal and simple paths over one published projection view (SPEC 5).

Every bound is applied while walking, never after: a node expands at most `fan_out` distinct
neighbours, taken from its presorted adjacency in (relation, neighbour id) order (without a
filter, from the first distinct neighbours kept with the projection, `Adjacency.firsts`), so a
hub's other neighbours are never looked at (their number comes from the precomputed counts
unless a relation or `as_of` filter makes counting necessary). Between a node and a neighbour
the first qualifying edge in (relation, evidence id) order is the one used; parallel edges
never make extra paths. Internally a node is (scope, id): links resolve only inside a scope,
so a walk never leaves the scope of its seed.
"""

from __future__ import annotations

import time
from collections.abc import Container, Iterator
from dataclasses import dataclass, field
from enum import Enum
from typing import NamedTuple

from almanac import temporal
from almanac.graph.seeds import LookupStatus, Seeds
from almanac.graph.view import FIRSTS, SUPERSEDED_BY, ProjectionView, Step
from almanac.temporal import RecordRef
from almanac.vault import QueryTooComplex

__all__ = [
    "Direction",
    "EdgeFilter",
    "GraphNode",
    "GraphPath",
    "GraphResult",
    "GraphStep",
    "LimitHit",
    "TraversalLimits",
    "find_paths",
    "traverse",
]

_CHECK_EVERY = 1024

_Key = tuple[str, str]  # (scope, record id)
_new = tuple.__new__


class Direction(Enum):
    """Which stored direction a traversal follows; on an edge, which way it was followed."""

    OUT = "out"
    IN = "in"
    BOTH = "both"


@dataclass(frozen=True, slots=True)
class TraversalLimits:
    """The bounds of one traversal (already validated by the caller)."""

    hops: int = 2
    max_paths: int = 50
    fan_out: int = 25


@dataclass(frozen=True, slots=True)
class EdgeFilter:
    """Which edges qualify: direction, relation names, validity instant, history."""

    direction: Direction = Direction.BOTH
    relations: frozenset[str] | None = None
    as_of: int | None = None
    history: bool = False


# Answers are made of named tuples: a traversal builds one step, one path and one node per
# node it reaches, and a tuple is made several times faster than a frozen dataclass. In the
# loops they are made by `_new` (`tuple.__new__`, what their own `__new__` calls) directly.
class GraphStep(NamedTuple):
    """One edge of a path: stored ends, the way it was followed, and its evidence."""

    relation: str
    src: str
    dst: str
    direction: Direction
    record: str
    locator: temporal.Locator


class GraphPath(NamedTuple):
    """`edges[i]` joins `nodes[i]` and `nodes[i + 1]`."""

    nodes: tuple[str, ...]
    edges: tuple[GraphStep, ...]


class GraphNode(NamedTuple):
    """A record reached, with its fewest hops from a seed."""

    ref: RecordRef
    hop: int


@dataclass(frozen=True, slots=True)
class LimitHit:
    """A bound that cut the result: `hop_limit`, `fan_out_limit` or `path_limit`."""

    reason: str
    node_id: str | None = None
    available: int | None = None


@dataclass(frozen=True, slots=True)
class GraphResult:
    """The answer of `graph` or `paths`; `degraded` lists the reasons of `limits`."""

    status: LookupStatus
    seeds: tuple[RecordRef, ...]
    candidates: tuple[RecordRef, ...]
    nodes: tuple[GraphNode, ...]
    paths: tuple[GraphPath, ...]
    limits: tuple[LimitHit, ...]
    # The distinct reasons of the limits hit, sorted: made with the result, so that reading it
    # calls nothing back here (data flows down once and back once).
    degraded: tuple[str, ...] = field(init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "degraded", tuple(sorted({hit.reason for hit in self.limits})))


def traverse(
    view: ProjectionView,
    seeds: Seeds,
    *,
    limits: TraversalLimits,
    edges: EdgeFilter,
    deadline: float | None = None,
) -> GraphResult:
    """Breadth-first discovery from the seeds, one path per reached node.

    Seeds get no path of their own; `nodes` holds the seeds (hop 0) and every reached node in
    discovery order. Reaching a bound adds a `LimitHit`: `fan_out_limit` per node whose
    distinct neighbours were cut (with how many it really had), `path_limit` when a further
    node was found after `max_paths`, `hop_limit` when a node of the last hop still had an
    unvisited neighbour.

    Raises:
        QueryTooComplex: the walk ran past `deadline` (monotonic seconds).
    """
    refs = tuple(ref for _, ref in seeds.found)
    if seeds.status is not LookupStatus.FOUND:
        return GraphResult(seeds.status, refs, seeds.candidates, (), (), ())
    walker = _Walker(view, edges, limits.fan_out, deadline)
    # Per scope, the path of each reached node (its parent's plus one step, built once, at
    # discovery); a walk never leaves the scope of its seed.
    reached: dict[str, dict[str, GraphPath]] = {}
    order: list[tuple[str, str, int]] = []  # (scope, id, hop) in discovery order
    for scope, ref in seeds.found:
        in_scope = reached.setdefault(scope, {})
        if ref.id not in in_scope:
            in_scope[ref.id] = GraphPath((ref.id,), ())
            order.append((scope, ref.id, 0))
    paths: list[GraphPath] = []
    hits: list[LimitHit] = []
    max_paths = limits.max_paths
    full = False
    start = 0  # the frontier is order[start:]
    for hop in range(1, limits.hops + 1):
        frontier, start = order[start:], len(order)
        for scope, rid, _ in frontier:
            in_scope = reached[scope]
            ids, steps = in_scope[rid]
            for step in walker.expand((scope, rid), hits):
                neighbour = step[1]
                if neighbour in in_scope:
                    continue
                if len(paths) == max_paths:
                    full = True
                    break
                path = in_scope[neighbour] = _new(
                    GraphPath, ((*ids, neighbour), (*steps, _step(step)))
                )
                paths.append(path)
                order.append((scope, neighbour, hop))
            if full:
                break
        if full or start == len(order):
            break
    else:
        if any(walker.has_unvisited((s, i), reached[s]) for s, i, _ in order[start:]):
            hits.append(LimitHit("hop_limit"))
    if full:
        hits.append(LimitHit("path_limit"))
    return GraphResult(LookupStatus.FOUND, refs, (), _nodes(view, order), tuple(paths), tuple(hits))


def find_paths(
    view: ProjectionView,
    source: Seeds,
    target: Seeds,
    *,
    limits: TraversalLimits,
    edges: EdgeFilter,
    deadline: float | None = None,
) -> GraphResult:
    """Simple paths (no node twice) from `source` to `target` of at most `limits.hops` edges.

    Shortest first, then by their sequence of node ids; at most `limits.max_paths` (a
    `path_limit` hit then says how many there were within the other bounds). Each node expands
    at most `fan_out` distinct neighbours, as in `traverse`.

    Raises:
        QueryTooComplex: the search ran past `deadline` (monotonic seconds).
    """
    refs = tuple(ref for _, ref in source.found)
    for seeds in (source, target):
        if seeds.status is not LookupStatus.FOUND:
            found = tuple(ref for _, ref in seeds.found)
            return GraphResult(seeds.status, found, seeds.candidates, (), (), ())
    start = (source.found[0][0], source.found[0][1].id)
    goal = (target.found[0][0], target.found[0][1].id)
    walker = _Walker(view, edges, limits.fan_out, deadline)
    hits: list[LimitHit] = []
    found_paths: list[tuple[tuple[_Key, ...], tuple[Step, ...]]] = []
    cut = False
    if start[0] == goal[0] and start != goal:
        stack: list[tuple[_Key, tuple[_Key, ...], tuple[Step, ...]]] = [(start, (start,), ())]
        while stack:
            walker.check()
            node, on_path, steps = stack.pop()
            for step in walker.expand(node, hits):
                key = (node[0], step[1])
                if key == goal:
                    found_paths.append(((*on_path, key), (*steps, step)))
                elif key in on_path:
                    continue
                elif len(steps) + 1 >= limits.hops:
                    cut = True
                else:
                    stack.append((key, (*on_path, key), (*steps, step)))
    found_paths.sort(key=lambda p: (len(p[1]), [k[1] for k in p[0]]))
    if cut:
        hits.append(LimitHit("hop_limit"))
    if len(found_paths) > limits.max_paths:
        hits.append(LimitHit("path_limit", None, len(found_paths)))
    kept = found_paths[: limits.max_paths]
    hop_of: dict[_Key, int] = {start: 0}
    for keys, _ in kept:
        for i, key in enumerate(keys):
            if hop_of.get(key, i + 1) > i:
                hop_of[key] = i
    paths = tuple(
        GraphPath(tuple(k[1] for k in keys), tuple(_step(s) for s in steps)) for keys, steps in kept
    )
    nodes = _nodes(view, [(scope, rid, hop) for (scope, rid), hop in hop_of.items()])
    return GraphResult(LookupStatus.FOUND, refs, (), nodes, paths, tuple(hits))


class _Walker:
    """Expands nodes under the edge filter and the fan-out bound, once per node."""

    def __init__(
        self, view: ProjectionView, edges: EdgeFilter, fan_out: int, deadline: float | None
    ) -> None:
        self.view = view
        self.edges = edges
        self.fan_out = fan_out
        self.deadline = deadline
        self.ticks = 0
        self.expanded: dict[_Key, list[Step]] = {}
        self.forward = edges.direction is not Direction.IN
        self.backward = edges.direction is not Direction.OUT
        self.counting = edges.relations is not None or edges.as_of is not None
        self.mode = 2 if self.forward and self.backward else 0 if self.forward else 1

    def expand(self, node: _Key, hits: list[LimitHit]) -> list[Step]:
        """The steps to the first `fan_out` distinct qualifying neighbours of `node` (the
        neighbour is `step[1]`), each by its first qualifying edge."""
        known = self.expanded.get(node)
        if known is not None:
            return known
        self.check()
        fan_out, counting = self.fan_out, self.counting
        if not counting and not self.edges.history and fan_out < FIRSTS:
            # No filter: the node's first distinct neighbours are kept with the projection.
            firsts = self.view.adjacency(*node).firsts[self.mode]
            chosen = list(firsts[:fan_out])
            if len(firsts) > fan_out:
                self._cut(node, hits, None)
            self.expanded[node] = chosen
            return chosen
        chosen = []
        seen: set[str] = set()
        over = False
        for step in self._steps(node):
            neighbour = step[1]
            if neighbour in seen:
                continue
            seen.add(neighbour)
            if len(chosen) == fan_out:
                over = True
                if not counting:
                    break
                continue  # a filter is on: count the qualifying neighbours by walking on
            chosen.append(step)
        if over:
            self._cut(node, hits, len(seen) if counting else None)
        self.expanded[node] = chosen
        return chosen

    def _cut(self, node: _Key, hits: list[LimitHit], available: int | None) -> None:
        """Note that the fan-out cut `node`'s neighbours; without a count from a filtered walk,
        how many it has comes from the counts kept with the projection."""
        if available is None:
            available = self.view.adjacency(*node).count(
                forward=self.forward, backward=self.backward, history=self.edges.history
            )
        hits.append(LimitHit("fan_out_limit", node[1], available))

    def check(self) -> None:
        """Raise when past the deadline.

        Raises:
            QueryTooComplex: the request's time limit has passed.
        """
        if self.deadline is not None and time.monotonic() > self.deadline:
            raise QueryTooComplex("The traversal ran past the request's time limit")

    def has_unvisited(self, node: _Key, reached: Container[str]) -> bool:
        """Whether a qualifying neighbour of `node` (in its scope) was not reached."""
        return any(step[1] not in reached for step in self._steps(node))

    def _steps(self, node: _Key) -> Iterator[Step]:
        """Qualifying steps from `node` in (relation, neighbour, evidence, direction) order."""
        adjacency = self.view.adjacency(*node)
        stream = (adjacency.out, adjacency.inc, adjacency.both)[self.mode]
        relations, as_of, history = self.edges.relations, self.edges.as_of, self.edges.history
        for step in stream:
            self.ticks += 1
            if not self.ticks % _CHECK_EVERY:
                self.check()
            relation = step[0]
            if relations is not None and relation not in relations:
                continue
            if not history and relation == SUPERSEDED_BY:
                continue
            if as_of is not None and not step[4].valid_at(as_of):
                continue
            yield step


def _step(step: Step) -> GraphStep:
    edge = step[4]
    way = Direction.IN if step[3] else Direction.OUT
    return _new(GraphStep, (edge.relation, edge.src, edge.dst, way, edge.evidence, edge.locator))


def _nodes(view: ProjectionView, order: list[tuple[str, str, int]]) -> tuple[GraphNode, ...]:
    """The reached nodes, given as (scope, id, hop) in discovery order, with their records."""
    ids: dict[str, list[str]] = {}
    for scope, rid, _ in order:
        ids.setdefault(scope, []).append(rid)
    records = {scope: iter(view.scopes[scope].nodes.pick(some)) for scope, some in ids.items()}
    return tuple(_new(GraphNode, (next(records[scope]).ref, hop)) for scope, _, hop in order)
