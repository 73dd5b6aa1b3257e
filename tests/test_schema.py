from __future__ import annotations

from pathlib import Path

from graphql import GraphQLObjectType, GraphQLSchema, build_schema, find_breaking_changes

from api.schema import build_schema as build_almanac_schema

ROOT = Path(__file__).resolve().parent.parent
CONTRACT = ROOT.parent / "shared" / "contract.graphql"
IMPLEMENTED = {
    "status",
    "record",
    "records",
    "lookup",
    "timeline",
    "chronicleDay",
    "chronicleSince",
    "chronicleLastSeen",
    "occurrences",
    "search",
    "graph",
    "paths",
}


def test_schema_file_is_current() -> None:
    assert (ROOT / "schema.graphql").read_text() == build_almanac_schema().as_str() + "\n", (
        "schema.graphql is stale: run `almanac export-schema`"
    )


def test_schema_keeps_the_contract_for_implemented_queries() -> None:
    contract = build_schema(CONTRACT.read_text())
    query = contract.query_type
    assert query is not None
    fields = {k: v for k, v in query.fields.items() if k in IMPLEMENTED}
    assert set(fields) == IMPLEMENTED
    restricted = GraphQLSchema(query=GraphQLObjectType("Query", fields))
    ours = build_schema((ROOT / "schema.graphql").read_text())
    assert [c.description for c in find_breaking_changes(restricted, ours)] == []
