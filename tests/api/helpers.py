"""Shared helpers of the API tests: one GraphQL call, the demo vault's facts."""

from __future__ import annotations

from typing import Any

from starlette.testclient import TestClient

DEMO_RECORDS = 88
SUPERSEDED = "decisions/atlas-storage-postgis"
REPLACEMENT = "decisions/atlas-storage-duckdb-spatial"
WITHDRAWN = "claims/open-geo-relicensing"
SAMS = ["people/samantha-reyes", "people/samuel-okafor"]
# Every extensions.code a response may carry: the contract's and the two document errors.
DOCUMENTED = {
    "BAD_USER_INPUT",
    "UNAUTHENTICATED",
    "FORBIDDEN",
    "NOT_FOUND",
    "SNAPSHOT_CHANGED",
    "INDEX_UNAVAILABLE",
    "QUERY_TOO_COMPLEX",
    "GRAPHQL_VALIDATION_FAILED",
}


def post(
    client: TestClient, query: str, headers: dict[str, str] | None = None, **variables: Any
) -> Any:
    """POST one GraphQL document; the raw response."""
    return client.post("/graphql", json={"query": query, "variables": variables}, headers=headers)


def gql(client: TestClient, query: str, **variables: Any) -> dict[str, Any]:
    """POST one GraphQL document and return the JSON body (always HTTP 200 for GraphQL errors)."""
    response = post(client, query, **variables)
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def data(client: TestClient, query: str, **variables: Any) -> dict[str, Any]:
    """The `data` of a document that must succeed."""
    body = gql(client, query, **variables)
    assert "errors" not in body, body["errors"]
    result: dict[str, Any] = body["data"]
    return result


def codes(body: dict[str, Any]) -> list[str]:
    """`extensions.code` of every error of a response body."""
    return [e["extensions"]["code"] for e in body.get("errors", [])]


class LocalClient(TestClient):
    """Starlette's in-process client as a loopback client: `http://127.0.0.1`, from
    127.0.0.1 (its own defaults, host `testserver` and client `testclient`, are neither
    loopback nor allowed; the app knows no test client)."""

    def __init__(self, app: Any, **options: Any) -> None:
        options.setdefault("base_url", "http://127.0.0.1")
        options.setdefault("client", ("127.0.0.1", 50000))
        super().__init__(app, **options)
