"""Queries over graphql-transport-ws, spoken by a real client library (`gql` with its websockets
transport) to a real server (uvicorn): the same answers, limits, tokens, scopes and time limit
as over HTTP, with subscriptions alongside on the same connection."""

from __future__ import annotations

import asyncio
import hashlib
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2 as httpx
import pytest
from gql import Client, GraphQLRequest
from gql.transport.exceptions import TransportQueryError
from gql.transport.websockets import WebsocketsTransport
from graphql import print_ast

from almanac.api.settings import DEMO_VAULT
from tests.api.served import serve

READER = "reader-token-0123456789"  # reads `default`
ADMIN = "admin-token-9876543210"  # reads `default` and `work` (projects/)
EVENTS = "subscription { snapshots { snapshot previous changed } }"
ALIASES = "{ " + " ".join(f"a{i}: status {{ snapshot }}" for i in range(31)) + " }"
TOKENS = "{ " + "__typename " * 2100 + "}"
DEEP = '{ record(id: "x") {' + " supersededBy {" * 10 + " id" + " }" * 10 + " } }"
QUERIES = [
    "{ status { recordCount coverage { complete } } }",
    '{ lookup(name: "Sam") { status candidates { id } } }',
    '{ timeline(entity: "projects/atlas", timeField: DUE_AT, asOf: "2026-11-29T12:00:00Z")'
    " { total entries { record { id } date { text } clock } } }",
    '{ graph(seed: {id: "people/ada-lopez"}, hops: 1) { status nodes { id hop } } }',
    "query Named($id: ID!) { record(id: $id) { id title } }",
    '{ record(id: "people/ada-lopez") { id } search(query: "PostGIS", first: 0) { total } }',
]


def _config(tmp_path: Path, limits: str = "") -> Path:
    path = tmp_path / "almanac.toml"
    reader = hashlib.sha256(READER.encode()).hexdigest()
    admin = hashlib.sha256(ADMIN.encode()).hexdigest()
    path.write_text(
        f'[scopes]\nwork = "projects"\n\n[limits]\n{limits}\n\n'
        f'[[tokens]]\nsha256 = "{reader}"\nscopes = ["default"]\n\n'
        f'[[tokens]]\nsha256 = "{admin}"\nscopes = ["default", "work"]\n',
        encoding="utf-8",
    )
    return path


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    folder = tmp_path_factory.mktemp("socket")
    shutil.copytree(DEMO_VAULT, folder / "vault")
    with serve(folder / "vault", folder, "--config", str(_config(folder))) as base:
        yield base


def _client(base: str, token: str) -> Client:
    transport = WebsocketsTransport(
        url=base.replace("http://", "ws://") + "/graphql",
        subprotocols=[WebsocketsTransport.GRAPHQLWS_SUBPROTOCOL],
        init_payload={"Authorization": f"Bearer {token}"},
    )
    return Client(transport=transport)


def _http(base: str, token: str, text: str, variables: dict[str, Any] | None = None) -> Any:
    body = {"query": text, "variables": variables or {}}
    headers = {"Authorization": f"Bearer {token}"}
    return httpx.post(f"{base}/graphql", json=body, headers=headers, timeout=30).json()


async def _over_socket(
    base: str, token: str, text: str, variables: dict[str, Any] | None = None
) -> dict[str, Any]:
    """The answer over the socket, as the HTTP body would hold it (`data`, `errors`)."""
    async with _client(base, token) as session:
        try:
            data = await session.execute(GraphQLRequest(text, variable_values=variables))
        except TransportQueryError as error:
            return {"data": error.data, "errors": error.errors}
    return {"data": data}


def _same(body: dict[str, Any]) -> dict[str, Any]:
    """An answer's data and errors (`data: null` and no `data` alike)."""
    return {"data": body.get("data"), "errors": body.get("errors")}


def _printed(text: str) -> str:
    """The text gql sends for `text` (it prints the parsed document)."""
    return print_ast(GraphQLRequest(text).document)


@pytest.mark.parametrize("text", QUERIES)
def test_a_query_over_the_socket_answers_as_a_post(server: str, text: str) -> None:
    variables = {"id": "people/ada-lopez"} if "$id" in text else None
    over_http = _http(server, ADMIN, _printed(text), variables)
    codes = [e["extensions"]["code"] for e in over_http.get("errors", [])]
    assert codes == (["BAD_USER_INPUT"] if "first: 0" in text else []), over_http
    over_socket = asyncio.run(_over_socket(server, ADMIN, text, variables))
    # One snapshot of an unedited vault; a field's error is located and coded alike.
    assert _same(over_socket) == _same(over_http)


@pytest.mark.parametrize("text", [ALIASES, TOKENS, DEEP], ids=["aliases", "tokens", "depth"])
def test_a_query_over_the_limits_gets_the_http_error(server: str, text: str) -> None:
    over_http = _http(server, READER, _printed(text))
    assert [e["extensions"]["code"] for e in over_http["errors"]] == ["QUERY_TOO_COMPLEX"]
    over_socket = asyncio.run(_over_socket(server, READER, text))
    assert _same(over_socket) == _same(over_http)


def test_a_token_of_one_scope_reads_that_scope_only(server: str) -> None:
    text = "{ records(first: 100) { total nodes { id } } }"
    work = '{ records(filter: {scope: "work"}) { total } }'

    async def run() -> tuple[dict[str, Any], ...]:
        return (
            await _over_socket(server, READER, text),
            await _over_socket(server, ADMIN, text),
            await _over_socket(server, READER, work),
        )

    reader, admin, forbidden = asyncio.run(run())
    assert _same(reader) == _same(_http(server, READER, _printed(text)))
    assert _same(admin) == _same(_http(server, ADMIN, _printed(text)))
    ids = [node["id"] for node in reader["data"]["records"]["nodes"]]
    assert ids and not any(i.startswith("projects/") for i in ids)
    assert any(n["id"].startswith("projects/") for n in admin["data"]["records"]["nodes"])
    assert reader["data"]["records"]["total"] < admin["data"]["records"]["total"]
    assert [e["extensions"]["code"] for e in forbidden["errors"]] == ["FORBIDDEN"]


def test_a_query_over_the_socket_obeys_the_time_limit(demo_vault: Path, tmp_path: Path) -> None:
    # Smaller than what the freshness check takes: the deadline has passed before execution.
    config = _config(tmp_path, "request_seconds = 0.000001")
    text = "{ records(first: 50) { nodes { id locator { path } } } }"
    with serve(demo_vault, tmp_path, "--config", str(config)) as base:
        answer = asyncio.run(_over_socket(base, READER, text))
        over_http = _http(base, READER, _printed(text))
    for body in (answer, over_http):
        assert "QUERY_TOO_COMPLEX" in [e["extensions"]["code"] for e in body["errors"]], body
        assert any("time limit" in e["message"] for e in body["errors"])


def test_subscriptions_go_on_beside_queries(demo_vault: Path, tmp_path: Path) -> None:
    """One connection: a subscription's first event, queries answered while it is open, an
    edit heard, and the query after the edit reads the new snapshot."""
    with serve(demo_vault, tmp_path, "--config", str(_config(tmp_path))) as base:

        async def run() -> None:
            async with _client(base, ADMIN) as session:
                events = session.subscribe(GraphQLRequest(EVENTS))
                first = (await asyncio.wait_for(anext(events), 10))["snapshots"]
                status = GraphQLRequest("{ status { snapshot } }")
                before = await session.execute(status)
                assert before["status"]["snapshot"] == first["snapshot"]
                note = demo_vault / "people" / "ada-lopez.md"
                note.write_text(note.read_text(encoding="utf-8") + "\nEdited.\n", "utf-8")
                after = await session.execute(status)  # sees every finished change
                event = (await asyncio.wait_for(anext(events), 10))["snapshots"]
                assert event["previous"] == first["snapshot"]
                assert event["snapshot"] == after["status"]["snapshot"] != first["snapshot"]
                assert event["changed"] == ["people/ada-lopez"]
                await events.aclose()

        asyncio.run(run())
