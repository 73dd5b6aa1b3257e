"""The direct matches of a time query, in order, and the rows that take another row's place.

A hub's timeline matches thousands of rows, of which one page is shown. Most rows are
*ordinary* (active, nothing stands in for them or in their place): they stay in SQLite, which
counts them by clock relation and reads one page of them. The *rare* rest is read whole and
settled in Python: `source_event` claims, which stand for their source meeting (SPEC
"Timeline") and leave the list when they do, and, in an `ACTIVE` query, superseded records,
which give way to their current records listed after the direct matches (SPEC section 3).

A query calls here once (`listing_page`, `latest`, `anchor_rows`): the candidates' filters and
the statements over them (`select`, `anchor_sql`) are written here and run by the store, and
the page comes back with its values and stand-ins.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass, field, replace

from almanac.temporal.queries.rows import (
    BY_DATE,
    CLOCK,
    DISTANCE,
    LIFECYCLE,
    MORE,
    PATH,
    RECURRING,
    ROW,
    SOURCE_EVENT,
    VALID_AT,
    Expr,
    Raw,
    Scan,
    Sql,
)
from almanac.temporal.records import TimeField
from almanac.temporal.store import SPANS, Reader, Row, marks, read_rows, show_values

__all__ = [
    "Listing",
    "Page",
    "anchor_rows",
    "first_standing",
    "latest",
    "listing",
    "listing_page",
    "stand_in",
]


def _expr(expr: Expr | str) -> Expr:
    """`expr`, or SQL text without placeholders (`clock_sql`, say) as one."""
    return expr if isinstance(expr, Expr) else Expr(expr)


def select(scan: Scan, columns: Expr | str) -> tuple[str, list[object]]:
    """`SELECT {columns}` over the candidates (alias `c`) of `scan` that pass its filters."""
    chosen = _expr(columns)
    where = [
        "c.eligible = 1",
        f"c.scope IN ({marks(scan.scopes)})",
        f"c.lifecycle IN ({marks(scan.lifecycles)})",
    ]
    params = [*chosen.params, *scan.candidates.params, *scan.scopes, *scan.lifecycles]
    if scan.kind is not None:
        where.append("c.type = ?")
        params.append(scan.kind)
    if scan.valid_at is not None:
        where.append(VALID_AT)
        params += [scan.valid_at, scan.valid_at]
    sql = f"SELECT {chosen.sql} FROM ({scan.candidates.sql}) c WHERE {' AND '.join(where)}"
    return sql, params


def anchor_sql(paths: Iterable[str], field: TimeField = TimeField.OCCURRED_AT) -> Sql:
    """The anchor row of each path, valued by `field` (NULL start when it has none)."""
    wanted = json.dumps(sorted(set(paths)))
    if field is TimeField.OCCURRED_AT:
        sql = f"SELECT {SPANS} FROM spans WHERE path IN (SELECT value FROM json_each(?))"
        return Sql(sql + " AND idx = -1", [wanted])
    return Sql(
        f"{BY_DATE} FROM spans a LEFT JOIN dates d ON d.path = a.path AND d.field = ?"
        " WHERE a.path IN (SELECT value FROM json_each(?)) AND a.idx = -1",
        [field.value, wanted],
        field,
    )


def fetch_rows(reader: Reader, scan: Scan, clock: Expr) -> list[Row]:
    """Every row of a (small) scan, ordered, with its value."""
    columns = f"{ROW}, {clock.sql}, c.vend, c.stop, c.text, c.precision"
    sql, params = select(scan, Expr(columns, clock.params))
    return read_rows(reader, sql + " ORDER BY c.start, c.id, c.idx, c.scope", params)


# An ordinary row in the order of every listing; keys compare as SQLite orders them.
ORDER = "c.start {0}, c.id {0}, c.idx {0}, c.scope {0}"


def _key(row: Raw) -> tuple[int, str, int, str]:
    return (row[2], row[3], row[1], row[4])  # start, id, idx, scope (temporal.rows.ROW)


def _nearest_key(row: Raw) -> tuple[int, int, str, int, str]:
    return (row[DISTANCE], *_key(row))


@dataclass(slots=True)
class Listing:
    """The direct matches of a scan (ordinary rows in SQLite, rare ones here) and after them
    the replacements of superseded matches."""

    reader: Reader
    scan: Scan
    clock: Expr
    descending: bool
    ordinary: str  # the SQL condition of an ordinary row
    rare: list[Raw]  # the rare direct matches, ordered
    after: list[Row]
    ordinary_count: int = 0  # ordinary rows shown (of a clock kept)
    counts: Counter[str] = field(default_factory=Counter)  # every row, shown or not
    shown: Expr = Expr("1")  # the SQL condition of a row of a clock kept
    nearness: Expr | None = None  # NEAREST: the SQL distance that orders rows first
    recurring: bool = False  # a direct match is recurring
    more: bool = False  # a direct match goes on past its materialised occurrences

    @property
    def key(self) -> Callable[[Raw], tuple[object, ...]]:
        """The order of raw rows (their distance to asOf first, for NEAREST)."""
        return _nearest_key if self.nearness is not None else _key

    @property
    def columns(self) -> Expr:
        """What a raw row holds: `ROW`, the clock, and for NEAREST the distance."""
        near = self.nearness
        if near is None:
            return Expr(f"{ROW}, {self.clock.sql}", self.clock.params)
        return Expr(f"{ROW}, {self.clock.sql}, {near.sql}", (*self.clock.params, *near.params))

    @property
    def direct(self) -> int:
        return self.ordinary_count + len(self.rare)

    @property
    def total(self) -> int:
        return self.direct + len(self.after)

    def page(self, offset: int, first: int) -> list[Row]:
        """Rows `offset` to `offset + first` of the direct matches, then the replacements."""
        rows = [Row(*r[:DISTANCE]) for r in self._direct(offset, first)]
        start = max(0, offset - self.direct)
        return rows + self.after[start : start + first - len(rows)]

    def _direct(self, offset: int, first: int) -> list[Raw]:
        n, rare = self.ordinary_count, self.rare
        if not rare:
            return self._ordinary(offset, first)
        # An ordinary row's place is its rank among the ordinary rows plus the rare rows before
        # it, so ordinary rows [lo, hi) and the rare rows among them cover the page.
        lo, hi = max(0, offset - len(rare)), min(n, offset + first)
        if lo >= hi:  # no ordinary row is on the page
            return rare[offset - n : offset - n + first]
        window = self._ordinary(lo, hi - lo)
        # The rare rows are ordered too: those before the window, among it, and after it.
        key = self.key
        head, last = key(window[0]), key(window[-1])
        if self.descending:
            i = sum(1 for r in rare if key(r) > head)
            j = len(rare) - sum(1 for r in rare if key(r) < last)
        else:
            i = sum(1 for r in rare if key(r) < head)
            j = len(rare) - sum(1 for r in rare if key(r) > last)
        ahead, inside, beyond = rare[:i], rare[i:j], rare[j:]
        merged = sorted(window + inside, key=key, reverse=self.descending)
        if hi == n:  # the last ordinary rows: every rare row after them follows
            merged += beyond
        base = lo + len(ahead) if lo else 0
        if not lo:
            merged = ahead + merged
        return merged[offset - base : offset - base + first]

    def _ordinary(self, offset: int, first: int) -> list[Raw]:
        sql, params = select(self.scan, self.columns)
        way = "DESC" if self.descending else "ASC"
        order = ORDER.format(way)
        near = self.nearness or Expr("")
        if near.sql:
            order = f"{near.sql}, {order}"
        sql += f" AND {self.ordinary} AND {self.shown.sql} ORDER BY {order} LIMIT ? OFFSET ?"
        params += [*self.shown.params, *near.params, first, offset]
        return self.reader.run(sql, params).fetchall()


def listing(
    reader: Reader,
    scan: Scan,
    clock: Expr | str,
    *,
    descending: bool = False,
    stand_ins: bool,
    active: bool,
    entities: Sequence[str] = (),
    field: TimeField = TimeField.OCCURRED_AT,
    keep: Collection[str] | None = None,
    nearness: Expr | None = None,
) -> Listing:
    """The matches of `scan`: `stand_ins` lets `source_event` claims stand for their sources,
    `active` replaces superseded matches by their current records (`entities` and `field` are
    the query's, for both).

    Args:
        keep: Clock relation values: only rows of these are listed, while `counts` counts
            every row (the rows are those of the whole listing, filtered afterwards).
        nearness: The SQL distance of a row to asOf (`distance_sql`): rows are ordered by it
            first (NEAREST), `descending` being False.
    """
    rare_sql = " OR ".join(
        (["c.source_event = 1"] if stand_ins else [])
        + (["c.lifecycle <> 'active'"] if active else [])
    )
    clock = _expr(clock)
    found = Listing(reader, scan, clock, descending, f"NOT ({rare_sql or 0})", [], [])
    found.nearness = nearness
    if keep is not None:
        kept = sorted(set(keep))
        found.shown = Expr(f"({clock.sql}) IN ({marks(kept)})", (*clock.params, *kept))
    sql, params = select(
        scan,
        Expr(
            f"{clock.sql} AS k, {found.ordinary} AS o, count(*), max(c.recurring), max(c.more)",
            clock.params,
        ),
    )
    rare = 0
    for clock_value, ordinary, count, recurring, more in reader.run(f"{sql} GROUP BY k, o", params):
        if not ordinary:
            rare += count
            continue
        found.counts[clock_value] += count
        if keep is None or clock_value in keep:
            found.ordinary_count += count
        found.recurring |= bool(recurring)
        found.more |= bool(more)
    if rare:
        # Few: read whole (by the table's own order, not an index and a probe per row), sorted here.
        sql, params = select(scan, found.columns)
        found.rare = sorted(
            reader.run(f"{sql} AND NOT {found.ordinary}", params),
            key=found.key,
            reverse=descending,
        )
    if stand_ins:
        found.rare = _drop_standing(reader, found.rare, scan, entities)
    if active:
        superseded = [Row(*r[:DISTANCE]) for r in found.rare if r[LIFECYCLE] != "active"]
        found.rare = [r for r in found.rare if r[LIFECYCLE] == "active"]
        found.after = _replacements(reader, superseded, found, field)
    found.counts.update(r[CLOCK] for r in found.rare)
    found.counts.update(r.clock for r in found.after)
    found.recurring |= any(r[RECURRING] for r in found.rare)
    found.more |= any(r[MORE] for r in found.rare)
    if keep is not None:  # counted above: now only what is shown
        found.rare = [r for r in found.rare if r[CLOCK] in keep]
        found.after = [r for r in found.after if r.clock in keep]
    return found


def first_standing(
    reader: Reader, scan: Scan, clock: Expr | str, entities: Sequence[str], *, batch: int = 64
) -> Row | None:
    """The latest row of `scan` that stays in a listing (not a claim standing for its source),
    read from the latest on, a batch at a time, without counting the rest."""
    clock = _expr(clock)
    sql, params = select(scan, Expr(f"{ROW}, {clock.sql}", clock.params))
    sql += f" ORDER BY {ORDER.format('DESC')} LIMIT ? OFFSET ?"
    offset = 0
    while True:
        rows = reader.run(sql, [*params, batch, offset]).fetchall()
        kept = _drop_standing(reader, rows, scan, entities)
        if kept or len(rows) < batch:
            return Row(*kept[0]) if kept else None
        offset += batch


def _present(reader: Reader, scan: Scan, paths: Iterable[str], where: str = "1") -> set[str]:
    """Which of `paths` have a row in the scan (passing `where`)."""
    sql, params = select(scan, "c.path")
    sql += f" AND {where} AND c.path IN (SELECT value FROM json_each(?))"
    return {r[0] for r in reader.run(sql, [*params, json.dumps(sorted(set(paths)))])}


def _drop_standing(
    reader: Reader, rows: list[Raw], scan: Scan, entities: Sequence[str]
) -> list[Raw]:
    """Rows without the `source_event` claims that stand for a source in the result."""
    claims = [r[PATH] for r in rows if r[SOURCE_EVENT]]
    if not claims:
        return rows
    sources = {
        r[0]
        for r in reader.run(
            "SELECT resolved_path FROM targets WHERE field = 'source'"
            " AND path IN (SELECT value FROM json_each(?))",
            [json.dumps(claims)],
        )
        if r[0] is not None
    }
    found = _present(reader, scan, sources)
    gone = set(_chosen(reader, found, scan.scopes, entities, scan.valid_at).values())
    return [r for r in rows if r[PATH] not in gone] if gone else rows


def stand_in(
    reader: Reader,
    page: Sequence[Row],
    scopes: Sequence[str],
    entities: Sequence[str],
    valid_at: int | None,
    clock: Expr,
) -> None:
    """Let `source_event` claims stand for the source meetings of a page (SPEC "Timeline")."""
    chosen = _chosen(reader, {r.path for r in page}, scopes, entities, valid_at)
    if not chosen:
        return
    scan = Scan(anchor_sql(chosen.values()), scopes, ["active"], valid_at=valid_at)
    claims = {r.path: r for r in fetch_rows(reader, scan, clock)}
    for row in page:
        row.standing = claims.get(chosen.get(row.path, ""))


def _chosen(
    reader: Reader,
    sources: set[str],
    scopes: Sequence[str],
    entities: Sequence[str],
    valid_at: int | None,
) -> dict[str, str]:
    """The `source_event` claim standing for each of `sources` that has one.

    Several claims for one source: the one about the entity, then the smallest id. Under an
    `asOf` validity filter, only claims valid then stand in.
    """
    if not sources:
        return {}
    about = set()
    if entities:
        about = {
            r[0]
            for r in reader.run(
                "SELECT path FROM targets WHERE field = 'subject'"
                f" AND resolved_path IN ({marks(entities)})",
                list(entities),
            )
        }
    sql = (
        "SELECT s.resolved_path, s.path, a.id FROM targets s"
        " JOIN spans a ON a.path = s.path AND a.idx = -1"
        " WHERE s.field = 'source' AND s.resolved_path IN (SELECT value FROM json_each(?))"
        " AND a.source_event = 1 AND a.eligible = 1 AND a.lifecycle = 'active'"
        f" AND a.scope IN ({marks(scopes)})"
    )
    params: list[object] = [json.dumps(sorted(sources)), *scopes]
    if valid_at is not None:
        sql += " AND coalesce(a.valid_from <= ?, 1) AND coalesce(? < a.valid_until, 1)"
        params += [valid_at, valid_at]
    found: dict[str, list[tuple[int, str, str]]] = {}
    for source, path, claim_id in reader.run(sql, params):
        found.setdefault(source, []).append((int(path not in about), claim_id, path))
    return {source: min(options)[2] for source, options in found.items()}


def _replacements(
    reader: Reader, superseded: list[Row], found: Listing, field: TimeField
) -> list[Row]:
    """The current records of superseded matches, each once, unless a direct match.

    A chain that reaches a missing, withdrawn or filtered-out record, or loops, gives nothing
    (SPEC section 3).
    """
    if not superseded:
        return []
    current = {}
    for row in superseded:
        follow = _follow(reader, row.path, found.scan, found.clock, field)
        if follow is not None:
            current[row.path] = follow
    rare = {r[PATH] for r in found.rare}
    direct = _present(reader, found.scan, {r.path for r in current.values()}, found.ordinary)
    listed = direct | rare
    out: list[Row] = []
    for row in superseded:
        follow = current.get(row.path)
        if follow is None or follow.path in listed:
            continue
        listed.add(follow.path)
        follow.via = row
        out.append(follow)
    return out


def _follow(reader: Reader, path: str, scan: Scan, clock: Expr, field: TimeField) -> Row | None:
    """The active record at the end of `path`'s `superseded_by` chain, if it passes `scan`."""
    for later in reader.chain(path):
        step = replace(scan, candidates=anchor_sql([later.path], field))
        rows = fetch_rows(reader, step, clock)
        if not rows:
            return None
        if rows[0].lifecycle == "active":
            # Rows are records with a value in the time field: one without none stands in.
            return rows[0] if rows[0].start is not None else None
    return None


@dataclass(frozen=True, slots=True)
class Page:
    """One page of a listing, its values read and its stand-ins in place, and what describes
    the whole listing."""

    rows: list[Row]
    total: int
    counts: Counter[str]  # every row, shown or not, by clock relation value
    recurring: bool
    more: bool


def listing_page(
    reader: Reader,
    scan: Scan,
    clock: Expr,
    *,
    offset: int,
    first: int,
    stand_ins: bool,
    active: bool,
    entities: Sequence[str] = (),
    descending: bool = False,
    field: TimeField = TimeField.OCCURRED_AT,
    keep: Collection[str] | None = None,
    nearness: Expr | None = None,
) -> Page:
    """Rows `offset` to `offset + first` of `listing(...)` (the same arguments), with their
    values, and the `source_event` claims standing for their sources when `stand_ins`."""
    found = listing(
        reader,
        scan,
        clock,
        descending=descending,
        stand_ins=stand_ins,
        active=active,
        entities=entities,
        field=field,
        keep=keep,
        nearness=nearness,
    )
    page = found.page(offset, first)
    show_values(reader, scan.candidates.field, page)
    if stand_ins:
        stand_in(reader, page, scan.scopes, entities, scan.valid_at, clock)
    return Page(page, found.total, found.counts, found.recurring, found.more)


def latest(reader: Reader, scan: Scan, clock: Expr, entities: Sequence[str]) -> Row | None:
    """`first_standing` with its value, a claim standing in for its source meeting."""
    found = first_standing(reader, scan, clock, entities)
    if found is None:
        return None
    stand_in(reader, [found], scan.scopes, entities, None, clock)
    show_values(reader, scan.candidates.field, [found])
    return found


def anchor_rows(reader: Reader, scan: Scan, clock: Expr, others: Iterable[str]) -> dict[str, Row]:
    """The rows of `scan` by path, then the anchors of `others` it did not read, under the
    same filters (the kind aside)."""
    rows = {r.path: r for r in fetch_rows(reader, scan, clock)}
    more = {p for p in others if p not in rows}
    if more:
        step = Scan(anchor_sql(more), scan.scopes, scan.lifecycles, valid_at=scan.valid_at)
        rows.update((r.path, r) for r in fetch_rows(reader, step, clock))
    return rows
