"""Automatic persisted queries as Apollo's persisted-query link speaks them: the exact message
shapes it checks, registration by POST and by GET, ETag/304 on a GET by hash, the hash checked
against the text, a bounded store, and every limit on a registered document."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2 as httpx
import pytest
from starlette.testclient import TestClient

from almanac.api.app import create_app
from almanac.api.settings import Settings
from tests.api.helpers import LocalClient, codes
from tests.api.served import serve

QUERY = '{ lookup(name: "Ada Lopez") { status candidates { id } } }'
# Apollo's link answers a not-found with exactly this (it checks the message or the code).
NOT_FOUND = {
    "errors": [
        {"message": "PersistedQueryNotFound", "extensions": {"code": "PERSISTED_QUERY_NOT_FOUND"}}
    ]
}


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def _extensions(text: str, version: object = 1) -> dict[str, Any]:
    return {"persistedQuery": {"version": version, "sha256Hash": _sha(text)}}


def _get(client: TestClient, extensions: dict[str, Any], **params: str) -> Any:
    """A GET as Apollo's link sends it with `useGETForHashedQueries` (no `Accept: text/html`)."""
    query = {"extensions": json.dumps(extensions, separators=(",", ":")), **params}
    return client.get("/graphql", params=query, headers={"Accept": "*/*"})


def _post(client: TestClient, extensions: dict[str, Any], query: str | None = None) -> Any:
    body: dict[str, Any] = {"extensions": extensions}
    if query is not None:
        body["query"] = query
    return client.post("/graphql", json=body)


def _app(settings: Settings, tmp_path: Path, limits: str) -> TestClient:
    config = tmp_path / "almanac.toml"
    config.write_text(f"[limits]\n{limits}\n", encoding="utf-8")
    built = Settings.build(vault=settings.vault, state=settings.db_path, config=config, watch=False)
    return LocalClient(create_app(built))


@pytest.fixture
def apq(settings: Settings) -> Iterator[TestClient]:
    with LocalClient(create_app(settings)) as client:
        yield client


def test_apollo_sequence_not_found_register_answer_and_304(apq: TestClient) -> None:
    extensions = _extensions(QUERY)
    missing = _get(apq, extensions)
    assert (missing.status_code, missing.json()) == (200, NOT_FOUND)
    registered = _post(apq, extensions, QUERY)
    assert registered.status_code == 200
    inline = apq.post("/graphql", json={"query": QUERY}).json()
    assert registered.json() == inline and "errors" not in inline
    by_hash = _get(apq, extensions)
    assert by_hash.status_code == 200
    assert by_hash.json() == inline
    tag = by_hash.headers["etag"]
    assert tag.startswith('"')
    unchanged = apq.get(
        "/graphql",
        params={"extensions": json.dumps(extensions, separators=(",", ":"))},
        headers={"Accept": "*/*", "If-None-Match": tag},
    )
    assert (unchanged.status_code, unchanged.content) == (304, b"")
    # The same document sent in full by GET is the same answer: the same tag.
    assert apq.get("/graphql", params={"query": QUERY}).headers["etag"] == tag


def test_a_get_with_query_and_hash_registers_it(apq: TestClient) -> None:
    extensions = _extensions(QUERY)
    first = _get(apq, extensions, query=QUERY)
    assert first.status_code == 200 and "errors" not in first.json()
    again = _get(apq, extensions)
    assert again.json() == first.json()
    assert again.headers["etag"] == first.headers["etag"]


def test_a_hash_that_does_not_match_is_refused_and_not_kept(apq: TestClient) -> None:
    other = "{ status { recordCount } }"
    refused = _post(apq, _extensions(other), QUERY)  # QUERY sent with another's hash
    assert refused.status_code == 400
    assert refused.json() == {
        "errors": [
            {
                "message": "provided sha does not match query",
                "extensions": {"code": "BAD_USER_INPUT"},
            }
        ]
    }
    assert _get(apq, _extensions(other)).json() == NOT_FOUND
    assert _get(apq, _extensions(QUERY)).json() == NOT_FOUND


@pytest.mark.parametrize(
    "persisted",
    [
        {"version": 2, "sha256Hash": _sha(QUERY)},
        {"version": True, "sha256Hash": _sha(QUERY)},
        {"version": "1", "sha256Hash": _sha(QUERY)},
        {"sha256Hash": _sha(QUERY)},
        {"version": 1, "sha256Hash": "abc"},
        {"version": 1, "sha256Hash": 12},
        {"version": 1},
        "a string",
        None,
    ],
)
def test_an_unusable_persisted_query_is_bad_user_input(apq: TestClient, persisted: object) -> None:
    for response in (
        _post(apq, {"persistedQuery": persisted}, QUERY),
        _get(apq, {"persistedQuery": persisted}),
    ):
        assert response.status_code == 400, response.text
        assert codes(response.json()) == ["BAD_USER_INPUT"]


def test_the_store_is_bounded_least_recently_used_first_out(
    settings: Settings, tmp_path: Path
) -> None:
    texts = [f'{{ lookup(name: "name {i}") {{ status }} }}' for i in range(4)]
    with _app(settings, tmp_path, "persisted_queries = 3") as client:
        for text in texts[:3]:
            assert "errors" not in _post(client, _extensions(text), text).json()
        assert "errors" not in _post(client, _extensions(texts[0])).json()  # used: stays
        _post(client, _extensions(texts[3]), texts[3])  # the fourth: texts[1] goes
        assert _post(client, _extensions(texts[1])).json() == NOT_FOUND
        for text in (texts[0], texts[2], texts[3]):
            assert _post(client, _extensions(text)).json()["data"]["lookup"]["status"] == "MISSING"


@pytest.mark.parametrize(
    ("limits", "text"),
    [
        (
            "max_aliases = 2",
            "{ a: status { snapshot } b: status { snapshot } c: status { snapshot } }",
        ),
        ("max_depth = 2", '{ record(id: "x") { supersededBy { supersededBy { id } } } }'),
        ("max_tokens = 20", "{ status { " + "snapshot " * 30 + "} }"),
        ("request_seconds = 0.000001", "{ records(first: 50) { nodes { id } } }"),
    ],
    ids=["aliases", "depth", "tokens", "time"],
)
def test_a_registered_query_obeys_every_limit(
    settings: Settings, tmp_path: Path, limits: str, text: str
) -> None:
    with _app(settings, tmp_path, limits) as client:
        inline = client.post("/graphql", json={"query": text}).json()
        assert "QUERY_TOO_COMPLEX" in codes(inline), inline
        sent = _post(client, _extensions(text), text).json()
        assert codes(sent) == codes(inline)
        if "request_seconds" in limits:
            # A document that validated is kept, and cut off at its time limit each run.
            assert codes(_post(client, _extensions(text)).json()) == codes(inline)
            assert codes(_get(client, _extensions(text)).json()) == codes(inline)
        else:  # a refused document is never kept
            assert _post(client, _extensions(text)).json() == NOT_FOUND


def test_persisted_queries_over_a_real_server(demo_vault: Path, tmp_path: Path) -> None:
    """The sequence against `almanac serve` (uvicorn), as a browser's link sends it."""
    with serve(demo_vault, tmp_path) as base:
        url = f"{base}/graphql"
        params = {"extensions": json.dumps(_extensions(QUERY), separators=(",", ":"))}
        headers = {"Accept": "*/*"}
        missing = httpx.get(url, params=params, headers=headers, timeout=10)
        assert (missing.status_code, missing.json()) == (200, NOT_FOUND)
        body = {"query": QUERY, "extensions": _extensions(QUERY)}
        registered = httpx.post(url, json=body, timeout=10)
        by_hash = httpx.get(url, params=params, headers=headers, timeout=10)
        assert by_hash.json() == registered.json() and "errors" not in registered.json()
        headers["If-None-Match"] = by_hash.headers["etag"]
        assert httpx.get(url, params=params, headers=headers, timeout=10).status_code == 304
