"""A time query's SQL text is the same at every `now`: its clock and bounds are bound values.

Each reader connection keeps the statements it prepared (Python's statement cache, 128 per
connection); text that changed with `now` filled that cache with statements never used again
(~1.9 MB per reader). SQLite's own list of a connection's prepared statements (`sqlite_stmt`,
their text before binding: a trace callback sees the values expanded) shows what is kept.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import date

import pytest

from almanac import temporal
from almanac.temporal.calendar import ClockRelation, local_day, week_of

DAY = 86_400_000_000
NOW = 1_800_000_000_000_000  # 2027-01-15

NOTES = {
    "ada": "type: person\ntitle: Ada",
    "m1": "type: meeting\noccurred_at: 2027-01-14T10:00:00Z\nentities: [ada]",
    "m2": "type: meeting\noccurred_at: 2027-01-16\nentities: [ada]\nrecurrence: FREQ=WEEKLY",
    "c1": "type: claim\nsubject: ada\nsource: m1\nsource_event: true\noccurred_at: 2027-01-14",
    "t1": "type: task\nentities: [ada]\noccurred_at: 2027-01-10\ndue: 2027-01-20\nstate: open",
    "r1": "type: relationship\nfrom: ada\nto: m1\nvalid_from: 2027-01-01",
    "d-old": (
        "type: decision\noccurred_at: 2027-01-12\nentities: [ada]\nlifecycle: superseded\n"
        "superseded_by: d-new"
    ),
    "d-new": "type: decision\noccurred_at: 2027-01-13",
}


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[temporal.Store]:
    root = tmp_path_factory.mktemp("vault")
    for name, front in NOTES.items():
        (root / f"{name}.md").write_text(f"---\n{front}\n---\n# {name}\n")
    found = temporal.Store.open(root / ".state.db")
    temporal.Reconciler(found, root, temporal.VaultConfig()).reconcile(now_us=NOW)
    yield found
    found.close()


def _queries(reader: temporal.Reader, now: int) -> None:
    """Every kind of time query at `now` (and bounds that move with it)."""
    scopes = ["default"]
    on = date(2027, 1, 15) + (now - NOW) // DAY * date.resolution
    for query in (
        temporal.TimelineQuery(entity="ada"),
        temporal.TimelineQuery(entity="ada", nearest=True, clocks=frozenset(ClockRelation)),
        temporal.TimelineQuery(entity="ada", since_us=now - 30 * DAY, until_us=now),
        temporal.TimelineQuery(entity="ada", as_of_us=now - DAY, descending=True),
        temporal.TimelineQuery(kind="meeting", since_us=now - 9 * DAY, until_us=now + DAY),
        temporal.TimelineQuery(entity="ada", group=temporal.TimelineGroup.SOURCE),
    ):
        temporal.timeline(reader, query, scopes, now_us=now, first=2)
    for day in (local_day(on, "Europe/Berlin"), week_of(on, "Europe/Berlin")):
        temporal.chronicle_day(
            reader, day, scopes, on=on, kind=None, include_partial=now % 2 == 0,
            tz="Europe/Berlin", now_us=now, first=5,
        )  # fmt: skip
    temporal.chronicle_since(
        reader, now - 7 * DAY, now, scopes, kind=None, tz="UTC", now_us=now, first=5
    )
    temporal.last_seen(reader, "ada", scopes, bound_us=now, now_us=now, tz="UTC")


def _prepared(reader: temporal.Reader) -> set[str]:
    """The text of the statements the reader's connection holds prepared."""
    return {r[0] for r in reader.run("SELECT sql FROM sqlite_stmt")}


def test_time_queries_prepare_the_same_statements_at_every_now(store: temporal.Store) -> None:
    with store.read() as reader:
        _queries(reader, NOW)
        first = _prepared(reader)
        for step in range(1, 8):
            _queries(reader, NOW + step * (DAY + 3_600_000_001))
        later = _prepared(reader)
    assert later == first, sorted(later - first)[:3]
