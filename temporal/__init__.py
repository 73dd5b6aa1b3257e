"""The SQLite temporal tables and everything asked of them by time."""

from __future__ import annotations

from temporal.changeset import snapshot_id
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
from temporal.search import (
    MatchMode,
    SearchHit,
    SearchPage,
    Snippet,
    search_records,
    search_tokens,
)
from temporal.store import Count, Reader, RecordFilter, StatusCounts, Store
from temporal.tables import FINGERPRINT

__all__ = [
    "FINGERPRINT",
    "Count",
    "DatePrecision",
    "DateValue",
    "Lifecycle",
    "LifecycleFilter",
    "LinkRef",
    "Locator",
    "MatchMode",
    "NameIndex",
    "Reader",
    "ReconcileResult",
    "Reconciler",
    "Record",
    "RecordFilter",
    "RecordKind",
    "RecordRef",
    "Resolution",
    "SearchHit",
    "SearchPage",
    "Snippet",
    "StatusCounts",
    "Store",
    "TimeField",
    "VaultConfig",
    "format_instant",
    "from_datetime",
    "instant",
    "normalize_name",
    "note_dates",
    "parse_date_value",
    "parse_query_bound",
    "search_records",
    "search_tokens",
    "slug_suffixes",
    "snapshot_id",
    "timezone",
]
