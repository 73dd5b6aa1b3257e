"""What a server keeps between requests is bounded (issue 11, item 6: memory stays flat).

A request's read connection goes back to the store's pool as soon as its operation has run,
on the worker's thread. It used to go back when the event loop next ran the request (to send
its answer): under sixteen keep-alive clients the loop is behind, every request answered by
a worker but not yet sent kept its connection, and the pool grew to sixteen connections, each
with its own page cache (SQLite's heap 13-22 MB instead of 6-10 MB). Here the operation is
awaited as the HTTP view awaits it, and the pool looked at before the request's context is
closed. The other bounds: graph views of old generations (`_KEPT_VIEWS`), and the documents
remembered to be light (`DOCUMENTS_KEPT`).
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from almanac import temporal
from almanac.api.app import create_app
from almanac.api.context import Context
from almanac.api.documents import DOCUMENTS_KEPT, Documents
from almanac.api.services import Services, now_us
from almanac.api.settings import Limits, Settings
from tests.api.helpers import LocalClient

GRAPH = '{ graph(seed: {id: "people/samuel-okafor"}, hops: 1) { nodes { id } } }'
TIMELINE = (
    'query { timeline(entity: "people/samuel-okafor", first: 5) { total entries { clock } } }'
)


def test_an_operations_read_connection_is_back_in_the_pool_once_it_has_run(
    settings: Settings,
) -> None:
    app = create_app(settings)
    services = app.state.services
    schema = app.state.graphql.schema

    async def run(query: str) -> tuple[int, int, int]:
        """The pool's idle connections before, once the operation ran, once it is closed."""
        context = Context(services, None, now_us(), deadline=time.monotonic() + 30)
        before = services.store.idle_readers
        try:
            result = await schema.execute(query, context_value=context)
            assert not result.errors, result.errors
            assert result.data
            ran = services.store.idle_readers
        finally:
            context.close()
        return before, ran, services.store.idle_readers

    with LocalClient(app):  # started (its lifespan), as a server
        asyncio.run(run(GRAPH))  # waits for the graph's warm-up, which reads meanwhile
        for query in (TIMELINE, GRAPH, TIMELINE):
            before, ran, closed = asyncio.run(run(query))
            assert before >= 1  # the first operation made the connection
            assert ran == before == closed


def test_graph_views_of_old_generations_are_dropped_beyond_the_last_four(
    demo_vault: Path, tmp_path: Path
) -> None:
    settings = Settings.build(vault=demo_vault, state=tmp_path / "state.db", watch=False)
    services = Services.open(settings, now_us=now_us())
    try:
        assert services._warmer is not None
        services._warmer.join(timeout=60)
        generations = []
        for edit in range(6):
            (demo_vault / "people/visitor.md").write_text(
                f"---\ntype: person\ntitle: Visitor {edit}\n---\n[[Ada Lopez]]\n"
            )
            services.reconcile_now(now_us=now_us())
            generations.append(temporal.generation(services.store))
        kept = [services.view_for(g, deadline=time.monotonic()) is not None for g in generations]
        assert kept == [False, False, True, True, True, True]
    finally:
        services.close()


def test_the_documents_remembered_as_light_are_the_most_recent_ones() -> None:
    documents = Documents(Limits())
    texts = [f'{{ lookup(name: "n{i}") {{ status }} }}' for i in range(DOCUMENTS_KEPT + 10)]
    for text in texts:
        documents.seen(text, None, "lookup")
    light = [documents.is_light(text, None) for text in texts]
    assert light == [False] * 10 + [True] * DOCUMENTS_KEPT
