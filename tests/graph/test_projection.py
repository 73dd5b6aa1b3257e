"""The projection equals a clean rebuild after every kind of edit, and changes only what it must."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from almanac import graph, temporal
from tests import vaults

NOW = 1_800_000_000_000_000

NOTES = vaults.files("projection")


def write(root: Path, files: dict[str, str]) -> None:
    for path, text in files.items():
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)


World = tuple[Path, temporal.Store, temporal.Reconciler]


@pytest.fixture
def world(tmp_path: Path) -> Iterator[World]:
    root = tmp_path / "vault"
    write(root, NOTES)
    store = temporal.Store.open(tmp_path / "state.db")
    reconciler = temporal.Reconciler(store, root, temporal.VaultConfig())
    reconciler.reconcile(now_us=NOW)
    yield root, store, reconciler
    store.close()


def edges(projection: graph.Projection) -> set[tuple[str, str, str, Any]]:
    return {
        (scope, u, v, k) for scope, g in projection.graphs.items() for u, v, k in g.edges(keys=True)
    }


def state(projection: graph.Projection) -> dict[str, Any]:
    """Everything a query can see: graph nodes and edges, and the published view."""
    return {
        "nodes": {(scope, n) for scope, g in projection.graphs.items() for n in g},
        "edges": edges(projection),
        "view": {
            scope: (dict(sg.nodes), dict(sg.adjacency))
            for scope, sg in projection.view.scopes.items()
            if sg.nodes
        },
    }


def remove(root: Path, path: str) -> None:
    (root / path).unlink()


EDITS: dict[str, Callable[[Path], object]] = {
    "add-link": lambda root: write(
        root, {"people/cy.md": "---\ntype: person\n---\n# Cy\nMet [[Bob]].\n"}
    ),
    "remove-link": lambda root: write(
        root, {"people/ada.md": "---\ntype: person\naliases: [Ada L]\n---\n# Ada Lopez\n"}
    ),
    "change-relationship-endpoint": lambda root: write(
        root,
        {
            "rel/ada-acme.md": NOTES["rel/ada-acme.md"].replace(
                "from: people/ada", "from: people/bob"
            )
        },
    ),
    "withdraw-claim": lambda root: write(
        root,
        {
            "claims/c1.md": NOTES["claims/c1.md"].replace(
                "---\nBob", "lifecycle: withdrawn\n---\nBob"
            )
        },
    ),
    "withdraw-person-drops-dependants": lambda root: write(
        root, {"people/bob.md": "---\ntype: person\ntitle: Bob\nlifecycle: withdrawn\n---\n"}
    ),
    "new-person-makes-claim-eligible": lambda root: write(
        root, {"people/dee.md": "---\ntype: person\n---\n# Dee\n"}
    ),
    "rename-title": lambda root: write(
        root, {"people/bob.md": "---\ntype: person\ntitle: Robert\n---\nKnows [[people/ada]].\n"}
    ),
    "move-file-changes-id": lambda root: (root / "people/cy.md").rename(root / "people/cyrus.md"),
    "title-made-ambiguous": lambda root: write(
        root, {"orgs/bob-inc.md": "---\ntype: organization\ntitle: Bob\n---\n"}
    ),
    "delete-file": lambda root: remove(root, "orgs/acme.md"),
    # The replacement's adjacency is patched: its old-plan neighbour is no longer history-only.
    "link-alongside-supersession": lambda root: write(
        root, {"decisions/old.md": NOTES["decisions/old.md"] + "Now see [[New plan]].\n"}
    ),
    # The replacement's adjacency is patched while its old plan is a history-only neighbour.
    "link-to-replacement": lambda root: write(root, {"notes/n3.md": "See [[New plan]].\n"}),
    "hub-gains-a-link": lambda root: write(
        root, {"notes/n2.md": "Ada again: [[Ada Lopez]], [[people/ada]].\n"}
    ),
    "supersede-chain-edit": lambda root: write(
        root,
        {"decisions/old.md": NOTES["decisions/old.md"].replace("decisions/new", "decisions/none")},
    ),
}


@pytest.mark.parametrize("edit", sorted(EDITS))
def test_incremental_update_equals_a_clean_rebuild(world: World, edit: str) -> None:
    root, store, reconciler = world
    projection = graph.Projection.build(store)
    before = state(projection)
    held = projection.view
    held_scopes = {s: (dict(g.nodes), dict(g.adjacency)) for s, g in held.scopes.items()}
    EDITS[edit](root)
    result = reconciler.reconcile(now_us=NOW)
    assert result.changed
    projection.apply(store, result)
    after = state(projection)
    assert after == state(graph.Projection.build(store))
    assert after != before
    # A view a request already holds never changes.
    assert {s: (dict(g.nodes), dict(g.adjacency)) for s, g in held.scopes.items()} == held_scopes


def edge_ids(projection: graph.Projection) -> set[tuple[str, str, str, str]]:
    return {(e.relation, e.src, e.dst, e.evidence) for _, _, _, e in edges(projection)}


def test_an_added_link_adds_exactly_its_edge(world: World) -> None:
    root, store, reconciler = world
    projection = graph.Projection.build(store)
    before = edge_ids(projection)
    EDITS["add-link"](root)
    projection.apply(store, reconciler.reconcile(now_us=NOW))
    assert edge_ids(projection) - before == {("links_to", "people/cy", "people/bob", "people/cy")}
    assert before - edge_ids(projection) == set()


def test_withdrawing_a_person_removes_every_edge_that_depended_on_it(world: World) -> None:
    root, store, reconciler = world
    projection = graph.Projection.build(store)
    before = edge_ids(projection)
    EDITS["withdraw-person-drops-dependants"](root)
    projection.apply(store, reconciler.reconcile(now_us=NOW))
    gone = before - edge_ids(projection)
    # Bob's own links, every edge to Bob, and claim c1 (about Bob, now ineligible) with every
    # edge it is an end or the evidence of.
    assert {e for e in before if "people/bob" in e[1:3] or "claims/c1" in e[1:]} == gone
    assert edge_ids(projection) - before == set()


def test_a_claim_becomes_eligible_with_its_waiting_edges(world: World) -> None:
    root, store, reconciler = world
    projection = graph.Projection.build(store)
    assert projection.view.node("default", "claims/c2") is None
    EDITS["new-person-makes-claim-eligible"](root)
    projection.apply(store, reconciler.reconcile(now_us=NOW))
    assert projection.view.node("default", "claims/c2") is not None
    added = {("about", "claims/c2", "people/dee", "claims/c2")}
    added.add(("links_to", "meetings/m1", "people/dee", "meetings/m1"))
    # A link that always resolved to the claim: its edge was waiting for the claim's eligibility.
    added.add(("links_to", "notes/n1", "claims/c2", "notes/n1"))
    assert added <= edge_ids(projection)


def test_edges_carry_relation_evidence_locator_and_validity(world: World) -> None:
    _, store, _ = world
    projection = graph.Projection.build(store)
    by_id = {(e.relation, e.src, e.dst): e for _, _, _, e in edges(projection)}
    works = by_id[("works_at", "people/ada", "orgs/acme")]
    assert works.evidence == "rel/ada-acme"
    assert (works.locator.path, works.locator.start_line) == ("rel/ada-acme.md", 1)
    assert works.locator.end_line == NOTES["rel/ada-acme.md"].count("\n")
    assert works.valid_from == temporal.parse_query_bound("2024-01-01")
    assert works.valid_until == temporal.parse_query_bound("2025-01-01")
    link = by_id[("links_to", "people/ada", "people/bob")]
    assert (link.locator.start_line, link.locator.end_line) == (6, 6)
    assert link.valid_from is None and link.valid_until is None
    kinds = {e[0] for e in by_id}
    assert kinds == {
        "about",
        "cites",
        "involves",
        "owned_by",
        "links_to",
        "works_at",
        "superseded_by",
    }


def test_parallel_edges_stay_apart_in_the_graph(world: World) -> None:
    _, store, _ = world
    projection = graph.Projection.build(store)
    g = projection.graphs["default"]
    # Bob links Ada twice (by id and by alias, on one line): one edge key, deduplicated.
    assert g.number_of_edges("people/bob", "people/ada") == 1
    # The meeting involves Bob and the claim cites the meeting: two edges between m1 and others.
    assert g.number_of_edges("meetings/m1", "people/ada") == 1
    assert g.number_of_edges("claims/c1", "people/bob") == 1


def _live_edges() -> int:
    import gc

    gc.collect()
    return sum(1 for o in gc.get_objects() if isinstance(o, graph.Edge))


def test_edges_read_again_unchanged_are_not_kept_twice(world: World) -> None:
    root, store, reconciler = world
    projection = graph.Projection.build(store)
    views = [projection.view]
    before = _live_edges()
    for i in range(20):
        # Cy's title changes back and forth: every note linking to Cy is resolved again and
        # its edges read again, unchanged; Cy's own file is rewritten.
        title = "Cy" if i % 2 else "Cyrus"
        write(root, {"people/cy.md": f"---\ntype: person\naliases: [Cy]\n---\n# {title}\n"})
        views = [*views, projection.apply(store, reconciler.reconcile(now_us=NOW + i))][-2:]
    # Two views are alive, as a server keeps a few; they share the projection's edges.
    assert _live_edges() == before
