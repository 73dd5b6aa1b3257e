from __future__ import annotations

from collections.abc import AsyncGenerator

from almanac.api.context import Info
from almanac.api.types.live import SnapshotEvent
from almanac.vault import InvalidInput

__all__ = ["snapshots"]


async def snapshots(info: Info, scope: str | None = None) -> AsyncGenerator[SnapshotEvent, None]:
    """One event per committed change of eligible content in the readable scopes. The first
    event, sent at once, is the current snapshot (previous null, changedCount 0)."""
    context = info.context
    scopes = context.readable(scope)
    feed = context.feed
    if feed is None:
        raise InvalidInput("Subscriptions are served over WebSocket (graphql-transport-ws)")
    subscription, first = await feed.subscribe(scopes, drop=context.drop)
    try:
        yield SnapshotEvent.from_domain(first)
        while True:
            yield SnapshotEvent.from_domain(await subscription.next())
    finally:
        feed.unsubscribe(subscription)
