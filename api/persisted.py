"""Automatic persisted queries, as Apollo clients speak them: a request may name its document
by hash (`extensions.persistedQuery = {"version": 1, "sha256Hash": "<64 hex digits>"}`).

Without a `query`, the hash names a document this process holds, or the answer is
`PersistedQueryNotFound` (`PERSISTED_QUERY_NOT_FOUND`, status 200: the client sends the
document with its hash next). With a `query`, its SHA-256 (of its UTF-8 text) must be the hash
(else `BAD_USER_INPUT`, "provided sha does not match query", nothing kept); it is kept once it
has parsed and validated within the limits (the view asks `keep` then), so a refused document
never takes a place. Documents are kept per process, the most recently used `max_entries`,
each at most `max_bytes` of text (the body limit: no longer text can reach here anyway). A
document named by hash runs exactly as if it were sent in full: every limit applies to it at
each execution.
"""

from __future__ import annotations

import hashlib
import re
from collections import OrderedDict
from collections.abc import Mapping

from almanac.api.errors import PersistedQueryNotFound
from almanac.vault import InvalidInput

__all__ = ["VERSION", "PersistedQueries", "asked_hash"]

VERSION = 1  # the protocol's only version
_HEX = re.compile(r"[0-9a-f]{64}")


def asked_hash(extensions: object) -> str | None:
    """The hash a request's `extensions` name its document by (lower-case), or None when they
    name none.

    Raises:
        InvalidInput: `persistedQuery` that is not such an object, or of another version.
    """
    if not isinstance(extensions, Mapping) or "persistedQuery" not in extensions:
        return None
    persisted = extensions["persistedQuery"]
    if not isinstance(persisted, Mapping):
        raise InvalidInput("extensions.persistedQuery must be an object")
    version = persisted.get("version")
    if type(version) is not int or version != VERSION:
        raise InvalidInput(f"Unsupported persisted query version (this server speaks {VERSION})")
    digest = persisted.get("sha256Hash")
    if not isinstance(digest, str) or not _HEX.fullmatch(digest.lower()):
        raise InvalidInput("extensions.persistedQuery.sha256Hash must be 64 hexadecimal digits")
    return digest.lower()


class PersistedQueries:
    """Document texts by their SHA-256, the `max_entries` most recently used (per process)."""

    def __init__(self, *, max_entries: int, max_bytes: int) -> None:
        self.max_entries = max_entries
        self.max_bytes = max_bytes
        self._texts: OrderedDict[str, str] = OrderedDict()

    def __len__(self) -> int:
        return len(self._texts)

    def __contains__(self, digest: object) -> bool:
        return digest in self._texts

    def resolve(self, query: str | None, extensions: object) -> tuple[str | None, str | None]:
        """The document text a request runs, and the hash to `keep` it under once it has
        validated (None: nothing to keep). A request without `persistedQuery` runs its own
        `query`.

        Raises:
            PersistedQueryNotFound: only a hash, one this process does not hold.
            InvalidInput: a `persistedQuery` that is not version 1 with a hash, or a `query`
                whose SHA-256 is not the hash.
        """
        digest = asked_hash(extensions)
        if digest is None:
            return query, None
        if query is None or query == "":
            text = self.look_up(digest)
            if text is None:
                raise PersistedQueryNotFound("PersistedQueryNotFound")
            return text, None
        if hashlib.sha256(query.encode("utf-8", "surrogatepass")).hexdigest() != digest:
            raise InvalidInput("provided sha does not match query")
        return query, digest

    def look_up(self, digest: str) -> str | None:
        """The text kept under `digest` (then the most recently used), or None."""
        text = self._texts.get(digest)
        if text is not None:
            self._texts.move_to_end(digest)
        return text

    def keep(self, digest: str, text: str) -> None:
        """Keep `text` under `digest` (its SHA-256), the least recently used going beyond
        `max_entries`; a text over `max_bytes` is not kept."""
        if (
            len(text) > self.max_bytes
            or len(text.encode("utf-8", "surrogatepass")) > self.max_bytes
        ):
            return
        self._texts[digest] = text
        self._texts.move_to_end(digest)
        while len(self._texts) > self.max_entries:
            self._texts.popitem(last=False)
