"""The compact containers of the projection behave as the dicts and sets they stand for."""

from __future__ import annotations

import random
from typing import Any

import networkx as nx
import pytest

from almanac.graph.projection import _NO_ATTRIBUTES, _Graph, _Keys
from almanac.graph.view import Edge
from almanac.temporal import discard_path as _discard, paths_of as _members, put_path as _put


def _edge(n: int) -> Edge:
    return Edge("links_to", "a", "b", "a", f"a{n}.md", n, n, "r", None, None)


@pytest.mark.parametrize("seed", range(20))
def test_key_dicts_answer_as_dicts_through_any_adds_and_removals(seed: int) -> None:
    rng = random.Random(seed)
    keys, expected = _Keys(), {}
    for _ in range(200):
        edge = _edge(rng.randrange(4))
        if rng.random() < 0.5:
            keys[edge] = expected[edge] = _NO_ATTRIBUTES
        elif edge in expected:
            del keys[edge], expected[edge]
        else:
            with pytest.raises(KeyError):
                del keys[edge]
        assert len(keys) == len(expected)
        assert set(keys) == set(expected) and keys.copy() == expected
        for n in range(4):
            assert (_edge(n) in keys) == (_edge(n) in expected)
            assert keys.get(_edge(n)) is expected.get(_edge(n))


def test_a_graph_of_key_dicts_keeps_parallel_edges_apart() -> None:
    g = _Graph()
    # (u, v, key), as the projection adds them: the stubs read a third item as data.
    batch: list[Any] = [("a", "b", _edge(1)), ("a", "b", _edge(2)), ("a", "b", _edge(1))]
    g.add_edges_from(batch)
    assert g.number_of_edges("a", "b") == 2
    assert set(g.edges(keys=True)) == {("a", "b", _edge(1)), ("a", "b", _edge(2))}
    g.remove_edge("a", "b", key=_edge(1))
    assert list(g.edges(keys=True)) == [("a", "b", _edge(2))]
    assert list(g.predecessors("b")) == ["a"] and g.has_edge("a", "b", key=_edge(2))
    g.remove_edge("a", "b", key=_edge(2))
    assert g.number_of_edges() == 0 and not g.has_edge("a", "b")
    assert nx.MultiDiGraph(g).number_of_nodes() == 2


def test_one_path_is_kept_without_a_set_and_several_in_one() -> None:
    index: dict[str, str | set[str]] = {}
    _put(index, "k", "p1")
    assert index == {"k": "p1"}
    _put(index, "k", "p1")
    _put(index, "k", "p2")
    assert index == {"k": {"p1", "p2"}} and sorted(_members(index["k"])) == ["p1", "p2"]
    _discard(index, "k", "p1")
    assert index == {"k": "p2"} and list(_members(index.get("k"))) == ["p2"]
    _discard(index, "k", "p2")
    assert index == {} and list(_members(index.get("k"))) == []
