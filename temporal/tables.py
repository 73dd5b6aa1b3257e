"""Every table of the state database.

Projection tables are derived from the vault and rebuilt whenever
`FINGERPRINT` (schema and parser version) or the projection settings change.
Safeguard tables (`guards`, `seen`) cannot be rebuilt from the vault: they
change only through the `MIGRATIONS` set and the reconcile that appends to them.
"""

from __future__ import annotations

import sqlite_utils

__all__ = ["FINGERPRINT", "MIGRATIONS", "PROJECTION_DDL", "PROJECTION_TABLES"]

FINGERPRINT = "almanac-state-2"

PROJECTION_TABLES = ("files", "notes", "dates", "targets", "edges", "names", "issues", "meta")

PROJECTION_DDL = """
CREATE TABLE files (
    path TEXT PRIMARY KEY, size INTEGER, mtime_ns INTEGER, ino INTEGER, revision TEXT
) WITHOUT ROWID;
CREATE TABLE notes (
    path TEXT PRIMARY KEY, id TEXT NOT NULL, scope TEXT NOT NULL, slug TEXT NOT NULL,
    kind TEXT NOT NULL, type TEXT NOT NULL, title TEXT NOT NULL, aliases TEXT NOT NULL,
    tags TEXT NOT NULL, lifecycle TEXT NOT NULL, superseded_by TEXT, state TEXT,
    relation TEXT, weight REAL, source_event INTEGER NOT NULL, timezone TEXT,
    recurrence TEXT, exdates TEXT NOT NULL, rdates TEXT NOT NULL, body TEXT NOT NULL,
    body_line INTEGER NOT NULL, line_count INTEGER NOT NULL, revision TEXT NOT NULL,
    extra TEXT NOT NULL, lines TEXT NOT NULL, valid INTEGER NOT NULL,
    eligible INTEGER NOT NULL
);
CREATE INDEX notes_id ON notes (id, eligible);
CREATE INDEX notes_slug ON notes (slug);
CREATE INDEX notes_type ON notes (eligible, type, id);
CREATE TABLE dates (
    path TEXT NOT NULL, field TEXT NOT NULL, text TEXT NOT NULL, precision TEXT NOT NULL,
    start INTEGER NOT NULL, "end" INTEGER NOT NULL, PRIMARY KEY (path, field)
) WITHOUT ROWID;
CREATE INDEX dates_field_start ON dates (field, start);
CREATE TABLE targets (
    path TEXT NOT NULL, field TEXT NOT NULL, ord INTEGER NOT NULL, kind TEXT NOT NULL,
    text TEXT NOT NULL, line INTEGER, target TEXT NOT NULL, key_lower TEXT NOT NULL,
    key_norm TEXT NOT NULL, resolved TEXT, resolved_path TEXT, status TEXT NOT NULL,
    PRIMARY KEY (path, field, ord)
) WITHOUT ROWID;
CREATE INDEX targets_lower ON targets (key_lower);
CREATE INDEX targets_norm ON targets (key_norm);
CREATE TABLE edges (
    path TEXT NOT NULL, src TEXT NOT NULL, dst TEXT NOT NULL, relation TEXT NOT NULL,
    evidence TEXT NOT NULL, line INTEGER NOT NULL, line_end INTEGER NOT NULL,
    valid_from INTEGER, valid_until INTEGER
);
CREATE INDEX edges_path ON edges (path);
CREATE INDEX edges_src ON edges (src);
CREATE INDEX edges_dst ON edges (dst);
CREATE TABLE names (path TEXT NOT NULL, key TEXT NOT NULL, source TEXT NOT NULL);
CREATE INDEX names_key ON names (key);
CREATE INDEX names_path ON names (path);
CREATE TABLE issues (
    path TEXT NOT NULL, line INTEGER, field TEXT, code TEXT NOT NULL, message TEXT NOT NULL,
    record_id TEXT, origin TEXT NOT NULL
);
CREATE INDEX issues_path ON issues (path, origin);
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
"""

MIGRATIONS = sqlite_utils.Migrations("almanac")


@MIGRATIONS()
def create_safeguards(db: sqlite_utils.Database) -> None:
    """Guards of withdrawn/superseded ids and every content hash seen per id."""
    db.execute(
        "CREATE TABLE guards (id TEXT PRIMARY KEY, lifecycle TEXT NOT NULL,"
        " seen_at INTEGER NOT NULL, hashes TEXT NOT NULL) WITHOUT ROWID"
    )
    db.execute(
        "CREATE TABLE seen (id TEXT NOT NULL, revision TEXT NOT NULL,"
        " PRIMARY KEY (id, revision)) WITHOUT ROWID"
    )
