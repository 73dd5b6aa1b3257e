"""Every table of the state database.

Projection tables are derived from the vault and rebuilt whenever
`FINGERPRINT` (schema and parser version) or the projection settings change.
Safeguard tables (`guards`, `seen`) cannot be rebuilt from the vault: they
change only through the `MIGRATIONS` set and the reconcile that appends to them.
"""

from __future__ import annotations

import sqlite_utils

__all__ = [
    "ASSOCIATE",
    "FINGERPRINT",
    "INSERT_NOTE",
    "MIGRATIONS",
    "NOTE_COLUMNS",
    "PROJECTION_DDL",
    "PROJECTION_INDEXES",
    "PROJECTION_TABLES",
    "SEARCH_KEYS_FILL",
    "SEARCH_TABLES",
    "SEARCH_TRIGGERS",
    "SPANS",
    "SPAN_COLUMNS",
    "TARGET_COLUMNS",
    "search_fill",
    "search_objects",
    "search_table",
    "search_triggers",
]

_DAY_US = 86_400_000_000
# Widths of the span tiers (see temporal/reconcile/spans.py); the last is unbounded.
TIER_WIDTHS: tuple[int | None, ...] = (_DAY_US, 32 * _DAY_US, 367 * _DAY_US, None)

FINGERPRINT = "almanac-state-19"
# Each commit leaves a `commit:<generation>` row in `meta` (temporal/reconcile/reconciler.py):
# the last COMMITS_KEPT are kept, each with at most COMMIT_IDS changed ids per scope.
COMMITS_KEPT = 64
COMMIT_IDS = 100

PROJECTION_TABLES = (
    "files",
    "attachments",
    "notes",
    "dates",
    "spans",
    "sources",
    "facts",
    "associations",
    "targets",
    "names",
    "issues",
    "meta",
)
# The full-text index, apart so its lines merge on their own: the scopes that have an FTS5 table
# (`search_table`, with its shadow tables) and the filter columns of every note.
SEARCH_TABLES = ("search_keys", "search_scopes")

# The columns of a `spans` row (temporal/reconcile/spans.py), also those of an `associations`
# row: the writer makes them in this order, every timeline candidate query reads them so.
SPAN_COLUMNS = (
    ("path", "TEXT NOT NULL"),
    ("idx", "INTEGER NOT NULL"),
    ("start", "INTEGER"),
    ("vend", "INTEGER"),
    ("stop", "INTEGER"),
    ("text", "TEXT"),
    ("precision", "TEXT"),
    ("tier", "INTEGER NOT NULL"),
    ("recurring", "INTEGER NOT NULL"),
    ("more", "INTEGER NOT NULL"),
    ("id", "TEXT NOT NULL"),
    ("scope", "TEXT NOT NULL"),
    ("type", "TEXT NOT NULL"),
    ("lifecycle", "TEXT NOT NULL"),
    ("eligible", "INTEGER NOT NULL"),
    ("source_event", "INTEGER NOT NULL"),
    ("due_start", "INTEGER"),
    ("due_end", "INTEGER"),
    ("due_instant", "INTEGER"),
    ("open", "INTEGER NOT NULL"),
    ("occ_start", "INTEGER"),
    ("occ_stop", "INTEGER"),
    ("occ_floating", "INTEGER"),
    ("valid_from", "INTEGER"),
    ("valid_until", "INTEGER"),
)
SPANS = ", ".join(name for name, _ in SPAN_COLUMNS)
_SPAN = ", ".join(f"{name} {decl}" for name, decl in SPAN_COLUMNS)

# The columns of a `notes` row, in the order the writer makes them (temporal/reconcile/intake.py).
NOTE_COLUMNS = (
    ("path", "TEXT PRIMARY KEY"),
    ("id", "TEXT NOT NULL"),
    ("scope", "TEXT NOT NULL"),
    ("slug", "TEXT NOT NULL"),
    ("kind", "TEXT NOT NULL"),
    ("type", "TEXT NOT NULL"),
    ("title", "TEXT NOT NULL"),
    ("aliases", "TEXT NOT NULL"),
    ("tags", "TEXT NOT NULL"),
    ("lifecycle", "TEXT NOT NULL"),
    ("superseded_by", "TEXT"),
    ("state", "TEXT"),
    ("relation", "TEXT"),
    ("fact_key", "TEXT"),
    ("weight", "REAL"),
    ("source_event", "INTEGER NOT NULL"),
    ("timezone", "TEXT"),
    ("recurrence", "TEXT"),
    ("exdates", "TEXT NOT NULL"),
    ("rdates", "TEXT NOT NULL"),
    ("body", "TEXT NOT NULL"),
    ("body_line", "INTEGER NOT NULL"),
    ("line_count", "INTEGER NOT NULL"),
    ("revision", "TEXT NOT NULL"),
    ("extra", "TEXT NOT NULL"),
    ("lines", "TEXT NOT NULL"),
    ("valid", "INTEGER NOT NULL"),
    ("eligible", "INTEGER NOT NULL"),
)
# The columns of a `targets` row: a link or reference as written, and what it resolved to.
TARGET_COLUMNS = (
    ("path", "TEXT NOT NULL"),
    ("field", "TEXT NOT NULL"),
    ("ord", "INTEGER NOT NULL"),
    ("kind", "TEXT NOT NULL"),
    ("text", "TEXT NOT NULL"),
    ("line", "INTEGER"),
    ("target", "TEXT NOT NULL"),
    ("key_lower", "TEXT NOT NULL"),
    ("key_norm", "TEXT NOT NULL"),
    ("resolved", "TEXT"),
    ("resolved_path", "TEXT"),
    ("status", "TEXT NOT NULL"),
)
INSERT_NOTE = f"INSERT INTO notes VALUES ({','.join('?' * len(NOTE_COLUMNS))})"
_NOTE = ", ".join(f"{name} {decl}" for name, decl in NOTE_COLUMNS)
_TARGET = ", ".join(f"{name} {decl}" for name, decl in TARGET_COLUMNS)

PROJECTION_DDL = f"""
CREATE TABLE files (
    path TEXT PRIMARY KEY, size INTEGER, mtime_ns INTEGER, ino INTEGER, revision TEXT
) WITHOUT ROWID;
CREATE TABLE notes ({_NOTE});
CREATE TABLE dates (
    path TEXT NOT NULL, field TEXT NOT NULL, text TEXT NOT NULL, precision TEXT NOT NULL,
    start INTEGER NOT NULL, "end" INTEGER NOT NULL
);
-- The occurrence projection (temporal/reconcile/spans.py): anchors (idx -1) and materialised
-- occurrences, each with its record's filters and clock inputs, so a time query reads this
-- table alone.
CREATE TABLE spans ({_SPAN}, PRIMARY KEY (path, idx)) WITHOUT ROWID;
-- Every file of the vault that is not a note (listed, never read): what a wiki link or embed
-- resolves to when no note answers it (`targets.status` 'file', `resolved_path` the file).
CREATE TABLE attachments (path TEXT PRIMARY KEY, scope TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE targets ({_TARGET});
-- Every edge of SPEC section 5, read off the resolved targets: a record's own fields and links
-- (evidence: the record, located at the field's or link's line) and relationships (from -> to,
-- evidence: the relationship, located at its whole file). Claims and relationships carry their
-- validity. Consumers keep only edges whose ends and evidence are eligible.
CREATE VIEW edges AS
SELECT t.path, n.id AS src, t.resolved AS dst,
       CASE t.field WHEN 'subject' THEN 'about' WHEN 'source' THEN 'cites'
            WHEN 'owner' THEN 'owned_by' WHEN 'entities' THEN 'involves'
            WHEN 'link' THEN 'links_to' ELSE t.field END AS relation,
       n.id AS evidence, coalesce(t.line, 1) AS line, coalesce(t.line, 1) AS line_end,
       CASE WHEN t.field IN ('subject', 'source') AND n.kind <> 'page' THEN vf.start END
           AS valid_from,
       CASE WHEN t.field IN ('subject', 'source') AND n.kind <> 'page' THEN vu.start END
           AS valid_until
FROM targets t JOIN notes n ON n.path = t.path
LEFT JOIN dates vf ON vf.path = t.path AND vf.field = 'valid_from'
LEFT JOIN dates vu ON vu.path = t.path AND vu.field = 'valid_until'
WHERE t.status = 'resolved' AND t.field NOT IN ('from', 'to', 'derived_from')
  AND t.resolved <> n.id
  AND n.valid = 1
UNION ALL
SELECT n.path, f.resolved, o.resolved, n.relation, n.id, 1, n.line_count, vf.start, vu.start
FROM notes n
JOIN targets f ON f.path = n.path AND f.field = 'from' AND f.status = 'resolved'
JOIN targets o ON o.path = n.path AND o.field = 'to' AND o.status = 'resolved'
LEFT JOIN dates vf ON vf.path = n.path AND vf.field = 'valid_from'
LEFT JOIN dates vu ON vu.path = n.path AND vu.field = 'valid_until'
WHERE n.kind = 'relationship' AND n.valid = 1;
-- A claim's or relationship's source, by the entity it is about: what a timeline of that
-- entity reaches through "source associations" (temporal/queries/timeline.py), read by index.
CREATE TABLE sources (
    path TEXT NOT NULL, entity TEXT NOT NULL, source TEXT NOT NULL, eligible INTEGER NOT NULL
);
-- Each claim with a fact_key, by the subject it resolves to: the claims that may conflict with
-- one another (temporal/store/conflicts.py) are one range of facts_subject.
CREATE TABLE facts (path TEXT NOT NULL, subject TEXT NOT NULL, fact_key TEXT NOT NULL);
-- What an entity's timeline reads: each path associated with an entity (ASSOCIATE) with a copy
-- of its anchor row, clustered by entity, so a hub's thousands of rows are one range of the table.
CREATE TABLE associations (entity TEXT NOT NULL, {_SPAN}, PRIMARY KEY (entity, path))
WITHOUT ROWID;
CREATE TABLE names (path TEXT NOT NULL, key TEXT NOT NULL, source TEXT NOT NULL);
CREATE TABLE issues (
    path TEXT NOT NULL, line INTEGER, field TEXT, code TEXT NOT NULL, message TEXT NOT NULL,
    record_id TEXT, origin TEXT NOT NULL, scope TEXT NOT NULL
);
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
-- Full-text search: one external-content FTS5 index per scope (search_objects), so that a scope's
-- BM25 statistics (IDF, average lengths) come from its own notes alone (SPEC section 1). A scope
-- gets its index when its first note is written and loses it once it holds no note. This lists
-- the scopes that have one. Filters and eligibility are applied by the query.
CREATE TABLE search_scopes (scope TEXT PRIMARY KEY) WITHOUT ROWID;
-- The columns of notes that search filters and orders by, by notes' rowid: a narrow copy, so
-- that counting and ranking tens of thousands of matches never reads the wide note rows.
CREATE TABLE search_keys (
    rowid INTEGER PRIMARY KEY, path TEXT NOT NULL, id TEXT NOT NULL, scope TEXT NOT NULL,
    kind TEXT NOT NULL, type TEXT NOT NULL, tags TEXT NOT NULL, lifecycle TEXT NOT NULL,
    eligible INTEGER NOT NULL
);
"""

# Secondary indexes, apart so a bulk load can build them once, after inserting (much faster).
PROJECTION_INDEXES = (
    "CREATE INDEX notes_id ON notes (id, eligible)",
    "CREATE INDEX notes_slug ON notes (slug)",
    # Covering indexes of the inventory: its counts and pages never read the note bodies.
    "CREATE INDEX notes_live ON notes (eligible, lifecycle, scope, id)",
    "CREATE INDEX notes_type ON notes (eligible, type, lifecycle, scope, id)",
    "CREATE INDEX notes_kind ON notes (eligible, scope, kind, type)",
    "CREATE INDEX search_keys_live ON search_keys (eligible, lifecycle, scope)",
    "CREATE UNIQUE INDEX dates_path ON dates (path, field)",
    "CREATE INDEX dates_field_start ON dates (field, start)",
    # Covering: a day, week or range query reads only this index, then the notes it matched.
    "CREATE INDEX spans_range ON spans (tier, start)",
    "CREATE INDEX sources_entity ON sources (entity, eligible, source)",
    "CREATE INDEX sources_path ON sources (path)",
    "CREATE INDEX sources_source ON sources (source)",
    "CREATE INDEX facts_subject ON facts (subject, fact_key, path)",
    "CREATE INDEX facts_path ON facts (path)",
    "CREATE INDEX associations_path ON associations (path)",
    # A page of an entity's timeline: its first rows in order, without sorting them all.
    "CREATE INDEX associations_order ON associations (entity, start, id, idx, scope)",
    "CREATE INDEX spans_more ON spans (start) WHERE more = 1",
    "CREATE UNIQUE INDEX targets_path ON targets (path, field, ord)",
    "CREATE INDEX targets_lower ON targets (key_lower)",
    "CREATE INDEX targets_norm ON targets (key_norm)",
    # What is associated with an entity: the notes whose fields resolve to it.
    "CREATE INDEX targets_resolved ON targets (resolved_path, field, path)",
    "CREATE INDEX names_key ON names (key)",
    "CREATE INDEX names_path ON names (path)",
    "CREATE INDEX issues_path ON issues (path, origin)",
    "CREATE INDEX issues_scope ON issues (scope, path, line)",
)

# Kept apart from the DDL (their bodies hold semicolons); a bulk load drops them and fills the
# tables once (`search_fill` of each scope, then SEARCH_KEYS_FILL when eligibility is final),
# much faster than one index update per inserted row. (FTS5's own 'rebuild' cannot read the
# search_text views: SQLite refuses json_each inside it.)
_ALIASES = "(SELECT group_concat(value, char(10)) FROM json_each({}.aliases))"
_KEYS = "rowid, path, id, scope, kind, type, tags, lifecycle, eligible"
_KEYS_DELETE = "DELETE FROM search_keys WHERE rowid = old.rowid;"
_KEYS_INSERT = (
    f"INSERT INTO search_keys ({_KEYS}) VALUES"
    " (new.rowid, new.path, new.id, new.scope, new.kind, new.type, new.tags, new.lifecycle,"
    " new.eligible);"
)
SEARCH_KEYS_FILL = (
    "DELETE FROM search_keys",
    f"INSERT INTO search_keys ({_KEYS}) SELECT {_KEYS} FROM notes",
)
SEARCH_TRIGGERS = {
    "search_keys_insert": f"AFTER INSERT ON notes BEGIN {_KEYS_INSERT} END",
    "search_keys_delete": f"AFTER DELETE ON notes BEGIN {_KEYS_DELETE} END",
    "search_keys_update": (
        "AFTER UPDATE OF path, id, scope, kind, type, tags, lifecycle, eligible ON notes"
        f" BEGIN {_KEYS_DELETE} {_KEYS_INSERT} END"
    ),
}


def search_table(scope: str) -> str:
    """The name of a scope's FTS5 table: the scope's UTF-8 bytes in hex, whatever they are."""
    return "search_" + scope.encode().hex()


def search_objects(scope: str) -> tuple[str, ...]:
    """The DDL of a scope's full-text index: the view of its notes' texts, and the FTS5 table.

    Aliases are indexed as their text, one per line, not as the JSON of notes.aliases (whose
    escapes would tokenise). Rowids are notes' rowids: nothing may VACUUM the state database
    without `search_fill`.
    """
    table = search_table(scope)
    return (
        f"CREATE VIEW {table}_text AS SELECT rowid AS rowid, title,"
        f" {_ALIASES.format('notes')} AS aliases, body FROM notes WHERE scope = {_literal(scope)}",
        f"CREATE VIRTUAL TABLE {table} USING fts5(title, aliases, body, content='{table}_text',"
        f" content_rowid='rowid', tokenize='unicode61 remove_diacritics 2')",
    )


def search_triggers(scope: str) -> dict[str, str]:
    """The triggers that keep a scope's full-text index in step with its notes rows."""
    table, scope_text = search_table(scope), _literal(scope)
    delete = (
        f"INSERT INTO {table} ({table}, rowid, title, aliases, body)"
        f" SELECT 'delete', old.rowid, old.title, {_ALIASES.format('old')}, old.body"
    )
    insert = (
        f"INSERT INTO {table} (rowid, title, aliases, body)"
        f" SELECT new.rowid, new.title, {_ALIASES.format('new')}, new.body"
    )
    return {
        f"{table}_insert": (
            f"AFTER INSERT ON notes WHEN new.scope = {scope_text} BEGIN {insert}; END"
        ),
        f"{table}_delete": (
            f"AFTER DELETE ON notes WHEN old.scope = {scope_text} BEGIN {delete}; END"
        ),
        f"{table}_update": (
            f"AFTER UPDATE OF title, aliases, body, scope ON notes"
            f" WHEN old.scope = {scope_text} OR new.scope = {scope_text}"
            f" BEGIN {delete} WHERE old.scope = {scope_text};"
            f" {insert} WHERE new.scope = {scope_text}; END"
        ),
    }


def search_fill(scope: str) -> tuple[str, ...]:
    """Statements that fill a scope's full-text index from its notes rows, in one pass."""
    table = search_table(scope)
    return (
        f"INSERT INTO {table} ({table}) VALUES ('delete-all')",
        f"INSERT INTO {table} (rowid, title, aliases, body)"
        f" SELECT rowid, title, {_ALIASES.format('notes')}, body FROM notes"
        f" WHERE scope = {_literal(scope)}",
    )


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


# The rows of `associations` for the paths of a JSON list: a path is associated with the entities
# its `entities`, `owner`, `from`, `to` and `subject` resolve to, and with those its eligible
# claims and relationships are about when it is their `source`; never with itself. Body links
# (co-mentions) are not associations. Rows go in in key order (a first load: 2.35 -> 1.9 s).
ASSOCIATE = """
INSERT OR IGNORE INTO associations
SELECT a.entity, s.* FROM (
    SELECT resolved_path AS entity, path FROM targets
    WHERE path IN (SELECT value FROM json_each(:paths)) AND resolved_path <> path
      AND field IN ('entities', 'owner', 'from', 'to', 'subject')
    UNION ALL
    SELECT entity, source FROM sources
    WHERE source IN (SELECT value FROM json_each(:paths)) AND eligible = 1 AND source <> entity
) a JOIN spans s ON s.path = a.path AND s.idx = -1
ORDER BY a.entity, a.path
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
