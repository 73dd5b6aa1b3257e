"""Lookup and seeds, called directly on a committed fixture vault: one set of name rules."""

from __future__ import annotations

import unicodedata
from collections.abc import Callable, Iterator
from pathlib import Path
from types import MappingProxyType

import pytest

from almanac import graph, temporal
from almanac.graph import LookupStatus
from tests.temporal.helpers import committed

CONFIG = temporal.VaultConfig(scopes=MappingProxyType({"team": "team/", "private": "private/"}))
EVERY_SCOPE = ["default", "private", "team"]
NFD_CAFE = unicodedata.normalize("NFD", "Café")


@pytest.fixture
def reader(fixture_vault: Callable[[str], Path], tmp_path: Path) -> Iterator[temporal.Reader]:
    with committed(fixture_vault("names"), tmp_path / "state.db", CONFIG) as reader:
        yield reader


@pytest.mark.parametrize(
    ("name", "scopes", "status", "ids"),
    [
        ("Samuel Okafor", EVERY_SCOPE, LookupStatus.FOUND, ["sam"]),
        ("sam", EVERY_SCOPE, LookupStatus.AMBIGUOUS, ["people/ada", "sam"]),
        ("plan", EVERY_SCOPE, LookupStatus.AMBIGUOUS, ["plan", "plan"]),  # two scopes
        ("plan", ["private"], LookupStatus.FOUND, ["plan"]),
        (NFD_CAFE, EVERY_SCOPE, LookupStatus.FOUND, ["Café"]),
        ("twin", EVERY_SCOPE, LookupStatus.MISSING, []),
        (" ", EVERY_SCOPE, LookupStatus.MISSING, []),
    ],
)
def test_lookup_counts_every_rule_across_the_readable_scopes(
    reader: temporal.Reader, name: str, scopes: list[str], status: LookupStatus, ids: list[str]
) -> None:
    found = graph.lookup(reader, name, scopes=scopes)
    assert found.status is status
    assert [r.id for r in (found.candidates or ((found.record,) if found.record else ()))] == ids


@pytest.mark.parametrize(
    ("name", "scopes", "status", "found"),
    [
        ("sam", EVERY_SCOPE, LookupStatus.FOUND, [("default", "sam")]),
        (NFD_CAFE, EVERY_SCOPE, LookupStatus.FOUND, [("default", "Café")]),
        ("plan", EVERY_SCOPE, LookupStatus.AMBIGUOUS, []),
        ("plan", ["team"], LookupStatus.FOUND, [("team", "plan")]),
        ("Samuel Okafor", EVERY_SCOPE, LookupStatus.MISSING, []),
        ("", EVERY_SCOPE, LookupStatus.MISSING, []),
    ],
)
def test_a_seed_by_id_is_an_id_or_a_slug(
    reader: temporal.Reader,
    name: str,
    scopes: list[str],
    status: LookupStatus,
    found: list[tuple[str, str]],
) -> None:
    seeds = graph.seeds_by_id(reader, name, scopes)
    assert seeds.status is status
    assert [(scope, ref.id) for scope, ref in seeds.found] == found


@pytest.mark.parametrize(
    ("text", "status", "found", "candidates"),
    [
        ("What did Samuel  OKAFOR say?", LookupStatus.FOUND, ["sam"], []),
        ("Ada Lopez met A. Lopez", LookupStatus.FOUND, ["people/ada"], []),
        ("the corner cafe\u0301 opens", LookupStatus.FOUND, ["Café"], []),
        ("Sam and the plan", LookupStatus.AMBIGUOUS, ["people/ada"], ["plan"]),  # by id
        ("samuel okafor's plan", LookupStatus.AMBIGUOUS, ["sam"], ["plan"]),
        ("Ada Lopezz", LookupStatus.MISSING, [], []),  # whole words only
        ("One twin", LookupStatus.MISSING, [], []),  # a duplicate id is no candidate
    ],
)
def test_a_seed_text_names_records_by_their_titles_and_aliases(
    reader: temporal.Reader,
    text: str,
    status: LookupStatus,
    found: list[str],
    candidates: list[str],
) -> None:
    seeds = graph.seeds_by_text(reader, text, EVERY_SCOPE)
    assert seeds.status is status
    assert [ref.id for _, ref in seeds.found] == found
    assert [ref.id for ref in seeds.candidates] == candidates
