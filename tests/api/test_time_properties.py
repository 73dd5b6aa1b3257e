"""Time queries against SPEC's overlap rule: random vaults against a brute-force filter
(hypothesis, and a soak run of more seeds)."""

from __future__ import annotations

import random
from collections.abc import Iterator, Mapping
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from starlette.testclient import TestClient

from tests.api.helpers import data
from tests.api.time_vaults import (
    DAY,
    OCC,
    SINCE,
    TL,
    app_over,
    ids,
    rows,
    write_vault,
)

# -- properties: brute force against SPEC's overlap rule --------------------------------------

_UTC = UTC
_OFFSETS = ["Z", "+14:00", "-11:00", "+01:00", "+05:45", "-03:30"]
_ZONES = ["UTC", "Pacific/Kiritimati", "Pacific/Pago_Pago", "Europe/Berlin", "America/New_York",
          "Asia/Kathmandu", "Australia/Lord_Howe"]  # fmt: skip
_W0 = datetime(2026, 3, 1, tzinfo=_UTC)


def _us(moment: datetime) -> int:
    return (moment - datetime(1970, 1, 1, tzinfo=_UTC)) // timedelta(microseconds=1)


def _random_vault(seed: int, count: int) -> tuple[dict[str, str], dict[str, tuple[str, int, int]]]:
    """Dated notes around March 2026 and each one's (precision, start, stop) in microseconds."""
    rng = random.Random(seed)
    notes: dict[str, str] = {}
    truth: dict[str, tuple[str, int, int]] = {}
    for n in range(count):
        name = f"n{n:03d}"
        shape = rng.choice(["instant", "instant", "instant", "day", "day", "month", "year"])
        if shape == "instant":
            start = _W0 + timedelta(minutes=rng.randrange(-20 * 1440, 40 * 1440))
            if rng.random() < 0.3:
                start = start.replace(minute=0)  # many at whole hours: local midnights
            offset = rng.choice(_OFFSETS)
            sign = 1 if offset[0] == "+" else -1
            delta = (
                timedelta(hours=int(offset[1:3]), minutes=int(offset[4:6]))
                if offset != "Z"
                else timedelta()
            )
            local = (start + sign * delta).replace(tzinfo=None).isoformat(timespec="seconds")
            fields = f"occurred_at: {local}{offset}"
            stop = start
            if rng.random() < 0.4:
                stop = start + timedelta(minutes=rng.choice([0, 1, 59, 600, 1440, 4000]))
                fields += f"\nends_at: {stop.isoformat(timespec='seconds').replace('+00:00', 'Z')}"
            truth[name] = ("instant", _us(start), _us(stop))
        elif shape == "day":
            first = _W0.date() + timedelta(days=rng.randrange(-20, 40))
            last = first + timedelta(days=rng.choice([0, 0, 1, 3]))
            fields = f"occurred_at: {first.isoformat()}"
            if last != first or rng.random() < 0.2:
                fields += f"\nends_at: {last.isoformat()}"
            start = datetime.combine(first, datetime.min.time(), _UTC)
            stop = datetime.combine(last + timedelta(days=1), datetime.min.time(), _UTC)
            truth[name] = ("day", _us(start), _us(stop))
        elif shape == "month":
            month = rng.choice([2, 3, 4])
            fields = f"occurred_at: 2026-{month:02d}"
            start = datetime(2026, month, 1, tzinfo=_UTC)
            truth[name] = ("month", _us(start), _us(datetime(2026, month + 1, 1, tzinfo=_UTC)))
        else:
            year = rng.choice([2025, 2026])
            fields = f"occurred_at: {year}"
            start = datetime(year, 1, 1, tzinfo=_UTC)
            truth[name] = ("year", _us(start), _us(datetime(year + 1, 1, 1, tzinfo=_UTC)))
        notes[name] = fields
    return notes, truth


PROPERTY_NOTES, TRUTH = _random_vault(seed=20261129, count=70)
# Recurring records (ids `r-…`): their rows must be what `occurrences` expands on the fly.
PROPERTY_NOTES |= {
    "r-ny": (  # 23:30-00:30 in New York, across the change to summer time on 8 March
        "timezone: America/New_York\noccurred_at: 2026-02-25T23:30\n"
        "ends_at: 2026-02-26T00:30\nrecurrence: FREQ=WEEKLY;BYDAY=WE,SA;COUNT=16"
    ),
    "r-float": (
        "occurred_at: 2026-02-27\nrecurrence: FREQ=WEEKLY;INTERVAL=2;COUNT=6\nexdates: [2026-03-13]"
    ),
    "r-kiri": (
        "timezone: Pacific/Kiritimati\noccurred_at: 2026-03-01T00:00\n"
        "recurrence: FREQ=MONTHLY;BYMONTHDAY=1,15;COUNT=6\nrdates: [2026-03-20T12:00]"
    ),
}


def _plain(result: dict[str, Any]) -> list[str]:
    return [i for i in ids(result) if not i.startswith("r-")]


@pytest.fixture(scope="module")
def randomized(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    folder = tmp_path_factory.mktemp("random")
    write_vault(folder / "vault", PROPERTY_NOTES)
    with app_over(folder / "vault", folder / "state.db") as client:
        yield client


def _overlaps(start: int, stop: int, lo: int, hi: int) -> bool:
    """SPEC: overlap with the inclusive range [lo, hi]; an instant matches itself."""
    return start <= hi and (stop > lo or stop == start >= lo)


def _expected_range(
    lo: int, hi: int, truth: Mapping[str, tuple[str, int, int]] = TRUTH
) -> list[str]:
    hits = [(s, name) for name, (_, s, e) in truth.items() if _overlaps(s, e, lo, hi)]
    return [name for _, name in sorted(hits)]


def _expected_day(
    first: date,
    days: int,
    tz: str,
    partial: bool,
    truth: Mapping[str, tuple[str, int, int]] = TRUTH,
) -> list[str]:
    zone = ZoneInfo(tz)
    lo = _us(datetime.combine(first, datetime.min.time(), zone))
    hi = _us(datetime.combine(first + timedelta(days=days), datetime.min.time(), zone))
    flo = _us(datetime.combine(first, datetime.min.time(), _UTC))
    fhi = flo + days * 86_400_000_000
    hits = []
    for name, (precision, s, e) in truth.items():
        if precision == "instant":
            ok = s < hi and (e > lo or e == s >= lo)
        else:
            ok = (precision == "day" or partial) and s < fhi and e > flo
        if ok:
            hits.append((s, name))
    return [name for _, name in sorted(hits)]


def _all(client: TestClient, query: str, name: str, **args: Any) -> dict[str, Any]:
    result: dict[str, Any] = data(client, query, first=100, **args)[name]
    assert result["total"] == len(result["entries"]), "raise `first` or shrink the vault"
    return result


_moments = st.integers(min_value=-25 * 1440, max_value=45 * 1440).map(
    lambda m: _W0 + timedelta(minutes=m)
)


def _bound_text(moment: datetime, as_date: bool) -> str:
    return moment.date().isoformat() if as_date else moment.strftime("%Y-%m-%dT%H:%M:%SZ")


@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    a=_moments, b=_moments, date_a=st.booleans(), date_b=st.booleans(), tz=st.sampled_from(_ZONES)
)
def test_chronicle_since_equals_a_brute_force_overlap_filter(
    randomized: TestClient, a: datetime, b: datetime, date_a: bool, date_b: bool, tz: str
) -> None:
    a, b = min(a, b), max(a, b)
    lo_text, hi_text = _bound_text(a, date_a), _bound_text(b, date_b)
    lo = _us(datetime.fromisoformat(lo_text.replace("Z", "+00:00")).replace(tzinfo=_UTC))
    hi = _us(datetime.fromisoformat(hi_text.replace("Z", "+00:00")).replace(tzinfo=_UTC))
    if date_b:
        hi += 86_400_000_000 - 1  # a date-only upper bound includes its whole UTC day
    if lo > hi:
        return
    expected = _expected_range(lo, hi)
    # Ranges compare in UTC: the timezone changes clocks, never which rows match.
    got = _all(randomized, SINCE, "chronicleSince", since=lo_text, until=hi_text, tz=tz)
    assert _plain(got) == expected
    assert ids(_all(randomized, TL, "timeline", since=lo_text, until=hi_text, tz=tz)) == ids(got)
    # Materialised occurrences (spans) agree with the on-the-fly expansion.
    for rid in ("r-ny", "r-float", "r-kiri"):
        mine = [e["occurrence"]["index"] for e in got["entries"] if e["record"]["id"] == rid]
        fly = data(randomized, OCC, id=rid, since=lo_text, until=hi_text)["occurrences"]
        assert mine == [o["index"] for o in fly["occurrences"]], rid
    keys = [
        (e["date"]["start"], e["record"]["id"], (e["occurrence"] or {}).get("index", -1))
        for e in got["entries"]
    ]
    assert keys == sorted(keys)


@settings(
    max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    offset=st.integers(min_value=-22, max_value=42),
    tz=st.sampled_from(_ZONES),
    partial=st.booleans(),
)
def test_chronicle_day_and_week_equal_brute_force_and_the_union_of_days(
    randomized: TestClient, offset: int, tz: str, partial: bool
) -> None:
    asked = _W0.date() + timedelta(days=offset)
    one = _all(randomized, DAY, "chronicleDay", date=asked.isoformat(), tz=tz, partial=partial)
    assert _plain(one) == _expected_day(asked, 1, tz, partial)
    assert one["localDate"] == asked.isoformat()
    monday = asked - timedelta(days=asked.weekday())
    week = _all(
        randomized, DAY, "chronicleDay", date=asked.isoformat(), tz=tz, partial=partial, week=True
    )
    assert _plain(week) == _expected_day(monday, 7, tz, partial)
    union: set[str] = set()
    for n in range(7):
        d = (monday + timedelta(days=n)).isoformat()
        union |= set(rows(_all(randomized, DAY, "chronicleDay", date=d, tz=tz, partial=partial)))
    assert set(rows(week)) == union and len(rows(week)) == len(union)


@pytest.mark.soak
@pytest.mark.parametrize("seed", range(8))
def test_soak_random_vaults_against_brute_force(tmp_path: Path, seed: int) -> None:
    notes, truth = _random_vault(seed=seed, count=90)
    write_vault(tmp_path / "vault", notes)
    rng = random.Random(seed)
    with app_over(tmp_path / "vault", tmp_path / "state.db") as client:
        for _ in range(150):
            a, b = sorted(
                _W0 + timedelta(minutes=rng.randrange(-25 * 1440, 45 * 1440)) for _ in "ab"
            )
            lo_text = _bound_text(a, rng.random() < 0.5)
            date_b = rng.random() < 0.5
            hi_text = _bound_text(b, date_b)
            lo = _us(datetime.fromisoformat(lo_text.replace("Z", "+00:00")).replace(tzinfo=_UTC))
            hi = _us(datetime.fromisoformat(hi_text.replace("Z", "+00:00")).replace(tzinfo=_UTC))
            hi += 86_400_000_000 - 1 if date_b else 0
            if lo <= hi:
                found = data(client, SINCE, since=lo_text, until=hi_text, first=100)
                expected = _expected_range(lo, hi, truth)
                if len(expected) <= 100:
                    assert ids(found["chronicleSince"]) == expected, (lo_text, hi_text)
            asked = _W0.date() + timedelta(days=rng.randrange(-22, 42))
            tz, partial = rng.choice(_ZONES), rng.random() < 0.5
            got = data(client, DAY, date=asked.isoformat(), tz=tz, partial=partial, first=100)
            expected = _expected_day(asked, 1, tz, partial, truth)
            assert ids(got["chronicleDay"]) == expected, (asked, tz, partial)
