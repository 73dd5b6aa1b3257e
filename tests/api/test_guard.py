"""The loopback guard: without tokens, only this machine's host names and clients are answered,
and a browser's cross-site request is refused whatever its method."""

from __future__ import annotations

import pytest
from starlette.testclient import TestClient

from almanac.api.app import create_app
from almanac.api.context import is_loopback
from almanac.api.settings import Settings
from tests.api.helpers import post

STATUS = "{ status { recordCount } }"


@pytest.mark.parametrize(
    ("name", "loopback"),
    [
        ("localhost", True),
        ("LOCALHOST", True),
        ("127.0.0.1", True),
        ("127.1.2.3", True),
        ("::1", True),
        ("[::1]", True),
        ("127.attacker.example", False),
        ("127.0.0.1.nip.io", False),
        ("localhost.", False),
        ("localhost.attacker.example", False),
        ("attacker-localhost", False),
        ("0.0.0.0", False),
        ("10.0.0.1", False),
        ("", False),
        ("[::1", False),
    ],
)
def test_loopback_is_an_ip_literal_or_exactly_localhost(name: str, loopback: bool) -> None:
    assert is_loopback(name) is loopback


@pytest.mark.parametrize(
    "host",
    ["127.attacker.example", "127.0.0.1.attacker.example:8000", "localhost.:8000", "[::1]:x", ""],
)
@pytest.mark.parametrize("method", ["GET", "POST"])
def test_a_host_that_only_looks_loopback_is_refused(
    demo_client: TestClient, host: str, method: str
) -> None:
    if method == "GET":
        response = demo_client.get("/graphql", params={"query": STATUS}, headers={"host": host})
    else:
        response = post(demo_client, STATUS, headers={"host": host})
    assert response.status_code == 403, response.text
    assert response.json()["errors"][0]["extensions"]["code"] == "FORBIDDEN"


@pytest.mark.parametrize("host", ["127.0.0.1:8000", "localhost", "[::1]:8000", "127.0.0.9"])
def test_loopback_hosts_are_answered(demo_client: TestClient, host: str) -> None:
    response = post(demo_client, STATUS, headers={"host": host})
    assert response.json() == {"data": {"status": {"recordCount": 88}}}


@pytest.mark.parametrize(
    "headers",
    [
        {"Origin": "https://evil.example"},
        {"Sec-Fetch-Site": "cross-site"},
    ],
)
def test_get_requests_get_the_same_origin_checks(
    demo_client: TestClient, headers: dict[str, str]
) -> None:
    response = demo_client.get("/graphql", params={"query": STATUS}, headers=headers)
    assert response.status_code == 403, response.text
    assert response.json()["errors"][0]["extensions"]["code"] == "FORBIDDEN"
    same = demo_client.get(
        "/graphql", params={"query": STATUS}, headers={"Origin": "http://127.0.0.1"}
    )
    assert same.json() == {"data": {"status": {"recordCount": 88}}}


@pytest.mark.parametrize("client_host", ["127.0.0.2", "::1"])
def test_loopback_clients_are_answered(settings: Settings, client_host: str) -> None:
    app = create_app(settings)
    with TestClient(app, base_url="http://127.0.0.1", client=(client_host, 40000)) as client:
        assert post(client, STATUS).json() == {"data": {"status": {"recordCount": 88}}}


@pytest.mark.parametrize("client_host", ["127.attacker.example", "192.0.2.1", "::ffff:10.0.0.1"])
def test_other_clients_are_refused(settings: Settings, client_host: str) -> None:
    app = create_app(settings)
    with TestClient(app, base_url="http://127.0.0.1", client=(client_host, 40000)) as client:
        response = post(client, STATUS)
    assert response.status_code == 403
    assert response.json()["errors"][0]["extensions"]["code"] == "FORBIDDEN"


@pytest.mark.parametrize(
    ("body", "status", "code"),
    [
        (b"{}", 400, "BAD_USER_INPUT"),  # no query
        (
            b'{"query": "{ status { recordCount } }", "operationName": "Nope"}',
            400,
            "BAD_USER_INPUT",
        ),
    ],
)
def test_strawberrys_own_refusals_are_rendered_like_every_error(
    demo_client: TestClient, body: bytes, status: int, code: str
) -> None:
    response = demo_client.post(
        "/graphql", content=body, headers={"content-type": "application/json"}
    )
    assert response.status_code == status
    assert response.headers["content-type"] == "application/json"
    [error] = response.json()["errors"]
    assert error["extensions"] == {"code": code}
    assert error["message"]
