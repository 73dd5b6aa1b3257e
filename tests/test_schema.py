"""The exported schema against what the project promises, and that promise against the published
contract when it lies beside the repository (`../shared`, on the team's machines)."""

from __future__ import annotations

from pathlib import Path

import pytest
from graphql import build_schema, find_breaking_changes

from almanac.api.schema import build_schema as build_almanac_schema

ROOT = Path(__file__).resolve().parent.parent
PROMISED = Path(__file__).resolve().parent / "contract.graphql"
PUBLISHED = ROOT.parent / "shared" / "contract.graphql"


def test_schema_file_is_current() -> None:
    assert (ROOT / "schema.graphql").read_text() == build_almanac_schema().as_str() + "\n", (
        "schema.graphql is stale: run `almanac export-schema`"
    )


def test_schema_keeps_every_promised_name_and_type() -> None:
    promised = build_schema(PROMISED.read_text())
    ours = build_schema((ROOT / "schema.graphql").read_text())
    assert [c.description for c in find_breaking_changes(promised, ours)] == []


def test_the_promise_is_a_part_of_the_published_contract() -> None:
    if not PUBLISHED.is_file():
        pytest.skip("the published contract is not beside this clone")
    published = build_schema(PUBLISHED.read_text())
    promised = build_schema(PROMISED.read_text())
    assert [c.description for c in find_breaking_changes(promised, published)] == []


@pytest.mark.parametrize("root", ["query_type", "subscription_type"])
def test_the_promise_covers_every_built_root_field(root: str) -> None:
    promised = getattr(build_schema(PROMISED.read_text()), root)
    ours = getattr(build_schema((ROOT / "schema.graphql").read_text()), root)
    assert promised is not None and ours is not None
    assert set(ours.fields) == set(promised.fields)
