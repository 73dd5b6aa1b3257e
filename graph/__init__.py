"""The networkx projection of the state and everything asked of it by connection."""

from __future__ import annotations

from graph.lookup import LookupResult, LookupStatus, lookup

__all__ = ["LookupResult", "LookupStatus", "lookup"]
