"""Cheap polling: `GET /graphql` answers carry an ETag, and identical requests within one
snapshot are answered from a bounded cache.

A tag is derived from everything an answer depends on: the snapshot of the readable scopes
(their eligible content) and a digest of their validation issues (which the snapshot does not
cover: a broken note adds an issue and no record), the document, the variables, the operation
name, the readable scopes, the schema, and, for a document that may read the clock (a time
query), the minute its clocks are read at (`Context.clock_us`). It is worked out after the
request's freshness check and from the request's own read transaction, so an answer and its
tag always belong to one snapshot. A document that selects `freshness` (the instant of the
request) or `excerpt` (the file as it reads now, not the index) has no tag and is never kept.

An unchanged poll does not read the database at all: a tag once worked out is remembered for
its query string and readable scopes, with the database's version (`Store.version`, which moves
with every commit of any process) and, for a time query, its minute. While the version and the
minute stay, so do the snapshot, the issues and the tag; the request still awaits its freshness
check first, which reconciles whatever the watcher saw.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from almanac import temporal

__all__ = ["Answers", "Kept", "Known", "etag_matches"]

# Conservative, on the text: a comment or a string naming them counts too.
_UNKEPT = re.compile(r"\b(?:freshness|excerpt)\b")
_CLOCKED = re.compile(r"\b(?:timeline|chronicleDay|chronicleSince|chronicleLastSeen)\b")
_ISSUES_KEPT = 4  # generations whose issue digests are kept
_KNOWN_BYTES = 1 << 20  # query strings whose tags are remembered, at most this many bytes
_ENTRY_BYTES = 256  # what one remembered tag costs besides its query string and scopes


@dataclass(frozen=True, slots=True)
class Kept:
    """A kept answer: its body and the label of its operation."""

    body: bytes
    operation: str


@dataclass(frozen=True, slots=True)
class Known:
    """A tag as worked out, and what it holds for: the database's `version`, and the minute
    (`clock_us`) for a document that may read the clock (None for one that does not)."""

    tag: str
    snapshot: str
    version: int
    clock_us: int | None


class Answers:
    """ETags of GET requests, and the answers kept for them (least recently used first out,
    at most `max_bytes` of bodies). `worked_out` counts the tags worked out from a read
    transaction (the others were remembered: tests)."""

    def __init__(self, *, schema_id: str, max_bytes: int) -> None:
        self.schema_id = schema_id
        self.max_bytes = max_bytes
        self.size = 0
        self._kept: OrderedDict[str, Kept] = OrderedDict()
        self._issues: OrderedDict[str, dict[str, str]] = OrderedDict()
        self._known: OrderedDict[tuple[bytes, tuple[str, ...]], Known] = OrderedDict()
        self._known_bytes = 0
        self.worked_out = 0

    def known(
        self, query_string: bytes, scopes: tuple[str, ...], *, version: int, clock_us: int
    ) -> Known | None:
        """The tag remembered for a request's query string and readable scopes, when it still
        holds: the database's `version` is the one it was worked out at (no commit since), and
        for a time query the minute is the same."""
        found = self._known.get((query_string, scopes))
        if found is None or found.version != version:
            return None
        if found.clock_us is not None and found.clock_us != clock_us:
            return None
        return found

    def work_out(
        self,
        reader: temporal.Reader,
        query_string: bytes,
        params: Mapping[str, str],
        *,
        scopes: tuple[str, ...],
        snapshot: str,
        clock_us: int,
        version: int,
    ) -> Known | None:
        """`tag`, remembered for `known` (`version` read before `reader` began)."""
        self.worked_out += 1
        tag = self.tag(reader, params, scopes=scopes, snapshot=snapshot, clock_us=clock_us)
        if tag is None:
            return None
        clocked = clock_us if _CLOCKED.search(params.get("query", "")) else None
        found = Known(tag, snapshot, version, clocked)
        key = (query_string, scopes)
        size = _size(key)
        if size > _KNOWN_BYTES // 16:
            return found
        if key not in self._known:
            self._known_bytes += size
        self._known[key] = found
        self._known.move_to_end(key)
        while self._known_bytes > _KNOWN_BYTES:
            old, _ = self._known.popitem(last=False)
            self._known_bytes -= _size(old)
        return found

    def tag(
        self,
        reader: temporal.Reader,
        params: Mapping[str, str],
        *,
        scopes: Sequence[str],
        snapshot: str,
        clock_us: int,
    ) -> str | None:
        """The tag of a request's answer read from `reader` (the `snapshot` of `scopes`), or
        None when it has none (no document, one that reads the instant or the files, variables
        that are not an object)."""
        text = params.get("query")
        if not text or _UNKEPT.search(text):
            return None
        try:
            variables = json.loads(params.get("variables") or "{}")
        except ValueError:
            return None
        if not isinstance(variables, dict):
            return None
        issues = self._issue_digests(reader)
        parts = [
            self.schema_id,
            snapshot,
            [issues.get(scope, "") for scope in scopes],
            list(scopes),
            text,
            variables,
            params.get("operationName"),
            clock_us if _CLOCKED.search(text) else None,
        ]
        blob = json.dumps(parts, sort_keys=True, ensure_ascii=False).encode()
        return hashlib.sha256(blob).hexdigest()[:32]

    def get(self, tag: str) -> Kept | None:
        """The answer kept for `tag`."""
        kept = self._kept.get(tag)
        if kept is not None:
            self._kept.move_to_end(tag)
        return kept

    def keep(self, tag: str, kept: Kept) -> None:
        """Keep an answer, dropping the least recently used beyond `max_bytes`."""
        if len(kept.body) > self.max_bytes // 4 or tag in self._kept:
            return
        self._kept[tag] = kept
        self.size += len(kept.body)
        while self.size > self.max_bytes:
            _, old = self._kept.popitem(last=False)
            self.size -= len(old.body)

    def _issue_digests(self, reader: temporal.Reader) -> dict[str, str]:
        generation = temporal.generation(reader)
        found = self._issues.get(generation)
        if found is None:
            found = self._issues[generation] = temporal.issue_digests(reader)
            while len(self._issues) > _ISSUES_KEPT:
                self._issues.popitem(last=False)
        return found


def etag_matches(header: str | None, tag: str) -> bool:
    """Whether an `If-None-Match` header names `tag` (weak comparison, as RFC 9110 says)."""
    if not header:
        return False
    quoted = f'"{tag}"'
    if header == quoted:  # what a poll sends back: the tag it was given
        return True
    if header.strip() == "*":
        return True
    return any(part.strip().removeprefix("W/") == quoted for part in header.split(","))


def _size(key: tuple[bytes, tuple[str, ...]]) -> int:
    """What remembering a tag under `key` (query string, scopes) costs, roughly, in bytes."""
    return _ENTRY_BYTES + len(key[0]) + sum(len(scope) for scope in key[1])
