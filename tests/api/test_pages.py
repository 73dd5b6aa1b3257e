"""The explorer page, the GraphiQL page and their files: served from the package, locked to
this origin by their Content-Security-Policy, readable without a token (they hold no data)."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from almanac.api.app import create_app
from almanac.api.explorer import STATIC
from almanac.api.settings import Settings
from tests.api.helpers import LocalClient
from tests.api.served import serve

HTML = {"accept": "text/html,application/xhtml+xml"}
TOKEN = "page-test-token"


@pytest.fixture
def secured(demo_vault: Path, tmp_path: Path) -> Iterator[TestClient]:
    config = tmp_path / "almanac.toml"
    digest = hashlib.sha256(TOKEN.encode()).hexdigest()
    config.write_text(f'[[tokens]]\nsha256 = "{digest}"\nscopes = ["default"]\n', "utf-8")
    settings = Settings.build(
        vault=demo_vault, state=tmp_path / "state.db", config=config, watch=False
    )
    with LocalClient(create_app(settings), base_url="http://127.0.0.1") as client:
        yield client


def test_the_explorer_is_at_the_root_with_a_strict_policy(demo_client: TestClient) -> None:
    response = demo_client.get("/", headers=HTML)
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/html")
    assert '<input type="search" id="q"' in response.text
    policy = response.headers["content-security-policy"]
    assert "default-src 'none'" in policy
    assert "script-src 'self';" in policy and "unsafe" not in policy
    assert response.headers["x-content-type-options"] == "nosniff"


def test_graphiql_is_served_from_the_package_not_a_cdn(demo_client: TestClient) -> None:
    response = demo_client.get("/graphql", headers=HTML)
    assert response.status_code == 200
    assert "/static/vendor/graphiql/graphiql.min.js" in response.text
    assert "http" not in re.sub(r"<!--.*?-->", "", response.text).replace("http-equiv", "")
    assert "connect-src 'self'" in response.headers["content-security-policy"]


def test_a_get_with_a_query_still_runs_it(demo_client: TestClient) -> None:
    response = demo_client.get("/graphql", params={"query": "{ status { recordCount } }"})
    assert response.json() == {"data": {"status": {"recordCount": 88}}}
    browser = demo_client.get(
        "/graphql", params={"query": "{ status { recordCount } }"}, headers=HTML
    )
    assert browser.json() == {"data": {"status": {"recordCount": 88}}}


def test_every_file_a_page_names_ships_in_the_package(demo_client: TestClient) -> None:
    pages = [STATIC / "explorer" / "index.html", STATIC / "graphiql" / "index.html"]
    modules = list((STATIC / "explorer").glob("*.js"))
    named = set()
    for source in pages + modules:
        text = source.read_text("utf-8")
        named.update(re.findall(r'(?:src|href)="(/static/[^"]+)"', text))
        named.update(re.findall(r'from "(/static/[^"]+)"', text))
    assert "/static/vendor/dagre/dagre.esm.js" in named
    for path in sorted(named):
        response = demo_client.get(path)
        assert response.status_code == 200, path
        assert response.content
    for library in ("graphiql", "react", "react-dom", "dagre"):
        assert (STATIC / "vendor" / library / "LICENSE").is_file()


@pytest.mark.parametrize(
    "path", ["/static/../app.py", "/static/%2e%2e/app.py", "/static/nothing.js", "/static/"]
)
def test_no_file_outside_the_static_folder(demo_client: TestClient, path: str) -> None:
    response = demo_client.get(path)
    assert response.status_code == 404
    assert "import" not in response.text


def test_pages_answer_loopback_names_only_without_tokens(demo_client: TestClient) -> None:
    assert demo_client.get("/", headers={"host": "evil.example"}).status_code == 403
    cross = demo_client.get("/", headers={"sec-fetch-site": "cross-site"})
    assert cross.status_code == 403


def test_with_tokens_the_pages_need_none_and_the_data_does(secured: TestClient) -> None:
    assert secured.get("/", headers=HTML).status_code == 200
    assert secured.get("/graphql", headers=HTML).status_code == 200
    assert secured.get("/static/explorer/main.js").status_code == 200
    query = {"query": "{ status { recordCount } }"}
    assert secured.post("/graphql", json=query).status_code == 401
    answer = secured.post("/graphql", json=query, headers={"authorization": f"Bearer {TOKEN}"})
    assert answer.json()["data"]["status"]["recordCount"] > 0


def test_graphiql_can_be_turned_off(demo_vault: Path, tmp_path: Path) -> None:
    config = tmp_path / "almanac.toml"
    config.write_text("[graphql]\ngraphiql = false\n", "utf-8")
    settings = Settings.build(vault=demo_vault, state=tmp_path / "s.db", config=config)
    with LocalClient(create_app(settings), base_url="http://127.0.0.1") as client:
        response = client.get("/graphql", headers=HTML)
        assert "graphiql.min.js" not in response.text
        assert client.get("/", headers=HTML).status_code == 200


def test_serve_prints_the_state_file_and_the_explorer_url(demo_vault: Path, tmp_path: Path) -> None:
    with serve(demo_vault, tmp_path, "--no-watch") as base:
        pass
    log = (tmp_path / "server.log").read_text("utf-8")
    assert f"State database: {tmp_path / 'state.db'}" in log
    assert f"open {base}/ (GraphQL at {base}/graphql)" in log
