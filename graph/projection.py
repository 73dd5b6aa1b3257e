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

import gc
from collections.abc import Iterable, Iterator, Mapping, MutableMapping
from types import MappingProxyType
from typing import Any

import networkx as nx

from almanac import temporal
from almanac.graph.sharded import Sharded
from almanac.graph.view import (
    BACKWARD,
    FORWARD,
    Adjacency,
    Edge,
    Node,
    ProjectionView,
    ScopeGraph,
    Step,
    adjacency_of,
    patched_adjacency,
)
from almanac.temporal import (
    EdgeRow,
    NodeRow,
    Paths,
    Reader,
    ReconcileResult,
    RecordRef,
    Store,
    discard_path,
    paths_of,
    put_path,
)

__all__ = ["Projection"]


# Every node's and edge's attribute dict: an edge's key (`Edge`) carries relation, evidence,
# locator and validity, and a node's record is in the projection's `_live`, so none has
# attributes, and one shared empty dict stands for all of them (a dict per edge and per node
# was ~35 MB at 100,000 notes). Nothing may write graph attributes.
_NO_ATTRIBUTES: dict[str, Any] = {}


def _no_attributes() -> dict[str, Any]:
    return _NO_ATTRIBUTES


class _Keys(MutableMapping[Edge, dict[str, Any]]):
    """The keys of the edges between two nodes (networkx's "key dict"), each mapped to the
    shared empty attributes: almost always one edge, kept in a slot (48 bytes, where a dict of
    one key is 224: ~75 MB at 100,000 notes), and a set of them when there are more."""

    __slots__ = ("_one", "_more")

    def __init__(self) -> None:
        self._one: Edge | None = None
        self._more: set[Edge] | None = None

    def __getitem__(self, key: Edge) -> dict[str, Any]:
        if key in self:
            return _NO_ATTRIBUTES
        raise KeyError(key)

    def __contains__(self, key: object) -> bool:
        more = self._more
        return key in more if more is not None else self._one is not None and self._one == key

    def __setitem__(self, key: Edge, value: dict[str, Any]) -> None:
        assert value is _NO_ATTRIBUTES, "graph edges have no attributes"
        if self._more is not None:
            self._more.add(key)
        elif self._one is None or self._one == key:
            self._one = key
        else:
            self._more = {self._one, key}
            self._one = None

    def __delitem__(self, key: Edge) -> None:
        if key not in self:
            raise KeyError(key)
        if self._more is None:
            self._one = None
            return
        self._more.discard(key)
        if len(self._more) == 1:
            (self._one,) = self._more
            self._more = None

    def __iter__(self) -> Iterator[Edge]:
        if self._more is not None:
            return iter(list(self._more))
        return iter(() if self._one is None else (self._one,))

    def __len__(self) -> int:
        return len(self._more) if self._more is not None else int(self._one is not None)

    def copy(self) -> dict[Edge, dict[str, Any]]:
        return dict.fromkeys(self, _NO_ATTRIBUTES)


class _Graph(nx.MultiDiGraph):  # type: ignore[type-arg]
    """A `MultiDiGraph` whose nodes and edges share one empty attribute dict, and whose key
    dicts are `_Keys`."""

    node_attr_dict_factory = staticmethod(_no_attributes)
    edge_attr_dict_factory = staticmethod(_no_attributes)
    edge_key_dict_factory = _Keys  # type: ignore[assignment]


class Projection:
    """The networkx graphs of the eligible records, per scope, and their published view.

    Not thread-safe: one thread applies reconcile results (the API does so under the lock
    that also hands requests their (read transaction, view) pairs); views are immutable.
    """

    def __init__(self) -> None:
        self.graphs: dict[str, nx.MultiDiGraph[str]] = {}
        self._notes: dict[str, NodeRow] = {}  # path -> valid note
        # One path, or a set of several (rare; see `Paths`): id -> note paths.
        self._paths_by_id: dict[str, Paths] = {}
        self._live: dict[tuple[str, str], Node] = {}  # (scope, id) -> eligible record
        self._rows: dict[str, tuple[Edge, ...]] = {}  # evidence path -> every edge row
        self._scope_of: dict[str, str] = {}  # evidence path -> scope
        self._incident: dict[tuple[str, str], Paths] = {}  # (scope, id) -> evidence paths
        # evidence path -> its edges in the graph (a tuple: a set of a few is 3-4 times larger)
        self._in_graph: dict[str, tuple[Edge, ...]] = {}
        self.view = ProjectionView(MappingProxyType({}), 0)

    @classmethod
    def build(cls, store: Store | Reader) -> Projection:
        """A clean projection of everything committed in `store` (or read by a `Reader`)."""
        edges = [(row.scope, _edge(row)) for row in temporal.edge_rows(store)]
        return cls.from_rows(temporal.node_rows(store), edges)

    @classmethod
    def from_rows(cls, notes: Iterable[NodeRow], edges: Iterable[tuple[str, Edge]]) -> Projection:
        """A clean projection of these valid notes and edge rows (each with its scope): read
        from the database by `build`, or from the compact file (`graph/compact.py`)."""
        projection = cls()
        # Building makes millions of long-lived objects: nothing for the cyclic collector.
        gc_was = gc.isenabled()
        gc.disable()
        try:
            projection._load(notes, edges)
        finally:
            if gc_was:
                gc.enable()
        return projection

    def rows(self) -> tuple[list[NodeRow], list[tuple[str, Edge]]]:
        """What `from_rows` would build this projection from (for the compact file)."""
        notes = [self._notes[path] for path in sorted(self._notes)]
        edges = [
            (self._scope_of[path], edge) for path in sorted(self._rows) for edge in self._rows[path]
        ]
        return notes, edges

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
            touched_paths.update(paths_of(self._paths_by_id.get(rid)))
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

    def _load(self, notes: Iterable[NodeRow], rows: Iterable[tuple[str, Edge]]) -> None:
        for note in notes:
            self._remember_note(note)
        for key in {(n.scope, n.id) for n in self._notes.values()}:
            node = self._eligible(key)
            if node is not None:
                self._live[key] = node
        grouped: dict[str, list[Edge]] = {}
        for scope, edge in rows:
            grouped.setdefault(edge.path, []).append(edge)
            self._scope_of[edge.path] = scope
        for path, items in grouped.items():
            self._set_rows(path, items)
        # (u, v, key) for add_edges_from, which the stubs read as (u, v, data): the key is the
        # `Edge`, which carries relation, evidence, locator and validity, so no data dict.
        pending: dict[str, list[Any]] = {}
        for path, stored in self._rows.items():
            scope = self._scope_of[path]
            live = {e for e in stored if self._is_live(scope, e)}
            if live:
                self._in_graph[path] = _same_or(stored, live)
                pending.setdefault(scope, []).extend((e.src, e.dst, e) for e in live)
        for scope, rid in self._live:
            self._graph(scope).add_node(rid)
        for scope, batch in pending.items():
            self._graph(scope).add_edges_from(batch)
        scopes = {
            scope: ScopeGraph(
                Sharded.build((n, self._live[(scope, n)]) for n in g),
                Sharded.build((n, adjacency_of(g, n)) for n in g),
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
            evidence.update(paths_of(self._incident.get((scope, rid))))
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
                (edge.relation, edge.dst, edge.evidence, FORWARD, edge)
            )
            delta.setdefault((scope, edge.dst), ([], []))[index].append(
                (edge.relation, edge.src, edge.evidence, BACKWARD, edge)
            )

        for path in sorted(evidence):
            if path not in self._scope_of:
                continue  # a file that never had an edge
            scope = self._scope_of[path]
            old_edges = set(self._in_graph.pop(path, ()))
            new_edges = {e for e in self._rows.get(path, ()) if self._is_live(scope, e)}
            if new_edges:
                self._in_graph[path] = _same_or(self._rows[path], new_edges)
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
                graph.add_node(rid)
        for path in sorted(evidence):
            for edge in self._in_graph.get(path, ()):
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
                    nodes[rid] = self._live[(scope, rid)]
                    old_adjacency = old.adjacency.get(rid)
                    if (scope, rid) in changed or old_adjacency is None:
                        adjacency[rid] = adjacency_of(graph, rid)
                    elif (scope, rid) in delta:
                        # A hub gains one link: patch its sorted steps, do not sort them again.
                        removed, added = delta[(scope, rid)]
                        adjacency[rid] = patched_adjacency(
                            graph, rid, old_adjacency, removed, added
                        )
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
            graph = self.graphs[scope] = _Graph()
        return graph

    def _remember_note(self, row: NodeRow) -> None:
        self._notes[row.path] = row
        put_path(self._paths_by_id, row.id, row.path)

    def _forget_note(self, path: str) -> None:
        row = self._notes.pop(path, None)
        if row is not None:
            discard_path(self._paths_by_id, row.id, path)

    def _eligible(self, key: tuple[str, str]) -> Node | None:
        scope, rid = key
        for path in sorted(paths_of(self._paths_by_id.get(rid))):
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
                discard_path(self._incident, (scope, end), path)
        if not edges:
            return
        self._rows[path] = tuple(edges)
        for edge in edges:
            for end in (edge.src, edge.dst):
                put_path(self._incident, (scope, end), path)

    def _is_live(self, scope: str, edge: Edge) -> bool:
        evidence = self._live.get((scope, edge.evidence))
        return (
            evidence is not None
            and evidence.path == edge.path
            and (scope, edge.src) in self._live
            and (scope, edge.dst) in self._live
        )


def _same_or(stored: tuple[Edge, ...], live: set[Edge]) -> tuple[Edge, ...]:
    """A file's edges in the graph: the tuple of its rows itself when all of them are."""
    return stored if len(stored) == len(live) else tuple(live)


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
