"""Names, called directly: each rule's key, `designate`, the link index and the committed reader."""

from __future__ import annotations

import unicodedata
from collections.abc import Callable, Iterator
from pathlib import Path
from types import MappingProxyType

import pytest

from almanac import temporal
from almanac.temporal.reconcile import NameIndex, Resolution
from almanac.temporal.store import (
    LINK_RULES,
    LOOKUP_RULES,
    SEED_RULES,
    Designation,
    NameRule,
    designate,
    normalize_name,
)
from tests.temporal.helpers import committed

CAFE = "Café"
NFD_CAFE = unicodedata.normalize("NFD", CAFE)
CONFIG = temporal.VaultConfig(scopes=MappingProxyType({"team": "team/", "private": "private/"}))
EVERY_SCOPE = ["default", "private", "team"]

# -- each rule's key -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("rule", "name", "key"),
    [
        pytest.param(NameRule.ID, "People/Ada", "People/Ada", id="id-keeps-case"),
        pytest.param(NameRule.ID, NFD_CAFE, CAFE, id="id-nfc"),
        pytest.param(NameRule.SLUG, NFD_CAFE, CAFE, id="slug-nfc"),
        pytest.param(NameRule.SLUG, " a ", " a ", id="slug-untrimmed"),
        pytest.param(NameRule.FILE, "People/" + NFD_CAFE, "people/café", id="file-nfc-lower"),
        pytest.param(NameRule.TITLE, "  ADA \t lopez ", "ada lopez", id="title-collapsed"),
        pytest.param(NameRule.TITLE, "ＡＤＡ", "ada", id="title-nfkc"),
        pytest.param(NameRule.TITLE, NFD_CAFE, "café", id="title-nfkc-composed"),
    ],
)
def test_each_rule_compares_its_own_key_of_a_name(rule: NameRule, name: str, key: str) -> None:
    assert rule.key(name) == key


def test_the_title_key_is_the_normalised_name() -> None:
    assert NameRule.TITLE.key(" Ａ  b ") == normalize_name(" Ａ  b ") == "a b"


# -- designate ---------------------------------------------------------------------------------

TABLE: dict[NameRule, dict[str, list[str]]] = {
    NameRule.ID: {"sam": ["people/sam"], "people/ada": ["people/ada"]},
    NameRule.SLUG: {"people/ada": ["people/ada"], "people/sam": ["people/sam"]},
    NameRule.FILE: {"sam": ["people/sam"], "ada": ["people/ada"]},
    NameRule.TITLE: {"sam": ["people/ada"], "twin": ["a/twin", "b/twin"]},
}


def find(rule: NameRule, key: str) -> list[str]:
    return TABLE[rule].get(key, [])


@pytest.mark.parametrize(
    ("name", "rules", "first", "expected"),
    [
        pytest.param("sam", LINK_RULES, True, (NameRule.ID, ("people/sam",)), id="link-id-first"),
        pytest.param(
            "sam",
            LOOKUP_RULES,
            False,
            (NameRule.ID, ("people/sam", "people/ada")),
            id="lookup-id-and-alias",
        ),
        pytest.param("sam", SEED_RULES, False, (NameRule.ID, ("people/sam",)), id="seed-no-alias"),
        pytest.param("Sam", SEED_RULES, False, (None, ()), id="seed-id-case-sensitive"),
        pytest.param("Sam", LINK_RULES, True, (NameRule.FILE, ("people/sam",)), id="link-file"),
        pytest.param(
            "Sam", LOOKUP_RULES, False, (NameRule.TITLE, ("people/ada",)), id="lookup-no-file"
        ),
        pytest.param(
            "people/ada", SEED_RULES, False, (NameRule.ID, ("people/ada",)), id="counted-once"
        ),
        pytest.param(
            "Twin", LINK_RULES, True, (NameRule.TITLE, ("a/twin", "b/twin")), id="ambiguous"
        ),
        pytest.param("nobody", LINK_RULES, True, (None, ()), id="missing"),
    ],
)
def test_designate_applies_the_rules_asked_for_in_order(
    name: str,
    rules: tuple[NameRule, ...],
    first: bool,
    expected: tuple[NameRule | None, tuple[str, ...]],
) -> None:
    assert designate(name, find, rules=rules, first=first) == Designation(*expected)


@pytest.mark.parametrize("name", ["", " ", "\t\n", "\u3000"])
@pytest.mark.parametrize("first", [True, False])
def test_a_blank_name_designates_nothing_and_asks_nobody(name: str, first: bool) -> None:
    asked: list[tuple[NameRule, str]] = []

    def everything(rule: NameRule, key: str) -> list[str]:
        asked.append((rule, key))
        return ["people/ada"]

    assert designate(name, everything, rules=LINK_RULES, first=first) == Designation(None, ())
    assert asked == []


# -- links: the reconcile's index of usable notes --------------------------------------------

NOTES = [
    ("people/ada.md", "people/ada", "default", ["Ada Lopez", "A. Lopez", "Sam"]),
    ("people/sam.md", "sam", "default", ["Samuel Okafor"]),
    (f"{CAFE}.md", CAFE, "default", ["The corner café"]),
    ("a/x/readme.md", "a/x/readme", "default", ["Readme"]),
    ("a/y/readme.md", "a/y/readme", "default", ["Readme"]),
    ("team/notes/plan.md", "plan", "team", ["Plan"]),
]


@pytest.fixture
def names() -> NameIndex:
    index = NameIndex()
    for path, note_id, scope, titles in NOTES:
        index.add(path, id=note_id, slug=path[:-3], scope=scope, names=titles)
    return index


@pytest.mark.parametrize(
    ("target", "kind", "scope", "expected"),
    [
        ("sam", "wiki", "default", Resolution("resolved", "people/sam.md")),  # id before alias
        ("people/sam", "wiki", "default", Resolution("resolved", "people/sam.md")),  # slug
        ("SAM", "wiki", "default", Resolution("resolved", "people/sam.md")),  # file name
        ("PEOPLE/Ada", "wiki", "default", Resolution("resolved", "people/ada.md")),
        ("x/readme", "wiki", "default", Resolution("resolved", "a/x/readme.md")),  # a tail
        ("eople/ada", "wiki", "default", Resolution("missing")),  # not at a `/`
        ("b/people/ada", "wiki", "default", Resolution("missing")),
        ("  a.  LOPEZ ", "wiki", "default", Resolution("resolved", "people/ada.md")),  # alias
        (NFD_CAFE, "wiki", "default", Resolution("resolved", f"{CAFE}.md")),  # NFC id
        ("the corner cafe\u0301", "ref", "default", Resolution("resolved", f"{CAFE}.md")),
        ("Readme", "wiki", "team", Resolution("missing")),  # other scope
        ("plan", "ref", "team", Resolution("resolved", "team/notes/plan.md")),
        ("plan", "ref", "default", Resolution("missing")),
        ("people/ada", "markdown", "default", Resolution("resolved", "people/ada.md")),
        ("Ada Lopez", "markdown", "default", Resolution("missing")),  # a path: the slug only
        ("sam", "markdown", "default", Resolution("missing")),
        ("   ", "wiki", "default", Resolution("missing")),
    ],
)
def test_a_link_target_resolves_by_the_first_rule_that_finds_anything(
    names: NameIndex, target: str, kind: str, scope: str, expected: Resolution
) -> None:
    assert names.resolve(target, kind=kind, scope=scope) == expected


def test_several_files_of_one_name_leave_it_to_the_linking_notes_folder(names: NameIndex) -> None:
    found = names.resolve("readme", kind="wiki", scope="default")
    assert found == ["a/x/readme.md", "a/y/readme.md"]
    assert isinstance(found, list)
    assert names.in_folder(found, "a/y") == Resolution("resolved", "a/y/readme.md")
    assert names.in_folder(found, "a") == Resolution("ambiguous")
    # A title that several notes carry is ambiguous whatever the folder.
    assert names.resolve("README ", kind="ref", scope="default") == Resolution("ambiguous")


def test_a_removed_note_leaves_the_name_to_the_next_rule(names: NameIndex) -> None:
    names.remove("people/sam.md")
    assert names.resolve("sam", kind="wiki", scope="default") == Resolution(
        "resolved", "people/ada.md"
    )
    assert names.keys("people/sam.md") == (set(), set())
    assert names.keys("people/ada.md") == (
        {"people/ada", "ada"},
        {"ada lopez", "a. lopez", "sam"},
    )


# -- lookup and seeds: the eligible records of the readable scopes ---------------------------


@pytest.fixture
def reader(fixture_vault: Callable[[str], Path], tmp_path: Path) -> Iterator[temporal.Reader]:
    with committed(fixture_vault("names"), tmp_path / "state.db", CONFIG) as reader:
        yield reader


@pytest.mark.parametrize(
    ("name", "scopes", "rules", "expected"),
    [
        # Every rule counts together: one record's id and another's alias.
        ("sam", EVERY_SCOPE, LOOKUP_RULES, [("default", "people/ada"), ("default", "sam")]),
        ("sam", EVERY_SCOPE, SEED_RULES, [("default", "sam")]),
        ("people/sam", EVERY_SCOPE, SEED_RULES, [("default", "sam")]),  # slug
        ("Samuel Okafor", EVERY_SCOPE, SEED_RULES, []),  # a seed by id names no title
        (" ada  LOPEZ", EVERY_SCOPE, LOOKUP_RULES, [("default", "people/ada")]),  # not withdrawn
        ("old/ada", EVERY_SCOPE, LOOKUP_RULES, []),  # withdrawn
        ("twin", EVERY_SCOPE, LOOKUP_RULES, []),  # duplicate ids: all copies excluded
        ("ada", EVERY_SCOPE, LOOKUP_RULES, []),  # no file-name rule outside links
        # Ids and slugs are NFC: a name written decomposed is the same name (as for links).
        (NFD_CAFE, EVERY_SCOPE, LOOKUP_RULES, [("default", CAFE)]),
        (NFD_CAFE, EVERY_SCOPE, SEED_RULES, [("default", CAFE)]),
        # One id in two readable scopes is two records, as for seeds: the lookup is ambiguous.
        ("plan", EVERY_SCOPE, LOOKUP_RULES, [("private", "plan"), ("team", "plan")]),
        ("plan", ["team"], LOOKUP_RULES, [("team", "plan")]),
        ("plan", ["default"], LOOKUP_RULES, []),
        ("  ", EVERY_SCOPE, LOOKUP_RULES, []),
    ],
)
def test_the_reader_designates_eligible_records_of_the_readable_scopes(
    reader: temporal.Reader,
    name: str,
    scopes: list[str],
    rules: tuple[NameRule, ...],
    expected: list[tuple[str, str]],
) -> None:
    found = reader.designated(name, scopes, rules=rules)
    assert [(scope, ref.id) for scope, ref in found] == expected


def test_the_reader_finds_many_keys_of_one_rule_at_once(reader: temporal.Reader) -> None:
    found = reader.named(NameRule.TITLE, ["plan", "sam", "a. lopez", "nobody"], EVERY_SCOPE)
    assert {key: [(s, r.id) for s, r in refs] for key, refs in found.items()} == {
        "a. lopez": [("default", "people/ada")],
        "plan": [("private", "plan"), ("team", "plan")],
        "sam": [("default", "people/ada")],
    }


def test_links_in_the_vault_resolve_by_the_same_rules(reader: temporal.Reader) -> None:
    rows = reader.run(
        "SELECT target, resolved_path, status FROM targets WHERE path = 'people/ada.md'"
        " ORDER BY ord"
    ).fetchall()
    assert rows == [("sam", "people/sam.md", "resolved"), (CAFE, f"{CAFE}.md", "resolved")]
