from __future__ import annotations

import pickle

from almanac import vault

NOTE = (
    "---\nid: claims/c1\ntype: claim\nsubject: '[[Bob]]'\ntags: [a, b]\nweight: 0.5\n"
    "custom: {x: [1, true]}\noccurred_at: 2024-03-01\nstate: nope\n---\n"
    "# Said\nSee [[Bob|him]] and [Ada](../people/ada.md).\n"
)


def test_a_parsed_note_survives_pickling_field_for_field() -> None:
    """A cold reconcile sends parsed notes from a second process: nothing may be lost."""
    parsed = vault.parse_note("claims/c1.md", NOTE.encode())
    assert parsed.note is not None and parsed.note.links and parsed.issues
    loaded = pickle.loads(pickle.dumps(parsed))
    assert loaded == parsed
    assert type(loaded.note) is vault.Note
    assert type(loaded.issues[0]) is vault.Issue
    assert type(loaded.note.links[0]) is vault.Link
    assert dict(loaded.note.extra) == {"custom": {"x": [1, True]}}
