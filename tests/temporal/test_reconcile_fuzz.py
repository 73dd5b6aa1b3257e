"""Random edit sequences through one reconciler must match a clean rebuild after every step.

Each case is a small vault and a few steps of edits, all drawn from one seeded generator, so a
failing id (`collide-watch-seed7`) replays exactly. After the initial reconcile and after every
step the projection tables (notes, dates, targets, the edges view, names, issues and the
per-scope digests) must equal a rebuild from the vault alone that starts from the same
safeguards (`guards` and `seen` remember history and cannot be rebuilt).

A family picks what the notes collide on:

- `collide`: a few ids, titles and aliases shared between notes; claims and relationships
  depending on each other; withdrawn and superseded notes, some with `reinstated_at`
  (the cases of the reviewer's fuzz.py, seed for seed).
- `tangle`: ids differing only in case, the same slug in two folders, invalid notes, Markdown
  links, embeds and `entities` (fuzz3.py); `scoped` is the same with a `t/` scope.
- `copies`: Syncthing conflict copies appearing, diverging (withdrawn) and being resolved,
  renames, and names and file names written in NFC and NFD, in two scopes.
- `guards`: six ids, each in two files, withdrawn, superseded, reinstated (with a
  `reinstated_at` a second or a day before, equal to or after the guard's time), withdrawn
  again, deleted, re-created and restored from stale copies. Copying the safeguards into the
  rebuild would let a wrong guard rule agree with itself, so this family is checked against
  `GuardModel` instead: a model of the rule (README, "Resurrection guard") fed only the edits,
  which says which notes are eligible, which are `resurrection_blocked` or `duplicate_id`,
  and what `guards` and `seen` hold; the rebuild starts from the model's safeguards.

A mode picks how the reconciler hears of a step: `scan` (full scans), `watch` (only the
changed paths, like the watcher) or `restart` (the store and reconciler are reopened before
each step, which then alternates between a scan and watcher paths).

The default run takes a few seeds of each; `-m soak` runs many more.
"""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import json
import os
import random
import shutil
import sqlite3
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from pathlib import Path
from types import MappingProxyType
from typing import Literal

import pytest

from almanac import temporal
from tests.temporal.test_reconcile import NOW, dump

Dump = dict[str, list[tuple[object, ...]]]
Step = Mapping[str, str | None]
Mode = Literal["scan", "watch", "restart"]

MODES: tuple[Mode, ...] = ("scan", "watch", "restart")
DEFAULT_SEEDS = range(3)
SOAK_SEEDS = range(3, 106)
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
    modelled: bool = False  # checked against GuardModel, not against copied safeguards


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
    lines = [f"id: {rng.choice(ids)}"] if rng.random() < 0.35 else []
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

    def link() -> str:
        wiki, md = f"[[{target()}]]", f"[m]({rng.choice(['n.md', '../n.md', 'c.md', 'x/n.md'])})"
        return rng.choice([wiki, md, f"![[{target()}|l]]"])

    body = " ".join(link() for _ in range(rng.randint(0, 3)))
    return frontmatter(lines, body)


def draw_steps(
    rng: random.Random,
    paths: list[str],
    note: Callable[[random.Random], str],
    *,
    files: int,
    edits: int,
) -> Case:
    """2 to `files` notes, then 1 to 4 steps of 1 to `edits` writes or deletes each."""
    initial = {p: note(rng) for p in rng.sample(paths, rng.randint(2, files))}
    steps = []
    for _ in range(rng.randint(1, 4)):
        step: dict[str, str | None] = {}
        for _ in range(rng.randint(1, edits)):
            path = rng.choice(paths)
            step[path] = None if rng.random() < 0.25 else note(rng)
        steps.append(step)
    return Case(initial, tuple(steps))


def draw_collide(rng: random.Random) -> Case:
    paths = ["a.md", "b.md", "c.md", "d.md", "e.md", "x/a.md", "x/f.md", "y/b.md"]
    return draw_steps(rng, paths, collide_note, files=6, edits=2)


def draw_tangle(rng: random.Random) -> Case:
    ids = ["a", "A", "b", "x/c", "y/c", "c", "n"]
    names = ["Alpha", "alpha ", "Beta", "c", "n", "x/n"]
    paths = [
        "a.md", "A.md", "b.md", "c.md", "n.md", "x/c.md", "x/n.md", "y/c.md", "y/n.md",
        "t/n.md", "t/z.md",
    ]  # fmt: skip
    return draw_steps(rng, paths, lambda r: tangle_note(r, ids, names), files=8, edits=3)


def draw_copies(rng: random.Random) -> Case:
    """Conflict copies of a few notes, in two scopes, with NFC and NFD names and file names."""
    ids = ["n", "t/n", NFC.lower(), "café-bar"]
    names = [NFC, NFD, NFC.upper(), "n", "Bar"]
    originals = ["n.md", "t/n.md", f"{NFC}.md", f"t/{NFD}.md", "bar.md"]
    state: dict[str, str | None] = {
        p: tangle_note(rng, ids, names) for p in rng.sample(originals, 3)
    }
    initial = dict(state)
    steps = []
    for _ in range(rng.randint(1, 4)):
        step: dict[str, str | None] = {}
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


# -- the resurrection guard, modelled from the edits alone --------------------------------

SECOND = 1_000_000
GUARD_PATHS = {i: (f"{i}.md", f"old/{i}.md") for i in "abcdef"}  # an id: home, copy
SUCCESSOR = "---\nid: z\ntype: person\n---\n"  # z.md, what superseded notes name: always there


def step_time(step: int) -> int:
    """A session's clock: the initial reconcile is step 0, then one second a step."""
    return NOW + step * SECOND


def iso(us: int) -> str:
    return datetime.fromtimestamp(us // SECOND, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def instant_us(text: str) -> int:
    """An ISO instant with its zone, or a date read as midnight UTC (the `guards` dates are a
    day or more from every guard, so the zone a date is read in cannot change an order)."""
    if "T" in text:
        moment = datetime.fromisoformat(text)
    else:
        moment = datetime.combine(date.fromisoformat(text), datetime.min.time(), UTC)
    return int(moment.timestamp()) * SECOND


@dataclass(frozen=True, slots=True)
class Version:
    """What the model reads of a `guards` note, from its text as the generator wrote it."""

    id: str
    lifecycle: str
    reinstated_us: int | None
    revision: str  # SHA-256 of the file's bytes


def read_version(text: str) -> Version:
    head = text.split("---\n")[1]
    fields = dict(line.split(": ", 1) for line in head.splitlines())
    reinstated = fields.get("reinstated_at")
    return Version(
        fields["id"],
        fields.get("lifecycle", "active"),
        None if reinstated is None else instant_us(reinstated),
        hashlib.sha256(text.encode()).hexdigest(),
    )


@dataclass(frozen=True, slots=True)
class Guard:
    lifecycle: str
    seen_at: int
    hashes: frozenset[str]


class GuardModel:
    """The resurrection guard as the README states it, fed the edits one reconcile at a time.

    - Seeing an id withdrawn or superseded makes a guard at the reconcile's clock, covering
      every content seen for the id so far. An id that has a guard keeps it (and its time); the
      guard covers the new content too. Withdrawing again while a reinstated copy is served
      (active and eligible) starts a new guard.
    - An active note whose id has a guard is `resurrection_blocked` when its content is one the
      guard covers, or when it has no `reinstated_at` later than the guard's time.
    - Two notes of one id that are not withdrawn are both `duplicate_id`. A note is eligible
      when it is not withdrawn, blocked or a duplicate (these notes reference nothing else).
    """

    def __init__(self) -> None:
        self.files: dict[str, Version] = {}
        self.guards: dict[str, Guard] = {}
        self.seen: set[tuple[str, str]] = set()
        self.served: set[str] = set()  # ids with an eligible active note after the last reconcile
        self.existed: set[str] = set()  # paths that have had a file
        self.cases: Counter[str] = Counter()  # what the edits exercised (see GUARD_CASES)

    def reconcile(self, files: Step, now_us: int) -> None:
        """One reconcile at `now_us` after these edits (path -> text, None when deleted)."""
        taken: dict[str, Version] = {}
        for path, text in sorted(files.items()):
            old = self.files.get(path)
            if text is None:
                if old is not None:
                    del self.files[path]
                    self.cases["deleted"] += 1
                continue
            new = read_version(text)
            if new == old:
                continue  # the same bytes: nothing new to read
            if old is None and path in self.existed:
                self.cases["re-created"] += 1
            self.files[path] = taken[path] = new
            self.existed.add(path)
            self.seen.add((new.id, new.revision))
        for new in (taken[path] for path in sorted(taken)):
            if new.lifecycle == "active":
                continue
            guard = self.guards.get(new.id)
            if guard is None or new.id in self.served:
                self.cases["a new guard after a reinstatement" if guard else "a first guard"] += 1
                covered = frozenset(rev for seen_id, rev in self.seen if seen_id == new.id)
                self.guards[new.id] = Guard(new.lifecycle, now_us, covered)
            else:
                self.cases["a guard kept"] += 1
                hashes = guard.hashes | {new.revision}
                self.guards[new.id] = Guard(new.lifecycle, guard.seen_at, hashes)
        for new in taken.values():
            guard = self.guards.get(new.id)
            if new.lifecycle == "active" and guard is not None:
                self.cases[f"active under a guard: {reinstatement(new, guard)}"] += 1
        self.served = {
            v.id for p, v in self.files.items() if v.lifecycle == "active" and self.eligible(p)
        }

    def blocked(self, path: str) -> bool:
        version = self.files[path]
        guard = self.guards.get(version.id)
        return (
            version.lifecycle == "active"
            and guard is not None
            and reinstatement(version, guard) != "reinstated after it"
        )

    def duplicate(self, path: str) -> bool:
        version = self.files[path]
        listed = [
            v for v in self.files.values() if v.id == version.id and v.lifecycle != "withdrawn"
        ]
        return version.lifecycle != "withdrawn" and len(listed) > 1

    def eligible(self, path: str) -> bool:
        withdrawn = self.files[path].lifecycle == "withdrawn"
        return not (withdrawn or self.blocked(path) or self.duplicate(path))

    def expected(self) -> Dump:
        """What the state database must hold: eligibility, issues and safeguards."""
        issues: list[tuple[object, ...]] = [
            (p, "duplicate_id") for p in self.files if self.duplicate(p)
        ]
        issues += [(p, "resurrection_blocked") for p in self.files if self.blocked(p)]
        return {
            "eligible": [(p, int(self.eligible(p))) for p in self.files],
            "issues": issues,
            "guards": [
                (i, g.lifecycle, g.seen_at, json.dumps(sorted(g.hashes)))
                for i, g in self.guards.items()
            ],
            "seen": [*self.seen],
        }


MODELLED = {
    "eligible": "SELECT path, eligible FROM notes",
    "issues": "SELECT path, code FROM issues",
    "guards": "SELECT * FROM guards",
    "seen": "SELECT * FROM seen",
}


def reinstatement(version: Version, guard: Guard) -> str:
    """How an active version stands to its id's guard."""
    if version.revision in guard.hashes:
        return "content the guard covers"
    if version.reinstated_us is None:
        return "no reinstated_at"
    if version.reinstated_us < guard.seen_at:
        return "reinstated before it"
    if version.reinstated_us == guard.seen_at:
        return "reinstated at its time"
    return "reinstated after it"


GUARD_CASES = (
    "a first guard",
    "a guard kept",
    "a new guard after a reinstatement",
    "active under a guard: content the guard covers",
    "active under a guard: no reinstated_at",
    "active under a guard: reinstated before it",
    "active under a guard: reinstated at its time",
    "active under a guard: reinstated after it",
    "deleted",
    "re-created",
)


def draw_guards(rng: random.Random) -> Case:
    """Withdrawals, reinstatements around the guards' times (which a model of the rule tells),
    second withdrawals, stale copies restored, deletions and re-creations of six ids."""
    model = GuardModel()
    numbers = itertools.count()
    written: dict[str, list[str]] = {note_id: [] for note_id in GUARD_PATHS}

    def version(note_id: str, lifecycle: str, reinstated: str | None = None) -> str:
        lines = [f"id: {note_id}", "type: person", f"lifecycle: {lifecycle}"]
        if lifecycle == "superseded":
            lines.append("superseded_by: z")
        if reinstated is not None:
            lines.append(f"reinstated_at: {reinstated}")
        text = frontmatter(lines, f"Version {next(numbers)} of {note_id}.")
        written[note_id].append(text)
        return text

    def edit(note_id: str, there: str | None) -> str | None:
        """Mostly the rule's next move: withdraw a served id, try to bring back a blocked one."""
        guard, roll = model.guards.get(note_id), rng.random()
        if guard is None or note_id in model.served:
            if roll < 0.5:
                return version(note_id, "withdrawn")
            if roll < 0.65:
                return version(note_id, "superseded")
            return version(note_id, "active") if roll < 0.8 else None
        at = guard.seen_at
        if roll < 0.17:
            return version(note_id, "active", rng.choice([iso(at - SECOND), "2027-01-14"]))
        if roll < 0.34:
            return version(note_id, "active", iso(at))
        if roll < 0.51:
            return version(note_id, "active", rng.choice([iso(at + SECOND), "2027-01-16"]))
        if roll < 0.66:  # a sync tool restores a stale copy, active if there is one
            stale = [t for t in written[note_id] if t != there and "lifecycle: active" in t]
            return rng.choice(stale or written[note_id])
        if roll < 0.74:
            return version(note_id, "active")
        return version(note_id, "withdrawn") if roll < 0.88 else None

    initial = {"z.md": SUCCESSOR}
    for note_id, (home, _) in GUARD_PATHS.items():
        initial[home] = version(note_id, "active" if rng.random() < 0.6 else "withdrawn")
    model.reconcile(initial, step_time(0))
    vault: dict[str, str | None] = dict(initial)
    steps = []
    for number in range(1, rng.randint(6, 9)):
        step: dict[str, str | None] = {}
        for note_id in [i for i in GUARD_PATHS if rng.random() < 0.7] or ["a"]:
            home, copy = GUARD_PATHS[note_id]
            path = home if rng.random() < 0.85 else copy
            step[path] = edit(note_id, vault.get(path))
        vault.update(step)
        model.reconcile(step, step_time(number))
        steps.append(step)
    return Case(initial, tuple(steps))


FAMILIES = {
    "collide": Family(draw_collide),
    "tangle": Family(draw_tangle),
    "scoped": Family(draw_tangle, temporal.VaultConfig(scopes=MappingProxyType({"tx": "t/"}))),
    "copies": Family(draw_copies, temporal.VaultConfig(scopes=MappingProxyType({"tx": "t/"}))),
    "guards": Family(draw_guards, modelled=True),
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
    digests: list[tuple[object, ...]] = [
        (json.dumps(json.loads(str(row[0])), sort_keys=True),) for row in tables["digests"]
    ]
    return {**tables, "digests": digests}


def rebuild(
    root: Path,
    tmp_path: Path,
    state: Path,
    config: temporal.VaultConfig,
    model: GuardModel | None = None,
) -> Dump:
    """`clean_rebuild` of test_reconcile, with this configuration, from the model's safeguards
    when there is a model (else from copies of the state's).

    The new database is a copy of an empty one made once a test: making the schema costs
    more than the rest of a rebuild of these small vaults.
    """
    fingerprint = config.fingerprint(temporal.FINGERPRINT)
    empty = tmp_path / "empty.db"
    if not empty.exists():
        temporal.Store.open(empty, fingerprint=fingerprint).close()
    db = tmp_path / "clean.db"
    shutil.copyfile(empty, db)
    with sqlite3.connect(db) as conn:
        if model is None:
            conn.execute("ATTACH DATABASE ? AS old", (str(state),))
            conn.execute("INSERT INTO guards SELECT * FROM old.guards")
            conn.execute("INSERT INTO seen SELECT * FROM old.seen")
        else:
            safeguards = model.expected()
            conn.executemany("INSERT INTO guards VALUES (?, ?, ?, ?)", safeguards["guards"])
            conn.executemany("INSERT INTO seen VALUES (?, ?)", safeguards["seen"])
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


def mismatch(got: Dump, want: Dump, wanted_by: str = "clean") -> list[str]:
    lines = []
    for table in want:
        have, need = set(map(repr, got[table])), set(map(repr, want[table]))
        lines += [f"{table} incremental only: {row}" for row in sorted(have - need)]
        lines += [
            f"{table} {wanted_by} only:".ljust(len(table) + 18) + f" {row}"
            for row in sorted(need - have)
        ]
    return lines


class Session:
    """A vault, its state database and one reconciler, checked against a clean rebuild (and
    against the guard model, when given one)."""

    def __init__(
        self,
        tmp_path: Path,
        config: temporal.VaultConfig | None = None,
        model: GuardModel | None = None,
    ) -> None:
        self.tmp_path = tmp_path
        self.config = config or temporal.VaultConfig()
        self.model = model
        self.root = tmp_path / "vault"
        self.db = tmp_path / "state.db"
        self.steps = 0
        self._clock = itertools.count(1_700_000_000_000_000_000, 1_000_000)
        self.root.mkdir()
        self.store = self._open()
        self.reconciler = temporal.Reconciler(self.store, self.root, self.config)

    def start(self, files: Step) -> None:
        """Write the initial vault and reconcile it."""
        write_files(self.root, files, self._clock)
        self.reconciler.reconcile(now_us=step_time(0))
        if self.model is not None:
            self.model.reconcile(files, step_time(0))
        self.check("initial reconcile")

    def step(self, files: Step, mode: Mode) -> None:
        """Apply one step of edits, tell the reconciler as `mode` says, and check the result."""
        self.steps += 1
        write_files(self.root, files, self._clock)
        watch = mode == "watch" or (mode == "restart" and self.steps % 2 == 0)
        if mode == "restart":
            self.restart()
        paths = sorted(files) if watch else None
        self.reconciler.reconcile(now_us=step_time(self.steps), paths=paths)
        if self.model is not None:
            self.model.reconcile(files, step_time(self.steps))
        self.check(f"step {self.steps} ({mode}, {sorted(files)})")

    def restart(self) -> None:
        """Close the store and start a new reconciler over it, as a process restart does."""
        self.store.close()
        self.store = self._open()
        self.reconciler = temporal.Reconciler(self.store, self.root, self.config)

    def check(self, label: str) -> None:
        if self.model is not None:
            got = {table: self.rows(sql) for table, sql in MODELLED.items()}
            lines = mismatch(got, self.model.expected(), "model")
            assert not lines, f"{label}: state differs from the guard model\n" + "\n".join(lines)
        clean = rebuild(self.root, self.tmp_path, self.db, self.config, self.model)
        lines = mismatch(projections(self.db), clean)
        assert not lines, f"{label}: state differs from a clean rebuild\n" + "\n".join(lines)

    def rows(self, sql: str) -> list[tuple[object, ...]]:
        return sorted(self.store.conn.execute(sql), key=repr)

    def _open(self) -> temporal.Store:
        return temporal.Store.open(
            self.db, fingerprint=self.config.fingerprint(temporal.FINGERPRINT)
        )


@contextlib.contextmanager
def session_of(
    tmp_path: Path, config: temporal.VaultConfig | None = None, model: GuardModel | None = None
) -> Iterator[Session]:
    session = Session(tmp_path, config, model)
    try:
        yield session
    finally:
        session.store.close()


# -- the seed table -----------------------------------------------------------------------


def seed_cases(seeds: range, *marks: pytest.MarkDecorator) -> Sequence[object]:
    cases = []
    for family in FAMILIES:
        for mode in MODES:
            for seed in seeds:
                case_id = f"{family}-{mode}-seed{seed}"
                cases.append(pytest.param(family, mode, seed, id=case_id, marks=list(marks)))
    return cases


@pytest.mark.parametrize(
    "family,mode,seed",
    [*seed_cases(DEFAULT_SEEDS), *seed_cases(SOAK_SEEDS, pytest.mark.soak)],
)
def test_random_edits_match_clean_rebuild(
    family: str, mode: Mode, seed: int, tmp_path: Path
) -> None:
    chosen = FAMILIES[family]
    case = chosen.draw(random.Random(seed))
    model = GuardModel() if chosen.modelled else None
    with session_of(tmp_path, chosen.config, model) as session:
        session.start(case.initial)
        for step in case.steps:
            session.step(step, mode)


def drawn_guard_cases(seeds: range) -> Counter[str]:
    """The guard cases the `guards` family draws for these seeds, counted by a fresh model."""
    found: Counter[str] = Counter()
    for seed in seeds:
        case = draw_guards(random.Random(seed))
        model = GuardModel()
        for number, step in enumerate((case.initial, *case.steps)):
            model.reconcile(step, step_time(number))
        found += model.cases
    return found


def test_the_guards_family_draws_every_case_of_the_rule() -> None:
    """The default seeds alone must exercise every case, a few times each (they run in three
    modes); the model counts what the edits did, whatever the generator meant them to do."""
    found = drawn_guard_cases(DEFAULT_SEEDS)
    assert {case: found[case] for case in GUARD_CASES if found[case] < 2} == {}


# -- regressions: scenarios that once broke the reconciler ---------------------------------


SUPERSEDED_BY = "---\nlifecycle: superseded\nsuperseded_by: {}\n---\n"
CHAIN = {f"{p}.md": SUPERSEDED_BY.format(n) for p, n in zip("abc", "bcd", strict=True)}
PLAIN_D = "---\ntitle: D\n---\n"
CLOSE_D = {"d.md": SUPERSEDED_BY.format("a")}


@pytest.mark.parametrize("mode", MODES)
def test_closing_a_supersession_cycle_of_four_flags_all_four(mode: Mode, tmp_path: Path) -> None:
    with session_of(tmp_path) as session:
        session.start({**CHAIN, "d.md": PLAIN_D})
        session.step(CLOSE_D, mode)
        flagged = session.rows("SELECT path FROM issues WHERE code = 'supersession_cycle'")
        assert flagged == [("a.md",), ("b.md",), ("c.md",), ("d.md",)]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(
    "closed_at_start", [False, True], ids=["closed-by-edit", "closed-at-start"]
)
def test_opening_a_supersession_cycle_of_four_clears_all_four(
    mode: Mode, closed_at_start: bool, tmp_path: Path
) -> None:
    with session_of(tmp_path) as session:
        session.start({**CHAIN, **(CLOSE_D if closed_at_start else {"d.md": PLAIN_D})})
        if not closed_at_start:
            session.step(CLOSE_D, mode)
        session.step({"d.md": PLAIN_D}, mode)
        assert not session.rows("SELECT path FROM issues WHERE code = 'supersession_cycle'")


@pytest.mark.parametrize("mode", MODES)
def test_withdrawal_reaches_dependents_three_levels_away(mode: Mode, tmp_path: Path) -> None:
    """r (relationship from t) <- t (claim about u) <- u (claim about v) <- v withdrawn.

    r is re-evaluated early only because its body links to v; it must still see t flip later.
    """
    with session_of(tmp_path) as session:
        session.start(
            {
                "v.md": "---\ntype: person\n---\n# V\n",
                "w.md": "---\ntype: person\n---\n# W\n",
                "u.md": "---\ntype: claim\nsubject: v\n---\nU is about v.\n",
                "t.md": "---\ntype: claim\nsubject: u\n---\nT is about the claim u.\n",
                "r.md": "---\ntype: relationship\nfrom: t\nto: w\nrelation: mentions\n---\n[[v]]\n",
            }
        )
        session.step({"v.md": "---\ntype: person\nlifecycle: withdrawn\n---\n# V\n"}, mode)
        eligible = session.rows("SELECT path, eligible FROM notes")
        assert eligible == [("r.md", 0), ("t.md", 0), ("u.md", 0), ("v.md", 0), ("w.md", 1)]


@pytest.mark.parametrize("mode", MODES)
def test_duplicate_id_reaches_dependents_two_levels_away(mode: Mode, tmp_path: Path) -> None:
    """t names u by title only, so only the eligibility fixpoint carries u's flip to t and r."""
    with session_of(tmp_path) as session:
        session.start(
            {
                "u.md": "---\ntype: person\ntitle: Ustitle\n---\n",
                "w.md": "---\ntype: person\n---\n",
                "t.md": "---\ntype: claim\nsubject: Ustitle\n---\n",
                "r.md": "---\ntype: relationship\nfrom: t\nto: w\nrelation: mentions\n---\n[[u]]\n",
            }
        )
        session.step({"dup.md": "---\nid: u\n---\n"}, mode)
        eligible = session.rows("SELECT path, eligible FROM notes")
        assert eligible == [("dup.md", 0), ("r.md", 0), ("t.md", 0), ("u.md", 0), ("w.md", 1)]


@pytest.mark.parametrize("mode", MODES)
def test_guard_from_a_conflict_copy_blocks_the_unchanged_original(
    mode: Mode, tmp_path: Path
) -> None:
    copy = f"x{CONFLICT}.md"
    with session_of(tmp_path) as session:
        session.start({"x.md": "---\nid: x\ntype: person\n---\n# X\nActive copy.\n"})
        withdrawn = "---\nid: x\ntype: person\nlifecycle: withdrawn\n---\n# X\nWithdrawn.\n"
        session.step({copy: withdrawn}, mode)  # Syncthing keeps a withdrawn version as a copy
        session.step({copy: None}, mode)  # and the conflict is resolved by deleting the copy
        assert session.rows("SELECT id, lifecycle FROM guards") == [("x", "withdrawn")]
        assert session.rows("SELECT path, eligible FROM notes") == [("x.md", 0)]
        assert session.rows("SELECT path, code FROM issues") == [("x.md", "resurrection_blocked")]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(
    "target_exists,expected",
    [(True, (f"{NFC}.md", "resolved")), (False, (None, "missing"))],
    ids=["target-appears", "target-disappears"],
)
def test_nfd_link_follows_its_nfc_target(
    mode: Mode, target_exists: bool, expected: tuple[str | None, str], tmp_path: Path
) -> None:
    target = f"{NFC}.md"
    with session_of(tmp_path) as session:
        session.start({"a.md": f"Meeting at [[{NFD}]].\n"})
        session.step({target: "---\ntitle: Espresso bar\n---\n"}, mode)
        if not target_exists:
            session.step({target: None}, mode)
        assert session.rows("SELECT resolved_path, status FROM targets") == [expected]


@pytest.mark.parametrize("mode", MODES)
def test_withdrawn_version_that_is_invalid_still_guards_its_id(mode: Mode, tmp_path: Path) -> None:
    """The withdrawn version drops the claim's subject; a stale active copy restored later stays
    out (I2), with a resurrection_blocked issue."""
    claim = "claims/ada-bankrupt.md"
    active = "---\ntype: claim\nsubject: ada\n---\nAda's company went bankrupt.\n"
    with session_of(tmp_path) as session:
        session.start({"ada.md": "---\ntype: person\n---\n", claim: active})
        session.step({claim: "---\ntype: claim\nlifecycle: withdrawn\n---\nRetracted.\n"}, mode)
        assert session.rows("SELECT id, lifecycle FROM guards") == [
            ("claims/ada-bankrupt", "withdrawn")
        ]
        session.step({claim: active}, mode)  # a sync tool restores the stale copy
        assert session.rows("SELECT lifecycle, eligible FROM notes WHERE kind = 'claim'") == [
            ("active", 0)
        ]
        assert session.rows("SELECT path, code FROM issues") == [(claim, "resurrection_blocked")]


@pytest.mark.parametrize("mode", MODES)
def test_deleting_a_target_referenced_in_nfd_keeps_reconciling(mode: Mode, tmp_path: Path) -> None:
    """Once a KeyError rolled back every reconcile after this deletion, restarts included."""
    with session_of(tmp_path) as session:
        session.start(
            {
                f"{NFC}.md": "---\ntype: place\ntitle: The espresso bar\n---\n",
                "visit.md": f"---\ntype: claim\nsubject: '{NFD}'\n---\nWe met there.\n",
            }
        )
        assert session.rows("SELECT resolved_path FROM targets") == [(f"{NFC}.md",)]
        session.step({f"{NFC}.md": None}, mode)
        session.step({}, "scan")  # nothing left to do, and nothing fails
        session.restart()
        session.reconciler.reconcile(now_us=NOW + 10**9)
        session.check("scan after a restart")
        assert session.rows("SELECT path, resolved_path, status FROM targets") == [
            ("visit.md", None, "missing")
        ]


@pytest.mark.parametrize("mode", MODES)
def test_duplicate_id_in_another_scope_leaves_the_scope_unchanged(
    mode: Mode, tmp_path: Path
) -> None:
    """Ids are unique per scope: a private note reusing a team id changes nothing for the team."""
    config = temporal.VaultConfig(scopes=MappingProxyType({"team": "team/", "private": "private/"}))
    with session_of(tmp_path, config) as session:
        session.start({"team/roadmap.md": "---\nid: roadmap\n---\n# Team roadmap\n"})
        before = session.reconciler.snapshot(["team"])
        session.step({"private/acquisition-target-acme.md": "---\nid: roadmap\n---\n"}, mode)
        assert session.reconciler.snapshot(["team"]) == before
        with session.store.read() as reader:
            record = reader.record("roadmap", ["team"])
            assert record is not None and record.title == "Team roadmap"
            assert reader.issues(["team"]) == []


@pytest.mark.parametrize("mode", MODES)
def test_withdrawn_namesake_leaves_links_to_the_name_unambiguous(
    mode: Mode, tmp_path: Path
) -> None:
    meeting = "---\ntype: meeting\nentities: ['[[Acme Corp]]']\n---\nWith [[Acme Corp]].\n"
    with session_of(tmp_path) as session:
        session.start({"acme.md": "---\ntype: organization\ntitle: Acme Corp\n---\n"})
        withdrawn = "---\ntype: organization\ntitle: Acme Corp\nlifecycle: withdrawn\n---\n"
        session.step({"acme-old.md": withdrawn}, mode)
        session.step({"m.md": meeting}, mode)  # resolved after the namesake was withdrawn
        assert session.rows("SELECT field, resolved_path, status FROM targets") == [
            ("entities", "acme.md", "resolved"),
            ("link", "acme.md", "resolved"),
        ]
        assert session.rows("SELECT code FROM issues") == []
        with session.store.read() as reader:
            named = reader.designated("Acme Corp", ["default"], rules=temporal.LOOKUP_RULES)
            found = [ref for _, ref in named]
            assert [ref.id for ref in found] == ["acme"]


@pytest.mark.parametrize("mode", MODES)
def test_withdrawn_copy_of_an_id_is_no_duplicate(mode: Mode, tmp_path: Path) -> None:
    """The smallest case of RESTART_BUG: after a restart, editing the active copy of an id makes
    the withdrawn copy count as a duplicate, and both are excluded."""
    with session_of(tmp_path) as session:
        session.start({"b.md": "---\ntype: note\n---\n"})
        session.step({"x/f.md": "---\nid: b\nlifecycle: withdrawn\n---\n"}, mode)
        session.step({"b.md": "---\ntype: note\ntitle: B2\n---\n"}, mode)
        assert session.rows("SELECT code FROM issues") == [("resurrection_blocked",)]
