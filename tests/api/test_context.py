"""`context` (SPEC 5, Context): one bounded bundle of evidence per turn, its rules a table each."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from starlette.testclient import TestClient

from almanac import temporal
from almanac.api.bundle import ContextPart, Item, pack
from tests.api.helpers import codes, data, gql
from tests.api.time_vaults import app_over

AS_OF = "2026-12-04T12:00:00Z"
CONTEXT = """
query($text: String, $pins: [ID!], $budget: Int, $asOf: String, $scope: String) {
  context(query: $text, pins: $pins, budget: $budget, asOf: $asOf, scope: $scope) {
    budget used omitted missingPins asOf timezone
    parts { part returned included omitted }
    items { part record { id } text chars clock lifecycle locator { path startLine } }
    retrieval { reason }
  }
}"""

NOTES = {
    "team/people/ada.md": "---\ntitle: Ada Lopez\naliases: [Ada]\n---\nAda leads storage.\n",
    "team/tasks/overdue.md": (
        "---\ntitle: Send the storage memo\ndue_at: 2026-11-20\nentities: [team/people/ada]\n"
        "---\nThe memo.\n"
    ),
    "team/tasks/today.md": (
        "---\ntitle: Review the budget\ndue_at: 2026-12-04\nentities: [team/people/ada]\n---\n"
    ),
    "team/meetings/near.md": (
        "---\ntitle: Near sync\noccurred_at: 2026-12-03T10:00:00Z\n"
        "entities: [team/people/ada]\n---\nWe talked.\n"
    ),
    "team/meetings/future.md": (
        "---\ntitle: Future sync\noccurred_at: 2026-12-10T10:00:00Z\n"
        "entities: [team/people/ada]\n---\n"
    ),
    "team/meetings/far.md": (
        "---\ntitle: Far sync\noccurred_at: 2025-01-01T10:00:00Z\n"
        "entities: [team/people/ada]\n---\n"
    ),
    "team/notes/storage.md": (
        "---\ntitle: Storage choice\n---\nIntro line.\nWe chose DuckDB for storage, after a long"
        " look at the alternatives.\nClosing line.\n"
    ),
    "ops/secret.md": "---\ntitle: Ops storage secret\n---\nThe storage keys live here.\n",
}
TIME_ORDER = [
    "team/tasks/overdue",  # OVERDUE first
    "team/tasks/today",  # then TODAY
    "team/meetings/near",  # then by distance to asOf: 26 hours
    "team/meetings/future",  # 6 days
    "team/meetings/far",  # 23 months
]


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    root = tmp_path_factory.mktemp("context")
    vault = root / "vault"
    for name, text in NOTES.items():
        (vault / name).parent.mkdir(parents=True, exist_ok=True)
        (vault / name).write_text(text)
    (root / "almanac.toml").write_text('[scopes]\nteam = "team/"\nops = "ops/"\n')
    with app_over(vault, root / "state.db", root / "almanac.toml") as client:
        yield client


def _variables(arguments: dict[str, Any]) -> dict[str, Any]:
    # `query` is the helpers' own parameter: the document's variable is `text`.
    named = {"text" if k == "query" else k: v for k, v in arguments.items()}
    return {"asOf": AS_OF, **named}


def bundle(client: TestClient, **arguments: Any) -> dict[str, Any]:
    found: dict[str, Any] = data(client, CONTEXT, **_variables(arguments))["context"]
    return found


def ids(found: dict[str, Any], part: str | None = None) -> list[str]:
    return [i["record"]["id"] for i in found["items"] if part is None or i["part"] == part]


def counts(found: dict[str, Any]) -> dict[str, tuple[int, int, int]]:
    return {p["part"]: (p["returned"], p["included"], p["omitted"]) for p in found["parts"]}


# -- what fills the bundle, in which order ----------------------------------------------------


def test_pins_then_the_named_entities_rows_then_search_hits(client: TestClient) -> None:
    found = bundle(client, query="What is due for Ada about storage?", pins=["team/notes/storage"])
    assert [i["part"] for i in found["items"]] == ["PIN"] + ["TIME"] * 5 + ["RECALL"]
    assert ids(found, "PIN") == ["team/notes/storage"]
    assert ids(found, "TIME") == TIME_ORDER
    # Search also finds the pinned note and the overdue memo: a record is an item once, in
    # the first part that brings it.
    assert ids(found, "RECALL") == ["team/people/ada"]
    assert len(set(ids(found))) == len(ids(found))
    clocks = [i["clock"] for i in found["items"] if i["part"] == "TIME"]
    assert clocks[:2] == ["OVERDUE", "TODAY"]
    assert found["retrieval"] is not None


@pytest.mark.parametrize(
    ("arguments", "parts"),
    [
        ({"pins": ["team/people/ada"]}, {"PIN": (1, 1, 0), "TIME": (0, 0, 0), "RECALL": (0, 0, 0)}),
        ({"query": "Ada"}, {"PIN": (0, 0, 0), "TIME": (5, 5, 0), "RECALL": (1, 1, 0)}),
        ({"query": "DuckDB"}, {"PIN": (0, 0, 0), "TIME": (0, 0, 0), "RECALL": (1, 1, 0)}),
        ({}, {"PIN": (0, 0, 0), "TIME": (0, 0, 0), "RECALL": (0, 0, 0)}),
    ],
    ids=["pin only", "a name and its search", "search only", "nothing asked"],
)
def test_each_part_counts_what_it_found(
    client: TestClient, arguments: dict[str, Any], parts: dict[str, tuple[int, int, int]]
) -> None:
    assert counts(bundle(client, **arguments)) == parts


def test_an_empty_bundle_says_why(client: TestClient) -> None:
    found = bundle(client, query="zeppelin")
    assert found["items"] == [] and found["used"] == 0 and found["omitted"] == 0
    assert found["retrieval"] == {"reason": "NO_LEXICAL_MATCH"}


def test_a_pin_that_names_nothing_readable_is_listed(client: TestClient) -> None:
    found = bundle(client, pins=["team/people/ada", "team/nope", "ops/secret"], scope="team")
    assert ids(found) == ["team/people/ada"]
    assert found["missingPins"] == ["team/nope", "ops/secret"]


def test_the_scope_bounds_every_part(client: TestClient) -> None:
    everywhere = ids(bundle(client, query="storage"))
    team = ids(bundle(client, query="storage", scope="team"))
    assert "ops/secret" in everywhere and "ops/secret" not in team


# -- the budget: whole items, a prefix, counted --------------------------------------------------


def test_items_that_do_not_fit_are_left_out_whole_and_counted(client: TestClient) -> None:
    full = bundle(client, query="Ada storage", budget=100_000)
    sizes = [i["chars"] for i in full["items"]]
    taken = next(k for k in range(1, len(sizes)) if sum(sizes[:k]) >= 200)
    budget = sum(sizes[: taken + 1]) - 1  # one short of the next item
    cut = bundle(client, query="Ada storage", budget=budget)
    assert ids(cut) == ids(full)[:taken] and cut["used"] == sum(sizes[:taken])
    assert cut["omitted"] == len(sizes) - taken
    for part, (returned, included, omitted) in counts(cut).items():
        assert returned == counts(full)[part][0] == included + omitted


def test_a_recall_item_holds_its_matched_lines_whole(client: TestClient) -> None:
    (item,) = bundle(client, query="DuckDB")["items"]
    line = "We chose DuckDB for storage, after a long look at the alternatives."
    body = ["Intro line.", line, "Closing line."]
    # The lines the snippet touches, each whole, in order: here the whole short body.
    assert [t for t in item["text"].splitlines() if t in body] == body
    assert item["chars"] == len(item["text"])
    assert item["locator"] == {"path": "team/notes/storage.md", "startLine": 1}


def test_a_time_item_says_what_placed_it(client: TestClient) -> None:
    item = bundle(client, query="Ada")["items"][0]
    assert item["text"].splitlines()[:2] == [
        "Send the storage memo (note, team/tasks/overdue)",
        "due_at 2026-11-20 OVERDUE",
    ]
    assert item["lifecycle"] == "ACTIVE"


def test_the_same_snapshot_and_as_of_give_the_same_bundle(client: TestClient) -> None:
    first = bundle(client, query="Ada storage", pins=["team/notes/storage"], budget=900)
    assert bundle(client, query="Ada storage", pins=["team/notes/storage"], budget=900) == first
    assert first["asOf"] == AS_OF and first["timezone"] == "UTC"


@pytest.mark.parametrize(
    ("arguments", "named"),
    [
        ({"budget": 199}, "budget"),
        ({"budget": 100_001}, "budget"),
        ({"pins": [f"p{i}" for i in range(51)]}, "pins"),
        ({"query": "x" * 501}, "query"),
        ({"query": "Ada", "asOf": "soon"}, "asOf"),
    ],
)
def test_bad_arguments_are_named(client: TestClient, arguments: dict[str, Any], named: str) -> None:
    body = gql(client, CONTEXT, **_variables(arguments))
    assert codes(body) == ["BAD_USER_INPUT"]
    assert f"'{named}'" in body["errors"][0]["message"]


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.integers(200, 2_500), st.integers(200, 2_500))
def test_a_larger_budget_keeps_every_item_of_a_smaller(
    client: TestClient, one: int, other: int
) -> None:
    small, large = (
        bundle(client, query="Ada storage", pins=["team/notes/storage"], budget=b)
        for b in sorted((one, other))
    )
    for found in (small, large):
        assert found["used"] == sum(i["chars"] for i in found["items"]) <= found["budget"]
    assert large["items"][: len(small["items"])] == small["items"]  # whole, and a prefix


# -- the packing rule alone ------------------------------------------------------------------


def _item(part: ContextPart, name: str, chars: int) -> Item:
    ref = temporal.RecordRef(name, temporal.RecordKind.PAGE, "note", name)
    locator = temporal.Locator(f"{name}.md", 1, 1, "r")
    return Item(part, ref, "x" * chars, locator, None, None, temporal.Lifecycle.ACTIVE, False)


@pytest.mark.parametrize(
    ("sizes", "budget", "taken"),
    [
        ([100, 100, 100], 300, 3),
        ([100, 100, 100], 299, 2),
        ([100, 300, 10], 250, 1),  # the first that does not fit ends the fill
        ([500], 200, 0),
        ([], 200, 0),
    ],
)
def test_pack_takes_the_longest_prefix_that_fits(sizes: list[int], budget: int, taken: int) -> None:
    parts = [ContextPart.PIN, ContextPart.TIME, ContextPart.RECALL]
    items = [_item(parts[i % 3], f"r{i}", n) for i, n in enumerate(sizes)]
    packed = pack(items, budget)
    assert packed.items == tuple(items[:taken]) and packed.used == sum(sizes[:taken])
    assert packed.omitted == len(sizes) - taken
    assert [p.part for p in packed.parts] == parts
    assert sum(p.included for p in packed.parts) == taken
