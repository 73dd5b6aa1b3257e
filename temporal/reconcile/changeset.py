"""One reconcile's change set, worked out in memory before anything is written.

Given the notes whose files changed, a change set finds the *affected* notes:
notes whose links or references may now resolve differently (their target
text matches a name that appeared or vanished), notes sharing an id (or an id
that differs only by case) with a changed note, and, transitively, notes
whose eligibility depends on a note whose eligibility flipped. For exactly
those it recomputes resolution, eligibility, derived issues and the snapshot
digests; it then writes their rows inside the caller's transaction and, once
that committed, becomes the reconciler's memory. Memory shared with the
reconciler is copied on first change, so a failed write leaves it as committed.
"""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Iterable, Mapping

from almanac.temporal.reconcile.intake import take, take_attachments
from almanac.temporal.reconcile.plan import Plan
from almanac.temporal.reconcile.resolution import run
from almanac.temporal.reconcile.writes import write
from almanac.temporal.store import Bulk
from almanac.vault import ParsedNote

__all__ = ["ChangeSet", "snapshot_id"]


class ChangeSet(Plan):
    """One reconcile's plan, in the order a reconcile uses it: `take` each changed file,
    `run`, `write` in the transaction, then `commit` to memory once it committed.

    Its parts: intake and affected sets (`intake`), resolution and eligibility
    (`resolution`), derived issues and supersession chains (`derived`), rows (`writes`).
    """

    def take(self, path: str, parsed: ParsedNote | None) -> None:
        """Take one changed file (None: gone) into the plan: what it says on its own."""
        take(self, path, parsed)

    def take_attachments(self, added: Iterable[str], removed: Iterable[str]) -> None:
        """Take the attachments that appeared and vanished, before any note is resolved."""
        take_attachments(self, added, removed)

    def run(self) -> None:
        """Work out what the files taken affect: resolution, eligibility, digests."""
        run(self)

    def write(self, conn: sqlite3.Connection, bulk: Bulk) -> None:
        """Replace the rows of every changed and affected note, in the caller's transaction."""
        write(self, conn, bulk)


def snapshot_id(digests: Mapping[str, int], scopes: Iterable[str] | None, fingerprint: str) -> str:
    """The snapshot id of `scopes` (all when None): changes when their eligible content does."""
    chosen = sorted(digests) if scopes is None else sorted(set(scopes))
    blob = fingerprint + "|" + "|".join(f"{s}:{digests[s]:x}" for s in chosen if digests.get(s))
    return hashlib.sha256(blob.encode()).hexdigest()[:20]
