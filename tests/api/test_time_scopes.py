"""Time queries against SPEC, rule by rule: scopes (nothing leaks between them, truncation and
cursors per scope) and `kind` with type aliases."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from tests.api.helpers import codes, data, gql
from tests.api.time_vaults import (
    AS_OF,
    LAST,
    OCC,
    SINCE,
    TL,
    app_over,
    day,
    ids,
    since,
    tl,
    touch,
    write_vault,
)

# -- scopes ---------------------------------------------------------------------------------

SCOPED = {
    "team/ada": "type: person\ntitle: Ada",
    "team/m1": "type: meeting\nentities: [ada]\noccurred_at: 2026-03-10T10:00:00Z",
    "team/t1": "type: task\nowner: ada\ndue_at: 2026-03-01",
    # The same ids in ops, and ops-only records that would change team's answers if they leaked.
    "ops/ada": "type: person\ntitle: Ada (ops)",
    "ops/m1": "type: meeting\nentities: [ada]\noccurred_at: 2026-03-10T09:00:00Z",
    "ops/c1": "type: claim\nsubject: ada\nsource: m1\nsource_event: true",
    "ops/t1": "type: task\nowner: ada\ndue_at: 2026-03-01",
    "ops/daily": (  # goes on past its materialised occurrences: recurrence_truncated
        "type: meeting\nentities: [ada]\ntimezone: UTC\noccurred_at: 2026-01-01T08:00:00Z\n"
        "recurrence: FREQ=HOURLY"
    ),
    "ops/broken": "type: meeting\noccurred_at: 2026-13-45",
}


@pytest.fixture(scope="module")
def scoped(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    folder = tmp_path_factory.mktemp("scoped")
    # Written ids: the same id in both scopes (slugs would carry the folder).
    write_vault(folder / "vault", {k: f"id: {k.split('/')[1]}\n{v}" for k, v in SCOPED.items()})
    config = folder / "almanac.toml"
    config.write_text('[scopes]\nteam = "team/"\nops = "ops/"\n')
    with app_over(folder / "vault", folder / "state.db", config) as client:
        yield client


def test_a_record_in_another_scope_never_appears_or_counts(scoped: TestClient) -> None:
    team = [
        tl(scoped, entity="ada", scope="team", asOf=AS_OF),
        tl(scoped, entity="ada", scope="team", since="2026-03-01", until="2026-03-31"),
        tl(scoped, field="DUE_AT", scope="team", asOf=AS_OF),
        since(scoped, since="2026-03-01", until="2026-03-31", scope="team"),
        day(scoped, date="2026-03-10", week=True, scope="team"),
    ]
    assert [ids(r) for r in team] == [["m1"], ["m1"], ["t1"], ["m1"], ["m1"]]
    for result in team:
        assert result["total"] == sum(c["count"] for c in result["clockCounts"]) == 1
        assert result["meta"]["degraded"] == []
        assert result["meta"]["coverage"]["complete"] is True
    last = data(scoped, LAST, entity="ada", scope="team", bound="2026-12-31")
    assert last["chronicleLastSeen"]["entry"]["record"]["id"] == "m1"
    assert last["chronicleLastSeen"]["entry"]["date"] == {"text": "2026-03-10T10:00:00Z"}


def test_each_scope_sees_its_own_records(scoped: TestClient) -> None:
    ops = tl(scoped, entity="ada", scope="ops", since="2026-03-10T09:00:00Z",
             until="2026-03-10T09:00:00Z")  # fmt: skip
    # In ops, the source_event claim stands for ops' m1 (and the hourly meeting at 09:00).
    assert ids(ops) == ["daily", "c1"]
    assert ops["meta"]["coverage"]["complete"] is False  # ops/broken
    both = since(scoped, since="2026-03-10T09:00:00Z", until="2026-03-10T10:00:00Z")
    assert sorted(ids(both)) == ["c1", "daily", "daily", "m1"]
    # The hourly set's 2,000 stored occurrences end in late March: a range beyond is truncated
    # in ops, and nothing of it shows or degrades team's answer.
    late = {"since": "2026-04-01", "until": "2026-04-02"}
    assert since(scoped, **late)["meta"]["degraded"] == ["recurrence_truncated"]
    assert since(scoped, **late, scope="ops")["meta"]["degraded"] == ["recurrence_truncated"]
    team = since(scoped, **late, scope="team")
    assert (team["total"], team["meta"]["degraded"]) == (0, [])


def test_an_entity_of_another_scope_is_not_found(scoped: TestClient) -> None:
    folder_only = gql(scoped, TL, entity="daily", scope="team", first=5)
    assert codes(folder_only) == ["NOT_FOUND"]
    result = data(scoped, LAST, entity="daily", scope="team")["chronicleLastSeen"]
    assert result == {"entry": None, "reason": "entity_missing"}
    assert codes(gql(scoped, OCC, id="daily", since="2026-01-01", until="2026-01-02")) == []
    hidden = data(
        scoped,
        OCC.replace("timezone: $tz", "timezone: $tz, scope: \"team\""),
        id="daily", since="2026-01-01", until="2026-01-02",
    )["occurrences"]  # fmt: skip
    assert hidden["record"] is None and hidden["total"] == 0


# -- kind and type aliases ------------------------------------------------------------------


def test_kind_matches_the_expanded_type_alias(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    write_vault(
        vault,
        {
            "a": "type: meetings\noccurred_at: 2026-03-10T10:00:00Z",
            "b": "type: meeting\noccurred_at: 2026-03-10T11:00:00Z",
            "c": "type: call\noccurred_at: 2026-03-10T12:00:00Z",
        },
    )
    config = tmp_path / "almanac.toml"
    config.write_text('[type_aliases]\nmeetings = "meeting"\n')
    with app_over(vault, tmp_path / "s.db", config) as client:
        assert ids(day(client, date="2026-03-10", kind="meeting")) == ["a", "b"]
        assert ids(since(client, since="2026-03-10", until="2026-03-10", kind="meeting")) == [
            "a",
            "b",
        ]
        assert ids(tl(client, kind="meeting")) == ["a", "b"]
        # `kind` is the exact type, never the derived page kind.
        assert ids(tl(client, kind="page")) == []


def test_truncation_is_reported_per_reach(scoped: TestClient) -> None:
    late = {"since": "2026-04-01", "until": "2026-04-02"}
    ops = tl(scoped, entity="ada", scope="ops", **late)
    assert ops["meta"]["degraded"] == ["recurrence_truncated"]
    assert tl(scoped, entity="ada", scope="team", **late)["meta"]["degraded"] == []
    assert tl(scoped, kind="task", **late)["meta"]["degraded"] == []  # not a meeting: out of reach
    wide = data(scoped, OCC, id="daily", since="2026-01-01", until="2028-01-01", first=100)
    result = wide["occurrences"]
    assert result["meta"]["degraded"] == ["recurrence_truncated"]
    assert result["total"] == 10_000 and len(result["occurrences"]) == 100
    assert [o["index"] for o in result["occurrences"][:3]] == [0, 1, 2]


def test_cursors_follow_the_snapshot_of_the_scopes_read(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    write_vault(
        vault,
        {
            **{f"team/n{i}": f"occurred_at: 2026-01-0{i + 1}" for i in range(3)},
            "ops/standup": (
                "timezone: UTC\noccurred_at: 2026-01-01T09:00:00Z\nrecurrence: FREQ=DAILY;COUNT=5"
            ),
        },
    )
    config = tmp_path / "almanac.toml"
    config.write_text('[scopes]\nteam = "team/"\nops = "ops/"\n')
    args = {"since": "2026-01-01", "until": "2026-01-31", "first": 1}
    with app_over(vault, tmp_path / "s.db", config) as client:
        team = data(client, SINCE, scope="team", **args)["chronicleSince"]["pageInfo"]["endCursor"]
        both = data(client, SINCE, **args)["chronicleSince"]["pageInfo"]["endCursor"]
        text = (vault / "ops" / "standup.md").read_text()
        touch(
            vault / "ops" / "standup.md", text.replace("COUNT=5", "COUNT=5\nexdates: [2026-01-02]")
        )
        # An edit in ops changes what a reader of both scopes sees, not what team readers see.
        assert codes(gql(client, SINCE, after=both, **args)) == ["SNAPSHOT_CHANGED"]
        page = data(client, SINCE, scope="team", after=team, **args)["chronicleSince"]
        assert ids(page) == ["team/n1"]
