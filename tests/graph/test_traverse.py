"""Traversal and paths, rule by rule of SPEC 5, over small vaults reconciled for real."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from types import MappingProxyType

import pytest

from almanac import graph, temporal
from almanac.graph import Direction, EdgeFilter, LookupStatus, TraversalLimits
from almanac.vault import QueryTooComplex

NOW = 1_800_000_000_000_000


def rel(src: str, dst: str, relation: str, extra: str = "") -> str:
    return f"---\ntype: relationship\nfrom: {src}\nto: {dst}\nrelation: {relation}\n{extra}---\n"


BASE = {
    # A chain a -> b -> c -> d -> e of body links.
    "n/a.md": "---\ntitle: Alpha\naliases: [First One]\n---\nTo [[n/b]].\n",
    "n/b.md": "---\ntitle: Beta\n---\nTo [[n/c]].\n",
    "n/c.md": "---\ntitle: Gamma\n---\nTo [[n/d]].\n",
    "n/d.md": "---\ntitle: Delta\n---\nTo [[n/e]].\n",
    "n/e.md": "---\ntitle: Epsilon\n---\nEnd.\n",
    # x and y joined by two relationships and a link: parallel edges.
    "p/x.md": "---\ntype: person\ntitle: Xavier\naliases: [Sam]\n---\nKnows [[p/y]].\n",
    "p/y.md": "---\ntype: person\ntitle: Yara\naliases: [Sam]\n---\n",
    "r/x-y-1.md": rel("p/x", "p/y", "knows"),
    "r/x-y-2.md": rel("p/x", "p/y", "advises"),
    "r/x-y-3.md": rel("p/x", "p/y", "advises"),
    # A relationship whose validity ended, and one still valid.
    "r/x-acme.md": rel(
        "p/x", "o/acme", "works_at", "valid_from: 2020-01-01\nvalid_until: 2024-01-01\n"
    ),
    "r/y-acme.md": rel("p/y", "o/acme", "works_at", "valid_from: 2024-01-01\n"),
    "o/acme.md": "---\ntype: organization\ntitle: Acme Corp\n---\n",
    "o/acme-labs.md": "---\ntype: organization\ntitle: Acme Corp Labs\n---\n",
    # Supersession.
    "d/old.md": (
        "---\ntype: decision\ntitle: Old plan\nlifecycle: superseded\nsuperseded_by: d/new\n---\n"
        "By [[p/x]].\n"
    ),
    "d/new.md": "---\ntype: decision\ntitle: New plan\n---\nBy [[p/y]].\n",
}
HUB_SIZE = 40
HUB = {"h/hub.md": "---\ntype: person\ntitle: Hub\n---\n"} | {
    f"h/s{i:02d}.md": (
        f"---\ntitle: Spoke {i:02d}\n---\nSee [[h/hub]] and [[h/s{(i + 1) % HUB_SIZE:02d}]].\n"
    )
    for i in range(HUB_SIZE)
}


class World:
    def __init__(self, tmp_path: Path, files: dict[str, str], config: temporal.VaultConfig) -> None:
        root = tmp_path / "vault"
        for path, text in files.items():
            target = root / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text)
        self.store = temporal.Store.open(tmp_path / "state.db", fingerprint=config.fingerprint("t"))
        temporal.Reconciler(self.store, root, config).reconcile(now_us=NOW)
        self.view = graph.Projection.build(self.store).view
        self.scopes = config.all_scopes()

    def seeds(self, name: str, scopes: list[str] | None = None) -> graph.Seeds:
        with self.store.read() as reader:
            return graph.seeds_by_id(reader, name, scopes or self.scopes)

    def text(self, text: str, scopes: list[str] | None = None) -> graph.Seeds:
        with self.store.read() as reader:
            return graph.seeds_by_text(reader, text, scopes or self.scopes)

    def walk(self, seed: str, *, deadline: float | None = None, **kw: object) -> graph.GraphResult:
        limits = {k: kw.pop(k) for k in ("hops", "max_paths", "fan_out") if k in kw}
        return graph.traverse(
            self.view,
            self.seeds(seed),
            limits=TraversalLimits(**limits),  # type: ignore[arg-type]
            edges=EdgeFilter(**kw),  # type: ignore[arg-type]
            deadline=deadline,
        )

    def paths(self, a: str, b: str, **kw: object) -> graph.GraphResult:
        limits = {k: kw.pop(k) for k in ("hops", "max_paths", "fan_out") if k in kw}
        return graph.find_paths(
            self.view,
            self.seeds(a),
            self.seeds(b),
            limits=TraversalLimits(**{"hops": 3, **limits}),  # type: ignore[arg-type]
            edges=EdgeFilter(**kw),  # type: ignore[arg-type]
        )


@pytest.fixture
def world(tmp_path: Path) -> Iterator[World]:
    w = World(tmp_path, BASE | HUB, temporal.VaultConfig())
    yield w
    w.store.close()


def reached(result: graph.GraphResult) -> list[tuple[str, int]]:
    return [(n.ref.id, n.hop) for n in result.nodes]


def test_hops_bound_the_walk_and_say_hop_limit(world: World) -> None:
    result = world.walk("n/a", hops=2, direction=Direction.OUT)
    assert reached(result) == [("n/a", 0), ("n/b", 1), ("n/c", 2)]
    assert [p.nodes for p in result.paths] == [("n/a", "n/b"), ("n/a", "n/b", "n/c")]
    assert result.limits == (graph.LimitHit("hop_limit"),)
    assert result.degraded == ("hop_limit",)


def test_no_hop_limit_when_the_last_hop_had_nothing_left(world: World) -> None:
    result = world.walk("n/c", hops=3, direction=Direction.OUT)
    assert reached(result) == [("n/c", 0), ("n/d", 1), ("n/e", 2)]
    assert result.limits == ()


def test_direction_in_follows_edges_backward(world: World) -> None:
    result = world.walk("n/c", hops=3, direction=Direction.IN)
    assert reached(result) == [("n/c", 0), ("n/b", 1), ("n/a", 2)]
    edge = result.paths[0].edges[0]
    assert (edge.src, edge.dst, edge.direction, edge.relation) == (
        "n/b",
        "n/c",
        Direction.IN,
        "links_to",
    )
    both = world.walk("n/c", hops=1)
    assert [(e.src, e.direction) for p in both.paths for e in p.edges] == [
        ("n/b", Direction.IN),
        ("n/c", Direction.OUT),
    ]


def test_parallel_edges_make_one_path_with_the_first_edge(world: World) -> None:
    result = world.walk("p/x", hops=1, direction=Direction.OUT)
    to_y = [p for p in result.paths if p.nodes[-1] == "p/y"]
    assert len(to_y) == 1
    # advises < knows < links_to, and between r/x-y-2 and r/x-y-3 the smaller evidence id.
    assert (to_y[0].edges[0].relation, to_y[0].edges[0].record) == ("advises", "r/x-y-2")
    assert to_y[0].edges[0].locator.path == "r/x-y-2.md"


def test_relations_filter_keeps_only_those_edges(world: World) -> None:
    result = world.walk("p/x", hops=1, direction=Direction.OUT, relations=frozenset({"knows"}))
    assert [(p.nodes[-1], p.edges[0].relation, p.edges[0].record) for p in result.paths] == [
        ("p/y", "knows", "r/x-y-1")
    ]


def test_as_of_drops_an_edge_whose_validity_ended(world: World) -> None:
    works = frozenset({"works_at"})
    before = world.walk(
        "p/x", hops=1, relations=works, as_of=temporal.parse_query_bound("2023-06-01")
    )
    assert [p.nodes for p in before.paths] == [("p/x", "o/acme")]
    after = world.walk(
        "p/x", hops=1, relations=works, as_of=temporal.parse_query_bound("2024-01-01")
    )
    assert after.paths == ()  # valid_until is exclusive
    unfiltered = world.walk("p/x", hops=1, relations=works)
    assert [p.nodes for p in unfiltered.paths] == [("p/x", "o/acme")]


def test_history_adds_superseded_by_edges(world: World) -> None:
    without = world.walk("d/old", hops=1)
    assert "d/new" not in [n for n, _ in reached(without)]
    with_history = world.walk("d/old", hops=1, history=True)
    path = next(p for p in with_history.paths if p.nodes[-1] == "d/new")
    assert (path.edges[0].relation, path.edges[0].direction) == ("superseded_by", Direction.OUT)


def test_fan_out_cuts_distinct_neighbours_in_relation_then_id_order(world: World) -> None:
    result = world.walk("h/hub", hops=1, fan_out=5)
    assert [p.nodes[-1] for p in result.paths] == [f"h/s{i:02d}" for i in range(5)]
    cut = graph.LimitHit("fan_out_limit", "h/hub", HUB_SIZE)
    assert result.limits == (cut, graph.LimitHit("hop_limit"))  # spokes link on to spokes
    assert result.degraded == ("fan_out_limit", "hop_limit")
    # With a filter the count is made by walking on; it is the same.
    filtered = world.walk("h/hub", hops=1, fan_out=5, relations=frozenset({"links_to"}))
    assert filtered.limits[0] == cut


# A hub whose neighbours arrive by several relations, where relation order and id order
# disagree: the early ids come by the late relation, and one neighbour by two relations.
MIXED = {
    "m/hub.md": "---\ntype: person\ntitle: Mixed hub\n---\nSee [[m/b1]].\n",
    **{f"m/{n}.md": f"---\ntype: person\ntitle: {n}\n---\n" for n in
       ("a1", "a2", "a3", "b1", "z1", "z2", "z3")},
    "r/hub-z1.md": rel("m/hub", "m/z1", "advises"),
    "r/hub-z2.md": rel("m/hub", "m/z2", "advises"),
    "r/hub-z3.md": rel("m/hub", "m/z3", "advises"),
    "r/hub-a1.md": rel("m/hub", "m/a1", "works_with"),
    "r/hub-a2.md": rel("m/hub", "m/a2", "works_with"),
    "r/hub-a3.md": rel("m/hub", "m/a3", "works_with"),
    "r/hub-b1.md": rel("m/hub", "m/b1", "works_with"),  # and linked: links_to < works_with
}  # fmt: skip


@pytest.fixture
def mixed(tmp_path: Path) -> Iterator[World]:
    w = World(tmp_path, MIXED, temporal.VaultConfig())
    yield w
    w.store.close()


@pytest.mark.parametrize(
    ("fan_out", "kept"),
    [
        (3, {"m/z1", "m/z2", "m/z3"}),  # by id alone: a1, a2, a3
        (4, {"m/z1", "m/z2", "m/z3", "m/b1"}),  # b1 by links_to, before works_with
        (5, {"m/z1", "m/z2", "m/z3", "m/b1", "m/a1"}),
    ],
)
def test_fan_out_cut_orders_by_relation_before_neighbour_id(
    mixed: World, fan_out: int, kept: set[str]
) -> None:
    result = mixed.walk("m/hub", hops=1, fan_out=fan_out)
    assert {p.nodes[-1] for p in result.paths} == kept
    assert result.limits[0] == graph.LimitHit("fan_out_limit", "m/hub", 7)


def test_paths_through_a_hub_follow_the_same_cut(mixed: World) -> None:
    # With fan-out 3 the hub's kept neighbours are z1..z3: a1 is not reached through it.
    found = mixed.paths("m/hub", "m/z3", hops=1, fan_out=3)
    assert [p.nodes for p in found.paths] == [("m/hub", "m/z3")]
    missed = mixed.paths("m/hub", "m/a1", hops=1, fan_out=3)
    assert missed.paths == ()
    assert graph.LimitHit("fan_out_limit", "m/hub", 7) in missed.limits


def test_path_limit_stops_discovery(world: World) -> None:
    result = world.walk("h/hub", hops=1, max_paths=10, fan_out=100)
    assert len(result.paths) == 10
    assert result.limits == (graph.LimitHit("path_limit"),)
    exact = world.walk("h/hub", hops=1, max_paths=HUB_SIZE, fan_out=100)
    assert len(exact.paths) == HUB_SIZE
    assert graph.LimitHit("path_limit") not in exact.limits


def test_one_path_per_node_in_breadth_first_order_and_no_node_twice(world: World) -> None:
    result = world.walk("h/s00", hops=3, max_paths=100, fan_out=100)
    ids = [n for n, _ in reached(result)]
    assert len(ids) == len(set(ids))
    hops = [h for _, h in reached(result)]
    assert hops == sorted(hops)
    for path in result.paths:
        assert len(set(path.nodes)) == len(path.nodes)
        assert len(path.edges) == len(path.nodes) - 1
        for i, edge in enumerate(path.edges):
            ends = {edge.src, edge.dst}
            assert ends == {path.nodes[i], path.nodes[i + 1]}


def test_results_are_deterministic_across_builds(tmp_path: Path) -> None:
    files = BASE | HUB
    first = World(tmp_path / "one", files, temporal.VaultConfig())
    second = World(tmp_path / "two", dict(reversed(list(files.items()))), temporal.VaultConfig())
    for seed in ("h/hub", "p/x", "n/c"):
        a = first.walk(seed, hops=3, fan_out=7, max_paths=30)
        b = second.walk(seed, hops=3, fan_out=7, max_paths=30)
        assert a == b
        assert a == first.walk(seed, hops=3, fan_out=7, max_paths=30)


def test_text_seeds_take_whole_words_longest_first(world: World) -> None:
    seeds = world.text("Did acme corp labs meet Alpha, or Beta?")
    assert seeds.status is LookupStatus.FOUND
    assert [r.id for _, r in seeds.found] == ["n/a", "n/b", "o/acme-labs"]
    assert [r.id for _, r in world.text("first one: acme corp.").found] == ["n/a", "o/acme"]
    assert world.text("Alphabet Betamax").status is LookupStatus.MISSING  # not whole words
    assert world.text("Alpah").status is LookupStatus.MISSING  # nothing fuzzy


def test_an_ambiguous_name_stops_traversal_with_candidates(world: World) -> None:
    seeds = world.text("Ask Sam about Alpha")
    assert seeds.status is LookupStatus.AMBIGUOUS
    assert [c.id for c in seeds.candidates] == ["p/x", "p/y"]
    result = graph.traverse(world.view, seeds, limits=TraversalLimits(), edges=EdgeFilter())
    assert result.status is LookupStatus.AMBIGUOUS
    assert result.nodes == () and result.paths == ()
    assert [c.id for c in result.candidates] == ["p/x", "p/y"]


def test_a_missing_seed_is_missing(world: World) -> None:
    result = world.walk("nope")
    assert (result.status, result.nodes, result.paths) == (LookupStatus.MISSING, (), ())


def test_paths_are_simple_shortest_first_then_by_node_ids(world: World) -> None:
    result = world.paths("n/a", "n/d")
    assert [p.nodes for p in result.paths] == [("n/a", "n/b", "n/c", "n/d")]
    between = world.paths("h/s00", "h/s02", hops=3)
    sequences = [p.nodes for p in between.paths]
    assert sequences[0] == ("h/s00", "h/hub", "h/s02")
    assert sequences[1] == ("h/s00", "h/s01", "h/s02")
    assert all(len(s) == len(set(s)) for s in sequences)
    keys = [(len(s), list(s)) for s in sequences]
    assert keys == sorted(keys)


def test_paths_path_limit_says_how_many_there_were(world: World) -> None:
    full = world.paths("h/s00", "h/s02", hops=3, fan_out=100, max_paths=100)
    limited = world.paths("h/s00", "h/s02", hops=3, fan_out=100, max_paths=2)
    assert limited.paths == full.paths[:2]
    assert graph.LimitHit("path_limit", None, len(full.paths)) in limited.limits


def test_paths_with_parallel_edges_make_one_path(world: World) -> None:
    result = world.paths("p/x", "p/y", hops=1)
    assert [(p.nodes, p.edges[0].relation) for p in result.paths] == [(("p/x", "p/y"), "advises")]


def test_a_past_deadline_raises_query_too_complex(world: World) -> None:
    with pytest.raises(QueryTooComplex):
        world.walk("h/hub", hops=3, deadline=time.monotonic() - 1)


def test_scopes_keep_walks_inside_the_readable_scopes(tmp_path: Path) -> None:
    config = temporal.VaultConfig(scopes=MappingProxyType({"team": "team/", "private": "private/"}))
    files = {
        "team/ada.md": "---\ntitle: Ada\n---\nSee [[Bo]] and [[Cy]].\n",
        "team/bo.md": "---\ntitle: Bo\n---\n",
        "private/cy.md": "---\ntitle: Cy\n---\nSee [[team/ada]].\n",
        "private/ada.md": "---\ntitle: Ada\n---\nSee [[Cy]].\n",
    }
    w = World(tmp_path, files, config)
    team = graph.traverse(
        w.view, w.seeds("team/ada", ["team"]), limits=TraversalLimits(), edges=EdgeFilter()
    )
    # [[Cy]] does not resolve across scopes.
    assert [n for n, _ in reached(team)] == ["team/ada", "team/bo"]
    assert w.seeds("private/cy", ["team"]).status is LookupStatus.MISSING
    assert w.text("Ada", ["team", "private"]).status is LookupStatus.AMBIGUOUS
    assert [r.id for _, r in w.text("Ada", ["private"]).found] == ["private/ada"]
    w.store.close()


def test_paths_past_the_deadline_raise_query_too_complex(world: World) -> None:
    with pytest.raises(QueryTooComplex):
        graph.find_paths(
            world.view,
            world.seeds("h/s00"),
            world.seeds("h/s02"),
            limits=TraversalLimits(hops=3),
            edges=EdgeFilter(),
            deadline=time.monotonic() - 1,
        )


@pytest.mark.parametrize("direction", list(Direction))
@pytest.mark.parametrize("fan_out", [1, 2, 5, 100])
def test_unfiltered_walks_from_kept_neighbours_match_the_filtered_walk(
    world: World, direction: Direction, fan_out: int
) -> None:
    # Without a filter a node's first neighbours come from those kept with the projection; a
    # filter that lets every relation through walks the steps one by one. Same answers.
    everything = frozenset(
        step[0]
        for scope in world.view.scopes.values()
        for adjacency in scope.adjacency.values()
        for step in adjacency.both
    )
    assert {"links_to", "superseded_by"} <= everything
    for seed in sorted(world.view.scopes["default"].nodes):
        for hops in (1, 3):
            kept = world.walk(seed, hops=hops, fan_out=fan_out, direction=direction)
            walked = world.walk(
                seed, hops=hops, fan_out=fan_out, direction=direction, relations=everything
            )
            assert (kept.nodes, kept.paths, kept.limits) == (
                walked.nodes,
                walked.paths,
                walked.limits,
            ), seed


def test_a_kept_locator_changes_no_edge(world: World) -> None:
    # An edge's locator is made once and kept on it; the edge still equals its rebuilt self.
    walk = world.walk("n/a", hops=3)
    edge = next(
        step[4]
        for adjacency in world.view.scopes["default"].adjacency.values()
        for step in adjacency.both
        if step[4].locator is step[4].locator
    )
    assert (
        walk.paths[0].edges[0].locator
        == graph.Projection.build(world.store).view.adjacency("default", "n/a").out[0][4].locator
    )
    rebuilt = graph.Projection.build(world.store).view.adjacency("default", edge.src).out
    assert edge in [step[4] for step in rebuilt]
    assert hash(edge) in {hash(step[4]) for step in rebuilt}
