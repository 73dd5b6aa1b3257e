"""Records, timeline, listing, grouping, chronicle, keyword search, connections."""

from __future__ import annotations

from almanac.temporal.queries.commits import (
    Commit,
    ScopeChanges,
    commits,
    issue_digests,
    latest_commit,
)
from almanac.temporal.queries.connections import (
    EdgeRow,
    NodeRow,
    commit_stamp,
    edge_rows,
    generation,
    node_rows,
)
from almanac.temporal.queries.listing import first_standing, listing
from almanac.temporal.queries.matching import (
    MAX_VARIANT_CHARS,
    MAX_VARIANTS,
    MatchMode,
    search_tokens,
)
from almanac.temporal.queries.occurrences import Occurrences, occurrences
from almanac.temporal.queries.results import (
    MatchQuality,
    RelaxedFallback,
    Retrieval,
    RetrievalReason,
    SearchHit,
    SearchPage,
    SearchStrategy,
    Snippet,
)
from almanac.temporal.queries.rows import (
    Eligibility,
    Scan,
    Timeline,
    TimelineEntry,
    TimelineGroup,
    TimelineQuery,
)
from almanac.temporal.queries.search import search_records
from almanac.temporal.queries.timeline import (
    LastSeen,
    chronicle_day,
    chronicle_since,
    entity_paths,
    entity_rows,
    last_seen,
    timeline,
)

__all__ = [
    "MAX_VARIANTS",
    "MAX_VARIANT_CHARS",
    "Commit",
    "EdgeRow",
    "Eligibility",
    "LastSeen",
    "MatchMode",
    "MatchQuality",
    "NodeRow",
    "Occurrences",
    "RelaxedFallback",
    "Retrieval",
    "RetrievalReason",
    "Scan",
    "ScopeChanges",
    "SearchHit",
    "SearchPage",
    "SearchStrategy",
    "Snippet",
    "Timeline",
    "TimelineEntry",
    "TimelineGroup",
    "TimelineQuery",
    "chronicle_day",
    "chronicle_since",
    "commit_stamp",
    "commits",
    "edge_rows",
    "entity_paths",
    "entity_rows",
    "first_standing",
    "generation",
    "issue_digests",
    "last_seen",
    "latest_commit",
    "listing",
    "node_rows",
    "occurrences",
    "search_records",
    "search_tokens",
    "timeline",
]
