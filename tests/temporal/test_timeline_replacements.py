"""A timeline's listing of superseded matches, called directly (`temporal.timeline`) on
tests/fixtures/vaults/supersession: in an ACTIVE query each superseded match of `ada` gives way
to the current record at the end of its chain, listed after the direct matches, once, with the
match it came `via`; a chain that reaches a missing, withdrawn, undated or filtered-out (`kind`)
record, or loops, gives nothing (SPEC section 3). d3 ends withdrawn, d4 missing, d6 loops and
d7 is undated: none of them is replaced. d10's chain runs through a memo."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from almanac import temporal
from almanac.temporal import Eligibility, TimelineQuery
from tests.temporal.helpers import NOW, committed

APRIL = 1_711_929_600_000_000  # 2024-04-01T00:00:00Z


@pytest.fixture
def reader(fixture_vault: Callable[[str], Path], tmp_path: Path) -> Iterator[temporal.Reader]:
    with committed(fixture_vault("supersession"), tmp_path / "state.db") as reader:
        yield reader


def listed(
    reader: temporal.Reader, query: TimelineQuery, first: int = 100, offset: int = 0
) -> tuple[list[tuple[str, str | None]], int]:
    found = temporal.timeline(reader, query, ["default"], now_us=NOW, first=first, offset=offset)
    return [(e.record.id, e.via.id if e.via else None) for e in found.entries], found.total


@pytest.mark.parametrize(
    ("query", "entries"),
    [
        pytest.param(
            TimelineQuery(entity="ada"),
            [
                ("d5-new", None),  # a direct match, so not again as d5-old's replacement
                ("d1-new", "d1-old"),  # the first of two superseded matches it replaces
                ("d2-new", "d2-old"),  # through a superseded record
                ("d9-new", "d9-old"),
                ("d10-new", "d10-old"),  # through a memo
            ],
            id="active",
        ),
        pytest.param(
            TimelineQuery(entity="ada", descending=True),
            [
                ("d5-new", None),
                ("d10-new", "d10-old"),
                ("d9-new", "d9-old"),
                ("d1-new", "d8-old"),
                ("d2-new", "d2-old"),
            ],
            id="active-descending",
        ),
        pytest.param(
            TimelineQuery(entity="ada", kind="decision"),
            # d9-new is a memo, and d10-new is reached through one.
            [("d5-new", None), ("d1-new", "d1-old"), ("d2-new", "d2-old")],
            id="kind-filters-the-replacement",
        ),
        pytest.param(
            TimelineQuery(entity="ada", until_us=APRIL - 1),
            # The current record is the current record, whenever it is dated (README).
            [
                ("d1-new", "d1-old"),
                ("d2-new", "d2-old"),
                ("d5-new", "d5-old"),
                ("d9-new", "d9-old"),
                ("d10-new", "d10-old"),
            ],
            id="a-replacement-outside-the-range-is-still-current",
        ),
        pytest.param(
            TimelineQuery(entity="ada", since_us=APRIL),
            [("d5-new", None)],  # superseded matches of March are no matches
            id="range-filters-the-match",
        ),
        pytest.param(
            TimelineQuery(entity="ada", eligibility=Eligibility.INCLUDE_INACTIVE),
            [
                *((f"d{i}-old", None) for i in range(1, 6)),
                ("d6-a", None),
                *((f"d{i}-old", None) for i in range(7, 11)),
                ("d5-new", None),
            ],
            id="include-inactive-lists-them-as-they-are",
        ),
    ],
)
def test_superseded_matches_give_way_to_their_current_records(
    reader: temporal.Reader, query: TimelineQuery, entries: list[tuple[str, str | None]]
) -> None:
    assert listed(reader, query) == (entries, len(entries))


@pytest.mark.parametrize("offset", range(6))
def test_replacements_page_after_the_direct_matches(reader: temporal.Reader, offset: int) -> None:
    whole, total = listed(reader, TimelineQuery(entity="ada"))
    assert listed(reader, TimelineQuery(entity="ada"), first=2, offset=offset) == (
        whole[offset : offset + 2],
        total,
    )


@pytest.mark.parametrize(
    ("path", "chain"),
    [
        ("d1-old.md", [("d1-new.md", "active")]),
        ("d2-old.md", [("d2-mid.md", "superseded"), ("d2-new.md", "active")]),
        ("d3-old.md", []),  # withdrawn: no target of a reference
        ("d4-old.md", []),  # missing
        ("d6-a.md", [("d6-b.md", "superseded")]),  # the loop back to d6-a ends it
        ("d6-b.md", [("d6-a.md", "superseded")]),
        ("d10-old.md", [("d10-mid.md", "superseded"), ("d10-new.md", "active")]),
        ("d1-new.md", []),
    ],
)
def test_the_reader_follows_a_chain_each_record_once(
    reader: temporal.Reader, path: str, chain: list[tuple[str, str]]
) -> None:
    steps = list(reader.chain(path))
    assert [(s.path, s.lifecycle) for s in steps] == chain
    assert all(s.eligible for s in steps)
