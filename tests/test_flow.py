"""Data flows down once and back once (issue 16, item 6): the modules one query passes through.

A query (what its resolver calls) is traced with `sys.setprofile` through the modules of
`temporal/calendar`, `temporal/store`, `temporal/queries`, `temporal/records.py` and `graph/`;
frames of other code (the API, the standard library, generated `__init__`s) are transparent,
and consecutive frames of one module are one *visit*. A visit is a **return** when its module
was visited earlier in the query, is not on the stack (a callee giving control back to its
caller is no return) and the visit is not a *utility call*: one into `calendar`, `records`,
`store` or the graph's published view (`graph.view`, `graph.sharded`) whose whole subtree stays
in those (a date, a clock, a domain value, one SQL statement, one node's adjacency). Each return
is a module the query left and came back to: the straight path (arguments parsed by
`calendar`, one plan and its SQL in `queries`, rows read by `store`, entries, grouping and
clocks in `queries`) has none.
"""

from __future__ import annotations

import shutil
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any

import pytest

import almanac
from almanac.api.settings import DEMO_VAULT

ROOT = Path(__file__).resolve().parents[1]
# The rooms a query runs through; `temporal/reconcile/` is the request catching up with the
# vault before it reads (`Context.reader`), not the query.
TRACED = ("temporal.calendar", "temporal.queries", "temporal.records", "temporal.store", "graph.")
# Utility rooms: a date or a clock (`calendar`), a domain value (`records`), SQL run (`store`),
# the graph's published view read (`graph.view`, `graph.sharded`: the graph's store).
UTILITY = ("temporal.calendar", "temporal.records", "temporal.store", "graph.view", "graph.sharded")
# Imported through almanac/api (the link to api/), as every module of ours is.
RESOLVERS = str(ROOT / "almanac" / "api" / "resolvers")


@dataclass(slots=True)
class Visit:
    """Consecutive frames of one module, entered from another module (or from untraced code)."""

    module: str
    function: str  # the first frame's, for a failure's message
    parent: Visit | None
    children: list[Visit] = field(default_factory=list)

    def ancestors(self) -> Iterator[Visit]:
        visit = self.parent
        while visit is not None:
            yield visit
            visit = visit.parent

    def subtree(self) -> Iterator[Visit]:
        yield self
        for child in self.children:
            yield from child.subtree()


@dataclass(slots=True)
class Trace:
    """The visits of one traced call, in the order they began."""

    visits: list[Visit] = field(default_factory=list)

    def utility(self, visit: Visit) -> bool:
        return all(v.module.startswith(UTILITY) for v in visit.subtree())

    def returns(self) -> list[str]:
        """The returns, as `module:function`, in order (see the module's docstring)."""
        seen: set[str] = set()
        out: list[str] = []
        for visit in self.visits:
            stack = {v.module for v in visit.ancestors()}
            if visit.module in seen and visit.module not in stack and not self.utility(visit):
                out.append(f"{visit.module}:{visit.function}")
            seen.add(visit.module)
        return out

    def path(self) -> list[str]:
        """The visits, as `module:function`, utility calls left out (for a failure's message)."""
        return [f"{v.module}:{v.function}" for v in self.visits if not self.utility(v)]


def _module(frame: FrameType, cache: dict[str, str | None]) -> str | None:
    filename = frame.f_code.co_filename
    if filename not in cache:
        try:
            parts = Path(filename).resolve().relative_to(ROOT).with_suffix("").parts
        except ValueError:
            parts = ()
        name = ".".join(p for p in parts if p != "__init__")
        cache[filename] = name if name.startswith(TRACED) else None
    return cache[filename]


def trace(call: Callable[[], object], *, within: str | None = RESOLVERS) -> Trace:
    """The visits of `call` inside a frame of a file under `within` (a resolver: the query, not
    the request around it), or anywhere when None; a profile hook keeps each live traced
    frame's visit."""
    found = Trace()
    live: dict[int, Visit] = {}  # id of a live traced frame -> its visit
    cache: dict[str, str | None] = {}

    resolving: list[int] = [] if within is not None else [0]  # live frames under `within`

    def hook(frame: FrameType, event: str, _arg: Any) -> None:  # Any: sys.setprofile's
        if within is not None and frame.f_code.co_filename.startswith(within):
            if event == "call":
                resolving.append(id(frame))
            elif event == "return" and resolving and resolving[-1] == id(frame):
                resolving.pop()
            return
        if event == "call":
            module = _module(frame, cache) if resolving else None
            if module is None:
                return
            caller = frame.f_back
            while caller is not None and id(caller) not in live:
                caller = caller.f_back
            parent = live[id(caller)] if caller is not None else None
            if parent is not None and parent.module == module:
                live[id(frame)] = parent
                return
            visit = Visit(module, frame.f_code.co_name, parent)
            if parent is not None:
                parent.children.append(visit)
            found.visits.append(visit)
            live[id(frame)] = visit
        elif event == "return":
            live.pop(id(frame), None)

    sys.setprofile(hook)
    try:
        call()
    finally:
        sys.setprofile(None)
    return found


@pytest.fixture(scope="module")
def kb(tmp_path_factory: pytest.TempPathFactory) -> Iterator[almanac.Almanac]:
    folder = tmp_path_factory.mktemp("flow")
    shutil.copytree(DEMO_VAULT, folder / "vault")
    with almanac.open(folder / "vault", state=folder / "state.db") as opened:
        yield opened


# The four queries of the issue, and a search's relaxed pass (AUTO, no strict match).
QUERIES: dict[str, Callable[[almanac.Almanac], object]] = {
    "timeline": lambda kb: kb.timeline("people/ada-lopez", group="SOURCE", first=5),
    "chronicleDay": lambda kb: kb.chronicle_day(
        "2026-03-02", timezone="Europe/Berlin", week=True, first=5
    ),
    "search": lambda kb: kb.search("atlas", first=5),
    "search relaxed": lambda kb: kb.search("atlas kickoff zzzqqq", strategy="AUTO", first=5),
    "graph": lambda kb: kb.graph("people/ada-lopez", hops=2),
}


@pytest.mark.parametrize("name", list(QUERIES))
def test_a_query_enters_each_module_once(kb: almanac.Almanac, name: str) -> None:
    """Before issue 16 item 6: timeline 28 returns, chronicleDay 8, search 10 (relaxed 20),
    graph 1."""
    query = QUERIES[name]
    query(kb)  # once untraced: what the first call alone does (a cache filled) is not the path
    found = trace(lambda: query(kb))
    assert len(found.path()) >= 2, f"the trace saw too little: {found.path()}"
    assert found.returns() == [], f"{name}: path {found.path()}"


def test_the_trace_counts_a_return() -> None:
    """A query module left and entered again is a return; a utility call, or a callee giving
    control back to its caller, never is."""
    from almanac.temporal.calendar import local_date
    from almanac.temporal.queries.listing import select
    from almanac.temporal.queries.rows import Scan, Sql

    scan = Scan(Sql("SELECT * FROM spans", []), ["default"], ["active"])

    def dates() -> None:
        local_date(0, "Europe/Berlin")  # calendar/clock -> calendar/dates: utility calls
        local_date(0, "UTC")

    def twice() -> None:
        select(scan, "c.path")
        select(scan, "c.id")

    assert trace(dates, within=None).returns() == []
    assert trace(twice, within=None).returns() == ["temporal.queries.listing:select"]
    assert trace(lambda: select(scan, "c.path"), within=None).returns() == []
