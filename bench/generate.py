"""Deterministic synthetic vaults for benchmarks.

The mix follows what a busy team vault looks like: people and organisations are referenced with
a power-law weight (five hubs each draw ``HUB_SHARE`` of all entity references, the rest follow a
Zipf tail), so graph and timeline queries meet both hubs and long tails. Only
``random.Random(seed)`` is used and every value is drawn in a fixed order, so the same arguments
give byte-identical files.

    python bench/generate.py OUT_DIR --notes N [--seed 7] [--recurring 0.01] [--force]
"""

from __future__ import annotations

import argparse
import datetime as dt
import itertools
import os
import random
import sys
from collections.abc import Sequence
from pathlib import Path

__all__ = ["generate", "main"]

# Word lists stay plain text (hence the noqa): they read better than quoted items.
WORDS = (  # noqa: SIM905
    "the of and to in for onto with as by at from that this we they it was is are will should "
    "might roadmap budget launch customer review quarter plan design draft metric signal latency "
    "pricing contract partner hiring onboarding security audit migration backlog sprint release "
    "incident follow-up decision risk scope vendor invoice renewal pipeline dashboard feedback "
    "survey workshop offsite agenda minutes summary forecast revenue churn growth support ticket "
    "outage deploy staging cluster database schema cache query report analysis research pilot "
    "rollout milestone deadline owner approval legal privacy policy training process checklist "
    "strategy vision goal result experiment baseline capacity cost team squad guild agreed "
    "proposed asked noted raised shared moved blocked unblocked shipped paused resumed clarified"
).split()
FIRST = (  # noqa: SIM905
    "Ada Alan Grace Linus Barbara Ken Margaret Dennis Frances Edsger Radia John Karen Niklaus Hedy "
    "Tim Sophie Guido Anita Bjarne Leslie Donald Shafi Vint Carol Jean Ward Ivan Lynn Mary Joan"
).split()
LAST = (  # noqa: SIM905
    "Lovelace Turing Hopper Torvalds Liskov Thompson Hamilton Ritchie Allen Dijkstra Perlman Jones "
    "Wirth Lamarr Wilson Rossum Borg Stroustrup Lamport Knuth Goldwasser Cerf Shaw Sammet Conway"
).split()
ORG_HEAD = (  # noqa: SIM905
    "Northwind Contoso Initech Globex Umbrella Hooli Stark Wayne Acme Vandelay Soylent Tyrell "
    "Cyberdyne Oscorp Wonka Aperture Black-Mesa Massive Dynamic Gringotts"
).split()
ORG_TAIL = ("Labs", "Systems", "GmbH", "Inc", "Partners", "Group", "Capital", "Health", "Studio")
OFFSETS = ("Z", "Z", "+00:00", "+01:00", "+02:00", "-04:00", "-05:00", "-07:00", "+05:30", "+09:00")
ZONES = ("Europe/Berlin", "Europe/Berlin", "Europe/Berlin", "America/New_York", "America/New_York")
WEEKDAYS = ("MO", "TU", "WE", "TH", "FR", "SA", "SU")
SOURCE_TYPES = ("meeting",) * 7 + ("call",) * 4 + ("email",) * 5 + ("document",) * 4
# Relation names by the (from, to) kinds of the endpoints; repeats weight the common ones.
RELATIONS = {
    ("person", "organization"): ("works_at", "works_at", "member_of", "advises"),
    ("person", "person"): ("reports_to", "reports_to", "advises", "knows"),
    ("organization", "organization"): ("partner_of",),
    ("organization", "person"): ("advises",),
}
HUBS = 5
HUB_SHARE = 0.07
BASE_DAY = dt.date(2024, 1, 1).toordinal()
SPAN_DAYS = 3 * 365
# (kind, folder, file prefix, subfolders, share of notes); recurring meetings come out of "source".
CATEGORIES = (
    ("person", "people", "p", 20, 0.20),
    ("organization", "orgs", "o", 5, 0.05),
    ("source", "src", "s", 25, 0.25),
    ("recurring", "meetings", "m", 5, 0.0),
    ("claim", "claims", "c", 20, 0.20),
    ("relationship", "rels", "r", 15, 0.15),
    ("task", "tasks", "t", 10, 0.10),
    ("note", "notes", "n", 5, 0.05),
)


def generate(out: Path, notes: int, *, seed: int = 7, recurring: float = 0.01) -> None:
    """Write ``notes`` synthetic notes below ``out``, which is created if missing. Files of the
    same names are overwritten; other files are left alone.

    Raises:
        ValueError: ``notes`` is negative or ``recurring`` is outside 0..0.25.
    """
    if notes < 0:
        raise ValueError(f"notes must be >= 0, got {notes!r}")
    if not 0.0 <= recurring <= 0.25:
        raise ValueError(f"recurring must be within 0..0.25, got {recurring!r}")
    _Vault(random.Random(seed), _counts(notes, recurring)).write(out)


def main(argv: Sequence[str] | None = None) -> int:
    """Command line entry point; returns the exit status."""
    parser = argparse.ArgumentParser(description="Write a deterministic synthetic vault.")
    parser.add_argument("out", type=Path)
    parser.add_argument("--notes", type=int, required=True)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--recurring", type=float, default=0.01)
    parser.add_argument("--force", action="store_true", help="write into a non-empty folder")
    args = parser.parse_args(argv)
    if args.out.exists() and any(args.out.iterdir()) and not args.force:
        parser.error(f"{str(args.out)!r} is not empty (use --force)")
    try:
        generate(args.out, args.notes, seed=args.seed, recurring=args.recurring)
    except ValueError as exc:
        parser.error(str(exc))
    return 0


class _Skewed:
    """Draws ids with a power-law weight: ``hubs`` ids with ``HUB_SHARE`` each, then a Zipf tail."""

    def __init__(self, rng: random.Random, ids: Sequence[str], *, hubs: int, power: float) -> None:
        self._rng = rng
        self._ids = list(ids)
        rng.shuffle(self._ids)  # so hubs are not simply the lowest-numbered files
        hubs = min(hubs, len(self._ids))
        tail = [1.0 / (rank + 1) ** power for rank in range(len(self._ids) - hubs)]
        scale = (1.0 - hubs * HUB_SHARE) / sum(tail) if tail else 0.0
        weights = [HUB_SHARE] * hubs + [w * scale for w in tail]
        self._cum = list(itertools.accumulate(weights))

    def pick(self, k: int = 1) -> list[str]:
        return self._rng.choices(self._ids, cum_weights=self._cum, k=k) if self._ids else []


class _Vault:
    """One generation run: ids, names and pickers, then one renderer per kind of note."""

    def __init__(self, rng: random.Random, counts: dict[str, int]) -> None:
        self.rng = rng
        self.ids: dict[str, list[str]] = {
            kind: [f"{folder}/{i % subs:02d}/{prefix}{i:06d}" for i in range(counts[kind])]
            for kind, folder, prefix, subs, _ in CATEGORIES
        }
        self.all_ids = [id for kind, *_ in CATEGORIES for id in self.ids[kind]]
        self.kind_of = {id: kind for kind in ("person", "organization") for id in self.ids[kind]}
        self.names = {id: f"{rng.choice(FIRST)} {rng.choice(LAST)}" for id in self.ids["person"]}
        for id in self.ids["organization"]:
            self.names[id] = f"{rng.choice(ORG_HEAD)} {rng.choice(ORG_TAIL)}"
        entities = self.ids["person"] + self.ids["organization"]
        self.entities = _Skewed(rng, entities, hubs=HUBS, power=1.0)
        dated = self.ids["source"] + self.ids["recurring"]
        self.sources = _Skewed(rng, dated, hubs=0, power=0.7)
        self.source_event_taken: set[str] = set()
        # Bodies draw whole sentences from one pool: far faster than drawing every word.
        self.sentences = [" ".join(rng.choices(WORDS, k=rng.randint(6, 16))) for _ in range(8192)]
        self.sentences = [f"{text[:1].upper()}{text[1:]}." for text in self.sentences]

    def write(self, out: Path) -> None:
        os.makedirs(out, exist_ok=True)
        for folder in sorted({id.rsplit("/", 1)[0] for id in self.all_ids}):
            os.makedirs(out / folder, exist_ok=True)
        flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC
        root = os.fspath(out)
        for kind, *_ in CATEGORIES:
            render = getattr(self, f"_{kind}")
            for id in self.ids[kind]:
                data = render(id).encode()
                fd = os.open(f"{root}/{id}.md", flags, 0o644)
                try:  # one write: a regular file takes ~1 KB whole
                    os.write(fd, data)
                finally:
                    os.close(fd)

    # One renderer per kind, named after it; each returns the whole file.
    def _person(self, id: str) -> str:
        rng = self.rng
        first, last = self.names[id].split(" ", 1)
        handle = [f"@{first}.{last}".lower()] if rng.random() < 0.3 else []
        aliases = [first, f"{first[0]}. {last}", *handle]
        lines = self.head(id, "person") + self.strings("aliases", aliases)
        lines += [f"email: {first}.{last}@example.com".lower(), f"tags: [team/{self.word()}]"]
        return self.note(id, lines, self.names[id], links=rng.randint(2, 4))

    def _organization(self, id: str) -> str:
        name = self.names[id]
        lines = self.head(id, "organization") + self.strings("aliases", [name.split(" ")[0]])
        lines.append(f"website: https://{name.split(' ')[0].lower()}.example")
        return self.note(id, lines, name, links=self.rng.randint(2, 4))

    def _source(self, id: str) -> str:
        rng = self.rng
        kind = rng.choice(SOURCE_TYPES)
        lines = self.head(id, kind)
        day, roll = self.day(), rng.random()
        if kind == "document" and roll < 0.6 or kind != "document" and roll < 0.08:
            lines.append(f"occurred_at: {day.isoformat()}")
            if kind == "meeting" and rng.random() < 0.3:  # a conference over several days
                lines.append(f"ends_at: {dt.date.fromordinal(day.toordinal() + 2).isoformat()}")
        elif kind == "document" and roll < 0.85 or kind != "document" and roll < 0.1:
            lines.append(f"occurred_at: {day.isoformat()[:7]}")
        else:
            start, offset = rng.randrange(28, 76) * 15, rng.choice(OFFSETS)
            lines.append(f"occurred_at: {self.instant(day, start, offset)}")
            if kind in ("meeting", "call") and rng.random() < 0.7:
                end = start + rng.choice((15, 30, 45, 60, 90, 120))
                lines.append(f"ends_at: {self.instant(day, end, offset)}")
        if rng.random() < 0.3:
            lines.append(f"recorded_at: {self.instant(day, 20 * 60, 'Z')}")
        lines += self.refs("entities", self.entities.pick(rng.randint(1, 4)))
        name = self.names[self.entities.pick()[0]] if self.names else "the team"
        title = {"meeting": f"{self.topic()} sync with {name}", "call": f"Call with {name}"}
        title_text = title.get(kind, f"{self.topic()} {kind}")
        return self.note(id, lines, title_text, links=rng.randint(2, 6))

    def _recurring(self, id: str) -> str:
        rng = self.rng
        day = self.day()
        start = rng.randrange(32, 68) * 15
        local = f"{day.isoformat()}T{start // 60:02d}:{start % 60:02d}"
        byday = WEEKDAYS[day.weekday()]
        if rng.random() < 0.5:
            rule = f"FREQ=WEEKLY;BYDAY={byday};COUNT={rng.randint(4, 52)}"
        else:
            until = dt.date.fromordinal(day.toordinal() + rng.randint(30, 400))
            step = rng.choice((1, 1, 2))
            rule = f"FREQ=WEEKLY;INTERVAL={step};BYDAY={byday};UNTIL={until:%Y%m%d}T235959Z"
        lines = self.head(id, "meeting") + [f"timezone: {rng.choice(ZONES)}"]
        end = start + rng.choice((30, 45, 60))
        lines += [f"occurred_at: {local}", f"ends_at: {local[:11]}{end // 60:02d}:{end % 60:02d}"]
        lines.append(f"recurrence: {rule}")
        if rng.random() < 0.2:
            skipped = dt.date.fromordinal(day.toordinal() + 7 * rng.randint(1, 3))
            lines.append(f"exdates: [{skipped.isoformat()}{local[10:]}]")
        lines += self.refs("entities", self.entities.pick(rng.randint(2, 5)))
        return self.note(id, lines, f"Weekly {self.topic()}", links=rng.randint(2, 4))

    def _claim(self, id: str) -> str:
        rng = self.rng
        subject = self.entities.pick()
        lines = self.head(id, "claim") + [f"subject: {s}" for s in subject]
        source = self.sources.pick() if rng.random() < 0.85 else []
        lines += [f"source: {s}" for s in source]
        if source and source[0] not in self.source_event_taken and rng.random() < 0.3:
            self.source_event_taken.add(source[0])
            lines.append("source_event: true")
        if rng.random() < 0.2:
            lines.append(f"valid_from: {self.day().isoformat()}")
        name = self.names[subject[0]] if subject else "Someone"
        title = f"{name} {rng.choice(('prefers', 'owns', 'approved', 'blocked'))} {self.topic()}"
        return self.note(id, lines, title, links=rng.randint(2, 4))

    def _relationship(self, id: str) -> str:
        rng = self.rng
        source, target = self.entities.pick(2)
        while target == source and len(self.kind_of) > 1:  # no self-loops if avoidable
            target = self.entities.pick()[0]
        relation = rng.choice(RELATIONS[self.kind_of[source], self.kind_of[target]])
        lines = self.head(id, "relationship")
        lines += [f"from: {source}", f"to: {target}", f"relation: {relation}"]
        lines.append(f"weight: {rng.randint(5, 100) / 100}")
        start = self.day()
        if rng.random() < 0.7:
            lines.append(f"valid_from: {start.isoformat()}")
        if rng.random() < 0.35:
            until = dt.date.fromordinal(start.toordinal() + rng.randint(30, 700))
            lines.append(f"valid_until: {until.isoformat()}")
        if rng.random() < 0.3:
            lines += [f"source: {s}" for s in self.sources.pick()]
        title = f"{self.names[source]} {relation.replace('_', ' ')} {self.names[target]}"
        return self.note(id, lines, title, links=rng.randint(2, 3))

    def _task(self, id: str) -> str:
        rng = self.rng
        lines = self.head(id, "task") + [f"state: {'open' if rng.random() < 0.6 else 'done'}"]
        day = self.day()
        due = self.instant(day, 17 * 60, rng.choice(OFFSETS)) if rng.random() < 0.4 else day
        lines.append(f"due_at: {due}")
        lines += [f"owner: {s}" for s in self.entities.pick()]
        return self.note(id, lines, f"Follow up on {self.topic()}", links=rng.randint(2, 4))

    def _note(self, id: str) -> str:
        lines = None  # half have no frontmatter at all: a page whose id is its slug
        if self.rng.random() < 0.5:
            lines = self.head(id, "note") + [f"tags: [{self.word()}, {self.word()}]"]
        return self.note(id, lines, f"Notes on {self.topic()}", links=self.rng.randint(2, 6))

    def head(self, id: str, type: str) -> list[str]:
        # Three notes in four write their id; the rest rely on the slug default.
        return ([f"id: {id}"] if self.rng.random() < 0.75 else []) + [f"type: {type}"]

    def strings(self, field: str, values: list[str]) -> list[str]:
        if self.rng.random() < 0.5:
            return [f"{field}: [{', '.join(f'{chr(34)}{v}{chr(34)}' for v in values)}]"]
        return [f"{field}:"] + [f'  - "{v}"' for v in values]

    def refs(self, field: str, ids: list[str]) -> list[str]:
        quoted = [f'  - "[[{id}]]"' if self.rng.random() < 0.3 else f"  - {id}" for id in ids]
        return [f"{field}:", *quoted]

    def note(self, id: str, lines: list[str] | None, title: str, *, links: int) -> str:
        # Frontmatter, heading and filler paragraphs holding about ``links`` wiki links.
        rng = self.rng
        sentences = rng.choices(self.sentences, k=rng.randint(6, 19))
        for _ in range(links):
            target = self.link_target()
            if target != id:  # put the link after a word of a random sentence
                at = rng.randrange(len(sentences))
                cut = sentences[at].find(" ", rng.randrange(len(sentences[at])))
                cut = len(sentences[at]) - 1 if cut == -1 else cut
                sentences[at] = f"{sentences[at][:cut]} {self.link(target)}{sentences[at][cut:]}"
        breaks = range(0, len(sentences), 4)
        body = "\n\n".join(" ".join(sentences[at : at + 4]) for at in breaks)
        front = f"---\n{chr(10).join(lines)}\n---\n" if lines is not None else ""
        return f"{front}# {title}\n\n{body}\n"

    def link_target(self) -> str:
        if self.names and self.rng.random() < 0.7:
            return self.entities.pick()[0]
        return self.all_ids[self.rng.randrange(len(self.all_ids))]

    def link(self, target: str) -> str:
        # [[id]], [[id|label]] or [[file-name]], which the spec's file-name rule resolves.
        roll = self.rng.random()
        if roll < 0.55:
            return f"[[{target}]]"
        if roll < 0.85:
            return f"[[{target}|{self.names.get(target, 'these notes')}]]"
        return f"[[{target.rsplit('/', 1)[1]}]]"

    def instant(self, day: dt.date, minute: int, offset: str) -> str:
        return f"{day.isoformat()}T{minute // 60:02d}:{minute % 60:02d}:00{offset}"

    def day(self) -> dt.date:
        return dt.date.fromordinal(BASE_DAY + self.rng.randrange(SPAN_DAYS))

    def topic(self) -> str:
        return f"{self.word().capitalize()} {self.word()}"

    def word(self) -> str:
        return self.rng.choice(WORDS)


def _counts(notes: int, recurring: float) -> dict[str, int]:
    """Notes per kind, by largest remainder so they add up to ``notes`` exactly."""
    shares = {kind: share for kind, _, _, _, share in CATEGORIES}
    shares["source"] -= recurring
    shares["recurring"] = recurring
    exact = {kind: notes * share for kind, share in shares.items()}
    counts = {kind: int(value) for kind, value in exact.items()}
    by_remainder = sorted(shares, key=lambda kind: counts[kind] - exact[kind])
    for kind in by_remainder[: notes - sum(counts.values())]:
        counts[kind] += 1
    if notes and not counts["person"] + counts["organization"]:
        counts[max(counts, key=counts.__getitem__)] -= 1
        counts["person"] += 1
    return counts


if __name__ == "__main__":
    sys.exit(main())
