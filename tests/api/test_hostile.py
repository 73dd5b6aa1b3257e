"""Hostile documents: each refused before its cost is paid, and none starves other requests.

The in-process tests pin what a document is measured as (`measure`) and what each shape is
answered with; the end-to-end ones drive a real `almanac serve` over TCP.
"""

from __future__ import annotations

import shutil
import statistics
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx2 as httpx
import pytest
from graphql import get_introspection_query, parse
from starlette.testclient import TestClient

from almanac.api.app import create_app
from almanac.api.documents import MAX_ERRORS, Cost, measure
from almanac.api.settings import DEMO_VAULT, Settings
from tests.api.helpers import LocalClient, codes, gql
from tests.api.served import serve

PROBE = "{ status { recordCount } }"
PROBE_ANSWER = {"data": {"status": {"recordCount": 88}}}


def fan_out(levels: int, *, nested: bool = False) -> str:
    """Fragments A_i and B_i each spreading A_(i-1) and B_(i-1): 2^levels expansions."""
    if nested:
        head = f"query {{ records {{ nodes {{ ...A{levels} }} }} }}"
        leaves = ["fragment A0 on Record { id }", "fragment B0 on Record { title }"]
        body = "links {{ target {{ id }} }} ...A{p} ...B{p}"
        on = "Record"
    else:
        head = f"query {{ ...A{levels} ...B{levels} }}"
        leaves = [
            "fragment A0 on Query { status { recordCount } }",
            "fragment B0 on Query { status { scopes } }",
        ]
        body = "...A{p} ...B{p}"
        on = "Query"
    parts = [head, *leaves]
    for i in range(1, levels + 1):
        for name in "AB":
            parts.append(f"fragment {name}{i} on {on} {{ {body.format(p=i - 1)} }}")
    return "\n".join(parts)


def _nested_inline(levels: int) -> str:
    return "{ " + "... on Query { " * levels + "status { recordCount }" + " }" * levels + " }"


# name -> (document, the code it is refused with)
HOSTILE = {
    "fragment-fan-out-24": (fan_out(24), "QUERY_TOO_COMPLEX"),
    "nested-fragment-fan-out-24": (fan_out(24, nested=True), "QUERY_TOO_COMPLEX"),
    "same-field-1900-times": (
        "{ status { " + " ".join(["recordCount"] * 1900) + " } }",
        "QUERY_TOO_COMPLEX",
    ),
    "600-conflicting-aliases": (
        "{ " + " ".join(f'a: record(id: "r{i}") {{ id }}' for i in range(160)) + " }",
        "QUERY_TOO_COMPLEX",
    ),
    "unknown-directive-990-times": (
        "{ status { recordCount " + " ".join(["@a"] * 990) + " } }",
        "GRAPHQL_VALIDATION_FAILED",
    ),
    "skip-directive-250-times": (
        "{ status { recordCount " + " ".join(["@skip(if: false)"] * 250) + " } }",
        "GRAPHQL_VALIDATION_FAILED",
    ),
    "190-nested-inline-fragments": (_nested_inline(190), None),
    "1000-nested-inline-fragments": (_nested_inline(1000), "QUERY_TOO_COMPLEX"),
    "comment-padding": ("#\n" * 2001 + "{ __typename }", "QUERY_TOO_COMPLEX"),
    "nested-introspection": (
        "{ __schema { types { fields { type { ofType { fields { type { ofType { fields { type {"
        " ofType { fields { name } } } } } } } } } } } } }",
        "QUERY_TOO_COMPLEX",
    ),
    "fragment-cycle-fan-out": (
        "query { ...A } "
        + " ".join(
            f"fragment {c} on Query {{ ...{n} ...A status {{ recordCount }} }}"
            for c, n in zip("ABCDEFGHIJKLMNOPQRSTUVWXY", "BCDEFGHIJKLMNOPQRSTUVWXYZ", strict=True)
        )
        + " fragment Z on Query { ...A }",
        "GRAPHQL_VALIDATION_FAILED",
    ),
}


# -- what a document is measured as ------------------------------------------------------------


def test_fan_out_is_counted_exactly_and_each_fragment_walked_once() -> None:
    # 2 * 2^24 copies of the leaf fragments (2 fields each): the count is exact, the walk
    # linear (an exponential walk would not finish here).
    assert measure(parse(fan_out(24))) == Cost(depth=1, fields=4 * 2**24, aliases=0)
    assert measure(parse(fan_out(60))).fields == 4 * 2**60
    # records.nodes, then links.target beside each spread: spreads add fields, not depth.
    assert measure(parse(fan_out(24, nested=True))).depth == 4


def test_directives_are_counted_per_location_through_fragments() -> None:
    document = (
        "query Q @a { ...F status @b @c { scopes @d @e @f } }"
        " fragment F on Query @g { status { recordCount @h @i @j @k } }"
    )
    assert measure(parse(document)).directives == 4


@pytest.mark.parametrize(
    ("directives", "refused_early"),
    [
        ("@skip(if: false) @include(if: true)", False),  # valid
        ("@skip(if: false) @skip(if: false)", False),  # graphql-core's rule says which
        (" ".join(["@skip(if: false)"] * 6), True),  # more than the schema's 5, none repeatable
        (" ".join(["@unknown"] * 990), True),
    ],
)
def test_a_location_with_more_directives_than_the_schema_has_is_invalid_at_once(
    demo_client: TestClient, directives: str, refused_early: bool
) -> None:
    body = gql(demo_client, "{ status { recordCount " + directives + " } }")
    early = [e for e in body.get("errors", []) if "none repeatable" in e["message"]]
    assert bool(early) is refused_early, body
    if early or body.get("errors"):
        assert set(codes(body)) == {"GRAPHQL_VALIDATION_FAILED"}
    else:
        assert body["data"]["status"]["recordCount"] > 0


def test_validation_stops_after_a_few_errors(demo_client: TestClient) -> None:
    # 30 unknown fields: graphql-core reports ten, then that it stopped.
    body = gql(demo_client, "{ status { " + " ".join(f"f{i}" for i in range(30)) + " } }")
    assert len(body["errors"]) == MAX_ERRORS + 1, body
    assert "Validation aborted" in body["errors"][-1]["message"]
    assert set(codes(body)) == {"GRAPHQL_VALIDATION_FAILED"}


def test_depth_ignores_introspection_fields_but_fields_are_counted() -> None:
    cost = measure(parse("{ __schema { types { fields { type { name } } } } status { scopes } }"))
    assert cost == Cost(depth=1, fields=7, aliases=0)


def test_aliases_and_fields_add_up_over_operations_and_spreads() -> None:
    document = parse(
        "query One { a: status { recordCount } ...F } "
        "query Two { b: status { scopes } } "
        "fragment F on Query { c: status { snapshot } }"
    )
    assert measure(document) == Cost(depth=1, fields=6, aliases=3)


def test_a_fragment_spread_twice_in_one_selection_counts_once() -> None:
    document = parse(
        "{ ...F ...F ... on Query { ...F } } fragment F on Query { status { scopes } }"
    )
    # graphql-core collects a spread once per selection; the inline fragment is another one.
    assert measure(document) == Cost(depth=1, fields=4, aliases=0)


def test_cycles_and_unknown_fragments_count_nothing() -> None:
    assert measure(
        parse("{ ...A ...Nope } fragment A on Query { ...A status { scopes } }")
    ) == Cost(depth=1, fields=2, aliases=0)


# -- answers, in process ----------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_each_hostile_shape_is_refused_with_its_code(demo_client: TestClient, name: str) -> None:
    document, code = HOSTILE[name]
    body = gql(demo_client, document)
    if code is None:  # within every limit: answered
        assert body == {"data": {"status": {"recordCount": 88}}}
        return
    assert body["data"] is None
    assert code in codes(body), body
    assert gql(demo_client, PROBE) == PROBE_ANSWER


@pytest.mark.parametrize(
    "document",
    [
        '{ lookup(name: "x") { status candidates { aliases } } }',
        "{ status { token } }",
        "{ status { maxTokens exceeds maximum operation depth } }",
    ],
    ids=["aliases", "token", "limit-words"],
)
def test_codes_come_from_what_went_wrong_not_from_words(
    demo_client: TestClient, document: str
) -> None:
    body = gql(demo_client, document)
    assert body["data"] is None
    assert body["errors"]
    assert set(codes(body)) == {"GRAPHQL_VALIDATION_FAILED"}


def test_a_request_past_its_time_limit_is_cut_off(demo_vault: Path, tmp_path: Path) -> None:
    config = tmp_path / "almanac.toml"
    # Smaller than what scanning the vault takes: the deadline has passed before execution.
    config.write_text("[limits]\nrequest_seconds = 0.000001\n")
    settings = Settings.build(vault=demo_vault, state=tmp_path / "s.db", config=config, watch=False)
    with LocalClient(create_app(settings)) as client:
        body = gql(client, "{ records(first: 50) { nodes { id locator { path } } } }")
    assert "QUERY_TOO_COMPLEX" in codes(body), body
    assert any("time limit" in error["message"] for error in body["errors"])


# -- a real server ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    folder = tmp_path_factory.mktemp("hostile")
    shutil.copytree(DEMO_VAULT, folder / "vault")
    with serve(folder / "vault", folder) as base:
        yield base


def _post(client: httpx.Client, document: str) -> tuple[float, dict[str, object]]:
    start = time.perf_counter()
    response = client.post("/graphql", json={"query": document})
    elapsed = time.perf_counter() - start
    assert response.status_code == 200, response.text
    return elapsed, response.json()


@pytest.mark.parametrize("name", sorted(n for n, (_, code) in HOSTILE.items() if code))
def test_each_hostile_shape_is_refused_in_milliseconds(server: str, name: str) -> None:
    document, code = HOSTILE[name]
    with httpx.Client(base_url=server, timeout=10.0) as client:
        timings = []
        for attempt in range(3):
            # A comment makes each text new: no attempt is answered from the document cache.
            elapsed, body = _post(client, f"# {attempt}\n{document}")
            assert code in codes(body), body
            timings.append(elapsed)
    assert min(timings) < 0.050, timings


def test_a_flood_of_hostile_documents_does_not_starve_a_probe(server: str) -> None:
    stop = threading.Event()
    refused = [0] * 4
    failures: list[BaseException] = []
    documents = [document for document, code in HOSTILE.values() if code]

    def flood(index: int) -> None:
        try:
            with httpx.Client(base_url=server, timeout=30.0) as client:
                count = 0
                while not stop.is_set():
                    document = documents[count % len(documents)]
                    _, body = _post(client, f"# {index} {count}\n{document}")
                    assert body["data"] is None, body
                    count += 1
                refused[index] = count
        except BaseException as exc:  # reported by the main thread
            failures.append(exc)

    threads = [threading.Thread(target=flood, args=(i,)) for i in range(4)]
    for thread in threads:
        thread.start()
    latencies = []
    try:
        with httpx.Client(base_url=server, timeout=30.0) as client:
            end = time.monotonic() + 20.0
            while time.monotonic() < end:
                elapsed, body = _post(client, PROBE)
                assert body == PROBE_ANSWER
                latencies.append(elapsed)
                time.sleep(max(0.0, 0.2 - elapsed))
    finally:
        stop.set()
        for thread in threads:
            thread.join(timeout=60)
    assert not failures, failures
    assert min(refused) > 0, refused
    latencies.sort()
    p99 = latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))]
    assert len(latencies) >= 50, len(latencies)
    assert p99 < 0.5, (p99, statistics.median(latencies), refused)
    with httpx.Client(base_url=server, timeout=10.0) as client:
        elapsed, body = _post(client, PROBE)
    assert body == PROBE_ANSWER
    assert elapsed < 0.5


def test_the_standard_introspection_query_is_answered(demo_client: TestClient) -> None:
    # What GraphiQL sends: deep through fragments, but within every limit.
    body = gql(demo_client, get_introspection_query(descriptions=True))
    assert "errors" not in body, body.get("errors")
    assert body["data"]["__schema"]["queryType"]["name"] == "Query"
