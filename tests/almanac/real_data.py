"""A vault made from real data: the presidents and vice presidents of the United States
(`tests/fixtures/congress-legislators/executive.yaml`, public domain), one note per person, per
office, per party and per term (a relationship dated by the term, linking its party)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[2]
OFFICES = {"prez": ("president", "President"), "viceprez": ("vice-president", "Vice President")}


def executive_data() -> Path:
    """The data file, kept in `tests/fixtures` (public domain, see its README)."""
    return ROOT / "tests" / "fixtures" / "congress-legislators" / "executive.yaml"


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def write_executive_vault(source: Path, vault: Path) -> None:
    """Write the vault: people/, offices/, parties/, terms/."""
    people: list[dict[str, Any]] = yaml.safe_load(source.read_text(encoding="utf-8"))
    parties: set[str] = set()
    for folder in ("people", "offices", "parties", "terms"):
        (vault / folder).mkdir(parents=True, exist_ok=True)
    for key, title in OFFICES.values():
        (vault / "offices" / f"{key}.md").write_text(
            f"---\ntype: office\ntitle: {title} of the United States\naliases: [{title}]\n---\n"
        )
    for person in people:
        ids = person["id"]
        key = str(ids.get("bioguide") or ids["govtrack"]).lower()
        name = person["name"]
        full = f"{name['first']} {name['last']}"
        born = person.get("bio", {}).get("birthday")
        dated = f"occurred_at: {born}\n" if born else ""
        (vault / "people" / f"{key}.md").write_text(
            f"---\ntype: person\ntitle: {full}\n{dated}---\n# {full}\n"
        )
        for n, term in enumerate(person["terms"]):
            office, office_title = OFFICES[term["type"]]
            party = term.get("party") or "no party"
            parties.add(party)
            (vault / "terms" / f"{key}-{n}.md").write_text(
                "---\n"
                "type: relationship\n"
                f"title: {full}, {office_title} from {term['start']}\n"
                f"from: people/{key}\n"
                f"to: offices/{office}\n"
                "relation: holds_office\n"
                f"valid_from: {term['start']}\n"
                f"valid_until: {term['end']}\n"
                f"occurred_at: {term['start']}\n"
                f"ends_at: {term['end']}\n"
                "---\n"
                f"{full} served as {office_title} ({term.get('how', 'election')}) for the"
                f" [[parties/{_slug(party)}|{party}]].\n"
            )
    for party in parties:
        (vault / "parties" / f"{_slug(party)}.md").write_text(
            f"---\ntype: party\ntitle: {party}\n---\n"
        )
