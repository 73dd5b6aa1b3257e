"""The store's reader, called directly on a committed fixture vault (tests/fixtures/vaults/records):
one record, the inventory's filters and pages, counts, issues and compact identities."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from types import MappingProxyType

import pytest

from almanac import temporal
from almanac.temporal import LifecycleFilter, RecordFilter, RecordKind, TimeField
from tests.temporal.helpers import committed

CONFIG = temporal.VaultConfig(scopes=MappingProxyType({"team": "team/"}))
EVERY_SCOPE = ["default", "team"]


def us(year: int, month: int, day: int, hour: int = 0, minute: int = 0) -> int:
    """Microseconds since the epoch of a UTC date and time."""
    return int(datetime(year, month, day, hour, minute, tzinfo=UTC).timestamp()) * 1_000_000


@pytest.fixture
def reader(fixture_vault: Callable[[str], Path], tmp_path: Path) -> Iterator[temporal.Reader]:
    with committed(fixture_vault("records"), tmp_path / "state.db", CONFIG) as reader:
        yield reader


@pytest.mark.parametrize(
    ("record_id", "scopes", "lifecycle"),
    [
        ("decisions/v2", EVERY_SCOPE, "active"),
        ("decisions/v1", EVERY_SCOPE, "superseded"),  # whatever its lifecycle...
        ("decisions/v3", EVERY_SCOPE, None),  # ...but withdrawn
        ("orphan", EVERY_SCOPE, None),  # ineligible: its subject is missing
        ("team/member", ["team"], "active"),
        ("team/member", ["default"], None),  # outside the readable scopes
        ("Decisions/v2", EVERY_SCOPE, None),  # ids are case-sensitive
    ],
)
def test_one_record_is_eligible_and_readable_or_none(
    reader: temporal.Reader, record_id: str, scopes: list[str], lifecycle: str | None
) -> None:
    found = reader.record(record_id, scopes)
    assert (found.lifecycle.value if found else None) == lifecycle


@pytest.mark.parametrize(
    ("flt", "ids"),
    [
        (
            RecordFilter(),
            ["conference", "decisions/v2", "meetings/late", "meetings/standup", "team/member"],
        ),
        (RecordFilter(lifecycle=LifecycleFilter.SUPERSEDED), ["decisions/v1"]),
        (
            RecordFilter(lifecycle=LifecycleFilter.ALL, type="decision"),
            ["decisions/v1", "decisions/v2"],
        ),
        (RecordFilter(type="meeting"), ["meetings/late", "meetings/standup"]),
        (RecordFilter(kind=RecordKind.CLAIM), []),  # the only claim is ineligible
        (RecordFilter(tag="weekly"), ["meetings/standup", "team/member"]),
        (RecordFilter(tag="Weekly"), []),  # tags are exact
        (RecordFilter(scope="team"), ["team/member"]),
        # Bounds are inclusive; a day covers its whole UTC day; an occurrence runs from
        # occurred_at to ends_at (a three-day conference is there on its second day).
        (
            RecordFilter(since_us=us(2024, 3, 1, 23, 30)),
            ["conference", "meetings/late", "meetings/standup"],
        ),
        (RecordFilter(until_us=us(2024, 3, 1)), ["decisions/v2", "meetings/standup"]),
        (RecordFilter(since_us=us(2024, 4, 2), until_us=us(2024, 4, 2)), ["conference"]),
        (RecordFilter(since_us=us(2024, 4, 4)), []),
        (
            RecordFilter(time_field=TimeField.DUE_AT, since_us=us(2000, 1, 1)),
            [],  # nothing is due: no record stands in with another field
        ),
    ],
)
def test_the_inventory_filters_before_it_counts(
    reader: temporal.Reader, flt: RecordFilter, ids: list[str]
) -> None:
    found, total = reader.records(flt, EVERY_SCOPE, first=100, after=None)
    assert [r.id for r in found] == ids
    assert total == len(ids)


def test_the_inventory_pages_by_id_and_scope(reader: temporal.Reader) -> None:
    seen: list[str] = []
    after = None
    while True:
        page, total = reader.records(RecordFilter(), EVERY_SCOPE, first=2, after=after)
        if not page:
            break
        assert len(page) <= 2 and total == 5
        seen += [r.id for r in page]
        after = reader.page_key(page[-1])
    assert seen == sorted(seen) and len(seen) == 5


def test_counts_issues_and_identities_are_of_the_readable_scopes(reader: temporal.Reader) -> None:
    counts = reader.counts(["default"])
    assert counts.records == 5  # superseded records count: they are eligible
    assert [(c.key, c.count) for c in counts.by_type] == [
        ("decision", 2),
        ("event", 1),
        ("meeting", 2),
    ]
    assert [(c.key, c.count) for c in counts.by_kind] == [("page", 5)]
    assert [(i.path, i.field, i.code) for i in reader.issues(EVERY_SCOPE)] == [
        ("orphan.md", "subject", "dangling_reference")
    ]
    assert reader.issue_count(["team"]) == 0
    assert reader.issues(EVERY_SCOPE, limit=0) == []
    assert sorted(reader.refs(["team/member", "decisions/v3", "conference"], ["default"])) == [
        "conference"
    ]
    ref = reader.record_at("meetings/late.md", EVERY_SCOPE)
    assert ref is not None and (ref.id, ref.title) == ("meetings/late", "Late call")
    assert reader.record_at("orphan.md", EVERY_SCOPE) is None
    assert reader.knows_note_file("orphan.md") and not reader.knows_note_file("nothing.md")
