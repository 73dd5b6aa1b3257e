from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from almanac import temporal
from tests.temporal.conflict_vault import CONFLICT_NOTES, write_notes
from tests.temporal.test_reconcile import NOW, clean_rebuild, dump

Answers = dict[str, tuple[tuple[str, ...], bool]]


def reconcile(root: Path, db: Path) -> None:
    store = temporal.Store.open(db)
    try:
        temporal.Reconciler(store, root, temporal.VaultConfig()).reconcile(now_us=NOW)
    finally:
        store.close()


def answers(db: Path, *, as_of: str | None = None) -> Answers:
    """Every eligible record's conflicts (ids) and whether it is conflicted."""
    as_of_us = temporal.parse_query_bound(as_of) if as_of is not None else None
    store = temporal.Store.open(db)
    try:
        with store.read() as reader:
            ids = [r[0] for r in reader.run("SELECT id FROM notes WHERE eligible ORDER BY id")]
            paths = [r[0] for r in reader.run("SELECT path FROM notes WHERE eligible ORDER BY id")]
            found = reader.conflicts(paths, as_of_us=as_of_us)
            conflicted = reader.conflicted(paths, as_of_us=as_of_us)
            return {
                i: (tuple(r.id for r in found.get(p, ())), p in conflicted)
                for i, p in zip(ids, paths, strict=True)
            }
    finally:
        store.close()


@pytest.fixture(scope="module")
def state(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("conflicts")
    write_notes(folder / "vault", CONFLICT_NOTES)
    reconcile(folder / "vault", folder / "state.db")
    return folder / "state.db"


CASES = [
    ("overlapping-roles", "claims/role-2020", ("claims/role-2020-lead",), True),
    ("overlapping-roles-other", "claims/role-2020-lead", ("claims/role-2020",), True),
    ("disjoint-roles", "claims/role-2022", (), False),
    ("disjoint-roles-touching", "claims/role-2023", (), False),
    (
        "always-valid-meets-both-open-ends",
        "claims/employer-always",
        ("claims/employer-since-2024", "claims/employer-until-2019"),
        True,
    ),
    ("open-from", "claims/employer-since-2024", ("claims/employer-always",), True),
    ("open-until", "claims/employer-until-2019", ("claims/employer-always",), True),
    ("same-body", "claims/team-a", (), False),
    ("same-body-other", "claims/team-b", (), False),
    ("other-subject", "claims/bob-role", (), False),
    ("not-active", "claims/role-old", (), False),
    ("derived-one-level", "notes/sum-1", (), True),
    ("derived-two-levels", "notes/sum-2", (), True),
    ("derived-three-levels", "notes/sum-3", (), True),
    ("derived-four-levels", "notes/sum-4", (), False),
    ("derived-from-no-conflict", "notes/sum-clean", (), False),
    ("not-a-claim", "people/ada", (), False),
]


@pytest.mark.parametrize(
    "record_id,conflicts,conflicted", [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_conflicts(
    state: Path, record_id: str, conflicts: tuple[str, ...], conflicted: bool
) -> None:
    assert answers(state)[record_id] == (conflicts, conflicted)


AS_OF_CASES = [
    ("both-roles-valid", "2020-07-01", "claims/role-2020", ("claims/role-2020-lead",)),
    ("lead-role-over", "2020-10-01", "claims/role-2020", ()),
    ("before-the-roles", "2019-06-01", "claims/role-2020", ()),
    ("open-until-valid", "2018-06-01", "claims/employer-always", ("claims/employer-until-2019",)),
    ("open-from-valid", "2025-06-01", "claims/employer-always", ("claims/employer-since-2024",)),
    ("neither-open-end", "2021-06-01", "claims/employer-always", ()),
    ("open-until-ends-at-its-bound", "2019-01-01", "claims/employer-until-2019", ()),
]


@pytest.mark.parametrize(
    "as_of,record_id,conflicts", [c[1:] for c in AS_OF_CASES], ids=[c[0] for c in AS_OF_CASES]
)
def test_conflicts_as_of(
    state: Path, as_of: str, record_id: str, conflicts: tuple[str, ...]
) -> None:
    assert answers(state, as_of=as_of)[record_id] == (conflicts, bool(conflicts))


def test_derived_conflicts_follow_as_of(state: Path) -> None:
    assert answers(state, as_of="2020-07-01")["notes/sum-2"] == ((), True)
    assert answers(state, as_of="2020-10-01")["notes/sum-2"] == ((), False)


def test_record_carries_fact_key_derived_from_and_conflicts(state: Path) -> None:
    store = temporal.Store.open(state)
    try:
        with store.read() as reader:
            claim = reader.record("claims/role-2020", ["default"])
            summary = reader.record("notes/sum-dangling", ["default"])
    finally:
        store.close()
    assert claim is not None and summary is not None
    assert (claim.fact_key, claim.conflicted) == ("role", True)
    assert [r.id for r in claim.conflicts] == ["claims/role-2020-lead"]
    assert (summary.fact_key, summary.conflicted) == (None, False)
    assert [r.id for r in summary.derived_from] == ["claims/role-2022"]


def test_dangling_derived_from_and_bad_fact_key_are_issues(state: Path) -> None:
    with sqlite3.connect(state) as conn:
        rows = conn.execute(
            "SELECT path, line, field, code, message FROM issues ORDER BY path, code"
        ).fetchall()
    assert rows == [
        (
            "claims/bad-key.md",
            4,
            "fact_key",
            "invalid_field",
            "fact_key 'Current Role' is not snake_case",
        ),
        (
            "notes/sum-dangling.md",
            3,
            "derived_from",
            "dangling_reference",
            "derived_from 'claims/nothing-here' resolves to nothing eligible",
        ),
    ]


def test_derived_from_makes_no_graph_edge(state: Path) -> None:
    with sqlite3.connect(state) as conn:
        assert conn.execute("SELECT count(*) FROM edges WHERE path LIKE 'notes/%'").fetchone() == (
            0,
        )


def _rewrite(name: str, old: str, new: str) -> Callable[[Path], None]:
    def edit(root: Path) -> None:
        path = root / f"{name}.md"
        text = path.read_text()
        assert old in text, (name, old)
        path.write_text(text.replace(old, new))

    return edit


def _both(*edits: Callable[[Path], None]) -> Callable[[Path], None]:
    def edit(root: Path) -> None:
        for one in edits:
            one(root)

    return edit


EDITS = [
    # (name, edit, record whose answer changes, its answer after the edit)
    (
        "validity-made-disjoint",
        _rewrite("claims/role-2020-lead", "valid_from: 2020-06-01", "valid_from: 2021-06-01"),
        "claims/role-2020",
        ((), False),
    ),
    (
        "validity-made-overlapping",
        _rewrite("claims/role-2023", "valid_from: 2023-01-01", "valid_from: 2022-06-01"),
        "claims/role-2022",
        (("claims/role-2023",), True),
    ),
    (
        "body-made-equal",
        _rewrite("claims/role-2020-lead", "Lead", "Engineer"),
        "notes/sum-2",
        ((), False),
    ),
    (
        "body-made-different",
        _rewrite("claims/team-b", "Platform", "Data"),
        "claims/team-a",
        (("claims/team-b",), True),
    ),
    (
        "deleted",
        lambda root: (root / "claims/role-2020-lead.md").unlink(),
        "notes/sum-3",
        ((), False),
    ),
    (
        "superseded",
        _rewrite(
            "claims/role-2020-lead",
            "fact_key: role",
            "fact_key: role\nlifecycle: superseded\nsuperseded_by: claims/role-2022",
        ),
        "claims/role-2020",
        ((), False),
    ),
    (
        "fact-key-changed",
        _rewrite("claims/employer-always", "fact_key: employer", "fact_key: team"),
        "claims/team-a",
        (("claims/employer-always",), True),
    ),
    # Bob's note goes and Ada is also called Bob: a claim about "[[Bob]]" resolves again to
    # Ada (unchanged itself, its fact_key read from its committed row), always valid.
    (
        "subject-resolves-elsewhere",
        _both(
            lambda root: (root / "people/bob.md").unlink(),
            _rewrite("people/ada", "aliases: [Ada L]", "aliases: [Ada L, Bob]"),
        ),
        "claims/bob-role",
        (
            (
                "claims/role-2020",
                "claims/role-2020-lead",
                "claims/role-2022",
                "claims/role-2023",
            ),
            True,
        ),
    ),
    (
        "derived-chain-cut",
        _rewrite("notes/sum-1", "claims/role-2020", "claims/role-2022"),
        "notes/sum-3",
        ((), False),
    ),
]


@pytest.mark.parametrize("edit,record_id,after", [e[1:] for e in EDITS], ids=[e[0] for e in EDITS])
def test_incremental_conflicts_equal_a_clean_rebuild(
    edit: Callable[[Path], None],
    record_id: str,
    after: tuple[tuple[str, ...], bool],
    tmp_path: Path,
) -> None:
    root = tmp_path / "vault"
    write_notes(root, CONFLICT_NOTES)
    db = tmp_path / "state.db"
    reconcile(root, db)
    before = answers(db)
    edit(root)
    os.utime(root, None)
    reconcile(root, db)
    assert dump(db) == clean_rebuild(root, tmp_path, db)
    clean = tmp_path / "clean.db"
    reconcile(root, clean)
    assert answers(db) == answers(clean)
    assert answers(db).get(record_id, ((), False)) == after != before.get(record_id)


def test_a_claim_resolved_again_keeps_its_fact_key(tmp_path: Path) -> None:
    # Claims whose subject only an alias added later names: they become eligible, and conflict,
    # without being read again (their fact_key comes from their committed row).
    root = tmp_path / "vault"
    notes = {
        **CONFLICT_NOTES,
        "claims/x-1": CONFLICT_NOTES["claims/team-a"].replace("people/ada", "'[[Ada X]]'"),
        "claims/x-2": CONFLICT_NOTES["claims/team-b"]
        .replace("people/ada", "'[[Ada X]]'")
        .replace("Platform", "Data"),
    }
    write_notes(root, notes)
    db = tmp_path / "state.db"
    reconcile(root, db)
    assert "claims/x-1" not in answers(db)
    _rewrite("people/ada", "aliases: [Ada L]", "aliases: [Ada L, Ada X]")(root)
    reconcile(root, db)
    assert answers(db)["claims/x-1"] == (("claims/x-2",), True)
    assert answers(db)["claims/team-a"] == (("claims/x-2",), True)
    assert dump(db) == clean_rebuild(root, tmp_path, db)
