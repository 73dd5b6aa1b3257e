"""Reading a vault of Markdown notes: scanning, frontmatter, links, file-level issues."""

from __future__ import annotations

from vault.errors import (
    AlmanacError,
    AmbiguousTime,
    Forbidden,
    IndexUnavailable,
    InvalidCursor,
    InvalidDate,
    InvalidInput,
    InvalidRecurrence,
    NotFound,
    QueryTooComplex,
    SnapshotChanged,
    StartupError,
    Unauthenticated,
    UnknownTimezone,
)
from vault.issue import Issue
from vault.links import Link, wiki_target
from vault.note import (
    DATE_FIELDS,
    MAX_NOTE_BYTES,
    REFERENCE_FIELDS,
    FileBytes,
    Note,
    ParsedNote,
    parse_note,
    read_bytes,
    read_note,
)
from vault.scan import KnownStats, NoteFile, ScanResult, is_ignored_name, scan, stat_note

__all__ = [
    "DATE_FIELDS",
    "MAX_NOTE_BYTES",
    "REFERENCE_FIELDS",
    "AlmanacError",
    "AmbiguousTime",
    "FileBytes",
    "Forbidden",
    "IndexUnavailable",
    "InvalidCursor",
    "InvalidDate",
    "InvalidInput",
    "InvalidRecurrence",
    "Issue",
    "KnownStats",
    "Link",
    "NotFound",
    "Note",
    "NoteFile",
    "ParsedNote",
    "QueryTooComplex",
    "ScanResult",
    "SnapshotChanged",
    "StartupError",
    "Unauthenticated",
    "UnknownTimezone",
    "is_ignored_name",
    "parse_note",
    "read_bytes",
    "read_note",
    "scan",
    "stat_note",
    "wiki_target",
]
