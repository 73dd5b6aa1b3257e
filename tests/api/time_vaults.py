"""What the time-query tests share (issue 3's review suite): vault builders, the shared vault.

Plain functions and constants; the fixtures that open apps over these vaults are in
tests/api/conftest.py (`rv`, `extra`) or in the test files that use them.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from starlette.testclient import TestClient

from almanac.api.app import create_app
from almanac.api.settings import Settings
from tests.api.helpers import LocalClient, data

# -- building vaults ------------------------------------------------------------------------


def write_vault(vault: Path, notes: Mapping[str, str]) -> None:
    """One note per item: `name.md` (folders allowed) with `fields` as frontmatter."""
    for name, fields in notes.items():
        path = vault / f"{name}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        body = f"# {name}"
        path.write_text(f"---\n{fields}\n---\n{body}\n")


def app_over(vault: Path, state: Path, config: Path | None = None) -> TestClient:
    settings = Settings.build(vault=vault, state=state, config=config, watch=False)
    return LocalClient(create_app(settings))


def touch(path: Path, text: str) -> None:
    """Rewrite a note and move its mtime on, so that no stat-based scan can miss the edit."""
    old = path.stat().st_mtime if path.exists() else 0.0
    path.write_text(text)
    stamp = max(old + 2, path.stat().st_mtime)
    os.utime(path, (stamp, stamp))


def strip_meta(value: Any) -> Any:
    """A response without what legitimately differs between two apps (freshness, cursors)."""
    if isinstance(value, dict):
        return {
            k: strip_meta(v)
            for k, v in value.items()
            if k not in ("freshness", "snapshot", "endCursor", "revision")
        }
    if isinstance(value, list):
        return [strip_meta(v) for v in value]
    return value


# -- the shared vault -----------------------------------------------------------------------

NOTES = {
    "ada": "type: person\ntitle: Ada",
    # Deadlines on the 15th, asked at 11:00Z on the 15th: Kiritimati (+14) is already on the
    # 16th there, Pago Pago (-11) is at 00:00 on the 15th.
    "due-day": "type: task\nowner: ada\ndue_at: 2026-03-15\nstate: open",
    "due-now": "type: task\nowner: ada\ndue_at: 2026-03-15T11:00:00Z",
    "due-just-before": "type: task\nowner: ada\ndue_at: 2026-03-15T10:59:59Z",
    "due-month": "type: task\nowner: ada\ndue_at: 2026-02\nstate: open",
    "due-cancelled": "type: task\nowner: ada\ndue_at: 2026-01-01\nstate: cancelled",
    # Instants at the edges of Berlin's 15 March (UTC+1).
    "at-midnight": "entities: [ada]\noccurred_at: 2026-03-15T00:00:00+01:00",
    "before-midnight": "entities: [ada]\noccurred_at: 2026-03-14T23:59:59+01:00",
    "next-midnight": "entities: [ada]\noccurred_at: 2026-03-16T00:00:00+01:00",
    # Intervals ending at, or just after, asOf.
    "ends-at-asof": (
        "entities: [ada]\noccurred_at: 2026-03-14T08:00:00Z\nends_at: 2026-03-15T11:00:00Z"
    ),
    "ends-after-asof": (
        "entities: [ada]\noccurred_at: 2026-03-14T08:00:00Z\nends_at: 2026-03-15T11:00:01Z"
    ),
    # A floating three-day conference, 14th to 16th.
    "conference": "entities: [ada]\noccurred_at: 2026-03-14\nends_at: 2026-03-16",
    # Validity edges at asOf.
    "valid-from-asof": (
        "entities: [ada]\noccurred_at: 2026-01-01\nvalid_from: 2026-03-15T11:00:00Z"
    ),
    "valid-until-asof": (
        "entities: [ada]\noccurred_at: 2026-01-02\nvalid_until: 2026-03-15T11:00:00Z"
    ),
    "valid-until-day": "entities: [ada]\noccurred_at: 2026-01-03\nvalid_until: 2026-03-15",
    "valid-from-day": "entities: [ada]\noccurred_at: 2026-01-04\nvalid_from: 2026-03-15",
    # Partial values.
    "month": "entities: [ada]\noccurred_at: 2026-02",
    "year": "entities: [ada]\noccurred_at: 2025",
    "day": "entities: [ada]\noccurred_at: 2026-03-01",
    # Two records at one instant (ties go by id).
    "tie-a": "entities: [ada]\noccurred_at: 2026-03-20T12:00:00Z",
    "tie-b": "entities: [ada]\noccurred_at: 2026-03-20T12:00:00Z",
    # Recurrences.
    "ny-daily": (
        "type: meeting\ntimezone: America/New_York\noccurred_at: 2026-10-30T01:30\n"
        "recurrence: FREQ=DAILY;COUNT=5"
    ),
    "floating-weekly": (
        "type: meeting\nentities: [ada]\noccurred_at: 2026-06-01\nrecurrence: FREQ=WEEKLY;COUNT=4"
    ),
    "bad-rule": (
        "type: meeting\ntimezone: UTC\noccurred_at: 2026-07-01T10:00:00Z\n"
        "recurrence: FREQ=FORTNIGHTLY"
    ),
    "count-exdate": (
        "type: meeting\ntimezone: UTC\noccurred_at: 2026-08-01T10:00:00Z\n"
        "recurrence: FREQ=DAILY;COUNT=3\nexdates: [2026-08-02T10:00:00Z]"
    ),
    "until-utc": (
        "type: meeting\ntimezone: Europe/Berlin\noccurred_at: 2026-08-10T10:00\n"
        "recurrence: FREQ=DAILY;UNTIL=20260812T080000Z"
    ),
    # Superseded chain, and a replacement far from the range.
    "plan-v1": (
        "type: decision\nentities: [ada]\noccurred_at: 2026-03-02\nlifecycle: superseded\n"
        "superseded_by: plan-v2"
    ),
    "plan-v2": "type: decision\noccurred_at: 2026-05-01",
}
AS_OF = "2026-03-15T11:00:00Z"


TL = """query($entity: ID, $field: TimeField, $since: String, $until: String, $order: Order,
  $eligibility: Eligibility, $asOf: String, $kind: String, $tz: String, $first: Int,
  $after: String, $scope: String) {
  timeline(entity: $entity, timeField: $field, since: $since, until: $until, order: $order,
    eligibility: $eligibility, asOf: $asOf, kind: $kind, timezone: $tz, first: $first,
    after: $after, scope: $scope) {
    total asOf timezone localDate clockCounts { clock count }
    entries { record { id } date { text precision start end } occurrence { index start local }
              clock via { id } }
    pageInfo { hasNextPage endCursor }
    meta { degraded coverage { complete } }
  }
}"""

SINCE = """query($since: String!, $until: String, $kind: String, $tz: String, $first: Int,
  $after: String, $scope: String) {
  chronicleSince(since: $since, until: $until, kind: $kind, timezone: $tz, first: $first,
    after: $after, scope: $scope) {
    total localDate clockCounts { clock count }
    entries { record { id } date { text precision start } occurrence { index start local } clock
              via { id } }
    pageInfo { hasNextPage endCursor }
    meta { degraded coverage { complete } }
  }
}"""

DAY = """query($date: String!, $tz: String, $week: Boolean, $partial: Boolean, $kind: String,
  $first: Int, $after: String, $scope: String) {
  chronicleDay(date: $date, timezone: $tz, week: $week, includePartial: $partial, kind: $kind,
    first: $first, after: $after, scope: $scope) {
    total localDate timezone clockCounts { clock count }
    entries { record { id } date { text precision } occurrence { index start local } clock
              via { id } }
    pageInfo { hasNextPage endCursor }
    meta { degraded coverage { complete } }
  }
}"""

OCC = """query($id: ID!, $since: String!, $until: String!, $tz: String, $first: Int) {
  occurrences(id: $id, since: $since, until: $until, timezone: $tz, first: $first) {
    record { id } total occurrences { index start end local } meta { degraded }
  }
}"""

LAST = """query($entity: ID!, $bound: String, $scope: String) {
  chronicleLastSeen(entity: $entity, occurredOnOrBefore: $bound, scope: $scope) {
    entry { record { id } date { text } occurrence { index } } reason
  }
}"""


def tl(client: TestClient, **args: Any) -> dict[str, Any]:
    args.setdefault("first", 100)
    result: dict[str, Any] = data(client, TL, **args)["timeline"]
    return result


def since(client: TestClient, **args: Any) -> dict[str, Any]:
    args.setdefault("first", 100)
    result: dict[str, Any] = data(client, SINCE, **args)["chronicleSince"]
    return result


def day(client: TestClient, **args: Any) -> dict[str, Any]:
    args.setdefault("first", 100)
    result: dict[str, Any] = data(client, DAY, **args)["chronicleDay"]
    return result


def ids(result: dict[str, Any]) -> list[str]:
    return [e["record"]["id"] for e in result["entries"]]


def rows(result: dict[str, Any]) -> list[str]:
    out = []
    for e in result["entries"]:
        occ = e["occurrence"]
        out.append(e["record"]["id"] + (f"#{occ['index']}" if occ else ""))
    return out


def clocks(result: dict[str, Any]) -> dict[str, str]:
    return {e["record"]["id"]: e["clock"] for e in result["entries"]}


# -- more recurrence and replacement corners --------------------------------------------------

EXTRA = {
    "ada": "type: person",
    "gap": (  # 02:30 daily in Berlin: on 29 March 2026 02:30 does not exist
        "type: meeting\ntimezone: Europe/Berlin\noccurred_at: 2026-03-28T02:30\n"
        "recurrence: FREQ=DAILY;COUNT=3"
    ),
    "local-until": (  # a date-only UNTIL includes that whole local date
        "type: meeting\ntimezone: Pacific/Kiritimati\noccurred_at: 2026-05-01T23:00\n"
        "recurrence: FREQ=DAILY;UNTIL=20260503"
    ),
    "day-exdate": (  # a date-only EXDATE removes that local day's instances
        "type: meeting\ntimezone: America/New_York\noccurred_at: 2026-05-04T21:00\n"
        "recurrence: FREQ=DAILY;COUNT=4\nexdates: [2026-05-05]"
    ),
    "overnight": (  # each occurrence runs past local midnight: it is on both days
        "type: meeting\nentities: [ada]\ntimezone: Europe/Berlin\noccurred_at: 2026-06-01T23:00\n"
        "ends_at: 2026-06-02T01:00\nrecurrence: FREQ=WEEKLY;COUNT=2"
    ),
    "until-midnight": "occurred_at: 2026-06-03T20:00:00Z\nends_at: 2026-06-04T00:00:00Z",
    "dec-v1": (
        "type: decision\nentities: [ada]\noccurred_at: 2026-07-01\nlifecycle: superseded\n"
        "superseded_by: dec-v2"
    ),
    "dec-v2": "type: note\noccurred_at: 2026-07-02",  # another type: filtered out by kind
    "orphan": (  # superseded, but by nothing: an ACTIVE query returns nothing for it
        "type: decision\nentities: [ada]\noccurred_at: 2026-07-03\nlifecycle: superseded"
    ),
    "dec-gone-v1": (
        "type: decision\nentities: [ada]\noccurred_at: 2026-07-04\nlifecycle: superseded\n"
        "superseded_by: dec-gone-v2"
    ),
    "dec-gone-v2": "type: decision\noccurred_at: 2026-07-05\nlifecycle: withdrawn",
}
