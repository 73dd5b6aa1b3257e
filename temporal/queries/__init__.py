"""Records, timeline, listing, grouping, chronicle, keyword search, connections."""

from __future__ import annotations

from temporal.queries.connections import (
    EdgeRow,
    NodeRow,
    declared_names,
    edge_rows,
    generation,
    node_rows,
    seed_matches,
)
from temporal.queries.listing import first_standing, listing
from temporal.queries.rows import (
    Eligibility,
    Scan,
    Timeline,
    TimelineEntry,
    TimelineGroup,
    TimelineQuery,
    entity_paths,
    entity_rows,
)
from temporal.queries.search import (
    MatchMode,
    SearchHit,
    SearchPage,
    Snippet,
    search_records,
    search_tokens,
)
from temporal.queries.timeline import (
    LastSeen,
    Occurrences,
    chronicle_day,
    chronicle_since,
    last_seen,
    occurrences,
    timeline,
)

__all__ = [
    "EdgeRow",
    "Eligibility",
    "LastSeen",
    "MatchMode",
    "NodeRow",
    "Occurrences",
    "Scan",
    "SearchHit",
    "SearchPage",
    "Snippet",
    "Timeline",
    "TimelineEntry",
    "TimelineGroup",
    "TimelineQuery",
    "chronicle_day",
    "chronicle_since",
    "declared_names",
    "edge_rows",
    "entity_paths",
    "entity_rows",
    "first_standing",
    "generation",
    "last_seen",
    "listing",
    "node_rows",
    "occurrences",
    "search_records",
    "search_tokens",
    "seed_matches",
    "timeline",
]
