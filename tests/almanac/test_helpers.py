"""Each helper next to the GraphQL document that asks the same: equal field by field (the
helpers add no rule of their own), on the demo vault."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from datetime import UTC, date, datetime
from typing import Any
from zoneinfo import ZoneInfo

import pytest

import almanac
from almanac import types as t
from almanac.api.schema import build_schema
from tests.almanac.shapes import as_json, graphql_name, public_fields, selection, timeless

BERLIN = ZoneInfo("Europe/Berlin")
AS_OF = datetime(2026, 11, 29, 12, tzinfo=UTC)
STANDUP = "meetings/2026-03-02-platform-standup"

# (id, helper call, its result type, the field and arguments of the matching document)
CASES: list[tuple[str, Callable[[almanac.Almanac], Any], type, str]] = [
    ("status", lambda kb: kb.status(), t.Status, "status"),
    ("lookup-ambiguous", lambda kb: kb.lookup("Sam"), t.LookupResult, 'lookup(name: "Sam")'),
    (
        "lookup-found",
        lambda kb: kb.lookup("Ada Lopez"),
        t.LookupResult,
        'lookup(name: "Ada Lopez")',
    ),
    ("record", lambda kb: kb.record(STANDUP), t.Record, f'record(id: "{STANDUP}")'),
    (
        "record-relationship",
        lambda kb: kb.record("relationships/samuel-works-at-lumen"),
        t.Record,
        'record(id: "relationships/samuel-works-at-lumen")',
    ),
    (
        "record-missing",
        lambda kb: kb.record("people/nobody"),
        t.Record,
        'record(id: "people/nobody")',
    ),
    (
        "records-people",
        lambda kb: kb.records(type="person", first=5),
        t.RecordConnection,
        'records(filter: {type: "person"}, first: 5)',
    ),
    (
        "records-dated",
        lambda kb: kb.records(since=date(2026, 3, 1), until=date(2026, 3, 31), kind="PAGE"),
        t.RecordConnection,
        'records(filter: {since: "2026-03-01", until: "2026-03-31", kind: PAGE})',
    ),
    (
        "search",
        lambda kb: kb.search("PostGIS storage", first=2),
        t.SearchConnection,
        'search(query: "PostGIS storage", first: 2)',
    ),
    (
        "search-replaced",
        lambda kb: kb.search("features the team already knows", mode="any", type="decision"),
        t.SearchConnection,
        'search(query: "features the team already knows", mode: ANY, filter: {type: "decision"})',
    ),
    (
        "timeline-ada",
        lambda kb: kb.timeline(
            "people/ada-lopez",
            since=date(2026, 3, 1),
            until=date(2026, 4, 30),
            as_of=AS_OF,
            timezone=BERLIN,
            first=5,
        ),
        t.TimelineResult,
        'timeline(entity: "people/ada-lopez", since: "2026-03-01", until: "2026-04-30",'
        ' asOf: "2026-11-29T12:00:00Z", timezone: "Europe/Berlin", first: 5)',
    ),
    (
        "timeline-overdue",
        lambda kb: kb.timeline("projects/atlas", time_field=t.TimeField.DUE_AT, as_of=AS_OF),
        t.TimelineResult,
        'timeline(entity: "projects/atlas", timeField: DUE_AT, asOf: "2026-11-29T12:00:00Z")',
    ),
    (
        "timeline-sources",
        lambda kb: kb.timeline("projects/atlas", group="SOURCE", as_of=AS_OF, order="desc"),
        t.TimelineResult,
        'timeline(entity: "projects/atlas", group: SOURCE, asOf: "2026-11-29T12:00:00Z",'
        " order: DESC)",
    ),
    (
        "chronicle-day",
        lambda kb: kb.chronicle_day(date(2026, 9, 15), timezone=BERLIN, include_partial=True),
        t.TimelineResult,
        'chronicleDay(date: "2026-09-15", timezone: "Europe/Berlin", includePartial: true)',
    ),
    (
        "chronicle-week",
        lambda kb: kb.chronicle_day("2026-03-25", week=True, first=3),
        t.TimelineResult,
        'chronicleDay(date: "2026-03-25", week: true, first: 3)',
    ),
    (
        "chronicle-since",
        lambda kb: kb.chronicle_since(datetime(2026, 3, 1, tzinfo=BERLIN), date(2026, 3, 10)),
        t.TimelineResult,
        'chronicleSince(since: "2026-02-28T23:00:00Z", until: "2026-03-10")',
    ),
    (
        "last-seen",
        lambda kb: kb.last_seen("people/ada-lopez", occurred_on_or_before=date(2026, 6, 1)),
        t.LastSeenResult,
        'chronicleLastSeen(entity: "people/ada-lopez", occurredOnOrBefore: "2026-06-01")',
    ),
    (
        "last-seen-missing",
        lambda kb: kb.last_seen("people/nobody", occurred_on_or_before="2026-06-01"),
        t.LastSeenResult,
        'chronicleLastSeen(entity: "people/nobody", occurredOnOrBefore: "2026-06-01")',
    ),
    (
        "occurrences",
        lambda kb: kb.occurrences(STANDUP, date(2026, 3, 23), date(2026, 4, 3), timezone=BERLIN),
        t.OccurrenceResult,
        f'occurrences(id: "{STANDUP}", since: "2026-03-23", until: "2026-04-03",'
        ' timezone: "Europe/Berlin")',
    ),
    (
        "graph-text",
        lambda kb: kb.graph(
            text="Where did Samuel Okafor work?", relations=["works_at"], as_of=date(2026, 6, 1)
        ),
        t.GraphResult,
        'graph(seed: {text: "Where did Samuel Okafor work?"}, relations: ["works_at"],'
        ' asOf: "2026-06-01")',
    ),
    (
        "graph-ambiguous",
        lambda kb: kb.graph(text="Sam"),
        t.GraphResult,
        'graph(seed: {text: "Sam"})',
    ),
    (
        "graph-hub",
        lambda kb: kb.graph("people/ada-lopez", hops=3, fan_out=4, max_paths=7, direction="OUT"),
        t.GraphResult,
        'graph(seed: {id: "people/ada-lopez"}, hops: 3, fanOut: 4, maxPaths: 7, direction: OUT)',
    ),
    (
        "paths",
        lambda kb: kb.paths("people/samuel-okafor", "orgs/kestrel-cloud", max_hops=2, max_paths=3),
        t.GraphResult,
        'paths(from: "people/samuel-okafor", to: "orgs/kestrel-cloud", maxHops: 2, maxPaths: 3)',
    ),
]


LINCOLN, WASHINGTON = "people/l000313", "people/w000178"
OFFICE = "offices/president"

# The same on the real-data vault (tests/almanac/real_data.py): presidents and their terms.
REAL: list[tuple[str, Callable[[almanac.Almanac], Any], type, str]] = [
    ("status", lambda kb: kb.status(), t.Status, "status"),
    (
        "lookup",
        lambda kb: kb.lookup("Abraham Lincoln"),
        t.LookupResult,
        'lookup(name: "Abraham Lincoln")',
    ),
    (
        "lookup-alias",
        lambda kb: kb.lookup("President"),
        t.LookupResult,
        'lookup(name: "President")',
    ),
    (
        "record-term",
        lambda kb: kb.record("terms/l000313-0"),
        t.Record,
        'record(id: "terms/l000313-0")',
    ),
    (
        "records-terms",
        lambda kb: kb.records(since="1861-01-01", until=date(1861, 12, 31), kind="RELATIONSHIP"),
        t.RecordConnection,
        'records(filter: {since: "1861-01-01", until: "1861-12-31", kind: RELATIONSHIP})',
    ),
    (
        "search",
        lambda kb: kb.search("Whig", first=3),
        t.SearchConnection,
        'search(query: "Whig", first: 3)',
    ),
    (
        "timeline-office",
        lambda kb: kb.timeline(
            OFFICE, since=date(1800, 1, 1), until=date(1900, 1, 1), as_of=AS_OF, first=7
        ),
        t.TimelineResult,
        f'timeline(entity: "{OFFICE}", since: "1800-01-01", until: "1900-01-01",'
        ' asOf: "2026-11-29T12:00:00Z", first: 7)',
    ),
    (
        "chronicle-day",
        lambda kb: kb.chronicle_day(date(1861, 3, 4), timezone="America/New_York", first=2),
        t.TimelineResult,
        'chronicleDay(date: "1861-03-04", timezone: "America/New_York", first: 2)',
    ),
    (
        "chronicle-since",
        lambda kb: kb.chronicle_since(date(1960, 1, 1), date(1970, 1, 1), first=3),
        t.TimelineResult,
        'chronicleSince(since: "1960-01-01", until: "1970-01-01", first: 3)',
    ),
    (
        "last-seen",
        lambda kb: kb.last_seen(OFFICE, occurred_on_or_before=date(1900, 1, 1)),
        t.LastSeenResult,
        f'chronicleLastSeen(entity: "{OFFICE}", occurredOnOrBefore: "1900-01-01")',
    ),
    (
        "occurrences",
        lambda kb: kb.occurrences("terms/l000313-0", "1861-01-01", "1866-01-01"),
        t.OccurrenceResult,
        'occurrences(id: "terms/l000313-0", since: "1861-01-01", until: "1866-01-01")',
    ),
    (
        "graph",
        lambda kb: kb.graph(LINCOLN, hops=2, fan_out=10, max_paths=5),
        t.GraphResult,
        f'graph(seed: {{id: "{LINCOLN}"}}, hops: 2, fanOut: 10, maxPaths: 5)',
    ),
    (
        "graph-text",
        lambda kb: kb.graph(text="Abraham Lincoln and George Washington", hops=1),
        t.GraphResult,
        'graph(seed: {text: "Abraham Lincoln and George Washington"}, hops: 1)',
    ),
    (
        "graph-as-of",
        lambda kb: kb.graph(OFFICE, hops=1, as_of=date(1862, 1, 1), relations=["holds_office"]),
        t.GraphResult,
        f'graph(seed: {{id: "{OFFICE}"}}, hops: 1, asOf: "1862-01-01",'
        ' relations: ["holds_office"])',
    ),
    (
        "paths",
        lambda kb: kb.paths(LINCOLN, WASHINGTON, max_hops=2, fan_out=50, max_paths=3),
        t.GraphResult,
        f'paths(from: "{LINCOLN}", to: "{WASHINGTON}", maxHops: 2, fanOut: 50, maxPaths: 3)',
    ),
]


def document(cls: type, call: str) -> str:
    return f"{{ answer: {call} {{ {selection(cls)} }} }}"


TABLE = [("demo_kb", *c) for c in CASES] + [("real_kb", *c) for c in REAL]


@pytest.mark.parametrize(
    ("vault", "helper", "cls", "call"),
    [(c[0], *c[2:]) for c in TABLE],
    ids=[f"{c[0][:4]}-{c[1]}" for c in TABLE],
)
def test_each_helper_answers_what_its_document_answers(
    request: pytest.FixtureRequest,
    vault: str,
    helper: Callable[[almanac.Almanac], Any],
    cls: type,
    call: str,
) -> None:
    kb: almanac.Almanac = request.getfixturevalue(vault)
    answer = kb.query(document(cls, call))
    assert "errors" not in answer, answer["errors"]
    found = helper(kb)
    assert found is None or isinstance(found, cls)
    clock = "asOf" not in call
    assert timeless(as_json(found), clock=clock) == timeless(answer["data"]["answer"], clock=clock)


PAGED = [
    c
    for c in TABLE
    if issubclass(
        c[3], t.RecordConnection | t.SearchConnection | t.TimelineResult | t.OccurrenceResult
    )
]


def test_the_table_pages_through_several_results(request: pytest.FixtureRequest) -> None:
    several = [c[1] for c in PAGED if c[2](request.getfixturevalue(c[0])).page_info.has_next_page]
    assert len(several) >= 4, several


@pytest.mark.parametrize(
    ("vault", "helper", "cls", "call"),
    [(c[0], *c[2:]) for c in PAGED],
    ids=[f"{c[0][:4]}-{c[1]}" for c in PAGED],
)
def test_iterating_a_result_reads_every_page_the_api_would(
    request: pytest.FixtureRequest,
    vault: str,
    helper: Callable[[almanac.Almanac], Any],
    cls: type,
    call: str,
) -> None:
    kb: almanac.Almanac = request.getfixturevalue(vault)
    items = [f for f, _ in public_fields(cls) if f in ("nodes", "hits", "entries", "occurrences")]
    (name,) = items
    pages: list[Any] = []
    after: str | None = None
    while True:
        cut = call[:-1] + (f', after: "{after}")' if after else ")")
        answer = kb.query(document(cls, cut))["data"]["answer"]
        pages += answer[graphql_name(name)]
        if not answer["pageInfo"]["hasNextPage"]:
            break
        after = answer["pageInfo"]["endCursor"]
    result = helper(kb)
    assert [as_json(item) for item in result] == pages
    assert len(pages) == result.total


def _graphql_fields(schema_type: Any) -> set[str]:
    return set(schema_type.fields)


@pytest.mark.parametrize(
    "cls",
    [
        getattr(t, n)
        for n in t.__all__
        if isinstance(getattr(t, n), type) and hasattr(getattr(t, n), "__dataclass_fields__")
    ],
)
def test_every_result_type_has_every_field_of_its_graphql_type(cls: type) -> None:
    schema = build_schema()._schema
    graphql_type = schema.type_map[cls.__name__]
    assert {graphql_name(n) for n, _ in public_fields(cls)} == _graphql_fields(graphql_type)


SIGNATURES = [
    ("chronicle_day", "chronicle_day"),
    ("graph", "graph"),
]


@pytest.mark.parametrize(("helper", "field"), SIGNATURES)
def test_helper_defaults_are_the_api_defaults(
    demo_kb: almanac.Almanac, helper: str, field: str
) -> None:
    api_defaults = demo_kb._api.defaults(field)
    for name, parameter in inspect.signature(getattr(demo_kb, helper)).parameters.items():
        if parameter.default is not inspect.Parameter.empty and name in api_defaults:
            assert parameter.default == api_defaults[name], name
