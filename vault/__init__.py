"""Reading a vault of Markdown notes: scanning, frontmatter, links, file-level issues."""

from __future__ import annotations

from almanac.vault.content import MAX_NOTE_BYTES, FileBytes, note_lines, read_bytes
from almanac.vault.errors import (
    AlmanacError,
    AmbiguousTime,
    Forbidden,
    GraphWarming,
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
from almanac.vault.excerpt import NoteText, read_note_text
from almanac.vault.issue import Issue
from almanac.vault.links import Link, wiki_target
from almanac.vault.note import (
    KNOWN_FIELDS,
    REFERENCE_FIELDS,
    Note,
    ParsedNote,
    parse_note,
    read_note,
)
from almanac.vault.reading import DATE_FIELDS, DailyNotes, ReadOptions, field_map
from almanac.vault.scan import (
    KnownStats,
    NoteFile,
    ScanResult,
    is_attachment,
    is_ignored_name,
    scan,
    stat_note,
)

__all__ = [
    "DATE_FIELDS",
    "KNOWN_FIELDS",
    "MAX_NOTE_BYTES",
    "REFERENCE_FIELDS",
    "AlmanacError",
    "AmbiguousTime",
    "DailyNotes",
    "FileBytes",
    "Forbidden",
    "GraphWarming",
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
    "NoteText",
    "ParsedNote",
    "QueryTooComplex",
    "ReadOptions",
    "ScanResult",
    "SnapshotChanged",
    "StartupError",
    "Unauthenticated",
    "UnknownTimezone",
    "field_map",
    "is_attachment",
    "is_ignored_name",
    "note_lines",
    "parse_note",
    "read_bytes",
    "read_note",
    "read_note_text",
    "scan",
    "stat_note",
    "wiki_target",
]
