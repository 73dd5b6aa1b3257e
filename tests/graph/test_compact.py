"""The compact file gives back exactly the projection built edge by edge, and is never used when
it is not of the state asked for or not intact."""

from __future__ import annotations

import hashlib
import json
import struct
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from almanac import graph, temporal
from almanac.temporal.store import COMMITS_KEPT
from tests.graph.test_projection import edges, state

NOW = 1_800_000_000_000_000
BENCH = Path(__file__).resolve().parents[2] / "bench"
STAMP = graph.CompactStamp("f" * 16, "3", "ab" * 16)

World = tuple[Path, temporal.Store, temporal.Reconciler]


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("generated") / "vault"
    command = [sys.executable, "generate.py", str(root), "--notes", "400"]
    subprocess.run(command, cwd=BENCH, check=True, capture_output=True, timeout=120)
    return root


@pytest.fixture
def world(generated: Path, tmp_path: Path) -> Iterator[World]:
    root = tmp_path / "vault"
    subprocess.run(["cp", "-r", str(generated), str(root)], check=True)
    store = temporal.Store.open(tmp_path / "state.db")
    reconciler = temporal.Reconciler(store, root, temporal.VaultConfig())
    reconciler.reconcile(now_us=NOW)
    yield root, store, reconciler
    store.close()


def loaded(built: graph.Projection, path: Path) -> graph.Projection:
    graph.write_rows(path, STAMP, *built.rows())
    rows = graph.read_rows(path, STAMP)
    assert rows is not None
    return graph.Projection.from_rows(rows.notes, rows.edges)


def test_the_compact_file_gives_the_projection_built_edge_by_edge(
    world: World, tmp_path: Path
) -> None:
    _, store, _ = world
    built = graph.Projection.build(store)
    again = loaded(built, tmp_path / "state.db.graph")
    assert len(edges(built)) > 1000  # a generated vault: hubs, parallel edges, validity
    # Edges are keyed by `Edge`, which holds every attribute (relation, ends, evidence,
    # locator, validity): equal keys are equal attributes.
    assert edges(again) == edges(built)
    assert state(again) == state(built)


def _edit(root: Path) -> None:
    """Three kinds of change: a new link, a record gone, a relationship's relation renamed."""
    notes = sorted(root.rglob("*.md"))
    person = next(p for p in notes if "/people/" in str(p))
    person_id = person.read_text().split("id: ", 1)[1].split("\n", 1)[0]
    notes[3].write_text(notes[3].read_text() + f"\nSee [[{person_id}]].\n")
    notes[10].unlink()
    relationship = next(p for p in notes if "/rels/" in str(p))
    relationship.write_text(relationship.read_text().replace("relation: ", "relation: x_", 1))


def test_a_loaded_projection_follows_edits_as_a_built_one_does(
    world: World, tmp_path: Path
) -> None:
    root, store, reconciler = world
    built = graph.Projection.build(store)
    again = loaded(built, tmp_path / "state.db.graph")
    _edit(root)
    result = reconciler.reconcile(now_us=NOW)
    assert result.changed
    built.apply(store, result)
    again.apply(store, result)
    fresh = graph.Projection.build(store)
    assert edges(again) == edges(fresh) == edges(built)
    assert state(again) == state(fresh)


def _flip_body_byte(data: bytes) -> bytes:
    return data[:-10] + bytes([data[-10] ^ 1]) + data[-9:]


def _bad_index_with_a_good_checksum(data: bytes) -> bytes:
    """A body whose checksum is right but whose first note's path is string -1 (Python would
    read it as the last string: a wrong row, not an error)."""
    magic = b"ALMANAC-GRAPH\n"
    (length,) = struct.unpack_from("<I", data, len(magic))
    start = len(magic) + 4
    header = json.loads(data[start : start + length])
    body = bytearray(data[start + length :])
    at = header["sizes"][0]  # the first note's path index
    body[at : at + 4] = struct.pack("<i", -1)
    header["sha256"] = hashlib.sha256(body).hexdigest()
    head = json.dumps(header).encode()
    return magic + struct.pack("<I", len(head)) + head + bytes(body)


DAMAGE: dict[str, Callable[[bytes], bytes]] = {
    "empty": lambda data: b"",
    "truncated": lambda data: data[: len(data) // 2],
    "byte-flipped": _flip_body_byte,
    "other-magic": lambda data: b"X" + data[1:],
    "header-cut": lambda data: data[:20],
    "bad-index-good-checksum": _bad_index_with_a_good_checksum,
}


@pytest.mark.parametrize("damage", DAMAGE.values(), ids=DAMAGE.keys())
def test_a_damaged_compact_file_is_never_used(
    world: World, tmp_path: Path, damage: Callable[[bytes], bytes]
) -> None:
    _, store, _ = world
    path = tmp_path / "state.db.graph"
    graph.write_rows(path, STAMP, *graph.Projection.build(store).rows())
    assert graph.read_rows(path, STAMP) is not None
    path.write_bytes(damage(path.read_bytes()))
    assert graph.read_rows(path, STAMP) is None


@pytest.mark.parametrize(
    "other",
    [
        graph.CompactStamp("e" * 16, STAMP.generation, STAMP.commit),
        graph.CompactStamp(STAMP.fingerprint, "4", STAMP.commit),
        graph.CompactStamp(STAMP.fingerprint, STAMP.generation, "cd" * 16),
    ],
    ids=["other-fingerprint", "other-generation", "other-commit"],
)
def test_a_compact_file_of_another_state_is_never_used(
    world: World, tmp_path: Path, other: graph.CompactStamp
) -> None:
    _, store, _ = world
    path = tmp_path / "state.db.graph"
    graph.write_rows(path, STAMP, *graph.Projection.build(store).rows())
    assert graph.read_rows(path, other) is None
    assert graph.read_rows(tmp_path / "missing.graph", STAMP) is None


def test_every_commit_names_a_new_state(world: World) -> None:
    root, store, reconciler = world
    before = temporal.commit_stamp(store)
    note = sorted(root.rglob("*.md"))[0]
    note.write_text(note.read_text() + "\nOne more line.\n")
    reconciler.reconcile(now_us=NOW)
    after = temporal.commit_stamp(store)
    assert after[0] != before[0] and after[1] != before[1] and len(after[1]) == 32


def test_an_older_compact_file_is_brought_up_to_date_from_the_commit_log(
    world: World, tmp_path: Path
) -> None:
    """Another process committed after the file was written (or this one was killed before
    writing it): the file still serves, with what the log says changed since."""
    root, store, reconciler = world
    compact = graph.CompactFile(tmp_path / "state.db")
    compact.write(graph.CompactFile.stamp_of(store), *graph.Projection.build(store).rows())
    _edit(root)
    assert reconciler.reconcile(now_us=NOW).changed
    note = sorted(root.rglob("*.md"))[20]
    note.write_text(note.read_text() + "\nA second commit.\n")
    assert reconciler.reconcile(now_us=NOW).changed
    loaded = compact.load(store, graph.CompactFile.stamp_of(store))
    assert loaded is not None
    projection, source = loaded
    fresh = graph.Projection.build(store)
    assert source == "compact+log"
    assert edges(projection) == edges(fresh)
    assert state(projection) == state(fresh)


def test_an_older_compact_file_is_not_followed_past_what_the_log_can_say(
    world: World, tmp_path: Path
) -> None:
    root, store, reconciler = world
    compact = graph.CompactFile(tmp_path / "state.db")
    held = graph.CompactFile.stamp_of(store)
    rows = graph.Projection.build(store).rows()
    _edit(root)
    reconciler.reconcile(now_us=NOW)
    found = graph.CompactFile.stamp_of(store)
    # The same generation of another database (made again): its token is not the logged one.
    compact.write(graph.CompactStamp(held.fingerprint, held.generation, "cd" * 16), *rows)
    assert compact.load(store, found) is None
    # A gap: the log keeps the last COMMITS_KEPT commits.
    compact.write(held, *rows)
    assert compact.load(store, found) is not None
    note = sorted(root.rglob("*.md"))[20]
    for n in range(COMMITS_KEPT):
        note.write_text(note.read_text() + f"\nCommit {n}.\n")
        assert reconciler.reconcile(now_us=NOW).changed
    assert compact.load(store, graph.CompactFile.stamp_of(store)) is None
