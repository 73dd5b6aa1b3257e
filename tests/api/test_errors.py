"""Error codes and their shape, and the GraphQL abuse corpus (RELIABILITY.md sections 4-5)."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from graphql import GraphQLError, GraphQLSyntaxError, parse
from starlette.testclient import TestClient

from almanac.api.app import create_app
from almanac.api.documents import measure
from almanac.api.errors import render
from almanac.api.settings import Limits, Settings
from tests.api.helpers import DOCUMENTED, LocalClient, codes, gql, post

READER_TOKEN = "reader-token-0123456789"
ADMIN_TOKEN = "admin-token-9876543210"
JSON = {"content-type": "application/json"}


def _sha(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


@pytest.fixture
def secured(demo_vault: Path, tmp_path: Path) -> Iterator[TestClient]:
    """Tokens configured: READER_TOKEN reads `default`, ADMIN_TOKEN also `work` (projects/)."""
    config = tmp_path / "almanac.toml"
    config.write_text(
        f"""
[scopes]
work = "projects"

[[tokens]]
sha256 = "{_sha(READER_TOKEN)}"
scopes = ["default"]

[[tokens]]
sha256 = "{_sha(ADMIN_TOKEN).upper()}"
scopes = ["default", "work"]
""",
        encoding="utf-8",
    )
    settings = Settings.build(
        vault=demo_vault, state=tmp_path / "state.db", config=config, watch=False
    )
    with LocalClient(create_app(settings)) as client:
        yield client


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def assert_graphql_error(body: dict[str, Any], code: str, path: list[str] | None) -> dict[str, Any]:
    """Exactly one error, in the GraphQL shape, with `code`; `path` None means a document error."""
    assert set(body) == {"data", "errors"}, body
    assert len(body["errors"]) == 1, body["errors"]
    error: dict[str, Any] = body["errors"][0]
    expected_keys = {"message", "locations", "extensions"} | (
        {"path"} if path is not None else set()
    )
    assert set(error) == expected_keys, error
    assert isinstance(error["message"], str) and error["message"]
    assert "Traceback" not in error["message"]
    assert error["extensions"] == {"code": code}
    assert all(set(loc) == {"line", "column"} for loc in error["locations"])
    if path is not None:
        assert error["path"] == path
    return error


def assert_http_error(response: Any, status: int, code: str) -> str:
    """A refusal before GraphQL: `status`, `{"errors": [{"message", "extensions": {"code"}}]}`."""
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/json")
    body = response.json()
    assert set(body) == {"errors"}
    (error,) = body["errors"]
    assert set(error) == {"message", "extensions"}
    assert error["extensions"] == {"code": code}
    message: str = error["message"]
    return message


# -- one test per code ---------------------------------------------------------------------


def test_bad_user_input_shape(demo_client: TestClient) -> None:
    body = gql(demo_client, "query($n: Int) { records(first: $n) { total } }", n=0)
    error = assert_graphql_error(body, "BAD_USER_INPUT", ["records"])
    assert body["data"] is None
    assert "'first'" in error["message"]


def test_snapshot_changed_shape(client: TestClient, demo_vault: Path) -> None:
    query = "query($after: String) { records(first: 5, after: $after) { pageInfo { endCursor } } }"
    cursor = gql(client, query)["data"]["records"]["pageInfo"]["endCursor"]
    (demo_vault / "new-note.md").write_text("# A new note\n")
    body = gql(client, query, after=cursor)
    assert_graphql_error(body, "SNAPSHOT_CHANGED", ["records"])
    assert body["data"] is None


@pytest.mark.parametrize(
    "headers",
    [
        {},
        bearer("wrong-token"),
        bearer(""),
        {"Authorization": f"bearer {READER_TOKEN}"},
        {"Authorization": f"Basic {READER_TOKEN}"},
        {"Authorization": READER_TOKEN},
        bearer(_sha(READER_TOKEN)),  # the hash itself is not a token
    ],
    ids=["none", "wrong", "empty", "lowercase-scheme", "basic", "no-scheme", "hash"],
)
def test_unauthenticated_shape(secured: TestClient, headers: dict[str, str]) -> None:
    response = post(secured, "{ status { recordCount } }", headers=headers)
    assert_http_error(response, 401, "UNAUTHENTICATED")
    response = secured.get(
        "/graphql", params={"query": "{ status { recordCount } }"}, headers=headers
    )
    assert_http_error(response, 401, "UNAUTHENTICATED")


def test_valid_tokens_read_their_scopes(secured: TestClient) -> None:
    query = "{ status { recordCount scopes } }"
    reader = post(secured, query, headers=bearer(READER_TOKEN)).json()["data"]["status"]
    admin = post(secured, query, headers=bearer(ADMIN_TOKEN)).json()["data"]["status"]
    assert reader["scopes"] == ["default"]
    assert admin["scopes"] == ["default", "work"]
    assert 0 < reader["recordCount"] < admin["recordCount"]
    assert secured.get("/healthz").status_code == 200


@pytest.mark.parametrize(
    ("query", "path"),
    [
        ('{ status(scope: "work") { recordCount } }', ["status"]),
        ('{ records(filter: {scope: "work"}) { total } }', ["records"]),
        ('{ lookup(name: "Atlas", scope: "work") { status } }', ["lookup"]),
        ('{ record(id: "projects/atlas", scope: "work") { id } }', ["record"]),
        ('{ status(scope: "no-such-scope") { recordCount } }', ["status"]),
    ],
)
def test_forbidden_scope_shape(secured: TestClient, query: str, path: list[str]) -> None:
    response = post(secured, query, headers=bearer(READER_TOKEN))
    assert response.status_code == 200
    body = response.json()
    assert_graphql_error(body, "FORBIDDEN", path)
    assert body["data"] is None or body["data"] == {path[0]: None}


def test_ungranted_scope_stays_invisible(secured: TestClient) -> None:
    query = '{ record(id: "projects/atlas") { id } lookup(name: "projects/atlas") { status } }'
    reader = post(secured, query, headers=bearer(READER_TOKEN)).json()
    assert reader == {"data": {"record": None, "lookup": {"status": "MISSING"}}}
    admin = post(secured, query, headers=bearer(ADMIN_TOKEN)).json()
    assert admin == {"data": {"record": {"id": "projects/atlas"}, "lookup": {"status": "FOUND"}}}
    granted = post(
        secured, '{ status(scope: "work") { recordCount } }', headers=bearer(ADMIN_TOKEN)
    )
    assert granted.json() == {"data": {"status": {"recordCount": 5}}}


def test_forbidden_without_tokens_off_loopback(settings: Settings) -> None:
    with TestClient(create_app(settings), client=("203.0.113.7", 40000)) as client:
        response = post(client, "{ status { recordCount } }")
        assert_http_error(response, 403, "FORBIDDEN")
        assert client.get("/healthz").status_code == 200


@pytest.mark.parametrize(
    "headers",
    [
        {"Origin": "https://evil.example"},
        {"Origin": "http://127.0.0.1.evil.example"},
        {"Sec-Fetch-Site": "cross-site"},
        {"Sec-Fetch-Site": "cross-site", "Origin": "http://127.0.0.1"},
    ],
)
def test_forbidden_cross_site_shape(demo_client: TestClient, headers: dict[str, str]) -> None:
    assert_http_error(
        post(demo_client, "{ status { recordCount } }", headers=headers), 403, "FORBIDDEN"
    )


@pytest.mark.parametrize(
    "headers",
    [
        {"Origin": "http://127.0.0.1"},
        {"Origin": "null"},
        {"Sec-Fetch-Site": "same-origin"},
        {"Sec-Fetch-Site": "none"},
    ],
)
def test_same_site_requests_pass(demo_client: TestClient, headers: dict[str, str]) -> None:
    response = post(demo_client, "{ status { recordCount } }", headers=headers)
    assert response.json() == {"data": {"status": {"recordCount": 88}}}


def _nested(depth: int) -> str:
    inner = "code"
    for _ in range(depth):
        inner = f"issues {{ {inner} }}"
    return "{ status { coverage { " + inner + " } } }"


@pytest.mark.parametrize(
    ("query", "fragment"),
    [
        (_nested(12), "exceeds maximum operation depth of 10"),
        ("{ " + " ".join(f"a{i}: status {{ recordCount }}" for i in range(31)) + " }", "aliases"),
        ("{ status { " + " ".join(["recordCount"] * 2000) + " } }", "2000 tokens"),
    ],
    ids=["depth", "aliases", "tokens"],
)
def test_query_too_complex_shape(demo_client: TestClient, query: str, fragment: str) -> None:
    body = gql(demo_client, query)
    assert body["data"] is None
    assert "QUERY_TOO_COMPLEX" in codes(body)
    assert set(codes(body)) <= {"QUERY_TOO_COMPLEX", "GRAPHQL_VALIDATION_FAILED"}
    error = next(e for e in body["errors"] if e["extensions"]["code"] == "QUERY_TOO_COMPLEX")
    assert fragment in error["message"]
    assert "path" not in error


_REF = "{ id kind type title }"
_DATE = "{ text precision start end }"
EVERY_FIELD = (
    "{ records(first: 100, filter: {lifecycle: ALL}) { total pageInfo { hasNextPage endCursor } "
    "meta { snapshot degraded freshness { queriedAt scannedAt indexedAt } "
    "coverage { complete issueCount "
    "issues(first: 1000) { code path line field recordId message } } } "
    "nodes { id scope kind type title aliases tags lifecycle supersededBy body "
    "locator { path startLine endLine revision } "
    f"entities {_REF} owner {_REF} subject {_REF} source {_REF} from {_REF} to {_REF} "
    "relation weight sourceEvent "
    f"occurredAt {_DATE} endsAt {_DATE} recordedAt {_DATE} updatedAt {_DATE} dueAt {_DATE} "
    f"validFrom {_DATE} validUntil {_DATE} timezone recurrence state "
    f"links {{ text line resolved target {_REF} }} }} }} }}"
)


@pytest.mark.parametrize(
    "query",
    [
        "{ status { recordCount } }",
        "{ " + " ".join(f"a{i}: status {{ recordCount }}" for i in range(30)) + " }",
        "{ status { " + " ".join(["recordCount"] * 400) + " } }",
        "{ records { nodes { links { target { id } } } meta { coverage { issues { code } } } } }",
        EVERY_FIELD,
    ],
    ids=["plain", "30-aliases", "400-fields", "deepest-real", "every-field"],
)
def test_limits_let_ordinary_documents_through(demo_client: TestClient, query: str) -> None:
    body = gql(demo_client, query)
    assert "errors" not in body, body


@pytest.mark.parametrize(
    "query",
    [
        "{ status { nope } }",
        "{ statu { recordCount } }",
        '{ records(first: "ten") { total } }',
        "{ record { id } }",
        "{ status { recordCount ",
        "query($x: Int!) { status { recordCount } }",
        "mutation { status }",
    ],
)
def test_graphql_validation_failed_shape(demo_client: TestClient, query: str) -> None:
    body = gql(demo_client, query)
    assert body["data"] is None
    assert body["errors"]
    for error in body["errors"]:
        assert set(error) <= {"message", "locations", "extensions"}, error
        assert error["extensions"] == {"code": "GRAPHQL_VALIDATION_FAILED"}


def test_unknown_field_error_is_exact(demo_client: TestClient) -> None:
    body = gql(demo_client, "{ status { nope } }")
    error = assert_graphql_error(body, "GRAPHQL_VALIDATION_FAILED", None)
    assert error["message"] == "Cannot query field 'nope' on type 'Status'."
    assert error["locations"] == [{"line": 1, "column": 12}]


def test_introspection_off_hides_suggestions_and_schema(demo_vault: Path, tmp_path: Path) -> None:
    config = tmp_path / "almanac.toml"
    config.write_text("[graphql]\nintrospection = false\n")
    settings = Settings.build(vault=demo_vault, state=tmp_path / "s.db", config=config, watch=False)
    with LocalClient(create_app(settings)) as client:
        body = gql(client, "{ statu { recordCount } }")
        assert "Did you mean" not in body["errors"][0]["message"]
        body = gql(client, "{ __schema { types { name } } }")
        assert codes(body) and set(codes(body)) == {"GRAPHQL_VALIDATION_FAILED"}
        assert body["data"] is None


# -- the abuse corpus ------------------------------------------------------------------------


def _doc(query: str, **variables: Any) -> bytes:
    return json.dumps({"query": query, "variables": variables}).encode()


def _ofs(depth: int) -> str:
    return (
        "{ __schema { types { fields { type { "
        + "ofType { " * depth
        + "name"
        + " }" * depth
        + " } } } } }"
    )


STATUS = "{ status { recordCount } }"
LOOKUP = "query($n: String!) { lookup(name: $n) { status } }"
RECORDS = "query($f: Int, $filter: RecordFilter) { records(first: $f, filter: $filter) { total } }"
# (id, body, headers, expected status, refused: a 200 must carry errors)
CORPUS: list[tuple[str, bytes, dict[str, str], int, bool]] = [
    ("depth-bomb", _doc(_nested(200)), JSON, 200, True),
    (
        "depth-bomb-unknown-fields",
        _doc("{ status { " + "x { " * 100 + "y" + " }" * 100 + " } }"),
        JSON,
        200,
        True,
    ),
    ("depth-bomb-introspection", _doc(_ofs(500)), JSON, 200, True),
    (
        "aliases-5000",
        _doc("{ " + " ".join(f"a{i}: status {{ recordCount }}" for i in range(5000)) + " }"),
        JSON,
        413,
        True,
    ),
    ("aliases-5000-compact", _doc("{" + " ".join(["a:__typename"] * 5000) + "}"), JSON, 200, True),
    (
        "aliases-4000-nested",
        _doc("{ status { " + " ".join(["a:recordCount"] * 4000) + " } }"),
        JSON,
        200,
        True,
    ),
    ("token-bomb", _doc("{ " + " ".join(["__typename"] * 5000) + " }"), JSON, 200, True),
    (
        "token-bomb-punctuation",
        _doc("{ status { recordCount " + "!" * 30000 + " } }"),
        JSON,
        200,
        True,
    ),
    (
        "token-bomb-string-list",
        _doc("{ lookup(name: [" + '"a",' * 10000 + "]) { status } }"),
        JSON,
        200,
        True,
    ),
    (
        "fragment-cycle",
        _doc("{ status { ...A } } fragment A on Status { ...B } fragment B on Status { ...A }"),
        JSON,
        200,
        True,
    ),
    (
        "fragment-self",
        _doc("{ status { ...A } } fragment A on Status { recordCount ...A }"),
        JSON,
        200,
        True,
    ),
    (
        "fragment-fanout",
        _doc(
            "{ status { ...A } } "
            + " ".join(
                f"fragment {c} on Status {{ ...{n} ...{n} recordCount }}"
                for c, n in zip("ABCDEFGHIJ", "BCDEFGHIJK", strict=True)
            )
            + " fragment K on Status { recordCount }"
        ),
        JSON,
        200,
        False,
    ),
    ("json-batch", json.dumps([{"query": STATUS}] * 3).encode(), JSON, 400, True),
    ("json-batch-1000", json.dumps([{"query": STATUS}] * 1000).encode(), JSON, 400, True),
    ("json-null", b"null", JSON, 400, True),
    ("json-string", b'"{ status { recordCount } }"', JSON, 400, True),
    ("json-empty", b"", JSON, 400, True),
    ("json-truncated", b'{"query": "{ status { recordCount } }"', JSON, 400, True),
    ("deep-json-5000", b"[" * 5000 + b"]" * 5000, JSON, 400, True),
    (
        "deep-json-5000-variables",
        b'{"query": "{ status { recordCount } }", "variables": '
        + b'{"a":' * 5000
        + b"1"
        + b"}" * 5000
        + b"}",
        JSON,
        400,
        True,
    ),
    ("deep-json-5000-unclosed", b'{"query": ' + b"[" * 5000, JSON, 400, True),
    ("bad-utf8", b'{"query": "{ lookup(name: \\"\xff\xfe\\") { status } }"}', JSON, 400, True),
    ("bad-utf8-overlong", b'{"query": "\xc0\xaf"}', JSON, 400, True),
    ("utf16", json.dumps({"query": STATUS}).encode("utf-16"), JSON, 400, True),
    ("content-type-text", _doc(STATUS), {"content-type": "text/plain"}, 415, True),
    (
        "content-type-form",
        b"query=%7Bstatus%7BrecordCount%7D%7D",
        {"content-type": "application/x-www-form-urlencoded"},
        415,
        True,
    ),
    (
        "content-type-multipart",
        b"--x\r\n\r\n--x--",
        {"content-type": "multipart/form-data; boundary=x"},
        415,
        True,
    ),
    ("content-type-graphql", STATUS.encode(), {"content-type": "application/graphql"}, 415, True),
    ("content-type-missing", _doc(STATUS), {"content-type": ""}, 415, True),
    ("content-type-json-lookalike", _doc(STATUS), {"content-type": "application/jsonp"}, 415, True),
    ("body-50kb", _doc(STATUS + " " * 50_000), JSON, 200, False),
    ("body-50kb-comment", _doc("#" + "x" * 50_000 + "\n" + STATUS), JSON, 200, False),
    ("body-50kb-string", _doc(LOOKUP, n="x" * 50_000), JSON, 200, False),
    ("body-100kb", _doc(STATUS + " " * 100_000), JSON, 413, True),
    ("body-1mb", b'{"query": "' + b" " * 1_000_000 + b'"}', JSON, 413, True),
    ("content-length-lie", _doc(STATUS), {**JSON, "content-length": "99999999"}, 413, True),
    ("huge-variable-string", _doc(LOOKUP, n="x" * 200_000), JSON, 413, True),
    ("huge-variable-list", _doc(LOOKUP, n=list(range(10_000))), JSON, 200, True),
    ("huge-variable-count", _doc(STATUS, **{f"v{i}": i for i in range(4000)}), JSON, 200, False),
    (
        "huge-variable-int",
        b'{"query": "query($f: Int) { records(first: $f) { total } }", "variables": {"f": '
        + b"9" * 20_000
        + b"}}",
        JSON,
        400,
        True,
    ),
    (
        "variable-nan",
        b'{"query": "query($f: Int) { records(first: $f) { total } }", "variables": {"f": NaN}}',
        JSON,
        200,
        True,
    ),
    ("variable-int-overflow", _doc(RECORDS, f=2**31), JSON, 200, True),
    (
        "variables-not-object",
        json.dumps({"query": STATUS, "variables": [1, 2]}).encode(),
        JSON,
        400,
        True,
    ),
    ("query-not-string", json.dumps({"query": ["x"]}).encode(), JSON, 400, True),
    ("no-query", b"{}", JSON, 400, True),
    ("page-size-huge", _doc(RECORDS, f=1_000_000), JSON, 200, True),
    ("page-size-negative", _doc(RECORDS, f=-1), JSON, 200, True),
    (
        "issues-page-huge",
        _doc("{ status { coverage { issues(first: 100000) { code } } } }"),
        JSON,
        200,
        True,
    ),
    ("bad-bound", _doc(RECORDS, filter={"since": "x" * 10_000}), JSON, 200, True),
    ("nul-in-query", _doc(STATUS + "\0"), JSON, 200, True),
    (
        "unknown-operation-name",
        json.dumps({"query": STATUS, "operationName": "Nope"}).encode(),
        JSON,
        400,
        True,
    ),
    ("mutation", _doc("mutation { status { recordCount } }"), JSON, 200, True),
    ("subscription", _doc("subscription { status { recordCount } }"), JSON, 200, True),
]


LIMITS = Limits()
# What refuses a request that a limit answers: (HTTP status, code, the limit named in the message).
REFUSALS: dict[str, tuple[int, str, str]] = {
    "body": (413, "QUERY_TOO_COMPLEX", f"Request body larger than {LIMITS.max_body_bytes} bytes"),
    "media-type": (415, "BAD_USER_INPUT", "POST bodies must be application/json"),
    "json-depth": (400, "BAD_USER_INPUT", f"JSON nested deeper than {LIMITS.max_json_depth}"),
    "tokens": (200, "QUERY_TOO_COMPLEX", f"more than {LIMITS.max_tokens} tokens"),
    "nesting": (200, "QUERY_TOO_COMPLEX", "Document is nested too deeply"),
    "depth": (200, "QUERY_TOO_COMPLEX", f"maximum operation depth of {LIMITS.max_depth}"),
}
# The corpus entries a limit refuses; every other one is read whole (its body within the cap) and
# answered, or refused for its shape, after at most `max_tokens` tokens and `max_fields` fields.
REFUSED_BY = {
    "depth-bomb": "nesting",
    "depth-bomb-unknown-fields": "depth",
    "depth-bomb-introspection": "nesting",
    "aliases-5000": "body",
    "aliases-5000-compact": "tokens",
    "aliases-4000-nested": "tokens",
    "token-bomb": "tokens",
    "token-bomb-string-list": "tokens",
    "deep-json-5000": "json-depth",
    "deep-json-5000-variables": "json-depth",
    "deep-json-5000-unclosed": "json-depth",
    **{c[0]: "media-type" for c in CORPUS if c[0].startswith("content-type-")},
    "body-100kb": "body",
    "body-1mb": "body",
    "content-length-lie": "body",
    "huge-variable-string": "body",
}


def assert_refused_by(response: Any, limit: str) -> None:
    """The response is the refusal of `limit`: its status, its code, the limit it names."""
    status, code, named = REFUSALS[limit]
    assert response.status_code == status, response.text[:500]
    (error,) = response.json()["errors"]
    assert error["extensions"] == {"code": code}
    assert named in error["message"], error["message"][:200]


def assert_within_limits(text: str) -> None:
    """A document the limits let through: parsed within `max_tokens` tokens (or stopped at its
    first syntax error before them), and, parsed, within the depth, alias and field limits."""
    try:
        document = parse(text, max_tokens=LIMITS.max_tokens)
    except GraphQLSyntaxError as error:
        assert "tokens" not in error.message, error.message
        return
    cost = measure(document)
    assert cost.depth <= LIMITS.max_depth
    assert cost.aliases <= LIMITS.max_aliases
    assert cost.fields <= LIMITS.max_fields


@pytest.mark.parametrize(
    ("name", "body", "headers", "status", "refused"), CORPUS, ids=[c[0] for c in CORPUS]
)
def test_abuse_corpus_is_refused_by_a_limit_or_within_them_without_5xx(
    demo_client: TestClient,
    name: str,
    body: bytes,
    headers: dict[str, str],
    status: int,
    refused: bool,
) -> None:
    """Every entry is cheap because a limit bounds it: a limit refused it, or the body is within
    the size cap and its document within the token and cost limits (bench/floors.py times them)."""
    response = demo_client.post("/graphql", content=body, headers=headers)
    assert response.status_code == status, response.text[:500]
    if name in REFUSED_BY:
        assert_refused_by(response, REFUSED_BY[name])
    else:
        assert len(body) <= LIMITS.max_body_bytes
        if status == 200:  # it reached GraphQL
            assert_within_limits(json.loads(body)["query"])
    if response.headers["content-type"].startswith("application/json"):
        answer = response.json()
        assert set(codes(answer)) <= DOCUMENTED, answer["errors"]
        if status == 200:
            assert bool(answer.get("errors")) is refused, answer
    # the service is still fine afterwards
    assert gql(demo_client, STATUS) == {"data": {"status": {"recordCount": 88}}}


@pytest.mark.parametrize(
    ("params", "limit"),
    [
        ({"query": "{" + " ".join(["a:__typename"] * 3000) + "}"}, "tokens"),
        ({"query": _nested(50)}, "depth"),
        ({"query": "{ status { ...A } } fragment A on Status { ...A }"}, None),
        ({"query": STATUS, "variables": "[1"}, None),
        ({"query": STATUS, "variables": "[" * 60}, None),
        ({"query": "mutation { status { recordCount } }"}, None),
    ],
    ids=[
        "token-bomb",
        "depth-bomb",
        "fragment-cycle",
        "bad-variables",
        "nested-variables",
        "mutation",
    ],
)
def test_abuse_over_get_is_refused_by_a_limit_or_within_them_without_5xx(
    demo_client: TestClient, params: dict[str, str], limit: str | None
) -> None:
    response = demo_client.get("/graphql", params=params)
    assert 200 <= response.status_code < 500
    if limit is not None:
        assert_refused_by(response, limit)
    else:
        assert_within_limits(params["query"])
    if response.status_code == 200:
        answer = response.json()
        assert answer.get("errors")
        assert set(codes(answer)) <= DOCUMENTED


def _deepest_of_type(value: Any) -> int:
    """The longest chain of non-null `ofType` objects anywhere in an answer."""
    if isinstance(value, list):
        return max((_deepest_of_type(v) for v in value), default=0)
    if not isinstance(value, dict):
        return 0
    here = max((_deepest_of_type(v) for k, v in value.items() if k != "ofType"), default=0)
    inner = value.get("ofType")
    return max(here, 1 + _deepest_of_type(inner) if isinstance(inner, dict) else 0)


def test_introspection_depth_is_not_limited_but_cheap(demo_client: TestClient) -> None:
    """RELIABILITY.md 4: the depth limiter skips `__` fields (switch introspection off). The
    answer stays small because the schema's types end: an `ofType` chain is null after a few
    levels (NonNull, List, NonNull), however deep the document asks."""
    query = _ofs(40)
    cost = measure(parse(query, max_tokens=LIMITS.max_tokens))
    assert cost.depth == 0 and cost.fields <= LIMITS.max_fields
    response = demo_client.post("/graphql", content=_doc(query), headers=JSON)
    assert response.status_code == 200
    answer = response.json()
    assert "errors" not in answer
    assert 1 <= _deepest_of_type(answer["data"]) <= 3


# -- once product bugs, now pinned ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("params", "expected"),
    [
        (
            {"query": STATUS, "variables": "[" * 5000},
            f"variables: JSON nested deeper than {LIMITS.max_json_depth}",
        ),
        (
            {"query": STATUS, "extensions": '{"a":' * 5000},
            f"extensions: JSON nested deeper than {LIMITS.max_json_depth}",
        ),
        # Python's int() refuses more than 4,300 digits: no quadratic conversion.
        ({"query": STATUS, "variables": "9" * 5000}, "variables is not valid JSON"),
    ],
    ids=["deep-variables", "deep-extensions", "huge-number"],
)
def test_get_query_parameter_json_is_checked_like_a_body(
    settings: Settings, params: dict[str, str], expected: str
) -> None:
    """Refused by the guard's JSON checks, depth first, before JSON is parsed."""
    with LocalClient(create_app(settings), raise_server_exceptions=False) as client:
        response = client.get("/graphql", params=params)
    assert response.status_code == 400, response.text[:200]
    (error,) = response.json()["errors"]
    assert error["extensions"] == {"code": "BAD_USER_INPUT"}
    assert error["message"] == expected


@pytest.mark.parametrize(
    ("query", "value"),
    [
        ("query($v: String!) { lookup(name: $v) { status } }", "\udfff"),
        ("query($v: ID!) { record(id: $v) { id } }", "people/\ud800"),
        ("query($v: String) { records(filter: {tag: $v}) { total } }", "\udfff"),
        ("query($v: String) { records(filter: {type: $v}) { total } }", "\udfff"),
    ],
    ids=["lookup-name", "record-id", "records-tag", "records-type"],
)
def test_lone_surrogate_argument_is_bad_user_input(
    demo_client: TestClient, query: str, value: str
) -> None:
    # ensure_ascii writes the surrogate as a \u escape: the body is valid UTF-8 and valid JSON;
    # the guard refuses it before GraphQL runs.
    body = json.dumps({"query": query, "variables": {"v": value}}).encode()
    response = demo_client.post("/graphql", content=body, headers=JSON)
    assert response.status_code == 400
    assert codes(response.json()) == ["BAD_USER_INPUT"]


@pytest.mark.parametrize(
    "query",
    [
        '{ lookup(name: "\\udfff") { status } }',
        '{ record(id: "people/\\ud800") { id } }',
        '{ records(filter: {tag: "\\udfff"}) { total } }',
    ],
    ids=["lookup-name", "record-id", "records-tag"],
)
def test_lone_surrogate_in_a_graphql_string_literal_is_a_document_error(
    demo_client: TestClient, query: str
) -> None:
    # graphql-core refuses the escape while parsing: a document error, never a crash.
    body = gql(demo_client, query)
    assert codes(body) == ["GRAPHQL_VALIDATION_FAILED"]


def test_oversized_int_literal_is_a_validation_error(demo_client: TestClient) -> None:
    body = gql(demo_client, "{ records(first: " + "1" * 5000 + ") { total } }")
    assert codes(body) == ["GRAPHQL_VALIDATION_FAILED"]


@pytest.mark.parametrize(
    ("error", "code", "message"),
    [
        (
            sqlite3.OperationalError("interrupted"),
            "QUERY_TOO_COMPLEX",
            "The query ran past its time limit",
        ),
        (
            sqlite3.OperationalError("database is locked"),
            "INDEX_UNAVAILABLE",
            "State database error: database is locked",
        ),
    ],
)
def test_sqlite_errors_met_while_rows_are_read_are_rendered_as_ours(
    error: sqlite3.Error, code: str, message: str
) -> None:
    # A statement interrupted at its deadline while its rows are read (after `run` returned)
    # reaches the renderer as SQLite's own error: it is the client's QUERY_TOO_COMPLEX, never
    # an internal error, and it says so in our words (never SQLite's bare "interrupted").
    shown = render(GraphQLError(str(error), path=["timeline"], original_error=error))
    assert shown.extensions == {"code": code}
    assert shown.message == message
