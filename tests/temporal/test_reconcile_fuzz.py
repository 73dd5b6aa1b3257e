"""Random edit sequences through one reconciler must match a clean rebuild after every step.

Each case is a small vault and a few steps of edits, all drawn from one seeded generator, so a
failing id (`collide-watch-seed7`) replays exactly. After the initial reconcile and after every
step the projection tables (notes, dates, targets, the edges view, names, issues and the
per-scope digests) must equal a rebuild from the vault alone that starts from the same
safeguards (`guards` and `seen` remember history and cannot be rebuilt).

A family picks what the notes collide on:

- `collide`: a few ids, titles and aliases shared between notes; claims and relationships
  depending on each other; withdrawn and superseded notes, some with `reinstated_at`.
- `tangle`: ids differing only in case, the same slug in two folders, invalid notes, Markdown
  links, embeds and `entities`; `scoped` is the same with a `t/` scope.
- `copies`: Syncthing conflict copies appearing, diverging (withdrawn) and being resolved,
  renames, and names and file names written in NFC and NFD, in two scopes.

A mode picks how the reconciler hears of a step: `scan` (full scans), `watch` (only the
changed paths, like the watcher) or `restart` (the store and reconciler are reopened before
each step, which then alternates between a scan and watcher paths).

The default run takes a few seeds of each; `-m soak` runs many more.
"""

from __future__ import annotations

import itertools
import json
import os
import random
import shutil
import sqlite3
import unicodedata
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Literal

import pytest

import temporal
from tests.temporal.test_reconcile import NOW, clean_rebuild, dump

Dump = dict[str, list[tuple[object, ...]]]
Step = dict[str, str | None]
Mode = Literal["scan", "watch", "restart"]

MODES: tuple[Mode, ...] = ("scan", "watch", "restart")
DEFAULT_SEEDS = range(4)
SOAK_SEEDS = range(4, 150)
CONFLICT = ".sync-conflict-20260101-101010-ABCDEF"
NFC = unicodedata.normalize("NFC", "Café")
NFD = unicodedata.normalize("NFD", "Café")


# -- generators ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Case:
    """A starting vault and the edits applied to it, one dict (path -> text or None) a step."""

    initial: Step
    steps: tuple[Step, ...]


@dataclass(frozen=True, slots=True)
class Family:
    """How to draw a case from a seed, and the configuration the vault is reconciled with."""

    draw: Callable[[random.Random], Case]
    config: temporal.VaultConfig = field(default_factory=temporal.VaultConfig)


def frontmatter(lines: list[str], body: str = "") -> str:
    return "---\n" + "\n".join(lines) + "\n---\n" + body + "\n"


def collide_note(rng: random.Random) -> str:
    ids, names = ["a", "b", "c", "d", "e"], ["Alpha", "Beta", "a", "b", "Gamma"]
    kind = rng.choice(["person", "person", "claim", "relationship", "note"])
    lines = [f"id: {rng.choice(ids)}"] if rng.random() < 0.3 else []
    lines.append(f"type: {kind}")
    if rng.random() < 0.5:
        lines.append(f"title: {rng.choice(names)}")
    if rng.random() < 0.3:
        lines.append(f"aliases: [{rng.choice(names)}]")
    if kind == "claim":
        lines.append(f"subject: {rng.choice(ids + names)}")
    if kind == "relationship":
        lines += [f"from: {rng.choice(ids + names)}", f"to: {rng.choice(ids + names)}"]
        lines.append("relation: knows")
    if rng.random() < 0.3:
        lines.append(f"owner: {rng.choice(ids + names)}")
    lifecycle = rng.random()
    if lifecycle < 0.15:
        lines.append("lifecycle: withdrawn")
    elif lifecycle < 0.35:
        lines += ["lifecycle: superseded", f"superseded_by: {rng.choice(ids)}"]
    if rng.random() < 0.1:
        lines.append(f"reinstated_at: 20{rng.choice(['20', '40'])}-01-01")
    body = " ".join(f"[[{rng.choice(ids + names)}]]" for _ in range(rng.randint(0, 2)))
    return frontmatter(lines, body)


def tangle_note(rng: random.Random, ids: list[str], names: list[str]) -> str:
    if rng.random() < 0.07:
        return rng.choice(
            ["---\ntype: [\n---\n", "---\nid: 'bad id'\n---\n", "no frontmatter [[n]] [l](n.md)\n"]
        )

    def target() -> str:
        return rng.choice(ids + names)

    kind = rng.choice(["person", "claim", "relationship", "note", "meeting"])
    lines = [f"id: '{rng.choice(ids)}'"] if rng.random() < 0.35 else []
    lines.append(f"type: {kind}")
    if rng.random() < 0.5:
        lines.append(f"title: '{rng.choice(names)}'")
    if rng.random() < 0.3:
        lines.append(f"aliases: ['{rng.choice(names)}']")
    if kind == "claim":
        lines.append(f"subject: '{target()}'")
        if rng.random() < 0.5:
            lines.append(f"source: '{target()}'")
    if kind == "relationship":
        lines += [f"from: '{target()}'", f"to: '{target()}'", "relation: knows"]
    if rng.random() < 0.3:
        lines.append(f"owner: '{target()}'")
    if rng.random() < 0.3:
        lines.append(f"entities: ['{target()}', '[[{target()}]]']")
    lifecycle = rng.random()
    if lifecycle < 0.1:
        lines.append("lifecycle: withdrawn")
    elif lifecycle < 0.3:
        lines += ["lifecycle: superseded", f"superseded_by: '{target()}'"]
    links = [
        f"[[{target()}]]",
        f"[m]({rng.choice(['n.md', '../n.md', 'c.md', 'x/n.md'])})",
        f"![[{target()}|l]]",
    ]
    body = " ".join(rng.choice(links) for _ in range(rng.randint(0, 3)))
    return frontmatter(lines, body)


def draw_steps(
    rng: random.Random, paths: list[str], note: Callable[[random.Random], str], *, most: int
) -> Case:
    initial = {p: note(rng) for p in rng.sample(paths, rng.randint(2, min(len(paths), 2 + most)))}
    steps = []
    for _ in range(rng.randint(1, 4)):
        step: Step = {}
        for _ in range(rng.randint(1, most)):
            step[rng.choice(paths)] = None if rng.random() < 0.25 else note(rng)
        steps.append(step)
    return Case(initial, tuple(steps))


def draw_collide(rng: random.Random) -> Case:
    paths = ["a.md", "b.md", "c.md", "d.md", "e.md", "x/a.md", "x/f.md", "y/b.md"]
    return draw_steps(rng, paths, collide_note, most=2)


def draw_tangle(rng: random.Random) -> Case:
    ids = ["a", "A", "b", "x/c", "y/c", "c", "n"]
    names = ["Alpha", "alpha ", "Beta", "c", "n", "x/n"]
    paths = [
        "a.md", "A.md", "b.md", "c.md", "n.md", "x/c.md", "x/n.md", "y/c.md", "y/n.md",
        "t/n.md", "t/z.md",
    ]  # fmt: skip
    return draw_steps(rng, paths, lambda r: tangle_note(r, ids, names), most=3)


def draw_copies(rng: random.Random) -> Case:
    """Conflict copies of a few notes, in two scopes, with NFC and NFD names and file names."""
    ids = ["n", "t/n", NFC.lower(), "café-bar"]
    names = [NFC, NFD, NFC.upper(), "n", "Bar"]
    originals = ["n.md", "t/n.md", f"{NFC}.md", f"t/{NFD}.md", "bar.md"]
    state: Step = {p: tangle_note(rng, ids, names) for p in rng.sample(originals, 3)}
    initial = dict(state)
    steps = []
    for _ in range(rng.randint(1, 4)):
        step: Step = {}
        for _ in range(rng.randint(1, 3)):
            path = rng.choice(originals)
            copy = path.removesuffix(".md") + CONFLICT + ".md"
            text = state.get(path)
            action = rng.random()
            if action < 0.3 and text is not None:  # a sync tool keeps both versions
                if rng.random() < 0.5:
                    text = text.replace("---\n", "---\nlifecycle: withdrawn\n", 1)
                step[copy] = text
            elif action < 0.45:  # the conflict is resolved by deleting the copy
                step[copy] = None
            elif action < 0.6 and text is not None:  # a rename, reported as two paths
                other = rng.choice([p for p in originals if p != path])
                step[path], step[other] = None, text
            elif action < 0.7:
                step[path] = None
            else:
                step[path] = tangle_note(rng, ids, names)
        state.update(step)
        steps.append(step)
    return Case(initial, tuple(steps))


FAMILIES = {
    "collide": Family(draw_collide),
    "tangle": Family(draw_tangle),
    "scoped": Family(draw_tangle, temporal.VaultConfig(scopes=MappingProxyType({"tx": "t/"}))),
    "copies": Family(draw_copies, temporal.VaultConfig(scopes=MappingProxyType({"tx": "t/"}))),
}


# -- running ------------------------------------------------------------------------------


def write_files(root: Path, files: Step, clock: Iterator[int]) -> None:
    """Write or delete files; every write gets a new mtime so a stat alone tells it changed."""
    for path, text in files.items():
        target = root / path
        if text is None:
            target.unlink(missing_ok=True)
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text)
            stamp = next(clock)
            os.utime(target, ns=(stamp, stamp))


def projections(db: Path) -> Dump:
    return canonical(dump(db))


def canonical(tables: Dump) -> Dump:
    """The digests as a sorted mapping: their JSON key order depends on the order of writes."""
    digests = [(json.dumps(json.loads(str(row[0])), sort_keys=True),) for row in tables["digests"]]
    return {**tables, "digests": digests}


def rebuild(root: Path, tmp_path: Path, state: Path, config: temporal.VaultConfig) -> Dump:
    """`clean_rebuild` of test_reconcile, with this configuration when it is not the default."""
    if config == temporal.VaultConfig():
        return canonical(clean_rebuild(root, tmp_path, state))
    db = tmp_path / "clean.db"
    fingerprint = config.fingerprint(temporal.FINGERPRINT)
    temporal.Store.open(db, fingerprint=fingerprint).close()
    with sqlite3.connect(db) as conn:
        conn.execute("ATTACH DATABASE ? AS old", (str(state),))
        conn.execute("INSERT INTO guards SELECT * FROM old.guards")
        conn.execute("INSERT INTO seen SELECT * FROM old.seen")
    conn.close()
    store = temporal.Store.open(db, fingerprint=fingerprint)
    try:
        temporal.Reconciler(store, root, config).reconcile(now_us=NOW)
    finally:
        store.close()
    try:
        return projections(db)
    finally:
        for leftover in tmp_path.glob("clean.db*"):
            leftover.unlink()


def mismatch(got: Dump, want: Dump) -> list[str]:
    lines = []
    for table in want:
        have, need = set(map(repr, got[table])), set(map(repr, want[table]))
        lines += [f"{table} incremental only: {row}" for row in sorted(have - need)]
        lines += [f"{table} clean only:       {row}" for row in sorted(need - have)]
    return lines


class Session:
    """One state database and the reconciler over it, reopened on demand like a restart."""

    def __init__(self, root: Path, db: Path, config: temporal.VaultConfig) -> None:
        self.root, self.db, self.config = root, db, config
        self.store = temporal.Store.open(db, fingerprint=config.fingerprint(temporal.FINGERPRINT))
        self.reconciler = temporal.Reconciler(self.store, root, config)

    def restart(self) -> None:
        self.store.close()
        self.__init__(self.root, self.db, self.config)  # type: ignore[misc]

    def reconcile(self, now_us: int, paths: list[str] | None = None) -> None:
        self.reconciler.reconcile(now_us=now_us, paths=paths)

    def check(self, tmp_path: Path, label: str) -> None:
        lines = mismatch(projections(self.db), rebuild(self.root, tmp_path, self.db, self.config))
        assert not lines, f"{label}: incremental state differs from a clean rebuild\n" + "\n".join(
            lines
        )


def run_steps(
    tmp_path: Path,
    initial: Step,
    steps: list[Step] | tuple[Step, ...],
    mode: Mode,
    config: temporal.VaultConfig | None = None,
) -> Session:
    """Reconcile `initial`, then each step in `mode`, checking against a clean rebuild each time."""
    config = config or temporal.VaultConfig()
    root = tmp_path / "vault"
    root.mkdir()
    clock = itertools.count(1_700_000_000_000_000_000, 1_000_000)
    write_files(root, initial, clock)
    session = Session(root, tmp_path / "state.db", config)
    session.reconcile(NOW)
    session.check(tmp_path, "initial reconcile")
    for number, step in enumerate(steps, 1):
        write_files(root, step, clock)
        watch = mode == "watch" or (mode == "restart" and number % 2 == 0)
        if mode == "restart":
            session.restart()
        session.reconcile(NOW + number * 1_000_000, sorted(step) if watch else None)
        session.check(tmp_path, f"step {number} ({mode}, {sorted(step)})")
    return session


# -- the seed table -----------------------------------------------------------------------


def seed_cases(seeds: range, *marks: pytest.MarkDecorator) -> list[object]:
    return [
        pytest.param(family, mode, seed, id=f"{family}-{mode}-seed{seed}", marks=marks)
        for family in FAMILIES
        for mode in MODES
        for seed in seeds
    ]


@pytest.mark.parametrize(
    "family,mode,seed",
    seed_cases(DEFAULT_SEEDS) + seed_cases(SOAK_SEEDS, pytest.mark.soak),
)
def test_random_edits_match_clean_rebuild(
    family: str, mode: Mode, seed: int, tmp_path: Path
) -> None:
    chosen = FAMILIES[family]
    case = chosen.draw(random.Random(seed))
    session = run_steps(tmp_path, case.initial, case.steps, mode, chosen.config)
    session.store.close()
    shutil.rmtree(tmp_path / "vault")
