from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from almanac.api import Settings, create_app
from tests.api.helpers import REPLACEMENT, SUPERSEDED, WITHDRAWN, LocalClient, codes, data, gql

SEARCH = """
query($q: String!, $mode: MatchMode, $filter: RecordFilter, $first: Int, $after: String) {
  search(query: $q, mode: $mode, filter: $filter, first: $first, after: $after) {
    total
    hits {
      record { id kind type title }
      score matches
      snippet { text start end startLine endLine matchLocated }
      via { id }
      locator { path startLine endLine revision }
    }
    pageInfo { hasNextPage endCursor }
    meta { snapshot degraded coverage { complete } }
  }
}
"""


def search(client: TestClient, q: str, **variables: object) -> dict:  # type: ignore[type-arg]
    result: dict = data(client, SEARCH, q=q, **variables)["search"]  # type: ignore[type-arg]
    return result


def test_search_answers_with_ranked_hits_snippets_and_meta(demo_client: TestClient) -> None:
    result = search(demo_client, "duckdb spatial")
    hits = result["hits"]
    assert hits[0]["record"]["id"] == REPLACEMENT  # the title holds both words
    assert hits[0]["matches"] == ["duckdb", "spatial"]
    scores = [h["score"] for h in hits]
    assert scores == sorted(scores, reverse=True)
    assert result["total"] == len(hits)
    assert result["meta"]["snapshot"] and result["meta"]["degraded"] == []
    located = [h for h in hits if h["snippet"]["matchLocated"]]
    assert located
    path = Path(__file__).resolve().parents[2] / "api" / "demo_vault"
    for hit in located:
        snippet = hit["snippet"]
        lines = (path / hit["locator"]["path"]).read_text().split("\n")
        # The snippet's lines are the file's (frontmatter counted) and hold its text.
        excerpt = "\n".join(lines[snippet["startLine"] - 1 : snippet["endLine"]])
        assert snippet["text"] in excerpt
        assert snippet["end"] - snippet["start"] == len(snippet["text"])


def test_active_search_returns_the_replacement_of_a_superseded_match(
    demo_client: TestClient,
) -> None:
    # Words only the superseded decision holds.
    result = search(demo_client, "features team already knows")
    assert [(h["record"]["id"], h["via"], h["score"]) for h in result["hits"]] == [
        (REPLACEMENT, {"id": SUPERSEDED}, None)
    ]
    assert result["hits"][0]["locator"]["path"] == REPLACEMENT + ".md"
    assert result["hits"][0]["snippet"]["matchLocated"] is False
    superseded = search(
        demo_client, "features team already knows", filter={"lifecycle": "SUPERSEDED"}
    )
    assert [(h["record"]["id"], h["via"]) for h in superseded["hits"]] == [(SUPERSEDED, None)]
    assert superseded["hits"][0]["score"] > 0


def test_withdrawn_records_are_never_found(demo_client: TestClient) -> None:
    for lifecycle in ("ACTIVE", "SUPERSEDED", "ALL"):
        result = search(demo_client, "relicense source-available", filter={"lifecycle": lifecycle})
        assert WITHDRAWN not in [h["record"]["id"] for h in result["hits"]]


def test_modes_over_http(demo_client: TestClient) -> None:
    every = search(demo_client, "postgis parquet", mode="ALL")["total"]
    either = search(demo_client, "postgis parquet", mode="ANY")["total"]
    phrase = search(demo_client, "postgis parquet", mode="PHRASE")["total"]
    assert either > every >= phrase
    assert search(demo_client, "tiles as parquet", mode="PHRASE")["total"] >= 1


def test_filters_narrow_hits_and_totals(demo_client: TestClient) -> None:
    everything = search(demo_client, "atlas")
    decisions = search(demo_client, "atlas", filter={"type": "decision"})
    assert 0 < decisions["total"] < everything["total"]
    assert {h["record"]["type"] for h in decisions["hits"]} == {"decision"}


HOSTILE = [
    "NEAR(atlas kickoff)",
    "title:atlas",
    "atlas*",
    '"unbalanced atlas',
    "^atlas",
    "atlas AND OR NOT kickoff",
    "-atlas",
    "( atlas",
    "atlas) OR (kickoff",
    "{title body}: atlas",
    "😀 atlas",
    "東京 atlas",
    "atlas\x00kickoff",
    "' OR 1=1 --",
]


@pytest.mark.parametrize("query", HOSTILE)
@pytest.mark.parametrize("mode", ["ALL", "ANY", "PHRASE"])
def test_hostile_queries_are_only_words(demo_client: TestClient, query: str, mode: str) -> None:
    body = gql(demo_client, SEARCH, q=query, mode=mode)
    assert "errors" not in body, body
    for hit in body["data"]["search"]["hits"]:
        assert hit["matches"]
        assert all(m.isalnum() for m in hit["matches"])


@pytest.mark.parametrize(
    ("query", "fragment"),
    [
        ("", "1 to 64 word tokens"),
        ("(*) ^ : -", "1 to 64 word tokens"),
        (" ".join(["atlas"] * 65), "not 65"),
        ("a" * 501, "at most 500 characters"),
    ],
    ids=["empty", "punctuation-only", "65-tokens", "501-chars"],
)
def test_query_bounds_are_bad_user_input(
    demo_client: TestClient, query: str, fragment: str
) -> None:
    body = gql(demo_client, SEARCH, q=query)
    assert codes(body) == ["BAD_USER_INPUT"]
    message = body["errors"][0]["message"]
    assert "'query'" in message and fragment in message


def test_lone_surrogate_over_http_is_bad_user_input(demo_client: TestClient) -> None:
    raw = json.dumps({"query": SEARCH, "variables": {"q": "atlas"}}).replace(
        '"q": "atlas"', '"q": "atlas \\ud800"'
    )
    response = demo_client.post(
        "/graphql", content=raw, headers={"content-type": "application/json"}
    )
    # The request guard refuses it before GraphQL runs (search_tokens refuses it too).
    assert response.status_code == 400
    assert codes(response.json()) == ["BAD_USER_INPUT"]
    literal = gql(demo_client, '{ search(query: "atlas \\ud800") { total } }')
    assert codes(literal) == ["GRAPHQL_VALIDATION_FAILED"]


def test_pages_follow_cursors_to_the_whole_list(demo_client: TestClient) -> None:
    whole = search(demo_client, "atlas kickoff storage", mode="ANY", first=100)
    assert whole["total"] == len(whole["hits"]) > 5
    seen, after = [], None
    while True:
        page = search(demo_client, "atlas kickoff storage", mode="ANY", first=2, after=after)
        assert page["total"] == whole["total"]
        seen.extend(page["hits"])
        if not page["pageInfo"]["hasNextPage"]:
            break
        after = page["pageInfo"]["endCursor"]
    assert seen == whole["hits"]
    again = search(demo_client, "atlas kickoff storage", mode="ANY", first=100)
    assert again == whole


def test_a_cursor_from_another_snapshot_is_refused(client: TestClient, demo_vault: Path) -> None:
    first = search(client, "atlas", first=1)
    cursor = first["pageInfo"]["endCursor"]
    assert search(client, "atlas", first=1, after=cursor)["hits"]
    note = demo_vault / "projects" / "atlas.md"
    note.write_text(note.read_text() + "\nOne more line about atlas.\n")
    body = gql(client, SEARCH, q="atlas", first=1, after=cursor)
    assert codes(body) == ["SNAPSHOT_CHANGED"]


@pytest.mark.parametrize("cursor", ["nonsense", "W10"])
def test_a_foreign_cursor_is_bad_user_input(demo_client: TestClient, cursor: str) -> None:
    assert codes(gql(demo_client, SEARCH, q="atlas", after=cursor)) == ["BAD_USER_INPUT"]


def test_a_records_cursor_is_not_a_search_cursor(demo_client: TestClient) -> None:
    page = data(demo_client, "{ records(first: 1) { pageInfo { endCursor } } }")
    cursor = page["records"]["pageInfo"]["endCursor"]
    assert codes(gql(demo_client, SEARCH, q="atlas", after=cursor)) == ["BAD_USER_INPUT"]


@pytest.mark.parametrize("first", [0, 101])
def test_page_size_is_bounded(demo_client: TestClient, first: int) -> None:
    body = gql(demo_client, SEARCH, q="atlas", first=first)
    assert codes(body) == ["BAD_USER_INPUT"] and "'first'" in body["errors"][0]["message"]


def test_search_sees_an_edit_at_once(client: TestClient, demo_vault: Path) -> None:
    assert search(client, "zanzibar")["total"] == 0
    (demo_vault / "topics" / "zanzibar.md").write_text("# Zanzibar\n\nSpice islands.\n")
    result = search(client, "Zanzíbar")
    assert [h["record"]["id"] for h in result["hits"]] == ["topics/zanzibar"]
    (demo_vault / "topics" / "zanzibar.md").unlink()
    assert search(client, "zanzibar")["total"] == 0


TOKENS = {"team": "t0ken-team", "private": "t0ken-private", "both": "t0ken-both"}


def scoped_settings(tmp_path: Path) -> Settings:
    """Scopes team and private, a bearer token for each and one for both; every query scans."""
    grants = {"team": '["team"]', "private": '["private"]', "both": '["team", "private"]'}
    config = tmp_path / "almanac.toml"
    config.write_text(
        '[scopes]\nteam = "team/"\nprivate = "private/"\n'
        + "".join(
            f'\n[[tokens]]\nsha256 = "{hashlib.sha256(TOKENS[name].encode()).hexdigest()}"\n'
            f"scopes = {grants[name]}\n"
            for name in TOKENS
        )
    )
    return Settings.build(
        vault=tmp_path / "vault", state=tmp_path / "s.db", config=config, watch=False
    )


def as_reader(client: TestClient, reader: str, q: str, **variables: object) -> bytes:
    """The raw response of a search with `reader`'s token."""
    body = {"query": SEARCH, "variables": {"q": q, **variables}}
    headers = {"authorization": f"Bearer {TOKENS[reader]}"}
    response = client.post("/graphql", json=body, headers=headers)
    assert response.status_code == 200 and "errors" not in response.json(), response.text
    return response.content


def every_page(client: TestClient, reader: str, q: str, mode: str) -> list[bytes]:
    """The whole list, then its pages of two through their cursors."""
    pages = [as_reader(client, reader, q, mode=mode)]
    after = None
    while True:
        pages.append(as_reader(client, reader, q, mode=mode, first=2, after=after))
        info = json.loads(pages[-1])["data"]["search"]["pageInfo"]
        if not info["hasNextPage"]:
            return pages
        after = info["endCursor"]


def test_a_scope_the_token_cannot_read_never_moves_its_results(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    for i in range(6):
        text = f"# Team {i}\n\n{'ledger ' * (1 + i % 3)}budget {'words ' * i}review\n"
        (vault / "team").mkdir(parents=True, exist_ok=True)
        (vault / "team" / f"t{i}.md").write_text(text)
    queries = [("ledger", "ALL"), ("ledger review words", "ANY"), ("budget words", "PHRASE")]
    with LocalClient(create_app(scoped_settings(tmp_path))) as client:
        before = [every_page(client, "team", q, m) for q, m in queries]
        assert json.loads(before[0][0])["data"]["search"]["total"] == 6
        (vault / "private").mkdir()
        for i in range(10):
            (vault / "private" / f"p{i}.md").write_text(
                f"# Ledger budget {i}\n\n{'ledger budget review words ' * (5 + i)}\n"
            )
        after = [every_page(client, "team", q, m) for q, m in queries]
        private = json.loads(as_reader(client, "private", "ledger"))["data"]["search"]
        both = json.loads(as_reader(client, "both", "ledger review words", mode="ANY"))
    assert after == before  # scores, order, totals, snippets and cursors, byte for byte
    assert private["total"] == 10
    # A token of both scopes: each hit scored in its scope, merged by score, then id.
    hits = both["data"]["search"]["hits"]
    assert len(hits) == 16
    keys = [(-h["score"], h["record"]["id"]) for h in hits]
    assert keys == sorted(keys)
    alone = json.loads(before[1][0])["data"]["search"]["hits"]
    assert [h for h in hits if h["record"]["id"].startswith("team/")] == alone


RETRIEVAL = """
query($q: String!, $variants: [String!], $strategy: SearchStrategy, $filter: RecordFilter,
      $first: Int, $after: String) {
  search(query: $q, variants: $variants, strategy: $strategy, filter: $filter, first: $first,
         after: $after) {
    total
    hits { record { id } score matches matchQuality }
    pageInfo { hasNextPage endCursor }
    retrieval {
      reason scopedActive candidatePool candidateLimitReached perQueryMatches
      fallback {
        keywords droppedNoMatch droppedTooCommon droppedByCap coverageRequired
        recalled rejected survived candidateLimitReached
      }
    }
  }
}
"""


def retrieve(client: TestClient, q: str, **variables: object) -> dict:  # type: ignore[type-arg]
    result: dict = data(client, RETRIEVAL, q=q, **variables)["search"]  # type: ignore[type-arg]
    return result


@pytest.mark.parametrize(
    ("variants", "fragment"),
    [
        (["atlas"] * 6, "at most 5 texts, not 6"),
        (["atlas", "x" * 101], "[1] must be at most 100 characters, not 101"),
    ],
    ids=["six-variants", "101-characters"],
)
def test_bad_variants_are_bad_user_input_naming_the_argument(
    demo_client: TestClient, variants: list[str], fragment: str
) -> None:
    body = gql(demo_client, RETRIEVAL, q="atlas", variants=variants)
    assert codes(body) == ["BAD_USER_INPUT"]
    message = body["errors"][0]["message"]
    assert "'variants'" in message and fragment in message


def test_five_variants_of_100_characters_are_taken(demo_client: TestClient) -> None:
    variants = [("postgis " * 13)[:100]] * 5
    result = retrieve(demo_client, "atlas", variants=variants)
    assert (
        result["retrieval"]["perQueryMatches"][1:]
        == [result["retrieval"]["perQueryMatches"][1]] * 5
    )
    assert result["retrieval"]["reason"] == "MATCHED"


def test_every_search_answer_says_how_it_was_retrieved(demo_client: TestClient) -> None:
    matched = retrieve(demo_client, "postgis")
    scoped = matched["retrieval"]["scopedActive"]
    assert scoped > 50
    assert matched["retrieval"] == {
        "reason": "MATCHED",
        "scopedActive": scoped,
        "candidatePool": matched["total"],
        "candidateLimitReached": False,
        "perQueryMatches": [matched["total"]],
        "fallback": None,
    }
    assert {h["matchQuality"] for h in matched["hits"]} == {"EXACT"}
    none = retrieve(demo_client, "zanzibar")["retrieval"]
    assert (none["reason"], none["scopedActive"], none["candidatePool"]) == (
        "NO_LEXICAL_MATCH",
        scoped,
        0,
    )
    empty = retrieve(demo_client, "atlas", filter={"type": "no-such-type"})["retrieval"]
    assert (empty["reason"], empty["scopedActive"]) == ("EMPTY_SCOPE", 0)


def test_variants_are_fused_over_http(demo_client: TestClient) -> None:
    result = retrieve(demo_client, "postgis", variants=["duckdb", "zanzibar", "?!"])
    postgis = retrieve(demo_client, "postgis")["total"]
    duckdb = retrieve(demo_client, "duckdb")["total"]
    assert result["retrieval"]["perQueryMatches"] == [postgis, duckdb, 0, 0]
    scores = [h["score"] for h in result["hits"]]
    assert scores == sorted(scores, reverse=True) and scores[0] <= 2 / 61


def test_a_relaxed_pass_pages_in_its_own_order(demo_client: TestClient) -> None:
    query = "postgis beacon zanzibar"
    whole = retrieve(demo_client, query, strategy="AUTO", first=100)
    assert whole["retrieval"]["reason"] == "RELAXED_MATCH"
    assert whole["retrieval"]["fallback"]["droppedNoMatch"] == ["zanzibar"]
    assert whole["total"] == whole["retrieval"]["fallback"]["survived"] > 2
    assert {h["matchQuality"] for h in whole["hits"]} == {"RELAXED"}
    strict = retrieve(demo_client, query)
    assert (strict["total"], strict["retrieval"]["reason"]) == (0, "NO_LEXICAL_MATCH")
    assert strict["retrieval"]["fallback"] is None
    seen, after = [], None
    while True:
        page = retrieve(demo_client, query, strategy="AUTO", first=2, after=after)
        assert page["retrieval"]["reason"] == "RELAXED_MATCH"
        seen.extend(page["hits"])
        if not page["pageInfo"]["hasNextPage"]:
            break
        after = page["pageInfo"]["endCursor"]
    assert seen == whole["hits"]
    # The relaxed pass's cursor is no cursor for a STRICT search.
    body = gql(demo_client, RETRIEVAL, q=query, first=2, after=after)
    assert codes(body) == ["BAD_USER_INPUT"] and "AUTO" in body["errors"][0]["message"]
