"""The projection's input rows in a compact file beside the state database.

A restart reads this file instead of ~440,000 edge rows through SQLite: one table of distinct
strings (JSON) and fixed-width integer arrays that index it, so every id, path and relation is
one shared string object once loaded. The file is plain data (no pickle: whoever can write
beside the state must not be able to run code in the server), and it is never trusted:

- its header names the committed state it was written from (`CompactStamp`: the schema fingerprint,
  the generation counter and the random token of that commit), and a file of any other stamp
  is ignored;
- a SHA-256 of the body is checked before anything is decoded, every index is range-checked
  and every kind parsed, so a torn, truncated or edited file is ignored too.

An ignored file costs one build from the database (the slow path, as before this file), after
which a fresh file is written (atomically: a temporary file, fsync, rename).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import struct
import sys
from array import array
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from almanac import temporal
from almanac.graph.projection import Projection
from almanac.graph.view import Edge
from almanac.temporal import NodeRow, ReconcileResult, RecordKind, Store

log = logging.getLogger("almanac")

__all__ = ["CompactFile", "CompactRows", "CompactStamp", "read_rows", "read_stamped", "write_rows"]

_MAGIC = b"ALMANAC-GRAPH\n"
_FORMAT = 1
_NONE = -(2**63)  # an absent validity bound in the int64 arrays
_NOTE_COLUMNS = 8  # path, scope, id, kind, type, title, lifecycle (strings); eligible
_EDGE_COLUMNS = 9  # scope, path, src, dst, relation, evidence, revision (strings); line, line_end


@dataclass(frozen=True, slots=True)
class CompactStamp:
    """Which committed state a compact file holds the rows of."""

    fingerprint: str
    generation: str
    commit: str


@dataclass(frozen=True, slots=True)
class CompactRows:
    """The rows a projection is built from: valid notes, and every edge with its scope."""

    notes: list[NodeRow]
    edges: list[tuple[str, Edge]]


class CompactFile:
    """The compact file beside a state database (`<state>.graph`): which state it holds, the
    projection it gives at start, and the rows kept in it for the next start."""

    def __init__(self, state: Path) -> None:
        self.path = state.with_name(state.name + ".graph")
        self.written: CompactStamp | None = None  # the state the file holds, once known

    @staticmethod
    def stamp_of(store: Store) -> CompactStamp:
        """The stamp of the state `store` has committed."""
        generation, commit = temporal.commit_stamp(store)
        return CompactStamp(store.fingerprint, generation, commit)

    def load(self, store: Store, found: CompactStamp | None) -> tuple[Projection, str] | None:
        """The projection of the state `found` at start, and where it came from: the file of
        that very state ("compact"), or of an older state brought up to date with what the
        commit log says changed since ("compact+log": another process committed after the file
        was written, or this one was killed before writing it). None when there is no such
        file or the log cannot say (a gap, a commit naming too much, a database made again):
        the projection is then built from the database."""
        if found is None:
            return None
        stamped = read_stamped(self.path)
        if stamped is None or stamped[0].fingerprint != found.fingerprint:
            return None
        held, rows = stamped
        changes = None
        if held != found:
            with store.read() as reader:
                changes = temporal.followed_since(reader, held.generation, held.commit)
            if changes is None:
                return None
        projection = Projection.from_rows(rows.notes, rows.edges)
        self.written = held
        if changes is None:
            return projection, "compact"
        # Read from the committed state now (at or past `found`): what reconciles change after
        # this read waits in the caller's backlog, and a change applied twice reads the same
        # rows again.
        projection.apply(store, ReconcileResult.of_followed(changes))
        return projection, "compact+log"

    def write(
        self, stamp: CompactStamp, notes: list[NodeRow], edges: list[tuple[str, Edge]]
    ) -> None:
        """Keep the rows of the state `stamp` (a failure is logged: the next start builds)."""
        try:
            write_rows(self.path, stamp, notes, edges)
            self.written = stamp
        except OSError as exc:
            log.warning("Could not keep the graph projection in %s: %s", self.path, exc)


def write_rows(
    path: Path, stamp: CompactStamp, notes: Iterable[NodeRow], edges: Iterable[tuple[str, Edge]]
) -> None:
    """Write the rows of the state `stamp` names to `path`, atomically.

    Raises:
        OSError: the file cannot be written (the caller logs it; the next start builds).
    """
    index: dict[str, int] = {}

    def at(text: str) -> int:
        found = index.get(text)
        if found is None:
            found = index[text] = len(index)
        return found

    note_ints = array("i")
    for n in notes:
        note_ints.extend(
            (
                at(n.path),
                at(n.scope),
                at(n.id),
                at(n.kind.value),
                at(n.type),
                at(n.title),
                at(n.lifecycle),
                int(n.eligible),
            )
        )
    edge_ints = array("i")
    bounds = array("q")
    for scope, e in edges:
        edge_ints.extend(
            (
                at(scope),
                at(e.path),
                at(e.src),
                at(e.dst),
                at(e.relation),
                at(e.evidence),
                at(e.revision),
                e.line,
                e.line_end,
            )
        )
        bounds.extend(
            (
                _NONE if e.valid_from is None else e.valid_from,
                _NONE if e.valid_until is None else e.valid_until,
            )
        )
    strings = json.dumps(list(index), ensure_ascii=False).encode("utf-8")
    parts = [strings, _le(note_ints), _le(edge_ints), _le(bounds)]
    digest = hashlib.sha256()
    for part in parts:
        digest.update(part)
    header = json.dumps(
        {
            "format": _FORMAT,
            "fingerprint": stamp.fingerprint,
            "generation": stamp.generation,
            "commit": stamp.commit,
            "sizes": [len(p) for p in parts],
            "sha256": digest.hexdigest(),
        }
    ).encode("utf-8")
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with open(temporary, "wb") as out:
            out.write(_MAGIC + struct.pack("<I", len(header)) + header)
            for part in parts:
                out.write(part)
            out.flush()
            os.fsync(out.fileno())
        os.replace(temporary, path)
    finally:
        with contextlib.suppress(FileNotFoundError):
            temporary.unlink()


def read_rows(path: Path, stamp: CompactStamp) -> CompactRows | None:
    """The rows in `path` if it holds exactly the state `stamp` names, intact; else None."""
    found = read_stamped(path, stamp)
    return None if found is None else found[1]


def read_stamped(
    path: Path, stamp: CompactStamp | None = None
) -> tuple[CompactStamp, CompactRows] | None:
    """The state `path` holds and its rows, if intact (and of `stamp`, when given); else None."""
    try:
        with open(path, "rb") as source:
            data = source.read()
    except OSError:
        return None
    try:
        return _decode(data, stamp)
    except (ValueError, KeyError, IndexError, TypeError, struct.error, UnicodeDecodeError):
        return None  # torn, edited or of another format: never used


def _decode(data: bytes, stamp: CompactStamp | None) -> tuple[CompactStamp, CompactRows] | None:
    if not data.startswith(_MAGIC):
        return None
    at = len(_MAGIC)
    (length,) = struct.unpack_from("<I", data, at)
    at += 4
    header = json.loads(data[at : at + length].decode("utf-8"))
    at += length
    if not isinstance(header, dict) or header.get("format") != _FORMAT:
        return None
    held = CompactStamp(
        str(header["fingerprint"]), str(header["generation"]), str(header["commit"])
    )
    if stamp is not None and held != stamp:
        return None
    sizes = header["sizes"]
    if len(sizes) != 4 or sum(sizes) != len(data) - at or min(sizes) < 0:
        return None
    body = memoryview(data)[at:]
    if hashlib.sha256(body).hexdigest() != header["sha256"]:
        return None
    parts: list[memoryview] = []
    for size in sizes:
        parts.append(body[:size])
        body = body[size:]
    strings = json.loads(bytes(parts[0]).decode("utf-8"))
    if not isinstance(strings, list) or not all(isinstance(s, str) for s in strings):
        return None
    strings = [sys.intern(s) for s in strings]  # shared with the reconciler's memory
    note_ints = _ints("i", parts[1])
    edge_ints = _ints("i", parts[2])
    bounds = _ints("q", parts[3])
    if len(note_ints) % _NOTE_COLUMNS or len(edge_ints) % _EDGE_COLUMNS:
        return None
    if len(bounds) != 2 * (len(edge_ints) // _EDGE_COLUMNS):
        return None
    top = len(strings)
    for columns, width, count in ((note_ints, _NOTE_COLUMNS, 7), (edge_ints, _EDGE_COLUMNS, 7)):
        for column in range(count):
            chosen = columns[column::width]
            if chosen and (min(chosen) < 0 or max(chosen) >= top):
                return None
    kinds = {s: RecordKind(s) for s in {strings[i] for i in note_ints[3::_NOTE_COLUMNS]}}
    s = strings
    notes = [
        NodeRow(s[p], s[sc], s[i], kinds[s[k]], s[t], s[ti], s[lc], bool(el))
        for p, sc, i, k, t, ti, lc, el in _rows(note_ints, _NOTE_COLUMNS)
    ]
    edges: list[tuple[str, Edge]] = []
    append = edges.append
    for n, (sc, p, src, dst, rel, ev, rev, line, line_end) in enumerate(
        _rows(edge_ints, _EDGE_COLUMNS)
    ):
        vf = bounds[2 * n]
        vu = bounds[2 * n + 1]
        append(
            (
                s[sc],
                Edge(
                    s[rel],
                    s[src],
                    s[dst],
                    s[ev],
                    s[p],
                    line,
                    line_end,
                    s[rev],
                    None if vf == _NONE else vf,
                    None if vu == _NONE else vu,
                ),
            )
        )
    return held, CompactRows(notes, edges)


def _le(values: array[int]) -> bytes:
    """The array's bytes, little-endian whatever the machine."""
    if sys.byteorder == "big":
        values = array(values.typecode, values)
        values.byteswap()
    return values.tobytes()


def _ints(typecode: str, raw: memoryview) -> array[int]:
    values = array(typecode)
    values.frombytes(raw)  # ValueError unless a whole number of items
    if sys.byteorder == "big":
        values.byteswap()
    return values


def _rows(values: array[int], width: int) -> Iterable[tuple[int, ...]]:
    columns = [values[c::width] for c in range(width)]
    return zip(*columns, strict=True)
