"""For random seeds and bounds on a generated vault, each helper answers what its GraphQL
document answers, field by field."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import almanac
from almanac import types as t
from bench.generate import generate
from tests.almanac.shapes import as_json, selection, timeless

NOTES = 300
EXAMPLES = settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


@pytest.fixture(scope="module")
def generated(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[almanac.Almanac, list[str]]]:
    folder = tmp_path_factory.mktemp("generated")
    generate(folder / "vault", NOTES, seed=11)
    with almanac.open(folder / "vault", state=folder / "state.db") as kb:
        ids = sorted(r.id for r in kb.records(lifecycle="ALL", first=100))
        yield kb, ids


def _answer(kb: almanac.Almanac, call: str, cls: type) -> object:
    answer = kb.query(f"{{ answer: {call} {{ {selection(cls)} }} }}")
    assert "errors" not in answer, answer
    return timeless(answer["data"]["answer"])


DIRECTIONS = st.sampled_from(["OUT", "IN", "BOTH"])


@EXAMPLES
@given(
    pick=st.integers(min_value=0),
    hops=st.integers(1, 3),
    fan_out=st.integers(1, 30),
    max_paths=st.integers(1, 60),
    direction=DIRECTIONS,
)
def test_graph_matches_its_document(
    generated: tuple[almanac.Almanac, list[str]],
    pick: int,
    hops: int,
    fan_out: int,
    max_paths: int,
    direction: str,
) -> None:
    kb, ids = generated
    seed = ids[pick % len(ids)]
    found = kb.graph(seed, hops=hops, fan_out=fan_out, max_paths=max_paths, direction=direction)
    call = (
        f'graph(seed: {{id: "{seed}"}}, hops: {hops}, fanOut: {fan_out}, maxPaths: {max_paths},'
        f" direction: {direction})"
    )
    assert timeless(as_json(found)) == _answer(kb, call, t.GraphResult)


@EXAMPLES
@given(
    ends=st.tuples(st.integers(min_value=0), st.integers(min_value=0)),
    max_hops=st.integers(1, 3),
    fan_out=st.integers(1, 30),
    max_paths=st.integers(1, 20),
)
def test_paths_match_their_document(
    generated: tuple[almanac.Almanac, list[str]],
    ends: tuple[int, int],
    max_hops: int,
    fan_out: int,
    max_paths: int,
) -> None:
    kb, ids = generated
    source, target = (ids[e % len(ids)] for e in ends)
    found = kb.paths(source, target, max_hops=max_hops, fan_out=fan_out, max_paths=max_paths)
    call = (
        f'paths(from: "{source}", to: "{target}", maxHops: {max_hops}, fanOut: {fan_out},'
        f" maxPaths: {max_paths})"
    )
    assert timeless(as_json(found)) == _answer(kb, call, t.GraphResult)


@EXAMPLES
@given(
    pick=st.integers(min_value=0),
    since=st.dates(min_value=dt.date(2020, 1, 1), max_value=dt.date(2028, 12, 31)),
    days=st.integers(0, 900),
    first=st.integers(1, 100),
    order=st.sampled_from(["ASC", "DESC"]),
)
def test_timeline_matches_its_document(
    generated: tuple[almanac.Almanac, list[str]],
    pick: int,
    since: dt.date,
    days: int,
    first: int,
    order: str,
) -> None:
    kb, ids = generated
    entity = ids[pick % len(ids)]
    until = since + dt.timedelta(days=days)
    as_of = "2026-06-01T00:00:00Z"
    found = kb.timeline(entity, since=since, until=until, first=first, order=order, as_of=as_of)
    call = (
        f'timeline(entity: "{entity}", since: "{since}", until: "{until}", first: {first},'
        f' order: {order}, asOf: "{as_of}")'
    )
    assert timeless(as_json(found)) == _answer(kb, call, t.TimelineResult)
    assert len(list(found)) == found.total


def test_the_generated_vault_has_dense_walks(generated: tuple[almanac.Almanac, list[str]]) -> None:
    kb, ids = generated
    assert len(ids) >= 250
    assert max(len(kb.graph(i, hops=2).paths) for i in ids[:40]) >= 20
