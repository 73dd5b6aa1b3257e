"""A light operation never waits in line behind heavy ones (issue 13, item 4).

Every operation runs in a bounded pool of threads (`limits.workers`). A document already seen to
ask only for light root fields (`lookup`, `record`, `status`) runs in a lane of its own: here the
pool's every thread is held (by tasks given to the pool itself, so "the pool is busy" is an order,
not a timing), and such a lookup must still be answered, while a traversal waits its turn.
"""

from __future__ import annotations

import asyncio
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from functools import partial
from typing import Any

from almanac.api.app import create_app
from almanac.api.schema import Turns
from almanac.api.settings import Settings
from tests.api.helpers import LocalClient

LOOKUP = "query($n: String!) { lookup(name: $n) { status record { id } } }"
GRAPH = '{ graph(seed: {id: "people/samuel-okafor"}, hops: 2) { nodes { id } } }'
WAIT_S = 30.0


def _post(client: LocalClient, query: str, **variables: Any) -> dict[str, Any]:
    response = client.post("/graphql", json={"query": query, "variables": variables})
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def test_a_seen_lookup_is_answered_while_every_worker_is_busy(settings: Settings) -> None:
    app = create_app(settings)
    release = threading.Event()
    with LocalClient(app) as client, ThreadPoolExecutor(2) as senders:
        first = _post(client, LOOKUP, n="Samuel Okafor")  # seen: light from now on
        assert first["data"]["lookup"]["record"] == {"id": "people/samuel-okafor"}
        schema = app.state.graphql.schema
        held = [schema.workers.submit(release.wait) for _ in range(settings.limits.workers)]
        try:
            graph: Future[dict[str, Any]] = senders.submit(_post, client, GRAPH)
            lookup = senders.submit(_post, client, LOOKUP, n="Diego Martins")
            answer = lookup.result(timeout=WAIT_S)  # the pool is still held
            assert answer["data"]["lookup"]["record"] == {"id": "people/diego-martins"}
            assert not graph.done()  # heavy work waits for the pool
        finally:
            release.set()
        assert graph.result(timeout=WAIT_S)["data"]["graph"]["nodes"]
        for task in held:
            task.result(timeout=WAIT_S)


def test_an_unseen_or_heavy_document_takes_the_pool(settings: Settings) -> None:
    app = create_app(settings)
    documents = app.state.graphql.schema.documents
    with LocalClient(app) as client:
        assert not documents.is_light(LOOKUP, None)  # not seen yet: the pool runs it
        _post(client, LOOKUP, n="Samuel Okafor")
        assert documents.is_light(LOOKUP, None)
        _post(client, GRAPH)
        assert not documents.is_light(GRAPH, None)
        both = '{ status { recordCount } graph(seed: {id: "people/samuel-okafor"}) { status } }'
        _post(client, both)
        assert not documents.is_light(both, None)  # one heavy root field makes it heavy
        named = 'query A { status { recordCount } } query B { search(query: "x") { total } }'
        client.post("/graphql", json={"query": named, "operationName": "A"})
        client.post("/graphql", json={"query": named, "operationName": "B"})
        assert documents.is_light(named, "A") and not documents.is_light(named, "B")


def test_operations_take_turns_and_a_long_one_lets_the_next_start() -> None:
    """One operation runs alone (no second thread contends for the interpreter) until it has
    run `spill_seconds`; then the next starts beside it, so a long one never holds up all."""
    release = threading.Event()
    running: list[str] = []
    most = 0

    def job(name: str, hold: threading.Event | None = None) -> str:
        nonlocal most
        running.append(name)
        most = max(most, len(running))
        if hold is not None:
            assert hold.wait(WAIT_S)
        else:
            threading.Event().wait(0.01)
        running.remove(name)
        return name

    async def quick(turns: Turns, pool: ThreadPoolExecutor) -> list[str]:
        return await asyncio.gather(*(turns.run(pool, partial(job, f"q{n}")) for n in range(8)))

    async def long_then_quick(turns: Turns, pool: ThreadPoolExecutor) -> str:
        long = asyncio.ensure_future(turns.run(pool, partial(job, "long", release)))
        done = await turns.run(pool, partial(job, "quick"))  # while "long" is held
        assert not long.done()
        release.set()
        return done + "+" + await long

    with ThreadPoolExecutor(2) as pool:
        assert asyncio.run(quick(Turns(spill_seconds=WAIT_S), pool)) == [f"q{n}" for n in range(8)]
        assert most == 1  # in turns, never two at once
        assert asyncio.run(long_then_quick(Turns(spill_seconds=0.05), pool)) == "quick+long"
