"""The change set's parts, called directly on a plan over a committed fixture vault: intake and
affected sets, resolution and eligibility, derived issues and supersession chains, rows to write.

The vault (tests/fixtures/vaults/changeset) commits a relationship to `people/carol`, who does
not exist, and a claim about that relationship: both ineligible, each with a dangling reference.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from almanac import temporal
from almanac.temporal.reconcile.changeset import ChangeSet
from almanac.temporal.reconcile.derived import chains, derived_issues
from almanac.temporal.reconcile.intake import affected, take
from almanac.temporal.reconcile.memory import Memory
from almanac.temporal.reconcile.resolution import run
from almanac.vault import ParsedNote, parse_note
from tests.temporal.helpers import NOW

LATER = NOW + 1
CONFIG = temporal.VaultConfig()
CAROL = "---\ntype: person\n---\n# Carol Jones\n"
REL = "rels/ada-carol.md"
CLAIM = "claims/ada-carol.md"


@pytest.fixture
def store(fixture_vault: Callable[[str], Path], tmp_path: Path) -> Iterator[temporal.Store]:
    store = temporal.Store.open(tmp_path / "state.db")
    try:
        temporal.Reconciler(store, fixture_vault("changeset"), CONFIG).reconcile(now_us=NOW)
        yield store
    finally:
        store.close()


def plan_over(store: temporal.Store) -> ChangeSet:
    """A change set over the committed state, as a reconcile makes one."""
    return ChangeSet(Memory.load(store.conn), store.conn, CONFIG.scope_of, LATER)


def parsed(path: str, text: str) -> ParsedNote:
    return parse_note(path, text.encode())


def issues(plan: ChangeSet, path: str) -> list[tuple[object, ...]]:
    """(field, code) of a note's derived issues."""
    return [(row[2], row[3]) for row in derived_issues(plan, path)]


# -- intake and affected sets ------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "text", "expected"),
    [
        # A new name: the links and references whose targets match it, by slug ("to:
        # people/carol") or by normalised title ("[[Carol Jones]]").
        ("people/carol.md", CAROL, {"people/carol.md", "people/ada.md", REL}),
        ("people/cj.md", "---\ntitle: carol  JONES\n---\n", {"people/cj.md", "people/ada.md"}),
        ("people/bob.md", None, {"people/ada.md"}),  # a name vanishes: [[Bob]]
        ("misc/x.md", "---\nid: People/Bob\n---\n", {"misc/x.md", "people/bob.md"}),  # case twin
        ("notes/other.md", "---\ntype: note\n---\n# Still unrelated\n", {"notes/other.md"}),
        ("notes/new.md", "# Nobody links here\n", {"notes/new.md"}),
    ],
)
def test_a_file_taken_affects_itself_and_the_notes_its_names_reach(
    store: temporal.Store, path: str, text: str | None, expected: set[str]
) -> None:
    plan = plan_over(store)
    take(plan, path, None if text is None else parsed(path, text))
    assert affected(plan) == expected


def test_intake_keeps_a_notes_name_keys_and_indexes_it_at_once(store: temporal.Store) -> None:
    plan = plan_over(store)
    text = "---\ntype: person\naliases: [CJ, ' carol   jones ']\n---\n# Carol Jones\n"
    take(plan, "people/carol.md", parsed("people/carol.md", text))
    assert plan.names_of["people/carol.md"] == [("carol jones", "title"), ("cj", "alias")]
    assert plan.names.resolve("cj", kind="wiki", scope="default") == temporal.reconcile.Resolution(
        "resolved", "people/carol.md"
    )


# -- resolution and eligibility ----------------------------------------------------------


def test_eligibility_flips_through_the_references_that_depend_on_a_new_note(
    store: temporal.Store,
) -> None:
    plan = plan_over(store)
    take(plan, "people/carol.md", parsed("people/carol.md", CAROL))
    run(plan)
    assert plan.entries[REL].resolved[("to", 0)].path == "people/carol.md"
    # The relationship's endpoint exists now, and the claim about it follows (a fixpoint).
    assert (plan.entries[REL].eligible, plan.entries[CLAIM].eligible) == (True, True)
    assert plan.affected_ids == {"people/carol", "rels/ada-carol", "claims/ada-carol"}
    assert plan.referrers_of("people/carol.md") == {REL}


def test_a_plan_leaves_the_memory_as_committed_until_it_commits(store: temporal.Store) -> None:
    plan = plan_over(store)
    take(plan, "people/carol.md", parsed("people/carol.md", CAROL))
    run(plan)
    assert plan.memory.entries[REL].eligible is False
    assert "people/carol.md" not in plan.memory.entries
    plan.commit()
    assert plan.memory.entries[REL].eligible is True
    assert "people/carol.md" in plan.memory.entries


def test_a_withdrawn_note_is_guarded_and_leaves_every_query(store: temporal.Store) -> None:
    plan = plan_over(store)
    withdrawn = "---\ntype: person\nlifecycle: withdrawn\n---\n# Bob\n"
    take(plan, "people/bob.md", parsed("people/bob.md", withdrawn))
    run(plan)
    guard = plan.guards["people/bob"]
    assert (guard.lifecycle, guard.seen_at, len(guard.hashes)) == ("withdrawn", LATER, 2)
    assert plan.entries["people/bob.md"].eligible is False
    assert plan.affected == {"people/bob.md", "people/ada.md"}  # [[Bob]] resolves again


def test_an_active_copy_of_a_guarded_id_is_blocked(store: temporal.Store) -> None:
    plan = plan_over(store)
    withdrawn = "---\ntype: person\nlifecycle: withdrawn\n---\n# Bob\n"
    take(plan, "people/bob.md", parsed("people/bob.md", withdrawn))
    run(plan)
    plan.commit()
    again = ChangeSet(plan.memory, store.conn, CONFIG.scope_of, LATER + 1)
    take(again, "people/bob.md", parsed("people/bob.md", "---\ntype: person\n---\n# Bob\n"))
    run(again)
    assert (again.entries["people/bob.md"].blocked, again.entries["people/bob.md"].eligible) == (
        True,
        False,
    )
    assert issues(again, "people/bob.md") == [("lifecycle", "resurrection_blocked")]


# -- derived issues and supersession chains ----------------------------------------------


def test_derived_issues_are_read_off_the_committed_state(store: temporal.Store) -> None:
    plan = plan_over(store)
    assert issues(plan, REL) == [("to", "dangling_reference")]
    assert issues(plan, CLAIM) == [("subject", "dangling_reference")]  # an ineligible subject
    assert issues(plan, "people/ada.md") == []  # [[Carol Jones]] is missing: a link, no issue


def test_two_notes_with_one_id_are_both_duplicates(store: temporal.Store) -> None:
    plan = plan_over(store)
    take(plan, "misc/bob.md", parsed("misc/bob.md", "---\nid: people/bob\n---\n# Bob too\n"))
    run(plan)
    assert plan.entries["misc/bob.md"].dup and plan.entries["people/bob.md"].dup
    assert issues(plan, "misc/bob.md") == [("id", "duplicate_id")]
    assert plan.entries["people/ada.md"].eligible  # [[Bob]]: a link, never a requirement


def test_a_supersession_cycle_is_found_along_the_whole_chain(store: temporal.Store) -> None:
    plan = plan_over(store)
    looped = "---\ntype: decision\nlifecycle: superseded\nsuperseded_by: decisions/v1\n---\n# V2\n"
    take(plan, "decisions/v2.md", parsed("decisions/v2.md", looped))
    run(plan)
    assert chains(plan, {"decisions/v2.md"}) == {"decisions/v1.md", "decisions/v2.md"}
    assert "decisions/v1.md" in plan.derived  # not taken, on the chain
    for path in ("decisions/v1.md", "decisions/v2.md"):
        assert issues(plan, path) == [("superseded_by", "supersession_cycle")]


def test_a_chain_without_a_loop_is_no_cycle(store: temporal.Store) -> None:
    plan = plan_over(store)
    v0 = "---\ntype: decision\nlifecycle: superseded\nsuperseded_by: decisions/v1\n---\n"
    take(plan, "decisions/v0.md", parsed("decisions/v0.md", v0))
    run(plan)
    assert chains(plan, {"decisions/v2.md"}) == {
        "decisions/v0.md",
        "decisions/v1.md",
        "decisions/v2.md",
    }
    assert [issues(plan, p) for p in ("decisions/v0.md", "decisions/v1.md")] == [[], []]


# -- rows to write ------------------------------------------------------------------------


def test_the_rows_written_are_those_of_the_changed_and_affected_notes(
    store: temporal.Store,
) -> None:
    plan = plan_over(store)
    plan.take("people/carol.md", parsed("people/carol.md", CAROL))
    plan.run()
    with store.write() as conn, store.bulk(conn, active=False) as bulk:
        plan.write(conn, bulk)
    rows = store.conn.execute
    assert rows("SELECT path FROM notes WHERE eligible = 0").fetchall() == []
    assert rows("SELECT path, code FROM issues").fetchall() == []
    assert rows(
        "SELECT path, field, resolved_path FROM targets WHERE resolved_path = 'people/carol.md'"
        " ORDER BY path"
    ).fetchall() == [("people/ada.md", "link", "people/carol.md"), (REL, "to", "people/carol.md")]
    assert rows("SELECT key, source FROM names WHERE path = 'people/carol.md'").fetchall() == [
        ("carol jones", "title")
    ]
    assert plan.summary().affected_ids == ("claims/ada-carol", "people/carol", "rels/ada-carol")
    assert plan.summary().changed_paths == ("people/carol.md",)
