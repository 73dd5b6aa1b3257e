"""What the state file says about its commits: the log each reconcile leaves in `meta`, and
digests of the validation issues. A server follows the file through them, so that every
process serving one state file sees every commit, whichever process wrote it."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from almanac.temporal.store import Reader

__all__ = ["Commit", "ScopeChanges", "commits", "issue_digests", "latest_commit"]


@dataclass(frozen=True, slots=True)
class ScopeChanges:
    """The records one commit added, changed or removed in one scope."""

    count: int
    ids: tuple[str, ...]  # the first of them (at most COMMIT_IDS), sorted


@dataclass(frozen=True, slots=True)
class Commit:
    """One committed write of the state file.

    `changes` is None when the log no longer holds this commit (it fell out of the last
    COMMITS_KEPT, or the file was written before there was a log): then only its digests
    are known (those of the state read).
    """

    generation: int
    at_us: int | None
    digests: Mapping[str, int]
    changes: Mapping[str, ScopeChanges] | None


def commits(reader: Reader, *, after: int) -> list[Commit]:
    """The commits after generation `after` that the reader's snapshot holds, oldest first.

    A gap (commits no longer logged) is one `Commit` with `changes` None, at the generation
    read, carrying the digests read.
    """
    current = _generation(reader)
    if current <= after:
        return []
    found: dict[int, Commit] = {}
    rows = reader.run(
        "SELECT key, value FROM meta WHERE key >= 'commit:' AND key < 'commit;'"
    ).fetchall()
    for key, value in rows:
        generation = int(key.partition(":")[2])
        if after < generation <= current:
            found[generation] = _commit(generation, value)
    if all(g in found for g in range(after + 1, current + 1)):
        return [found[g] for g in sorted(found)]
    return [Commit(current, None, MappingProxyType(reader.digests()), None)]


def latest_commit(reader: Reader) -> Commit:
    """The commit the reader's snapshot ends with (its log entry when it has one)."""
    current = _generation(reader)
    row = reader.run("SELECT value FROM meta WHERE key = ?", (f"commit:{current}",)).fetchone()
    if row is not None:
        return _commit(current, row[0])
    return Commit(current, None, MappingProxyType(reader.digests()), None)


def issue_digests(reader: Reader) -> dict[str, str]:
    """Per scope, a digest of its validation issues as the reader's snapshot holds them."""
    hashes: dict[str, int] = {}
    for row in reader.run(
        "SELECT scope, path, line, field, code, message, record_id, origin FROM issues"
    ):
        blob = json.dumps(row[1:]).encode()
        part = int.from_bytes(hashlib.sha256(blob).digest()[:16], "big")
        # A sum: the same multiset of rows in any order (XOR would cancel a repeated issue).
        hashes[row[0]] = (hashes.get(row[0], 0) + part) % (1 << 128)
    return {scope: format(value, "x") for scope, value in hashes.items()}


def _generation(reader: Reader) -> int:
    row = reader.run("SELECT value FROM meta WHERE key = 'generation'").fetchone()
    return int(row[0]) if row else 0


def _commit(generation: int, value: str) -> Commit:
    data = json.loads(value)
    return Commit(
        generation,
        int(data["at"]),
        MappingProxyType({k: int(v, 16) for k, v in data["digests"].items()}),
        MappingProxyType(
            {s: ScopeChanges(int(c[0]), tuple(c[1])) for s, c in data["changes"].items()}
        ),
    )
