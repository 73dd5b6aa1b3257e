"""The immutable view of the graph that requests read: nodes, edges and presorted adjacency.

Per scope, the node identities and, per node, its incident edges presorted by (relation,
neighbour id, evidence id) with its distinct-neighbour counts, so a bounded traversal reads a
hub's first neighbours without looking at the rest. The projection (`graph/projection.py`)
builds a new view after each reconcile; a request keeps the view it started with.
"""

from __future__ import annotations

import bisect
import heapq
from collections.abc import Mapping
from dataclasses import dataclass, field

import networkx as nx

from almanac import temporal
from almanac.graph.sharded import Sharded
from almanac.temporal import RecordRef

__all__ = [
    "BACKWARD",
    "FIRSTS",
    "FORWARD",
    "SUPERSEDED_BY",
    "Adjacency",
    "Edge",
    "Node",
    "ProjectionView",
    "ScopeGraph",
    "Step",
    "adjacency_of",
    "patched_adjacency",
]

SUPERSEDED_BY = "superseded_by"
FIRSTS = 101  # distinct neighbours kept per node for unfiltered traversals: fan-out 100, plus one
FORWARD, BACKWARD = 0, 1  # a step's stored direction


@dataclass(frozen=True, slots=True, order=True)
class Edge:
    """One edge as stored: its relation, stored direction, evidence and where it is written."""

    relation: str
    src: str
    dst: str
    evidence: str
    path: str
    line: int
    line_end: int
    revision: str
    valid_from: int | None
    valid_until: int | None
    # `locator`, made on first use and kept (a frozen dataclass costs microseconds to make, a
    # step of most traversal answers): 8 bytes per edge, and a locator per edge ever answered.
    located: temporal.Locator | None = field(default=None, compare=False, repr=False)

    @property
    def locator(self) -> temporal.Locator:
        """Where the evidence stands: the link's or field's line, or a relationship's file."""
        located = self.located
        if located is None:
            located = temporal.Locator(self.path, self.line, self.line_end, self.revision)
            object.__setattr__(self, "located", located)  # a cache, not part of the value
        return located

    def valid_at(self, at: int) -> bool:
        """`valid_from <= at < valid_until`, a missing bound being open."""
        return (self.valid_from is None or self.valid_from <= at) and (
            self.valid_until is None or at < self.valid_until
        )


@dataclass(frozen=True, slots=True)
class Node:
    """One eligible record: its compact identity (made once, shared by every answer), its
    lifecycle and its file."""

    ref: RecordRef
    lifecycle: str
    path: str

    @property
    def id(self) -> str:
        """The record id."""
        return self.ref.id


# (relation, neighbour id, evidence id, 0 forward / 1 backward, edge): sorted, the order of SPEC's
# fan-out and first-qualifying-edge rules.
Step = tuple[str, str, str, int, Edge]


@dataclass(frozen=True, slots=True)
class Adjacency:
    """A node's incident edges, presorted, and how many distinct neighbours it has.

    `counts` holds the distinct neighbours (the node itself excluded) following outgoing,
    incoming and both kinds of edges, first without `superseded_by` edges, then with them.
    `firsts` holds, for out, inc and both, the step to each of the first `FIRSTS` distinct
    neighbours without `superseded_by` edges (the first such step to each, in order): all a
    traversal without filters needs of a node. Where that is the whole of `out`, `inc` or
    `both` (no repeated neighbour, no `superseded_by`) it is the same tuple, not a copy, and
    where all three are, nothing is kept for them (`picked` is None).
    """

    out: tuple[Step, ...]
    inc: tuple[Step, ...]
    both: tuple[Step, ...]  # out and inc merged: the same step objects (the same tuple as one
    # of them when the other is empty)
    counts: tuple[int, int, int, int, int, int]
    picked: tuple[tuple[Step, ...], tuple[Step, ...], tuple[Step, ...]] | None

    @property
    def firsts(self) -> tuple[tuple[Step, ...], tuple[Step, ...], tuple[Step, ...]]:
        """The steps to the first `FIRSTS` distinct neighbours, for out, inc and both."""
        return self.picked or (self.out, self.inc, self.both)

    @classmethod
    def of(
        cls,
        out: tuple[Step, ...],
        inc: tuple[Step, ...],
        both: tuple[Step, ...],
        counts: tuple[int, int, int, int, int, int],
    ) -> Adjacency:
        """The adjacency of these presorted steps, with its `firsts`."""
        picked = (_firsts(out), _firsts(inc), _firsts(both))
        if picked[0] is out and picked[1] is inc and picked[2] is both:
            return cls(out, inc, both, _shared(counts), None)
        return cls(out, inc, both, _shared(counts), picked)

    def count(self, *, forward: bool, backward: bool, history: bool) -> int:
        """Distinct neighbours along the chosen directions."""
        index = (0 if not backward else 1 if not forward else 2) + (3 if history else 0)
        return self.counts[index]


_EMPTY = Adjacency((), (), (), (0, 0, 0, 0, 0, 0), None)

# Most nodes have a few neighbours: their counts are one of few tuples, each kept once.
_COUNTS: dict[tuple[int, ...], tuple[int, int, int, int, int, int]] = {}


def _shared(counts: tuple[int, int, int, int, int, int]) -> tuple[int, int, int, int, int, int]:
    if counts[5] > 64 or len(_COUNTS) > 10_000:  # bounded: large counts are a hub's own
        return counts
    return _COUNTS.setdefault(counts, counts)


def _merged(out: tuple[Step, ...], inc: tuple[Step, ...]) -> tuple[Step, ...]:
    """`out` and `inc` in one order: one of them, not a copy, when the other is empty."""
    if not inc:
        return out
    if not out:
        return inc
    return tuple(heapq.merge(out, inc))


def _firsts(steps: tuple[Step, ...]) -> tuple[Step, ...]:
    seen: set[str] = set()
    chosen: list[Step] = []
    for step in steps:
        if step[0] != SUPERSEDED_BY and step[1] not in seen:
            seen.add(step[1])
            chosen.append(step)
            if len(chosen) == FIRSTS:
                break
    return steps if len(chosen) == len(steps) else tuple(chosen)


@dataclass(frozen=True, slots=True)
class ScopeGraph:
    """The published graph of one scope."""

    nodes: Sharded[Node]
    adjacency: Sharded[Adjacency]


@dataclass(frozen=True, slots=True)
class ProjectionView:
    """One immutable version of the projection: what a request reads from start to end."""

    scopes: Mapping[str, ScopeGraph]
    version: int

    def node(self, scope: str, node_id: str) -> Node | None:
        """The eligible record `node_id` of `scope`, if any."""
        graph = self.scopes.get(scope)
        return graph.nodes.get(node_id) if graph is not None else None

    def adjacency(self, scope: str, node_id: str) -> Adjacency:
        """The presorted incident edges of a node (none for an unknown node)."""
        graph = self.scopes.get(scope)
        return graph.adjacency.get(node_id, _EMPTY) if graph is not None else _EMPTY


def patched_adjacency(
    graph: nx.MultiDiGraph[str],
    node: str,
    old: Adjacency,
    removed: list[Step],
    added: list[Step],
) -> Adjacency:
    """`old` with some steps taken out and others put in, each by bisection (no full sort)."""
    lists = {FORWARD: list(old.out), BACKWARD: list(old.inc)}
    both = list(old.both)
    for step in removed:
        for steps in (lists[step[3]], both):
            i = bisect.bisect_left(steps, step)
            if i < len(steps) and steps[i] == step:
                del steps[i]
    for step in added:
        bisect.insort(lists[step[3]], step)
        bisect.insort(both, step)
    out, inc = lists[FORWARD], lists[BACKWARD]
    succ: dict[str, dict[Edge, object]] = graph._succ[node]  # type: ignore[attr-defined]
    pred: dict[str, dict[Edge, object]] = graph._pred[node]  # type: ignore[attr-defined]
    # Counted without a set of a hub's neighbours: |out ∪ in| = |out| + |in| - |out ∩ in|, and
    # the intersection is built from the smaller side.
    out_all = len(succ) - (node in succ)
    in_all = len(pred) - (node in pred)
    both_all = out_all + in_all - len((succ.keys() & pred.keys()) - {node})
    # Neighbours reached only by superseded_by edges (few): found from those steps alone.
    out_hist = _history_only(out, succ)
    in_hist = _history_only(inc, pred)
    lost = sum(
        1
        for n in out_hist | in_hist
        if not ((n in succ and n not in out_hist) or (n in pred and n not in in_hist))
    )
    counts = (
        out_all - len(out_hist),
        in_all - len(in_hist),
        both_all - lost,
        out_all,
        in_all,
        both_all,
    )
    out_steps, inc_steps = tuple(out), tuple(inc)
    merged = tuple(both) if out_steps and inc_steps else out_steps or inc_steps
    return Adjacency.of(out_steps, inc_steps, merged, counts)


def _history_only(steps: list[Step], neighbours: Mapping[str, Mapping[Edge, object]]) -> set[str]:
    lo = bisect.bisect_left(steps, (SUPERSEDED_BY,))
    hi = bisect.bisect_left(steps, (SUPERSEDED_BY + "\x00",))
    return {
        step[1]
        for step in steps[lo:hi]
        if all(edge.relation == SUPERSEDED_BY for edge in neighbours[step[1]])
    }


def adjacency_of(graph: nx.MultiDiGraph[str], node: str) -> Adjacency:
    out: list[Step] = []
    inc: list[Step] = []
    seen: list[set[str]] = [set(), set(), set(), set()]  # out, in; then with history
    # The internal dicts: the public views cost as much as the rest of the build.
    succ: dict[str, dict[Edge, object]] = graph._succ[node]  # type: ignore[attr-defined]
    pred: dict[str, dict[Edge, object]] = graph._pred[node]  # type: ignore[attr-defined]
    for nbr, keys in succ.items():
        if nbr == node:
            continue
        for edge in keys:
            out.append((edge.relation, nbr, edge.evidence, FORWARD, edge))
            seen[2].add(nbr)
            if edge.relation != SUPERSEDED_BY:
                seen[0].add(nbr)
    for nbr, keys in pred.items():
        if nbr == node:
            continue
        for edge in keys:
            inc.append((edge.relation, nbr, edge.evidence, BACKWARD, edge))
            seen[3].add(nbr)
            if edge.relation != SUPERSEDED_BY:
                seen[1].add(nbr)
    if not out and not inc:
        return _EMPTY
    out.sort()
    inc.sort()
    counts = (
        len(seen[0]),
        len(seen[1]),
        len(seen[0] | seen[1]),
        len(seen[2]),
        len(seen[3]),
        len(seen[2] | seen[3]),
    )
    out_steps, inc_steps = tuple(out), tuple(inc)
    return Adjacency.of(out_steps, inc_steps, _merged(out_steps, inc_steps), counts)
