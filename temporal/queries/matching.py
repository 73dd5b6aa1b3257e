"""The keywords of a search, parsed: tokens and MATCH expressions, for the query and its
variants (`keyword_queries`), read by the store (temporal/store/fts.py).

The user's text is never FTS5 syntax. It is cut into tokens by the index's own tokenizer
(unicode61, diacritics removed, case folded), and the MATCH expression is built here from
those tokens, each quoted: `NEAR`, `*`, `^`, `:`, column names, `AND`/`OR`/`NOT` and quotes in
the input are words or separators, nothing else.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum

from almanac.vault import InvalidInput

__all__ = [
    "MAX_QUERY_CHARS",
    "MAX_QUERY_TOKENS",
    "MAX_VARIANTS",
    "MAX_VARIANT_CHARS",
    "MatchMode",
    "Query",
    "expression",
    "keyword_queries",
    "search_tokens",
    "text_tokens",
]

MAX_QUERY_CHARS = 500
MAX_QUERY_TOKENS = 64
MAX_VARIANTS = 5
MAX_VARIANT_CHARS = 100
_TOKENIZER = "unicode61 remove_diacritics 2"  # as in temporal/store/tables.py


class MatchMode(Enum):
    """How the query's tokens must match: all of them, any of them, or in sequence."""

    ALL = "all"
    ANY = "any"
    PHRASE = "phrase"


@dataclass(frozen=True, slots=True)
class Query:
    """One keyword query (the query or a variant): its tokens, its MATCH expression, and each
    token's own (ANY) expression, in the tokens' order."""

    tokens: tuple[str, ...]  # distinct, in order
    match: str
    quoted: tuple[str, ...] = ()


def keyword_queries(query: str, variants: Sequence[str], mode: MatchMode) -> list[Query]:
    """The keyword queries: the query, then each variant; without variants the query alone."""
    if not variants:
        texts = [search_tokens(query)]
    else:
        texts = [text_tokens(query, name="query", limit=MAX_QUERY_CHARS)]
        if len(texts[0]) > MAX_QUERY_TOKENS:
            raise InvalidInput(
                f"Argument 'query' must hold at most {MAX_QUERY_TOKENS} word tokens,"
                f" not {len(texts[0])}"
            )
        texts += [text_tokens(v, name="variants", limit=MAX_VARIANT_CHARS) for v in variants]
        if not any(texts):
            raise InvalidInput(
                "Arguments 'query' and 'variants' hold no word token (letters or digits between"
                " punctuation and spaces)"
            )
    out = []
    for tokens in texts:
        distinct = tuple(dict.fromkeys(tokens))
        match = expression(tokens if mode is MatchMode.PHRASE else distinct, mode) if tokens else ""
        quoted = tuple(expression([t], MatchMode.ANY) for t in distinct)
        out.append(Query(distinct, match, quoted))
    return out


def search_tokens(text: str) -> tuple[str, ...]:
    """The word tokens of a query, cut and folded exactly as the index cuts and folds text.

    Raises:
        InvalidInput: (naming `query`) the text is longer than 500 characters, holds no word
            token or more than 64, or is not valid Unicode.
    """
    tokens = text_tokens(text, name="query", limit=MAX_QUERY_CHARS)
    if not 1 <= len(tokens) <= MAX_QUERY_TOKENS:
        raise InvalidInput(
            f"Argument 'query' must hold 1 to {MAX_QUERY_TOKENS} word tokens (letters or digits"
            f" between punctuation and spaces), not {len(tokens)}"
        )
    return tokens


def text_tokens(text: str, *, name: str, limit: int) -> tuple[str, ...]:
    """The word tokens of a text (none, maybe), cut and folded as the index does.

    Raises:
        InvalidInput: (naming the argument `name`) the text is longer than `limit` characters
            or is not valid Unicode.
    """
    if len(text) > limit:
        raise InvalidInput(f"Argument {name!r} must be at most {limit} characters, not {len(text)}")
    conn = _tokenizer()
    try:
        conn.execute("BEGIN")
        conn.execute("INSERT INTO q (rowid, t) VALUES (1, ?)", (text,))
        return tuple(row[0] for row in conn.execute("SELECT term FROM qv ORDER BY offset"))
    except UnicodeEncodeError as exc:
        raise InvalidInput(f"Argument {name!r} must be valid Unicode (no lone surrogates)") from exc
    finally:
        if conn.in_transaction:
            conn.execute("ROLLBACK")


def expression(tokens: Sequence[str], mode: MatchMode) -> str:
    """The MATCH expression of the tokens: each quoted, joined as the mode says."""
    quoted = ['"' + token.replace('"', '""') + '"' for token in tokens]
    if mode is MatchMode.PHRASE:
        return " + ".join(quoted)
    return (" AND " if mode is MatchMode.ALL else " OR ").join(quoted)


_local = threading.local()


def _tokenizer() -> sqlite3.Connection:
    """A private in-memory FTS5 table with the index's tokenizer, one per thread."""
    conn: sqlite3.Connection | None = getattr(_local, "conn", None)
    if conn is None:
        conn = sqlite3.connect(":memory:", isolation_level=None)
        conn.execute(f"CREATE VIRTUAL TABLE q USING fts5(t, tokenize='{_TOKENIZER}')")
        conn.execute("CREATE VIRTUAL TABLE qv USING fts5vocab(q, instance)")
        _local.conn = conn
    return conn
