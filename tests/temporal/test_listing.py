"""Pages of a listing: ordinary rows paged in SQLite, rare rows (stand-ins, superseded records)
merged in Python. Every page must be the same slice of one big page, in either order."""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from almanac import temporal
from almanac.temporal.calendar import ClockRelation, clock_sql, local_date, local_day
from almanac.temporal.queries import Scan, entity_paths, entity_rows, first_standing, listing

NOW = 1_800_000_000_000_000  # 2027-01-15


def vault(root: Path, seed: int) -> None:
    """Meetings about ada (ties on the same day included), `source_event` claims standing for
    some of them, superseded decisions (replaced inside and outside the listing)."""
    rng = random.Random(seed)
    notes = {"ada": "type: person\ntitle: Ada", "undated": "type: note"}
    for i in range(rng.randint(0, 25)):
        day = rng.randint(1, 9)
        notes[f"m{i:02d}"] = f"type: meeting\noccurred_at: 2026-03-0{day}\nentities: [ada]"
        # Claims: one stands for its meeting; the others (a second claim for the same
        # meeting, a claim citing an undated note) stay rows of their own, merged in order.
        for j in range(rng.choice([0, 0, 1, 2, 3])):
            source = f"m{i:02d}" if rng.random() < 0.7 else "undated"
            event = "true" if rng.random() < 0.8 else "false"
            notes[f"c{i:02d}-{j}"] = (
                f"type: claim\nsubject: ada\nsource: {source}\nsource_event: {event}\n"
                f"occurred_at: 2026-03-0{rng.randint(1, 9)}"
            )
    for i in range(rng.randint(0, 6)):
        current = f"d{i}-now"
        day = rng.randint(1, 9)
        notes[current] = f"type: decision\noccurred_at: 2026-04-0{day}\nentities: [ada]"
        if rng.random() < 0.5:  # the current record is itself a direct match, or not
            notes[current] = f"type: decision\noccurred_at: 2026-04-0{day}"
        notes[f"d{i}-old"] = (
            f"type: decision\noccurred_at: 2026-03-0{rng.randint(1, 9)}\nentities: [ada]\n"
            f"lifecycle: superseded\nsuperseded_by: {current}"
        )
    for name, front in notes.items():
        (root / f"{name}.md").write_text(f"---\n{front}\n---\n# {name}\n")


# The latest rows are claims standing for their (earlier) meetings: last-seen reads past them.
LATE_CLAIMS = {
    "ada": "type: person\ntitle: Ada",
    **{f"m{i}": f"type: meeting\noccurred_at: 2026-03-0{i}\nentities: [ada]" for i in (1, 2, 3)},
    **{
        f"c{i}": (
            f"type: claim\nsubject: ada\nsource: m{i}\nsource_event: true\n"
            f"occurred_at: 2026-05-0{i}"
        )
        for i in (1, 2, 3)
    },
}


@pytest.fixture(scope="module")
def states(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[int, temporal.Store]]:
    stores = {}
    for seed in range(8):
        root = tmp_path_factory.mktemp(f"v{seed}")
        vault(root, seed)
        store = temporal.Store.open(root / ".state.db")
        temporal.Reconciler(store, root, temporal.VaultConfig()).reconcile(now_us=NOW)
        stores[seed] = store
    root = tmp_path_factory.mktemp("late")
    for name, front in LATE_CLAIMS.items():
        (root / f"{name}.md").write_text(f"---\n{front}\n---\n# {name}\n")
    stores[-1] = temporal.Store.open(root / ".state.db")
    temporal.Reconciler(stores[-1], root, temporal.VaultConfig()).reconcile(now_us=NOW)
    yield stores
    for store in stores.values():
        store.close()


MID = 1_772_712_000_000_000  # 2026-03-05T12:00:00Z: rows of the 5th are TODAY, others not


def page(
    store: temporal.Store,
    query: temporal.TimelineQuery,
    offset: int,
    first: int,
    now: int = NOW,
) -> temporal.Timeline:
    with store.read() as reader:
        return temporal.timeline(reader, query, ["default"], now_us=now, first=first, offset=offset)


@settings(max_examples=160, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(-1, 7),
    descending=st.booleans(),
    active=st.booleans(),
    entity=st.booleans(),
    offset=st.integers(0, 55),
    first=st.integers(1, 12),
    nearest=st.booleans(),
    clocks=st.none() | st.frozensets(st.sampled_from(list(ClockRelation))),
    now=st.sampled_from([NOW, MID]),
)
def test_every_page_is_a_slice_of_one_big_page(
    states: dict[int, temporal.Store],
    seed: int,
    descending: bool,
    active: bool,
    entity: bool,
    offset: int,
    first: int,
    nearest: bool,
    clocks: frozenset[ClockRelation] | None,
    now: int,
) -> None:
    """Also with a clock filter and NEAREST: the filtered listing is the whole one without the
    rows of other clocks (in the same order), counted whole."""
    query = temporal.TimelineQuery(
        entity="ada" if entity else None,
        descending=descending,
        eligibility=temporal.Eligibility.ACTIVE
        if active
        else temporal.Eligibility.INCLUDE_INACTIVE,
        nearest=nearest,
        clocks=clocks,
    )
    big = page(states[seed], query, 0, 1000, now)
    one = page(states[seed], query, offset, first, now)
    assert one.entries == big.entries[offset : offset + first]
    assert one.total == big.total == len(big.entries)
    assert one.clock_counts == big.clock_counts
    assert one.next_offset == (offset + first if offset + first < big.total else None)
    whole = page(states[seed], replace(query, clocks=None), 0, 1000, now)
    assert sum(n for _, n in whole.clock_counts) == whole.total
    assert big.clock_counts == whole.clock_counts
    kept = [e for e in whole.entries if clocks is None or e.clock in clocks]
    assert big.entries == kept
    if nearest:  # the direct matches by distance, then start; replacements after them
        direct = [e for e in whole.entries if e.via is None]
        keys = [(_distance(e, now), e.date.start_us) for e in direct if e.date is not None]
        assert keys == sorted(keys)
        assert whole.entries[: len(direct)] == direct


def _distance(entry: temporal.TimelineEntry, now: int) -> int:
    assert entry.date is not None
    stop = entry.occurrence.end_us if entry.occurrence else entry.date.end_us
    return max(0, entry.date.start_us - now, now - max(entry.date.start_us, stop - 1))


def test_the_big_page_is_in_date_order_then_replacements(states: dict[int, temporal.Store]) -> None:
    for store in states.values():
        query = temporal.TimelineQuery(entity="ada")
        found = page(store, query, 0, 1000)
        direct = [e for e in found.entries if e.via is None]
        after = [e for e in found.entries if e.via is not None]
        assert found.entries == direct + after
        # A stand-in is listed in its source's place.
        keys = [(e.date.start_us if e.date else 0, (e.source or e.record).id) for e in direct]
        assert all(e.date is not None for e in direct)
        assert keys == sorted(keys)
        assert len({e.record.id for e in after}) == len(after)
        assert not {e.record.id for e in after} & {e.record.id for e in direct}
        # A claim standing for its meeting is not listed on its own as well.
        standing = {e.record.id for e in direct if e.source is not None}
        assert not standing & {e.record.id for e in direct if e.source is None}
        assert dict(found.clock_counts)[ClockRelation.PAST] == len(found.entries)


@pytest.mark.parametrize("batch", [1, 2, 64])
def test_the_latest_row_read_in_batches_is_the_first_of_the_listing(
    states: dict[int, temporal.Store], batch: int
) -> None:
    clock = clock_sql(NOW, local_day(local_date(NOW, "UTC"), "UTC"))
    for store in states.values():
        with store.read() as reader:
            paths = entity_paths(reader, "ada", ["default"])
            scan = Scan(entity_rows(paths, expand=True), ["default"], ["active"])
            whole = listing(
                reader, scan, clock, descending=True, stand_ins=True, active=False, entities=paths
            )
            expected = whole.page(0, 1)
            latest = first_standing(reader, scan, clock, paths, batch=batch)
        assert [latest] == expected if expected else latest is None
    late = states[-1]
    with late.read() as reader:
        found = temporal.last_seen(reader, "ada", ["default"], bound_us=NOW, now_us=NOW, tz="UTC")
    assert found.entry is not None and found.entry.record.id == "c3"
    assert found.entry.source is not None and found.entry.source.id == "m3"
