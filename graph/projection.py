"""The networkx projection of the state database, kept in step with each reconcile.

One `networkx.MultiDiGraph` per scope (links resolve only inside a scope, so no edge crosses
scopes and node keys are plain record ids): a node per eligible record, an edge per row of the
`edges` view whose two ends and evidence are eligible, keyed by its `Edge` (relation, ends,
evidence, locator, validity), so parallel edges stay apart and duplicates collapse.

Requests never read the mutable graphs. After each reconcile the projection publishes a new
immutable `ProjectionView`: per scope, the node identities and, per node, its incident edges
presorted by (relation, neighbour id, evidence id) with its distinct-neighbour counts, so a
bounded traversal reads a hub's first neighbours without looking at the rest. A new view copies
only the two top-level dicts of the scopes that changed (a few milliseconds at 100,000 notes)
and replaces the entries of the nodes whose edges changed; a request keeps the view it started
with for as long as it runs.

To follow eligibility changes without another query, the projection also remembers every row
of the view, eligible or not, by evidence file and by endpoint: when a record becomes eligible,
the edges that were waiting for it are found in memory.
"""

from __future__ import annotations

import bisect
import gc
import heapq
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import networkx as nx

import temporal
from graph.sharded import Sharded
from temporal import EdgeRow, NodeRow, ReconcileResult, RecordRef, Store

__all__ = [
    "FIRSTS",
    "Adjacency",
    "Edge",
    "Node",
    "Projection",
    "ProjectionView",
    "ScopeGraph",
    "Step",
]

SUPERSEDED_BY = "superseded_by"
FIRSTS = 101  # distinct neighbours kept per node for unfiltered traversals: fan-out 100, plus one
_FORWARD, _BACKWARD = 0, 1


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
    `both` (no repeated neighbour, no `superseded_by`) it is the same tuple, not a copy.
    """

    out: tuple[Step, ...]
    inc: tuple[Step, ...]
    both: tuple[Step, ...]  # out and inc merged: the same step objects, no copies
    counts: tuple[int, int, int, int, int, int]
    firsts: tuple[tuple[Step, ...], tuple[Step, ...], tuple[Step, ...]]

    @classmethod
    def of(
        cls,
        out: tuple[Step, ...],
        inc: tuple[Step, ...],
        both: tuple[Step, ...],
        counts: tuple[int, int, int, int, int, int],
    ) -> Adjacency:
        """The adjacency of these presorted steps, with its `firsts`."""
        return cls(out, inc, both, counts, (_firsts(out), _firsts(inc), _firsts(both)))

    def count(self, *, forward: bool, backward: bool, history: bool) -> int:
        """Distinct neighbours along the chosen directions."""
        index = (0 if not backward else 1 if not forward else 2) + (3 if history else 0)
        return self.counts[index]


_EMPTY = Adjacency((), (), (), (0, 0, 0, 0, 0, 0), ((), (), ()))


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


class Projection:
    """The networkx graphs of the eligible records, per scope, and their published view.

    Not thread-safe: one thread applies reconcile results (the API does so under the lock
    that also hands requests their (read transaction, view) pairs); views are immutable.
    """

    def __init__(self) -> None:
        self.graphs: dict[str, nx.MultiDiGraph[str]] = {}
        self._notes: dict[str, NodeRow] = {}  # path -> valid note
        self._paths_by_id: dict[str, set[str]] = {}
        self._live: dict[tuple[str, str], Node] = {}  # (scope, id) -> eligible record
        self._rows: dict[str, tuple[Edge, ...]] = {}  # evidence path -> every edge row
        self._scope_of: dict[str, str] = {}  # evidence path -> scope
        self._incident: dict[tuple[str, str], set[str]] = {}  # (scope, id) -> evidence paths
        self._in_graph: dict[str, set[Edge]] = {}  # evidence path -> its edges in the graph
        self.view = ProjectionView(MappingProxyType({}), 0)

    @classmethod
    def build(cls, store: Store) -> Projection:
        """A clean projection of everything committed in `store`."""
        projection = cls()
        # Building makes millions of long-lived objects: nothing for the cyclic collector.
        gc_was = gc.isenabled()
        gc.disable()
        try:
            projection._load(temporal.node_rows(store), temporal.edge_rows(store))
        finally:
            if gc_was:
                gc.enable()
        return projection

    def apply(self, store: Store, result: ReconcileResult) -> ProjectionView:
        """Bring the projection in step with a committed reconcile and publish a new view.

        Only the changed notes, the notes whose targets were resolved again and the records
        whose eligibility changed (all named by `result`) are read again; only the nodes whose
        edges changed get a new adjacency.
        """
        if not result.changed:
            return self.view
        gc_was = gc.isenabled()
        gc.disable()  # as in the reconciler: the collector would rescan millions of objects
        try:
            return self._apply(store, result)
        finally:
            if gc_was:
                gc.enable()

    def _apply(self, store: Store, result: ReconcileResult) -> ProjectionView:
        rewritten = set(result.resolved_paths) | set(result.changed_paths)
        touched_paths = set(rewritten)
        for rid in result.affected_ids:
            touched_paths |= self._paths_by_id.get(rid, set())
        keys = {
            (self._notes[p].scope, self._notes[p].id) for p in touched_paths if p in self._notes
        }
        rows = temporal.node_rows(store, paths=touched_paths, ids=result.affected_ids)
        previous = {r.path: self._notes[r.path] for r in rows if self._notes.get(r.path) == r}
        for path in touched_paths | {row.path for row in rows}:
            self._forget_note(path)
        for row in rows:
            # A note read again unchanged keeps its row (the one the live nodes were made of).
            self._remember_note(previous.get(row.path, row))
        keys |= {(row.scope, row.id) for row in rows}
        edges = temporal.edge_rows(store, paths=rewritten)
        return self._update(keys, rewritten, edges)

    # -- loading ----------------------------------------------------------------------------

    def _load(self, notes: Iterable[NodeRow], rows: Iterable[EdgeRow]) -> None:
        for note in notes:
            self._remember_note(note)
        for key in {(n.scope, n.id) for n in self._notes.values()}:
            node = self._eligible(key)
            if node is not None:
                self._live[key] = node
        grouped: dict[str, list[Edge]] = {}
        for row in rows:
            grouped.setdefault(row.path, []).append(_edge(row))
            self._scope_of[row.path] = row.scope
        for path, items in grouped.items():
            self._set_rows(path, items)
        # (u, v, key) for add_edges_from, which the stubs read as (u, v, data): the key is the
        # `Edge`, which carries relation, evidence, locator and validity, so no data dict.
        pending: dict[str, list[Any]] = {}
        for path, stored in self._rows.items():
            scope = self._scope_of[path]
            live = {e for e in stored if self._is_live(scope, e)}
            if live:
                self._in_graph[path] = live
                pending.setdefault(scope, []).extend((e.src, e.dst, e) for e in live)
        for (scope, rid), record in self._live.items():
            self._graph(scope).add_node(rid, record=record)
        for scope, batch in pending.items():
            self._graph(scope).add_edges_from(batch)
        scopes = {
            scope: ScopeGraph(
                Sharded.build((n, d["record"]) for n, d in g.nodes(data=True)),
                Sharded.build((n, _adjacency(g, n)) for n in g),
            )
            for scope, g in self.graphs.items()
        }
        self.view = ProjectionView(MappingProxyType(scopes), 1)

    def _update(
        self, keys: set[tuple[str, str]], rewritten: set[str], rows: list[EdgeRow]
    ) -> ProjectionView:
        changed_nodes: set[tuple[str, str]] = set()
        for key in keys:
            new = self._eligible(key)
            if new != self._live.get(key):
                changed_nodes.add(key)
        evidence = set(rewritten)
        for scope, rid in changed_nodes:
            evidence |= self._incident.get((scope, rid), set())
            old = self._live.get((scope, rid))
            if old is not None:
                evidence.add(old.path)
            new = self._eligible((scope, rid))
            if new is not None:
                evidence.add(new.path)
        grouped: dict[str, list[Edge]] = {path: [] for path in rewritten}
        for row in rows:
            grouped.setdefault(row.path, []).append(_edge(row))
            self._scope_of[row.path] = row.scope
        for path, edges in grouped.items():
            self._set_rows(path, edges)
        for key in changed_nodes:
            new = self._eligible(key)
            if new is None:
                self._live.pop(key, None)
            else:
                self._live[key] = new
        touched: set[tuple[str, str]] = set(changed_nodes)
        # Per node whose edges changed: the steps to take out of and put into its adjacency.
        delta: dict[tuple[str, str], tuple[list[Step], list[Step]]] = {}

        def note(scope: str, edge: Edge, index: int) -> None:
            if edge.src == edge.dst:
                return  # self-loops make no step
            touched.update(((scope, edge.src), (scope, edge.dst)))
            delta.setdefault((scope, edge.src), ([], []))[index].append(
                (edge.relation, edge.dst, edge.evidence, _FORWARD, edge)
            )
            delta.setdefault((scope, edge.dst), ([], []))[index].append(
                (edge.relation, edge.src, edge.evidence, _BACKWARD, edge)
            )

        for path in sorted(evidence):
            if path not in self._scope_of:
                continue  # a file that never had an edge
            scope = self._scope_of[path]
            old_edges = self._in_graph.pop(path, set())
            new_edges = {e for e in self._rows.get(path, ()) if self._is_live(scope, e)}
            if new_edges:
                self._in_graph[path] = new_edges
            for edge in old_edges - new_edges:
                self._graph(scope).remove_edge(edge.src, edge.dst, key=edge)
                note(scope, edge, 0)
            for edge in new_edges - old_edges:
                note(scope, edge, 1)
        for scope, rid in sorted(changed_nodes):
            graph = self._graph(scope)
            node = self._live.get((scope, rid))
            if node is None:
                if rid in graph:
                    graph.remove_node(rid)
            else:
                graph.add_node(rid, record=node)
        for path in sorted(evidence):
            for edge in self._in_graph.get(path, set()):
                graph = self._graph(self._scope_of[path])
                if not graph.has_edge(edge.src, edge.dst, key=edge):
                    graph.add_edge(edge.src, edge.dst, key=edge)
        return self._publish(touched, changed_nodes, delta)

    def _publish(
        self,
        touched: set[tuple[str, str]],
        changed: set[tuple[str, str]],
        delta: Mapping[tuple[str, str], tuple[list[Step], list[Step]]],
    ) -> ProjectionView:
        scopes = dict(self.view.scopes)
        by_scope: dict[str, set[str]] = {}
        for scope, rid in touched:
            by_scope.setdefault(scope, set()).add(rid)
        for scope, ids in by_scope.items():
            old = scopes.get(scope)
            if old is None:
                old = ScopeGraph(Sharded.build(()), Sharded.build(()))
            nodes: dict[str, Node | None] = {}
            adjacency: dict[str, Adjacency | None] = {}
            graph = self._graph(scope)
            for rid in ids:
                if rid in graph:
                    nodes[rid] = graph.nodes[rid]["record"]
                    old_adjacency = old.adjacency.get(rid)
                    if (scope, rid) in changed or old_adjacency is None:
                        adjacency[rid] = _adjacency(graph, rid)
                    elif (scope, rid) in delta:
                        # A hub gains one link: patch its sorted steps, do not sort them again.
                        removed, added = delta[(scope, rid)]
                        adjacency[rid] = _patched(graph, rid, old_adjacency, removed, added)
                else:
                    nodes[rid] = None
                    adjacency[rid] = None
            scopes[scope] = ScopeGraph(old.nodes.updated(nodes), old.adjacency.updated(adjacency))
        self.view = ProjectionView(MappingProxyType(scopes), self.view.version + 1)
        return self.view

    # -- memory -----------------------------------------------------------------------------

    def _graph(self, scope: str) -> nx.MultiDiGraph[str]:
        graph = self.graphs.get(scope)
        if graph is None:
            graph = self.graphs[scope] = nx.MultiDiGraph()
        return graph

    def _remember_note(self, row: NodeRow) -> None:
        self._notes[row.path] = row
        self._paths_by_id.setdefault(row.id, set()).add(row.path)

    def _forget_note(self, path: str) -> None:
        row = self._notes.pop(path, None)
        if row is not None:
            paths = self._paths_by_id.get(row.id)
            if paths is not None:
                paths.discard(path)
                if not paths:
                    del self._paths_by_id[row.id]

    def _eligible(self, key: tuple[str, str]) -> Node | None:
        scope, rid = key
        for path in sorted(self._paths_by_id.get(rid, ())):
            row = self._notes[path]
            if row.scope == scope and row.eligible:
                ref = RecordRef(row.id, row.kind, row.type, row.title)
                return Node(ref, row.lifecycle, row.path)
        return None

    def _set_rows(self, path: str, edges: list[Edge]) -> None:
        """Replace the remembered rows of one evidence file (its scope is already known).

        An edge read again unchanged (its file was resolved again, not rewritten) keeps the
        object already in the graph and the published steps: a new, equal one would live on
        beside it (the graph keeps the key it was given first), and memory grow with every
        reconcile that reads a file's edges again.
        """
        scope = self._scope_of.get(path, "")
        previous = {edge: edge for edge in self._rows.get(path, ())}
        edges = [previous.get(edge, edge) for edge in edges]
        for edge in self._rows.pop(path, ()):
            for end in (edge.src, edge.dst):
                paths = self._incident.get((scope, end))
                if paths is not None:
                    paths.discard(path)
                    if not paths:
                        del self._incident[(scope, end)]
        if not edges:
            return
        self._rows[path] = tuple(edges)
        for edge in edges:
            for end in (edge.src, edge.dst):
                self._incident.setdefault((scope, end), set()).add(path)

    def _is_live(self, scope: str, edge: Edge) -> bool:
        evidence = self._live.get((scope, edge.evidence))
        return (
            evidence is not None
            and evidence.path == edge.path
            and (scope, edge.src) in self._live
            and (scope, edge.dst) in self._live
        )


def _edge(row: EdgeRow) -> Edge:
    return Edge(
        row.relation,
        row.src,
        row.dst,
        row.evidence,
        row.path,
        row.line,
        row.line_end,
        row.revision,
        row.valid_from,
        row.valid_until,
    )


def _patched(
    graph: nx.MultiDiGraph[str],
    node: str,
    old: Adjacency,
    removed: list[Step],
    added: list[Step],
) -> Adjacency:
    """`old` with some steps taken out and others put in, each by bisection (no full sort)."""
    lists = {_FORWARD: list(old.out), _BACKWARD: list(old.inc)}
    both = list(old.both)
    for step in removed:
        for steps in (lists[step[3]], both):
            i = bisect.bisect_left(steps, step)
            if i < len(steps) and steps[i] == step:
                del steps[i]
    for step in added:
        bisect.insort(lists[step[3]], step)
        bisect.insort(both, step)
    out, inc = lists[_FORWARD], lists[_BACKWARD]
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
    return Adjacency.of(tuple(out), tuple(inc), tuple(both), counts)


def _history_only(steps: list[Step], neighbours: Mapping[str, Mapping[Edge, object]]) -> set[str]:
    lo = bisect.bisect_left(steps, (SUPERSEDED_BY,))
    hi = bisect.bisect_left(steps, (SUPERSEDED_BY + "\x00",))
    return {
        step[1]
        for step in steps[lo:hi]
        if all(edge.relation == SUPERSEDED_BY for edge in neighbours[step[1]])
    }


def _adjacency(graph: nx.MultiDiGraph[str], node: str) -> Adjacency:
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
            out.append((edge.relation, nbr, edge.evidence, _FORWARD, edge))
            seen[2].add(nbr)
            if edge.relation != SUPERSEDED_BY:
                seen[0].add(nbr)
    for nbr, keys in pred.items():
        if nbr == node:
            continue
        for edge in keys:
            inc.append((edge.relation, nbr, edge.evidence, _BACKWARD, edge))
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
    return Adjacency.of(tuple(out), tuple(inc), tuple(heapq.merge(out, inc)), counts)
