"""Time queries against SPEC: every hostile argument (zones, date texts, page and identity
arguments, forged cursors, lone surrogates, non-ASCII digits) is a typed error, never a 500."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from tests.api.helpers import DOCUMENTED, codes, data, gql
from tests.api.time_vaults import (
    DAY,
    LAST,
    OCC,
    SINCE,
    TL,
    app_over,
    write_vault,
)

# -- hostile arguments: every bad input is a typed error ------------------------------------

# The contract's codes and the two document errors (tests/api/helpers.py); never a 500.
TYPED = DOCUMENTED
BAD_ZONES = [
    "../etc", "../../etc/passwd", "UTC\u0000", "UTC\n", " UTC", "Europe/Berlin/", "/etc/localtime",
    "Europe/../UTC", "\ud800", "x" * 10_000, "Europe\\Berlin", "posix/../../UTC", ".", "",
]  # fmt: skip
BAD_TEXTS = [
    "\ud800", "2026-03-01\u0000", "2026-03-01T10:00:00+25:00", "2026-03-01T24:00:01Z",
    "0000-01-01", "-2026-03-01", "+12026-03-01", "2026-W10-1", "2026-060",
    "2026-03-01T10:00:00.1234567890123Z", "9" * 5000,
]  # fmt: skip
EDGE_TEXTS = [
    "0001-01-01", "9999-12-31", "0001-01-01T00:00:00+14:00", "9999-12-31T23:59:59-14:00",
    "9999-12-31T23:59:59.999999Z", "2026-03-01T10:00:00.5+01:00", "2026-03-01T10:00:00+14:01",
]  # fmt: skip


def _calls(zone: str | None = None, text: str | None = None) -> list[tuple[str, dict[str, Any]]]:
    z = {"tz": zone} if zone is not None else {}
    if text is None:
        return [
            (TL, {**z, "first": 5}),
            (SINCE, {**z, "since": "2026-01-01"}),
            (DAY, {**z, "date": "2026-03-15", "week": True}),
            (OCC, {**z, "id": "ny-daily", "since": "2026-01-01", "until": "2026-12-31"}),
        ]
    return [
        (TL, {"since": text, "first": 5}),
        (TL, {"until": text, "first": 5}),
        (TL, {"asOf": text, "entity": "ada", "first": 5}),
        (TL, {"asOf": text, "entity": "ada", "first": 5, "tz": "Pacific/Kiritimati"}),
        (TL, {"asOf": text, "entity": "ada", "first": 5, "tz": "Pacific/Pago_Pago"}),
        (SINCE, {"since": text}),
        (SINCE, {"since": "2026-01-01", "until": text}),
        (DAY, {"date": text}),
        (DAY, {"date": text, "week": True, "tz": "Pacific/Kiritimati"}),
        (DAY, {"date": text, "week": True, "tz": "Pacific/Pago_Pago"}),
        (OCC, {"id": "ny-daily", "since": text, "until": "9999-12-31"}),
        (OCC, {"id": "ny-daily", "since": "0001-01-01", "until": text}),
        (LAST, {"entity": "ada", "bound": text}),
    ]


def _assert_typed(body: dict[str, Any], what: object) -> None:
    found = codes(body)
    assert "INTERNAL_SERVER_ERROR" not in found, (what, body)
    assert set(found) <= TYPED, (what, body)


@pytest.mark.parametrize("zone", BAD_ZONES, ids=range(len(BAD_ZONES)))
def test_bad_zones_are_refused_by_name(rv: TestClient, zone: str) -> None:
    for query, args in _calls(zone=zone):
        response = post(rv, query, **args)
        assert response.status_code in (200, 400), response.text
        body = response.json()
        _assert_typed(body, (zone, args))
        assert codes(body) == ["BAD_USER_INPUT"], (zone, body)


@pytest.mark.parametrize("text", BAD_TEXTS + EDGE_TEXTS, ids=range(len(BAD_TEXTS + EDGE_TEXTS)))
def test_hostile_date_texts_never_break_the_server(rv: TestClient, text: str) -> None:
    for query, args in _calls(text=text):
        response = post(rv, query, **args)
        assert response.status_code in (200, 400), response.text
        body = response.json()
        _assert_typed(body, (text, args))
        if text in BAD_TEXTS:
            assert codes(body) == ["BAD_USER_INPUT"], (text, args, body)


@pytest.mark.parametrize(
    "args",
    [
        {"first": 0},
        {"first": -1},
        {"first": 101},
        {"first": 2**31 - 1},
        {"first": -(2**31)},
        {"after": ""},
        {"after": "!!!"},
        {"after": "\ud800"},
        {"after": "A" * 100_000},
        {"after": "WyJ4IiwiLTEiXQ"},  # ["x","-1"]: a forged cursor of another snapshot
        {"entity": "\ud800"},
        {"entity": "nobody"},
        {"entity": ""},
        {"kind": "\ud800"},
        {"scope": "nope"},
        {"scope": "\ud800"},
        {"field": "NOT_A_FIELD"},
    ],  # fmt: skip
    ids=lambda a: json.dumps(a)[:40],
)
def test_hostile_page_and_identity_arguments_are_typed_errors(
    rv: TestClient, args: dict[str, Any]
) -> None:
    base = {"first": 5, **args}
    body = post(rv, TL, **base).json()
    _assert_typed(body, args)
    if "errors" not in body:
        assert args in ({"kind": "\ud800"},), body


@pytest.mark.parametrize(
    "key",
    [
        "-1",
        "99999999999999999999",
        "1e3",
        " 1",
        "١",
        "²",
        "1" * 5000,
    ],  # fmt: skip
    ids=range(7),
)
def test_a_forged_cursor_of_this_snapshot_is_a_typed_error(rv: TestClient, key: str) -> None:
    page = data(rv, SINCE, since="2026-01-01", until="2026-12-31", first=1)["chronicleSince"]
    snapshot, _ = json.loads(_unb64(page["pageInfo"]["endCursor"]))
    raw = json.dumps([snapshot, key], separators=(",", ":")).encode()
    cursor = base64.urlsafe_b64encode(raw).decode().rstrip("=")
    body = gql(rv, SINCE, since="2026-01-01", until="2026-12-31", first=1, after=cursor)
    _assert_typed(body, key)


def post(client: TestClient, query: str, **variables: Any) -> Any:
    """POST a document as ASCII JSON, so lone surrogates travel as `\\udXXX` escapes."""
    payload = json.dumps({"query": query, "variables": variables}, ensure_ascii=True)
    return client.post(
        "/graphql", content=payload.encode(), headers={"content-type": "application/json"}
    )


def _unb64(text: str) -> str:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4)).decode()


def test_occurrences_over_the_widest_range_are_bounded(rv: TestClient) -> None:
    body = gql(rv, OCC, id="bad-rule", since="0001-01-01", until="9999-12-31", first=100)
    _assert_typed(body, "widest")
    endless = gql(rv, OCC, id="ny-daily", since="0001-01-01", until="9999-12-31", first=100)
    assert endless["data"]["occurrences"]["total"] == 5


@pytest.mark.parametrize("text", ["２０２６-03-01", "٢٠٢٦-٠٣-٠١", "2026-03-01T10:00:0０Z"])
def test_non_ascii_digits_are_not_a_date(rv: TestClient, text: str) -> None:
    for query, args in [(SINCE, {"since": text}), (DAY, {"date": text}), (TL, {"asOf": text})]:
        body = post(rv, query, **args).json()
        assert codes(body) == ["BAD_USER_INPUT"], (text, query[:20], body)


# -- zone names that are files, not IANA zones ------------------------------------------------


@pytest.mark.skipif(
    "localtime" not in __import__("zoneinfo").available_timezones(),
    reason="this host's tz database has no 'localtime' entry",
)
def test_the_hosts_localtime_is_not_an_iana_zone(rv: TestClient) -> None:
    for query, args in _calls(zone="localtime"):
        assert codes(post(rv, query, **args).json()) == ["BAD_USER_INPUT"], query[:30]


@pytest.mark.parametrize(
    "url",
    [
        # Invalid UTF-8 (an encoded lone surrogate) in the document and in the variables.
        "/graphql?query=%7BchronicleDay(date%3A%222026-03-01%22%2Ctimezone%3A%22%ED%A0%80%22)"
        "%7Btotal%7D%7D",
        "/graphql?query=query(%24t%3AString)%7BchronicleDay(date%3A%222026-03-01%22%2C"
        "timezone%3A%24t)%7Btotal%7D%7D&variables=%7B%22t%22%3A%22%ED%A0%80%22%7D",
        # A JSON escape of a lone surrogate in the variables, and a GraphQL one in the document.
        "/graphql?query=query(%24t%3AString)%7BchronicleDay(date%3A%222026-03-01%22%2C"
        "timezone%3A%24t)%7Btotal%7D%7D&variables=%7B%22t%22%3A%22%5Cud800%22%7D",
        "/graphql?query=%7BchronicleDay(date%3A%222026-03-01%22%2Ctimezone%3A%22%5CuD800%22)"
        "%7Btotal%7D%7D",
    ],
    ids=["doc-utf8", "vars-utf8", "vars-escape", "doc-escape"],
)
def test_lone_surrogates_over_http_get_are_typed_errors(rv: TestClient, url: str) -> None:
    response = rv.get(url)
    assert response.status_code in (200, 400), response.text
    found = codes(response.json())
    assert found and set(found) <= TYPED and "INTERNAL_SERVER_ERROR" not in found


ISSUES = """{ timeline(since: "2026-01-01", until: "2026-12-31") {
  entries { record { id } date { text } } meta { coverage { complete } } } }"""


def test_non_ascii_digits_in_a_note_are_an_invalid_date(tmp_path: Path) -> None:
    write_vault(tmp_path / "vault", {"w": "occurred_at: ２０２６-03-01"})
    with app_over(tmp_path / "vault", tmp_path / "s.db") as client:
        result = data(client, ISSUES)["timeline"]
    assert result["entries"] == [] and result["meta"]["coverage"]["complete"] is False


@pytest.mark.skipif(
    "localtime" not in __import__("zoneinfo").available_timezones(),
    reason="this host's tz database has no 'localtime' entry",
)
def test_localtime_in_a_note_is_an_unknown_timezone(tmp_path: Path) -> None:
    write_vault(tmp_path / "vault", {"z": "timezone: localtime\noccurred_at: 2026-03-01T10:00"})
    with app_over(tmp_path / "vault", tmp_path / "s.db") as client:
        result = data(client, ISSUES)["timeline"]
    assert result["entries"] == [] and result["meta"]["coverage"]["complete"] is False
