"""`timeline(group: SOURCE)`: an entity's history as one row per dated source."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import replace
from datetime import date

from almanac.temporal.calendar import (
    ClockRelation,
    DatePrecision,
    DateValue,
    distance,
    local_date,
    utc_date,
    wall_us,
)
from almanac.temporal.queries.listing import anchor_rows
from almanac.temporal.queries.rows import (
    Eligibility,
    Expr,
    Scan,
    Sql,
    Timeline,
    TimelineQuery,
    build_entries,
)
from almanac.temporal.records import RecordKind, RecordRef
from almanac.temporal.store import Reader, Row, marks, note_body, record_details

__all__ = ["by_source"]


def by_source(
    reader: Reader,
    query: TimelineQuery,
    scopes: Sequence[str],
    entities: Sequence[str],
    anchors: Sql,
    as_of: int,
    clock: Expr,
    first: int,
    offset: int,
) -> Timeline:
    """`group: SOURCE`: one row per dated source of the entity's claims and relationships.

    Records that name the entity directly (`entities`, `owner`) are sources of their own, and so
    is a dated record that a relationship relates the entity to: that relationship is the row's
    note (before one whose `source` the record is).
    A claim without a dated source, or dated on another local day than its source, keeps its
    own row; undated claims come last, also under `nearest` (they have no distance to asOf).
    Sources are read at their anchors. `anchors` are those of the paths associated with the
    entity (`timeline.entity_anchors`).
    """
    data = json.dumps(list(entities))
    active = query.eligibility is Eligibility.ACTIVE
    lifecycles = ["active"] if active else ["active", "superseded"]
    # The entity's claims and relationships (a record's kind follows from its type).
    # A relationship's other endpoint, when it is not the entity: the record it relates to.
    evidence = reader.run(
        "SELECT t.path, n.type, n.source_event, s.resolved_path,"
        " (SELECT o.resolved_path FROM targets o WHERE n.type = 'relationship'"
        " AND o.path = t.path AND o.field IN ('from', 'to') AND o.resolved_path IS NOT NULL"
        " AND o.resolved_path NOT IN (SELECT value FROM json_each(?)) ORDER BY o.field LIMIT 1)"
        " FROM targets t"
        " JOIN spans n ON n.path = t.path AND n.idx = -1 AND n.eligible = 1"
        f" AND n.lifecycle IN ({marks(lifecycles)}) AND n.scope IN ({marks(scopes)})"
        " AND n.type IN ('claim', 'relationship')"
        " LEFT JOIN targets s ON s.path = t.path AND s.field = 'source'"
        " WHERE t.resolved_path IN (SELECT value FROM json_each(?))"
        " AND t.field IN ('from', 'to', 'subject') ORDER BY t.path",
        [data, *lifecycles, *scopes, data],
    ).fetchall()
    direct = {
        r[0]
        for r in reader.run(
            "SELECT path FROM targets WHERE resolved_path IN (SELECT value FROM json_each(?))"
            " AND field IN ('entities', 'owner')",
            [data],
        )
    }
    # Every path these name is associated with the entity: read its anchors.
    valid_at = query.as_of_us if active else None
    # The records relationships relate the entity to, read at their anchors too.
    endpoints = {e[4] for e in evidence if e[4] is not None}
    scan = Scan(anchors, scopes, lifecycles, valid_at=valid_at)
    rows = anchor_rows(reader, scan, clock, endpoints)
    by_source = {p: rows[p] for p in sorted(direct) if p in rows and rows[p].value is not None}
    between: dict[str, list[str]] = {}  # relationships between the entity and the source
    notes: dict[str, list[str]] = {}  # relationships whose `source` it is
    events: dict[str, list[str]] = {}
    claims: Counter[str] = Counter()
    own: list[Row] = []
    for path, kind, source_event, source, endpoint in evidence:
        row, src = rows.get(path), rows.get(source) if source else None
        if row is None:
            continue
        end = rows.get(endpoint) if endpoint is not None else None
        if end is not None and end.value is not None and _same_days(row, end, query.tz):
            by_source[end.path] = end
            between.setdefault(end.path, []).append(path)
            continue
        if src is None or src.value is None or not _same_days(row, src, query.tz):
            if kind == "claim" or row.value is not None:
                own.append(row)
            continue
        by_source[src.path] = src
        if kind == "relationship":
            notes.setdefault(src.path, []).append(path)
        else:
            claims[src.path] += 1
            if source_event:
                events.setdefault(src.path, []).append(path)
    listed = [r for r in by_source.values() if _in_range(r, query)]
    listed += [r for r in own if r.value is not None and _in_range(r, query)]
    if query.nearest:
        wall = wall_us(as_of, query.tz)
        listed.sort(key=lambda r: (_distance(r, as_of, wall), *r.key()))
    else:
        listed.sort(key=Row.key, reverse=query.descending)
    listed += sorted((r for r in own if r.value is None), key=lambda r: (r.id, r.scope))
    counts = Counter(r.clock for r in listed)  # every row, before the clock filter
    if query.clocks is not None:
        keep = {c.value for c in query.clocks}
        listed = [r for r in listed if r.clock in keep]
    total = len(listed)
    page = listed[offset : offset + first]
    plain = build_entries(reader, page, query)
    entries = []
    for row, entry in zip(page, plain, strict=True):
        if row.path not in by_source:
            entries.append(entry)
            continue
        candidates = between.get(row.path) or notes.get(row.path, [])
        note = min(candidates, key=lambda p: rows[p].id, default=None)
        event = min(events.get(row.path, []), key=lambda p: rows[p].id, default=None)
        summary = note or event
        entries.append(
            replace(
                entry,
                summary=note_body(reader, summary) if summary else None,
                source=entry.record,
                note=record_details(reader, [note])[note][0] if note else None,
                claims=claims[row.path],
                links=_links(reader, summary) if summary else (),
                sources=(entry.record,) if query.include_sources else (),
            )
        )
    return Timeline(
        entries=entries,
        total=total,
        next_offset=offset + first if offset + first < total else None,
        as_of_us=as_of,
        local_date=local_date(as_of, query.tz),
        clock_counts=tuple((c, counts.get(c.value, 0)) for c in ClockRelation),
        degraded=(),
    )


def _distance(row: Row, as_of: int, wall: int) -> int:
    """`distance` of a dated row (its interval `[start, stop)`) to `asOf`."""
    assert row.value is not None
    floating = row.value.precision is not DatePrecision.INSTANT
    stop = row.stop if row.stop is not None else row.value.end_us
    return distance(row.value.start_us, stop, floating=floating, as_of_us=as_of, wall=wall)


def _same_days(row: Row, source: Row, tz: str) -> bool:
    """Whether a claim dated by itself falls within its source's local dates (undated: yes)."""
    if row.value is None:
        return True
    assert source.value is not None
    first, last = _local_dates(source.value, source.stop or source.value.end_us, tz)
    mine = _local_dates(row.value, row.stop or row.value.end_us, tz)
    return first <= mine[0] and mine[1] <= last


def _local_dates(value: DateValue, stop: int, tz: str) -> tuple[date, date]:
    """The first and last local dates of `[value.start, stop)` (floating dates as written)."""
    last_us = max(stop - 1, value.start_us)
    if value.precision is DatePrecision.INSTANT:
        return local_date(value.start_us, tz), local_date(last_us, tz)
    return utc_date(value.start_us), utc_date(last_us)


def _in_range(row: Row, query: TimelineQuery) -> bool:
    if row.value is None:
        return False
    start, stop = row.value.start_us, row.stop if row.stop is not None else row.value.end_us
    if query.until_us is not None and start > query.until_us:
        return False
    return query.since_us is None or stop > query.since_us or start == stop >= query.since_us


def _links(reader: Reader, path: str) -> tuple[RecordRef, ...]:
    """The body links of `path` that resolve to an eligible record of its own scope."""
    rows = reader.run(
        "SELECT n.id, n.kind, n.type, n.title FROM targets t"
        " JOIN notes o ON o.path = t.path"
        " JOIN notes n ON n.path = t.resolved_path AND n.eligible = 1 AND n.scope = o.scope"
        " WHERE t.path = ? AND t.field = 'link' ORDER BY t.line, t.ord",
        [path],
    )
    out: list[RecordRef] = []
    for rid, kind, rtype, title in rows:
        ref = RecordRef(rid, RecordKind(kind), rtype, title)
        if ref not in out:
            out.append(ref)
    return tuple(out)
