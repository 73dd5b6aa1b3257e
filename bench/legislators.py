"""A vault of real data: the members of the United States Congress, the presidents and vice
presidents, their parties, states, chambers and committees (github.com/unitedstates/
congress-legislators, public domain / CC0).

    python bench/legislators.py --source PATH --vault DIR [--force]

`--source` is a folder holding the project's YAML files, or a git directory of the project
(read with `git show`: `HEAD`, then `gh-pages` for the CSV). Read, when present:
`legislators-current.yaml`, `legislators-historical.yaml` (else `legislators-historical.csv`,
which has each former member's last term only, without its dates), `executive.yaml`,
`committees-current.yaml`, `committees-historical.yaml`, `committee-membership-current.yaml`.

Written (folders of the vault):

- `people/`: every legislator, current and former, and every president and vice president
  (`type: person`; the title is the official full name, else first and last; aliases the other
  forms of the name; the project's ids as fields; `occurred_at` the birthday). A former
  member's terms are listed in the body, with links to their state, chamber and party.
- `states/`, `parties/`, `chambers/`, `offices/`, `committees/` (current and historical,
  subcommittees too; a current committee's body lists its members, as links).
- `terms/`: one relationship per term of the current members (`represents`, person -> state,
  with chamber, district and party) and of the executive (`holds_office`, person -> office),
  valid from the term's start to its end, occurring on its start.
- `parties/memberships/`: one relationship per run of consecutive terms in one party (`member_of`,
  person -> party, split where a term's `party_affiliations` say the party changed).

Former members' terms are not relationship notes: the CSV has no dates for them, and with the
YAML they would be ~45,000 more notes, while the vault is meant to stay near the real-data
size of the serving issue (~16,500 notes). Anything the data holds that would not make a valid
note (a missing or malformed date, an end before its start, a term without a state) is skipped
and counted; the counts are printed.
"""

from __future__ import annotations

import argparse
import csv
import datetime as dt
import io
import json
import re
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

__all__ = ["convert", "main"]

STATES = {
    "AK": "Alaska", "AL": "Alabama", "AR": "Arkansas", "AS": "American Samoa", "AZ": "Arizona",
    "CA": "California", "CO": "Colorado", "CT": "Connecticut", "DC": "District of Columbia",
    "DE": "Delaware", "DK": "Dakota Territory", "FL": "Florida", "GA": "Georgia", "GU": "Guam",
    "HI": "Hawaii", "IA": "Iowa", "ID": "Idaho", "IL": "Illinois", "IN": "Indiana",
    "KS": "Kansas", "KY": "Kentucky", "LA": "Louisiana", "MA": "Massachusetts",
    "MD": "Maryland", "ME": "Maine", "MI": "Michigan", "MN": "Minnesota", "MO": "Missouri",
    "MP": "Northern Mariana Islands", "MS": "Mississippi", "MT": "Montana",
    "NC": "North Carolina", "ND": "North Dakota", "NE": "Nebraska", "NH": "New Hampshire",
    "NJ": "New Jersey", "NM": "New Mexico", "NV": "Nevada", "NY": "New York", "OH": "Ohio",
    "OK": "Oklahoma", "OL": "Territory of Orleans", "OR": "Oregon", "PA": "Pennsylvania",
    "PI": "Philippine Islands", "PR": "Puerto Rico", "RI": "Rhode Island",
    "SC": "South Carolina", "SD": "South Dakota", "TN": "Tennessee", "TX": "Texas",
    "UT": "Utah", "VA": "Virginia", "VI": "Virgin Islands", "VT": "Vermont",
    "WA": "Washington", "WI": "Wisconsin", "WV": "West Virginia", "WY": "Wyoming",
}  # fmt: skip
CHAMBERS = {"rep": ("house", "House of Representatives", "Representative"),
            "sen": ("senate", "Senate", "Senator")}  # fmt: skip
OFFICES = {"prez": ("president", "President of the United States", "President"),
           "viceprez": ("vice-president", "Vice President of the United States",
                        "Vice President")}  # fmt: skip
COMMITTEE_CHAMBERS = {"house": "House", "senate": "Senate", "joint": "Joint"}
ID_FIELDS = ("bioguide", "govtrack", "thomas", "lis", "icpsr", "wikipedia", "wikidata")
_DAY = re.compile(r"\d{4}-\d{2}-\d{2}")


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def _q(value: object) -> str:
    """A YAML scalar for any text: JSON's double-quoted strings are YAML's too."""
    return json.dumps(str(value), ensure_ascii=False)


class Source:
    """The data files, from a folder or from a git directory (`git show REF:NAME`)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.git = not (path / "executive.yaml").is_file() and (path / "HEAD").is_file()

    def read(self, name: str) -> str | None:
        if not self.git:
            file = self.path / name
            return file.read_text(encoding="utf-8") if file.is_file() else None
        for ref in ("HEAD", "gh-pages"):
            shown = subprocess.run(
                ["git", "--git-dir", str(self.path), "show", f"{ref}:{name}"],
                capture_output=True,
                check=False,
            )
            if shown.returncode == 0:
                return shown.stdout.decode("utf-8")
        return None

    def yaml(self, name: str) -> Any:
        text = self.read(name)
        return None if text is None else yaml.load(text, Loader=yaml.CSafeLoader)


@dataclass
class Term:
    kind: str  # rep, sen, prez, viceprez
    start: str | None
    end: str | None
    state: str | None = None
    district: str | None = None
    party: str | None = None
    affiliations: list[tuple[str, str | None, str]] = field(default_factory=list)


@dataclass
class Person:
    key: str
    title: str
    aliases: list[str]
    ids: dict[str, str]
    birthday: str | None
    gender: str | None
    terms: list[Term]
    current: bool = False  # terms become relationship notes
    executive: list[Term] = field(default_factory=list)


class Converter:
    """Reads the source into people and organisations, then writes the vault."""

    def __init__(self, source: Source) -> None:
        self.source = source
        self.skipped: Counter[str] = Counter()
        self.people: dict[str, Person] = {}
        self.parties: dict[str, list[str]] = {}  # slug -> names, first seen first
        self.states: set[str] = set()
        self.historical_from = "none"

    # Reading.
    def day(self, value: object, what: str) -> str | None:
        """A valid `YYYY-MM-DD`, else None (counted under `what`)."""
        text = str(value).strip() if value is not None else ""
        if not text:
            return None
        if _DAY.fullmatch(text):
            try:
                dt.date.fromisoformat(text)
                return text
            except ValueError:
                pass
        self.skipped[f"invalid {what}"] += 1
        return None

    def read(self) -> None:
        current = self.source.yaml("legislators-current.yaml") or []
        for entry in current:
            self.person_from_yaml(entry, current=True)
        historical = self.source.yaml("legislators-historical.yaml")
        if historical is not None:
            self.historical_from = "legislators-historical.yaml"
            for entry in historical:
                self.person_from_yaml(entry, current=False)
        else:
            text = self.source.read("legislators-historical.csv")
            if text is not None:
                self.historical_from = "legislators-historical.csv (last term only, undated)"
                for row in csv.DictReader(io.StringIO(text)):
                    self.person_from_csv(row)
        for entry in self.source.yaml("executive.yaml") or []:
            self.executive(entry)

    def term(self, raw: Any) -> Term | None:
        if not isinstance(raw, dict) or raw.get("type") not in (*CHAMBERS, *OFFICES):
            self.skipped["term of unknown type"] += 1
            return None
        start = self.day(raw.get("start"), "term start")
        end = self.day(raw.get("end"), "term end")
        if start is None:
            self.skipped["term without a valid start"] += 1
            return None
        if end is not None and end <= start:
            self.skipped["term end not after its start (end dropped)"] += 1
            end = None
        state = str(raw["state"]).upper() if raw.get("state") else None
        if raw["type"] in CHAMBERS and state is None:
            self.skipped["congress term without a state"] += 1
            return None
        party = str(raw["party"]).strip() if raw.get("party") else None
        affiliations = []
        for one in raw.get("party_affiliations") or []:
            a_start = self.day(one.get("start"), "party affiliation start")
            if a_start is not None and one.get("party"):
                a_end = self.day(one.get("end"), "party affiliation end")
                affiliations.append((a_start, a_end, str(one["party"]).strip()))
        district = raw.get("district")
        return Term(
            raw["type"],
            start,
            end,
            state,
            None if district is None else str(district),
            party,
            affiliations,
        )

    def names(self, name: dict[str, Any]) -> tuple[str, list[str]] | None:
        first, last = (str(name.get(k) or "").strip() for k in ("first", "last"))
        if not last:
            return None
        middle, nick, suffix = (
            str(name.get(k) or "").strip() for k in ("middle", "nickname", "suffix")
        )
        plain = f"{first} {last}".strip() + (f", {suffix}" if suffix else "")
        title = str(name.get("official_full") or "").strip() or plain
        aliases = [plain, f"{first} {middle} {last}".strip() if middle else ""]
        aliases += [f"{nick} {last}" if nick else "", str(name.get("full") or "").strip()]
        seen = {title}
        unique = []
        for alias in aliases:
            if alias and alias not in seen:
                seen.add(alias)
                unique.append(alias)
        return title, unique

    def add(self, person: Person) -> None:
        if person.key in self.people:
            self.skipped["person listed twice (first kept)"] += 1
            return
        self.people[person.key] = person
        for term in person.terms:
            self.note_term(term)

    def note_term(self, term: Term) -> None:
        if term.state is not None:
            self.states.add(term.state)
        for party in [term.party, *(a[2] for a in term.affiliations)]:
            if party:
                self.parties.setdefault(_slug(party) or "unknown", [])
                if party not in self.parties[_slug(party) or "unknown"]:
                    self.parties[_slug(party) or "unknown"].append(party)

    def key(self, ids: dict[str, Any]) -> str | None:
        for name in ("bioguide", "govtrack"):
            if ids.get(name):
                return _slug(str(ids[name]))
        return None

    def person_from_yaml(self, entry: Any, *, current: bool) -> None:
        ids = entry.get("id") if isinstance(entry, dict) else None
        key = self.key(ids) if isinstance(ids, dict) else None
        named = self.names(entry.get("name") or {}) if key else None
        if key is None or named is None or not isinstance(ids, dict):
            self.skipped["person without an id or a last name"] += 1
            return
        bio = entry.get("bio") or {}
        terms = [t for t in map(self.term, entry.get("terms") or []) if t is not None]
        self.add(
            Person(
                key,
                named[0],
                named[1],
                {k: str(ids[k]) for k in ID_FIELDS if ids.get(k)},
                self.day(bio.get("birthday"), "birthday"),
                bio.get("gender"),
                terms,
                current=current,
            )
        )

    def person_from_csv(self, row: dict[str, str]) -> None:
        ids = {k: row.get(f"{k}_id", "") for k in ID_FIELDS}
        key = self.key(ids)
        name = {
            "first": row.get("first_name"),
            "middle": row.get("middle_name"),
            "last": row.get("last_name"),
            "suffix": row.get("suffix"),
            "nickname": row.get("nickname"),
            "official_full": row.get("full_name"),
        }
        named = self.names(name) if key else None
        if key is None or named is None:
            self.skipped["person without an id or a last name"] += 1
            return
        term = None
        if row.get("type") in CHAMBERS and row.get("state"):
            term = Term(
                row["type"],
                None,
                None,
                row["state"].upper(),
                row.get("district") or None,
                row.get("party", "").strip() or None,
            )
        else:
            self.skipped["former member's last term unusable"] += 1
        self.add(
            Person(
                key,
                named[0],
                named[1],
                {k: v for k, v in ids.items() if v},
                self.day(row.get("birthday"), "birthday"),
                row.get("gender") or None,
                [term] if term else [],
            )
        )

    def executive(self, entry: Any) -> None:
        ids = entry.get("id") if isinstance(entry, dict) else None
        key = self.key(ids) if isinstance(ids, dict) else None
        terms = [t for t in map(self.term, (entry or {}).get("terms") or []) if t is not None]
        if key is not None and key in self.people:  # a president who sat in Congress
            self.people[key].executive = terms
            for term in terms:
                self.note_term(term)
            return
        named = self.names(entry.get("name") or {}) if key else None
        if key is None or named is None or not isinstance(ids, dict):
            self.skipped["person without an id or a last name"] += 1
            return
        bio = entry.get("bio") or {}
        person = Person(
            key,
            named[0],
            named[1],
            {k: str(ids[k]) for k in ID_FIELDS if ids.get(k)},
            self.day(bio.get("birthday"), "birthday"),
            bio.get("gender"),
            [],
            executive=terms,
        )
        self.add(person)
        for term in terms:
            self.note_term(term)

    # Writing.
    def write(self, vault: Path) -> Counter[str]:
        self.vault = vault
        self.written: Counter[str] = Counter()
        self.committees()
        for code in sorted(self.states):
            name = STATES.get(code)
            if name is None:
                self.skipped["state code not known (titled by its code)"] += 1
            head = ["type: place", "category: state", f"code: {code}"]
            self.note(f"states/{code.lower()}", head, name or code, aliases=[code])
        for slug, names in sorted(self.parties.items()):
            head = ["type: organization", "category: party"]
            self.note(f"parties/{slug}", head, names[0], aliases=names[1:])
        for slug, title, _ in CHAMBERS.values():
            self.note(f"chambers/{slug}", ["type: organization", "category: chamber"], title)
        for slug, title, short in OFFICES.values():
            self.note(f"offices/{slug}", ["type: office"], title, aliases=[short])
        for person in self.people.values():
            self.person(person)
        return self.written

    def note(
        self, path: str, head: list[str], title: str, *, aliases: Sequence[str] = (), body: str = ""
    ) -> None:
        lines = ["---", *head, f"title: {_q(title)}"]
        if aliases:
            lines.append(f"aliases: [{', '.join(_q(a) for a in aliases)}]")
        text = "\n".join([*lines, "---", f"# {title}", "", body]).rstrip("\n") + "\n"
        file = self.vault / f"{path}.md"
        file.parent.mkdir(parents=True, exist_ok=True)
        file.write_text(text, encoding="utf-8")
        self.written[path.rsplit("/", 1)[0]] += 1

    def committees(self) -> None:
        members = self.source.yaml("committee-membership-current.yaml") or {}
        found: dict[str, tuple[dict[str, Any], dict[str, Any] | None, bool]] = {}
        for name, current in (
            ("committees-current.yaml", True),
            ("committees-historical.yaml", False),
        ):
            for committee in self.source.yaml(name) or []:
                if not isinstance(committee, dict) or not committee.get("thomas_id"):
                    self.skipped["committee without an id"] += 1
                    continue
                found.setdefault(str(committee["thomas_id"]), (committee, None, current))
                for sub in committee.get("subcommittees") or []:
                    if isinstance(sub, dict) and sub.get("thomas_id"):
                        key = f"{committee['thomas_id']}{sub['thomas_id']}"
                        found.setdefault(key, (sub, committee, current))
                    else:
                        self.skipped["committee without an id"] += 1
        for key, (committee, parent, current) in sorted(found.items()):
            chamber = COMMITTEE_CHAMBERS.get(str((parent or committee).get("type")))
            head = ["type: organization", "category: committee", f"thomas_id: {_q(key)}"]
            head.append(f"current: {'true' if current else 'false'}")
            congresses = committee.get("congresses") or []
            if congresses:
                head.append(f"congresses: [{', '.join(str(c) for c in congresses)}]")
            lines = []
            if chamber in ("House", "Senate"):
                slug = "house" if chamber == "House" else "senate"
                lines.append(f"A committee of the [[chambers/{slug}|{chamber}]].")
            title = str(committee.get("name") or key)
            if parent is not None:
                parent_key = str(parent["thomas_id"]).lower()
                lines.append(f"Subcommittee of [[committees/{parent_key}|{parent['name']}]].")
                title = f"{parent['name']}: Subcommittee on {title}"
            roster = []
            for member in members.get(key) or []:
                who = self.key(member) if isinstance(member, dict) else None
                if who is None or who not in self.people:
                    self.skipped["committee member not a known person"] += 1
                    continue
                role = ", ".join(str(member[k]) for k in ("title", "party") if member.get(k))
                roster.append(f"- [[people/{who}|{self.people[who].title}]] ({role})")
            if roster:
                lines += ["", "## Members", "", *roster]
            self.note(f"committees/{key.lower()}", head, title, body="\n".join(lines))
        unknown = set(members) - set(found)
        self.skipped["membership list of an unknown committee"] += len(unknown)

    def person(self, person: Person) -> None:
        head = ["type: person"]
        head += [f"{k}: {_q(v)}" for k, v in person.ids.items()]
        if person.gender:
            head.append(f"gender: {_q(person.gender)}")
        if person.birthday:
            head.append(f"occurred_at: {person.birthday}")
        lines = []
        for term in person.terms:
            lines.append(f"- {self.describe(term)}")
        for term in person.executive:
            lines.append(f"- {self.describe(term)}")
        body = "\n".join(["## Terms", "", *lines]) if lines else ""
        self.note(f"people/{person.key}", head, person.title, aliases=person.aliases, body=body)
        relationships = person.terms if person.current else []
        for n, term in enumerate([*relationships, *person.executive]):
            self.relationship(person, n, term)
        for n, (start, end, party) in enumerate(self.runs(person)):
            head = ["type: relationship", f"from: people/{person.key}"]
            head += [f"to: parties/{_slug(party) or 'unknown'}", "relation: member_of"]
            head += [f"valid_from: {start}", f"occurred_at: {start}"]
            head += [f"valid_until: {end}"] if end else []
            title = f"{person.title}, {party}, from {start}"
            self.note(f"parties/memberships/{person.key}-{n}", head, title)

    def runs(self, person: Person) -> Iterator[tuple[str, str | None, str]]:
        """Spans of consecutive dated terms in one party (affiliations split a term)."""
        terms = person.terms if person.current else []
        pieces: list[tuple[str, str | None, str]] = []
        for term in [*terms, *person.executive]:
            if term.affiliations:
                pieces += term.affiliations
            elif term.party and term.start:
                pieces.append((term.start, term.end, term.party))
        pieces.sort(key=lambda p: p[0])
        run: list[Any] | None = None
        for start, end, party in pieces:
            if run is not None and run[2] == party:
                run[1] = None if end is None or run[1] is None else max(run[1], end)
                continue
            if run is not None:
                yield run[0], run[1], run[2]
            run = [start, end, party]
        if run is not None:
            yield run[0], run[1], run[2]

    def describe(self, term: Term) -> str:
        when = f" ({term.start} to {term.end or 'open'})" if term.start else ""
        party = f", [[parties/{_slug(term.party) or 'unknown'}|{term.party}]]" if term.party else ""
        if term.kind in OFFICES:
            slug, title, _ = OFFICES[term.kind]
            return f"[[offices/{slug}|{title}]]{party}{when}"
        slug, chamber, role = CHAMBERS[term.kind]
        state = term.state or ""
        district = f", district {term.district}" if term.district not in (None, "", "0") else ""
        return (
            f"{role} for [[states/{state.lower()}|{STATES.get(state, state)}]]{district} in the"
            f" [[chambers/{slug}|{chamber}]]{party}{when}"
        )

    def relationship(self, person: Person, n: int, term: Term) -> None:
        if term.kind in OFFICES:
            slug, _, role = OFFICES[term.kind]
            head = ["type: relationship", f"from: people/{person.key}", f"to: offices/{slug}"]
            head.append("relation: holds_office")
            title = f"{person.title}, {role}, from {term.start}"
        else:
            _, _, role = CHAMBERS[term.kind]
            state = term.state or ""
            head = ["type: relationship", f"from: people/{person.key}"]
            head += [f"to: states/{state.lower()}", "relation: represents"]
            head.append(f"chamber: {CHAMBERS[term.kind][0]}")
            if term.district is not None:
                head.append(f"district: {_q(term.district)}")
            title = f"{person.title}, {role} for {STATES.get(state, state)}, from {term.start}"
        if term.party:
            head.append(f"party: {_q(term.party)}")
        head += [f"valid_from: {term.start}", f"occurred_at: {term.start}"]
        if term.end:
            head.append(f"valid_until: {term.end}")
        body = f"{person.title}: {self.describe(term)}."
        self.note(f"terms/{person.key}-{n}", head, title, body=body)


def convert(source: Path, vault: Path) -> tuple[Counter[str], Counter[str], str]:
    """Write the vault; return the notes written per top folder, what was skipped, and where
    the former members came from."""
    converter = Converter(Source(source))
    converter.read()
    written = converter.write(vault)
    return written, converter.skipped, converter.historical_from


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--source", type=Path, required=True, help="data folder or git dir")
    parser.add_argument("--vault", type=Path, required=True)
    parser.add_argument("--force", action="store_true", help="write into a non-empty folder")
    args = parser.parse_args(argv)
    if args.vault.exists() and any(args.vault.iterdir()) and not args.force:
        parser.error(f"{str(args.vault)!r} is not empty (use --force)")
    if not args.source.is_dir():
        parser.error(f"{str(args.source)!r} is not a folder")
    written, skipped, historical = convert(args.source, args.vault)
    print(f"former members from: {historical}")
    for folder, count in sorted(written.items()):
        print(f"{folder}: {count}")
    print(f"notes: {sum(written.values())}")
    for what, count in sorted(skipped.items()):
        if count:
            print(f"skipped: {what}: {count}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
