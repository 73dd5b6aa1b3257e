"""The reconcile loop, the reconciler's memory, the change set, names and spans."""

from __future__ import annotations

from almanac.temporal.reconcile.changeset import snapshot_id
from almanac.temporal.reconcile.dates import note_dates
from almanac.temporal.reconcile.follow import Followed, ReconcileResult, WriterLock, followed_since
from almanac.temporal.reconcile.names import (
    NameIndex,
    Paths,
    Resolution,
    discard_path,
    paths_of,
    put_path,
)
from almanac.temporal.reconcile.reconciler import Reconciler, VaultConfig

__all__ = [
    "Followed",
    "NameIndex",
    "Paths",
    "ReconcileResult",
    "Reconciler",
    "Resolution",
    "VaultConfig",
    "WriterLock",
    "discard_path",
    "followed_since",
    "note_dates",
    "paths_of",
    "put_path",
    "snapshot_id",
]
