"""The rows a time query reads: a `spans` row (`Row`) and its value, and a page's records.

The queries write the SQL (temporal/queries); these read its rows and the records of a page
(identity, locator, sources, body), so that a query goes down to the store and comes back
with rows, never through a query module twice.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from almanac.temporal.calendar import DatePrecision, DateValue, Occurrence
from almanac.temporal.records import Locator, RecordKind, RecordRef, TimeField
from almanac.temporal.store.reader import Reader

__all__ = ["Row", "note_body", "read_rows", "record_details", "record_sources", "show_values"]

PRECISIONS = {p.value: p for p in DatePrecision}


@dataclass(slots=True)
class Row:
    """One row of a result: its place, its record, its clock relation; its value once shown.

    A hub's timeline holds thousands of rows, of which one page is shown: rows are made from
    the few columns that order, count and filter them, and `show_values` reads the rest for a page.
    """

    path: str
    idx: int
    start: int | None
    id: str
    scope: str
    lifecycle: str
    source_event: int
    recurring: int
    more: int
    clock: str  # a ClockRelation value: strings hash and count faster than members
    value: DateValue | None = None
    stop: int | None = None
    via: Row | None = None
    standing: Row | None = None  # a source_event claim shown in this row's place

    def key(self) -> tuple[int, str, int, str]:
        return (self.start or 0, self.id, self.idx, self.scope)

    def occurrence(self) -> Occurrence | None:
        if self.idx < 0 or self.value is None or self.stop is None:
            return None
        floating = self.value.precision is not DatePrecision.INSTANT
        return Occurrence(self.idx, self.value.start_us, self.stop, self.value.text, floating)


def read_rows(reader: Reader, sql: str, params: Sequence[object]) -> list[Row]:
    """The rows of `sql`, whose columns are a row's ten (`queries.rows.ROW` and the clock),
    then `vend, stop, text, precision`: each row with its value."""
    rows = []
    for r in reader.run(sql, params):
        row = Row(*r[:10])
        if r[2] is not None:
            row.value = DateValue(r[12], PRECISIONS[r[13]], r[2], r[10])
            row.stop = r[11]
        rows.append(row)
    return rows


def show_values(reader: Reader, field: TimeField, rows: Sequence[Row]) -> None:
    """Read the values of `rows` (a page's worth): `spans` rows, or the `dates` of the field."""
    wanted = [r for r in rows if r.value is None and r.start is not None]
    if not wanted:
        return
    keys = json.dumps([[r.path, r.idx] for r in wanted])
    if field is TimeField.OCCURRED_AT:
        sql = (
            "SELECT s.path, s.idx, s.vend, s.stop, s.text, s.precision FROM json_each(?) k"
            " JOIN spans s ON s.path = k.value ->> 0 AND s.idx = k.value ->> 1"
        )
        params: list[object] = [keys]
    else:
        sql = (
            'SELECT d.path, -1, d."end", d."end", d.text, d.precision FROM json_each(?) k'
            " JOIN dates d ON d.path = k.value ->> 0 AND d.field = ?"
        )
        params = [keys, field.value]
    found = {(r[0], r[1]): r[2:] for r in reader.run(sql, params)}
    for row in wanted:
        vend, stop, text, precision = found[(row.path, row.idx)]
        assert row.start is not None
        row.value = DateValue(text, PRECISIONS[precision], row.start, vend)
        row.stop = stop


def record_details(reader: Reader, paths: Iterable[str]) -> dict[str, tuple[RecordRef, Locator]]:
    """Identity and locator of each note (a page's worth)."""
    out = {}
    for path, rid, kind, rtype, title, line_count, revision in reader.run(
        "SELECT path, id, kind, type, title, line_count, revision FROM notes"
        " WHERE path IN (SELECT value FROM json_each(?))",
        [json.dumps(sorted(set(paths)))],
    ):
        out[path] = (
            RecordRef(rid, RecordKind(kind), rtype, title),
            Locator(path, 1, line_count, revision),
        )
    return out


def record_sources(reader: Reader, paths: Iterable[str]) -> dict[str, tuple[RecordRef, ...]]:
    """The resolved, eligible `source` of each note."""
    found: dict[str, list[RecordRef]] = {}
    # CROSS JOIN keeps the page's paths first: left to the planner, it once read every
    # eligible note and probed its targets (~300 ms at 100,000 notes).
    sql = (
        "SELECT t.path, n.id, n.kind, n.type, n.title FROM json_each(?) k"
        " CROSS JOIN targets t ON t.path = k.value AND t.field = 'source'"
        " JOIN notes n ON n.path = t.resolved_path AND n.eligible = 1"
        " ORDER BY t.path, n.id"
    )
    for path, rid, kind, rtype, title in reader.run(sql, [json.dumps(sorted(set(paths)))]):
        ref = RecordRef(rid, RecordKind(kind), rtype, title)
        if ref not in found.setdefault(path, []):
            found[path].append(ref)
    return {p: tuple(refs) for p, refs in found.items()}


def note_body(reader: Reader, path: str) -> str | None:
    row = reader.run("SELECT body FROM notes WHERE path = ?", [path]).fetchone()
    return row[0].strip() if row else None
