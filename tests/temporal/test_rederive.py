"""Which referrers a change set derives again (`resolution.read_by_referrers`): a note named by
thousands (a hub) edited in what they read of it (its id, eligibility, `superseded_by`) makes
them derived again; edited otherwise (its body, its dates), it leaves their rows alone, and the
state still equals a clean rebuild (its own rows, among them the `associations` through the
claims that name it as `source`, carry its new values)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from almanac import temporal
from almanac.temporal.reconcile.changeset import ChangeSet
from almanac.temporal.reconcile.memory import Memory
from almanac.temporal.reconcile.writes import rederived
from almanac.vault import parse_note
from tests.temporal.helpers import NOW
from tests.temporal.test_reconcile import clean_rebuild, dump, reconcile, write

CONFIG = temporal.VaultConfig()
HUB = "meetings/hub.md"
OLD = "meetings/old.md"


def hub(*, date: str = "2026-01-05", body: str = "Agenda.", more: str = "") -> str:
    return f"---\ntype: meeting\noccurred_at: {date}\n{more}---\n# Hub Meeting\n{body}\n"


# The referrers, one per way of naming the hub: a claim about Ada with the hub as its
# `source_event` source, a relationship from it (eligible only while it is), a note listing it
# among its entities, a note linking to it, and a meeting it supersedes.
REFERRERS = {
    "claims/said.md": "---\ntype: claim\nsubject: people/ada\nsource: meetings/hub\n"
    "source_event: true\n---\nAda said so.\n",
    "rels/hub-ada.md": "---\ntype: relationship\nfrom: meetings/hub\nto: people/ada\n"
    "relation: hosted\n---\n",
    "notes/seen.md": "---\ntype: note\nentities: [meetings/hub]\n---\nSeen there.\n",
    "notes/link.md": "See [[Hub Meeting]].\n",
    OLD: "---\ntype: meeting\nlifecycle: superseded\nsuperseded_by: meetings/hub\n---\n# Old\n",
}
OTHERS = {"people/ada.md": "---\ntype: person\n---\n# Ada\n", "people/bob.md": "# Bob\n"}


@pytest.fixture
def root(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    write(root, {HUB: hub(), **REFERRERS, **OTHERS})
    reconcile(root, tmp_path / "state.db")
    return root


def plan_of(root: Path, db: Path, text: str | None) -> ChangeSet:
    """The change set of the hub's file rewritten (None: deleted), run but not written."""
    store = temporal.Store.open(db)
    try:
        plan = ChangeSet(Memory.load(store.conn), store.conn, CONFIG.scope_of, NOW + 1)
        plan.take(HUB, None if text is None else parse_note(HUB, text.encode()))
        plan.run()
        return plan
    finally:
        store.close()


def test_a_hub_edited_in_its_body_or_dates_derives_none_of_its_referrers(
    root: Path, tmp_path: Path
) -> None:
    db = tmp_path / "state.db"
    for text in (hub(body="Agenda, edited."), hub(date="2026-02-07", more="tags: [x]\n")):
        plan = plan_of(root, db, text)
        # Itself, and the chain through it (`chains`: the one note it supersedes), alone.
        assert plan.derived == {HUB, OLD}
        assert rederived(plan, [HUB]) == [HUB, OLD]


@pytest.mark.parametrize(
    "text",
    [
        hub(more="superseded_by: people/bob\n"),  # what its chain (and referrers) read
        hub(more="id: hub-2026\n"),  # an id of its own
        hub(more="lifecycle: withdrawn\n"),  # out of every query
        None,  # deleted
    ],
)
def test_a_hub_edited_in_what_its_referrers_read_derives_them_all(
    root: Path, tmp_path: Path, text: str | None
) -> None:
    plan = plan_of(root, tmp_path / "state.db", text)
    assert plan.derived >= set(REFERRERS) - {"notes/link.md"}  # (a link derives nothing)


def test_each_edit_of_a_hub_leaves_the_state_a_clean_rebuild_would(
    root: Path, tmp_path: Path
) -> None:
    db = tmp_path / "state.db"
    edits = [
        hub(body="Agenda, edited."),
        hub(date="2026-03-09"),  # the date its source_event claim's timeline row shows
        hub(date="2026-03-09", more="superseded_by: meetings/old\n"),  # a cycle
        hub(date="2026-03-09"),
        hub(more="lifecycle: withdrawn\n"),
        hub(date="2026-04-11"),
        hub(more="id: people/ada\n"),  # a duplicate id: Ada and the hub are both out
        hub(date="2026-05-13"),
    ]
    for text in edits:
        (root / HUB).write_text(text)
        reconcile(root, db)
        assert dump(db) == clean_rebuild(root, tmp_path, db)
    with sqlite3.connect(db) as conn:
        found = conn.execute(
            "SELECT entity, text FROM associations WHERE path = ? ORDER BY entity", [HUB]
        ).fetchall()
    assert found == [("people/ada.md", "2026-05-13")]  # through claims/said.md's source
