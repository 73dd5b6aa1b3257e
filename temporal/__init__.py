"""The SQLite temporal tables and everything asked of them by time."""

from __future__ import annotations

from temporal.changeset import snapshot_id
from temporal.connections import (
    EdgeRow,
    NodeRow,
    declared_names,
    edge_rows,
    generation,
    node_rows,
    seed_matches,
)
from temporal.dates import (
    DatePrecision,
    DateValue,
    format_instant,
    from_datetime,
    instant,
    parse_date_value,
    parse_query_bound,
    timezone,
)
from temporal.names import NameIndex, Resolution, normalize_name, slug_suffixes
from temporal.reconcile import Reconciler, ReconcileResult, VaultConfig
from temporal.records import (
    Lifecycle,
    LifecycleFilter,
    LinkRef,
    Locator,
    Record,
    RecordKind,
    RecordRef,
    TimeField,
    note_dates,
)
from temporal.store import Count, Reader, RecordFilter, StatusCounts, Store
from temporal.tables import FINGERPRINT

__all__ = [
    "FINGERPRINT",
    "Count",
    "DatePrecision",
    "DateValue",
    "EdgeRow",
    "Lifecycle",
    "LifecycleFilter",
    "LinkRef",
    "Locator",
    "NameIndex",
    "NodeRow",
    "Reader",
    "ReconcileResult",
    "Reconciler",
    "Record",
    "RecordFilter",
    "RecordKind",
    "RecordRef",
    "Resolution",
    "StatusCounts",
    "Store",
    "TimeField",
    "VaultConfig",
    "declared_names",
    "edge_rows",
    "format_instant",
    "from_datetime",
    "generation",
    "instant",
    "node_rows",
    "normalize_name",
    "note_dates",
    "parse_date_value",
    "parse_query_bound",
    "seed_matches",
    "slug_suffixes",
    "snapshot_id",
    "timezone",
]
