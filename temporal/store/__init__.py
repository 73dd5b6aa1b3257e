"""The schema, the connection and its transactions, bulk loading, the reader, names."""

from __future__ import annotations

from temporal.store.bulk import Background, Bulk
from temporal.store.database import Store
from temporal.store.names import (
    LINK_RULES,
    LOOKUP_RULES,
    SEED_RULES,
    Designation,
    NameRule,
    designate,
    ends_with_path,
    normalize_name,
    slug_suffixes,
)
from temporal.store.reader import ChainStep, Count, Reader, RecordFilter, StatusCounts
from temporal.store.sql import chunks, marks, run, sqlite_error
from temporal.store.tables import (
    ASSOCIATE,
    COMMIT_IDS,
    COMMITS_KEPT,
    FINGERPRINT,
    INSERT_NOTE,
    NOTE_COLUMNS,
    PROJECTION_TABLES,
    SEARCH_KEYS_FILL,
    SPAN_COLUMNS,
    SPANS,
    TARGET_COLUMNS,
    TIER_WIDTHS,
    search_fill,
    search_objects,
    search_table,
    search_triggers,
)

__all__ = [
    "ASSOCIATE",
    "COMMITS_KEPT",
    "COMMIT_IDS",
    "FINGERPRINT",
    "INSERT_NOTE",
    "LINK_RULES",
    "LOOKUP_RULES",
    "NOTE_COLUMNS",
    "PROJECTION_TABLES",
    "SEARCH_KEYS_FILL",
    "SEED_RULES",
    "SPANS",
    "SPAN_COLUMNS",
    "TARGET_COLUMNS",
    "TIER_WIDTHS",
    "Background",
    "Bulk",
    "ChainStep",
    "Count",
    "Designation",
    "NameRule",
    "Reader",
    "RecordFilter",
    "StatusCounts",
    "Store",
    "chunks",
    "designate",
    "ends_with_path",
    "marks",
    "normalize_name",
    "run",
    "search_fill",
    "search_objects",
    "search_table",
    "search_triggers",
    "slug_suffixes",
    "sqlite_error",
]
