from __future__ import annotations

import asyncio
import contextlib
import functools
from collections.abc import AsyncGenerator, Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

import strawberry
from graphql import GraphQLError
from strawberry.extensions import DisableIntrospection, SchemaExtension
from strawberry.schema.config import StrawberryConfig
from strawberry.types import ExecutionContext, ExecutionResult
from strawberry.types.graphql import OperationType

from almanac.api.context import Context
from almanac.api.documents import Documents
from almanac.api.errors import ErrorCodes, render
from almanac.api.execution import Executor
from almanac.api.resolvers import live, records as resolvers, time
from almanac.api.resolvers.context import context
from almanac.api.resolvers.excerpt import excerpt
from almanac.api.resolvers.graph import graph_query, paths as graph_paths
from almanac.api.resolvers.search import search
from almanac.api.settings import Limits
from almanac.api.types.context import ContextBundle
from almanac.api.types.excerpt import Excerpt
from almanac.api.types.graph import GraphResult
from almanac.api.types.records import LookupResult, Record, RecordConnection, Status
from almanac.api.types.search import SearchConnection
from almanac.api.types.time import LastSeenResult, OccurrenceResult, TimelineResult

__all__ = ["Query", "Schema", "Subscription", "Turns", "build_schema"]

T = TypeVar("T")

_SPILL_SECONDS = 0.05  # an operation running longer lets the next start beside it


@strawberry.type
class Query:
    status: Status = strawberry.field(
        resolver=resolvers.status,
        description="Index state, counts and validation issues of the readable scopes.",
    )
    record: Record | None = strawberry.field(
        resolver=resolvers.record,
        description="One record by exact id, or null if it does not exist or is not eligible.",
    )
    records: RecordConnection = strawberry.field(
        resolver=resolvers.records,
        description=(
            "The exhaustive inventory, filtered."
            " Ranked search never proves completeness; this does."
        ),
    )
    lookup: LookupResult = strawberry.field(
        resolver=resolvers.lookup, description="Exact id, slug, title or alias lookup. Never fuzzy."
    )
    timeline: TimelineResult = strawberry.field(
        resolver=time.timeline,
        description="Dated records, optionally of one entity, grouped by source on request.",
    )
    chronicle_day: TimelineResult = strawberry.field(
        resolver=time.chronicle_day,
        description="Everything that occurred on one local day, or in its Monday-Sunday week.",
    )
    chronicle_since: TimelineResult = strawberry.field(
        resolver=time.chronicle_since, description="Occurrence-time range, oldest first."
    )
    chronicle_last_seen: LastSeenResult = strawberry.field(
        resolver=time.chronicle_last_seen,
        description=(
            "The latest dated record associated with an entity at or before a bound (default now)."
        ),
    )
    occurrences: OccurrenceResult = strawberry.field(
        resolver=time.occurrences,
        description="Expanded occurrences of one recurring record inside a closed range.",
    )
    search: SearchConnection = strawberry.field(
        resolver=search,
        description="FTS5/BM25 keyword search over title (8), aliases (6) and body (1).",
    )
    graph: GraphResult = strawberry.field(
        resolver=graph_query,
        description="Bounded traversal from a seed record or from exact names declared in a text.",
    )
    paths: GraphResult = strawberry.field(
        resolver=graph_paths,
        description="Simple paths between two records, under the same bounds as graph.",
    )
    excerpt: Excerpt = strawberry.field(
        resolver=excerpt,
        description=(
            "Lines of a note as the file reads now (follow a locator). With revision, current"
            " says whether the\nfile still has those bytes. At most 1,000 lines per call; lines"
            " past the end are simply absent."
        ),
    )
    context: ContextBundle = strawberry.field(
        resolver=context,
        description=(
            "Evidence for one turn inside one budget of characters (200..100000): the pinned"
            " records, then the\ndated rows nearest asOf of the entities the query names exactly,"
            " then search hits. Whole items that\ndo not fit are counted in omitted, never cut."
        ),
    )


@strawberry.type
class Subscription:
    snapshots = strawberry.subscription(
        resolver=live.snapshots,
        description=(
            "One event per committed change of eligible content in the readable scopes."
            " The first event,\nsent at once, is the current snapshot (previous null,"
            " changedCount 0)."
        ),
    )


class Schema(strawberry.Schema):
    """strawberry's schema, whose asynchronous `execute` (what the ASGI app awaits) runs the
    whole operation, parse, validation and execution, in a bounded pool of worker threads.

    Every resolver is synchronous, so the event loop never runs a request's work: it goes on
    accepting and answering while any one request computes, and at most `workers` operations
    run at once, in turns (`Turns`: one alone unless it runs long; the others wait their
    turn, in order, their deadline running). A document already seen to ask only for
    `lookup`, `record` or `status` runs in a light lane of one thread instead, so a
    dashboard's one-millisecond lookup never waits behind traversals.
    """

    def __init__(self, *args: Any, workers: int, documents: Documents, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # A plain executor: its hand-off costs ~50 µs, anyio's thread pool ~80 µs (a lookup
        # answered in process takes ~45 µs).
        self.workers = ThreadPoolExecutor(workers, thread_name_prefix="almanac-graphql")
        self.turns = Turns()
        # The light lane: a document already seen to ask only for light root fields (`lookup`,
        # `record`, `status`) runs here, so it never waits in line behind heavy operations.
        self.light = ThreadPoolExecutor(1, thread_name_prefix="almanac-light")
        self.documents = documents

    async def execute(  # strawberry's signature
        self,
        query: str | None,
        variable_values: dict[str, Any] | None = None,
        context_value: Any | None = None,
        root_value: Any | None = None,
        operation_name: str | None = None,
        allowed_operation_types: Iterable[OperationType] | None = None,
        operation_extensions: dict[str, Any] | None = None,
    ) -> ExecutionResult:
        run = functools.partial(
            self.execute_sync,
            query,
            variable_values=variable_values,
            context_value=context_value,
            root_value=root_value,
            operation_name=operation_name,
            allowed_operation_types=allowed_operation_types,
            operation_extensions=operation_extensions,
        )
        job = _closing(run, context_value)
        if self.documents.is_light(query, operation_name):
            return await asyncio.get_running_loop().run_in_executor(self.light, job)
        return await self.turns.run(self.workers, job)

    def shutdown(self) -> None:
        """Wait for the operations running and stop the lanes' threads."""
        self.workers.shutdown(wait=True)
        self.light.shutdown(wait=True)

    async def stream(  # strawberry's signature; Any: its StreamResult
        self,
        query: str | None,
        variable_values: dict[str, Any] | None = None,
        context_value: Any | None = None,
        root_value: Any | None = None,
        operation_name: str | None = None,
        operation_extensions: dict[str, Any] | None = None,
        allowed_operation_types: Iterable[OperationType] | None = None,
    ) -> Any:
        """A WebSocket operation's results. A query (or mutation) on a connection runs as an
        HTTP request does (`execute`: the pool, in turns), in a context of its own (`fork`:
        its clock, deadline, freshness check and read transaction, the connection's scopes),
        and yields its one result. A subscription is strawberry's stream, each result's
        errors rendered with their codes as over HTTP (`ErrorCodes` sees only the end of the
        operation)."""
        fork = context_value.fork if isinstance(context_value, Context) else None
        if (
            fork is not None
            and query is not None
            and not self.documents.subscribes(query, operation_name)
        ):
            result = await self.execute(
                query,
                variable_values,
                await fork(),
                root_value,
                operation_name,
                allowed_operation_types,
                operation_extensions,
            )
            return _once(result)
        source = await super().stream(
            query,
            variable_values,
            context_value,
            root_value,
            operation_name,
            operation_extensions,
            allowed_operation_types,
        )
        return _rendered(source)

    def process_errors(
        self, errors: list[GraphQLError], execution_context: ExecutionContext | None = None
    ) -> None:
        """Log nothing here: the client's errors are the client's (strawberry would log each
        with its source excerpt, ~1 ms apiece, 100 ms for a document of 100 invalid
        directives), and `api.errors.render` logs every unexpected one with its traceback."""


class Turns:
    """Operations take the pool in turns, in order: one runs alone until it ends or has run
    `spill_seconds`, then the next may start on another thread beside it (up to the pool's
    size). Under the GIL a second thread adds no throughput, only contention: the light lane's
    lookups waited behind two busy threads (`bench/README.md`, "One pool thread"). But an
    operation that runs long (a graph query waiting for the graph's warm-up, a costly
    document up to its time limit) must not hold up every other one."""

    def __init__(self, *, spill_seconds: float = _SPILL_SECONDS) -> None:
        self.spill_seconds = spill_seconds
        self._turns: tuple[asyncio.AbstractEventLoop, asyncio.Semaphore] | None = None

    async def run(self, pool: ThreadPoolExecutor, job: Callable[[], T]) -> T:
        """`job`'s result, run on `pool` at its turn."""
        loop = asyncio.get_running_loop()
        if self._turns is None or self._turns[0] is not loop:  # a semaphore is of one loop
            self._turns = (loop, asyncio.Semaphore(1))
        turn = self._turns[1]
        await turn.acquire()
        try:
            running = loop.run_in_executor(pool, job)
            await asyncio.wait({running}, timeout=self.spill_seconds)
        finally:
            turn.release()
        return await running


def _closing(run: Callable[[], ExecutionResult], context: Any) -> Callable[[], ExecutionResult]:
    """`run`, then the end of the request's read transaction, on the worker's thread: the
    answer is complete, and its read connection goes back to the pool at once. Held until
    the response was sent instead, every request waiting for the event loop kept one: 16
    keep-alive clients kept 16 connections, each filling its own page cache (SQLite's heap
    13-22 MB, swinging by 8 MB within seconds, against 6-10 MB; bench/README.md, "Load")."""

    def closing() -> ExecutionResult:
        try:
            return run()
        finally:
            if isinstance(context, Context):
                context.close()

    return closing


async def _once(result: ExecutionResult) -> AsyncGenerator[ExecutionResult, None]:
    yield result


async def _rendered(source: AsyncGenerator[Any, None]) -> AsyncGenerator[Any, None]:
    async with contextlib.aclosing(source):
        async for result in source:
            if isinstance(result, ExecutionResult) and result.errors:
                result.errors = [render(error) for error in result.errors]
            yield result


def build_schema(limits: Limits | None = None, *, introspection: bool = True) -> Schema:
    """The GraphQL schema with its protections as extensions."""
    limits = limits or Limits()
    documents = Documents(limits)
    extensions: list[type[SchemaExtension] | Callable[[], SchemaExtension]] = [ErrorCodes]
    if not introspection:
        extensions.append(DisableIntrospection)
    # After the extensions that add validation rules: the rules are part of a document's key.
    extensions.append(documents.extension)
    return Schema(
        query=Query,
        subscription=Subscription,
        workers=limits.workers,
        documents=documents,
        extensions=extensions,
        config=StrawberryConfig(disable_field_suggestions=not introspection),
        execution_context_class=Executor,
    )
