from __future__ import annotations

from typing import Self

import strawberry

import almanac.api.live

__all__ = ["SnapshotEvent"]


@strawberry.type
class SnapshotEvent:
    snapshot: str
    previous: str | None
    committed_at: str = strawberry.field(
        description="UTC instant of the commit (of the current state, for the first event)."
    )
    changed_count: int = strawberry.field(
        description="Records added, changed or removed in the readable scopes by this commit."
    )
    changed: list[strawberry.ID] = strawberry.field(description="At most 100 of those ids, sorted.")
    truncated: bool
    degraded: list[str] = strawberry.field(
        description=(
            "Reason codes: index_stale when the last reconcile failed (the event is read from"
            " the last committed snapshot)."
        )
    )

    @classmethod
    def from_domain(cls, event: almanac.api.live.SnapshotEvent) -> Self:
        return cls(
            snapshot=event.snapshot,
            previous=event.previous,
            committed_at=event.committed_at,
            changed_count=event.changed_count,
            changed=[strawberry.ID(i) for i in event.changed],
            truncated=event.truncated,
            degraded=list(event.degraded),
        )
