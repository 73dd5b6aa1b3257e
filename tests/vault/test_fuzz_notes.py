"""Hypothesis over whole note files: `parse_note` never raises, whatever the bytes."""

from __future__ import annotations

import hashlib

from hypothesis import given, settings, strategies as st

from almanac.vault import ParsedNote, parse_note

CODES = frozenset(
    {
        "not_utf8",
        "invalid_frontmatter",
        "file_too_large",
        "duplicate_key",
        "invalid_id",
        "invalid_field",
        "missing_field",
    }
)
PATHS = st.sampled_from(
    [
        "n.md",
        "dir/sub/n.md",
        "People/Zoë Ådahl.md",
        "a\u200bb.md",
        "x.sync-conflict-20240101-120000-ABCDEFG.md",
    ]
)
FRAGMENTS = [
    "---\n",
    "---",
    "...\n",
    "\n",
    "\r\n",
    "\r",
    "  ",
    "\t",
    "\ufeff",
    "\x00",
    "\u200b",
    "\u202e",
    "id: ",
    "title: ",
    "type: ",
    "tags: ",
    "aliases: ",
    "entities: ",
    "owner: ",
    "subject: ",
    "from: ",
    "to: ",
    "relation: ",
    "weight: ",
    "lifecycle: ",
    "state: ",
    "source_event: ",
    "timezone: ",
    "recurrence: FREQ=WEEKLY;COUNT=3",
    "occurred_at: ",
    "valid_until: ",
    "exdates: ",
    "type: relationship\n",
    "type: claim\n",
    "lifecycle: withdrawn\n",
    "[",
    "]",
    "{",
    "}",
    ", ",
    "- ",
    "? ",
    ": ",
    "'",
    '"',
    "|",
    ">",
    "#",
    "%",
    "@",
    "`",
    "&a ",
    "*a",
    "<<: *a\n",
    "!!python/object/apply:os.system ['echo hi']",
    "!!binary aGk=",
    "!!str ",
    "!local ",
    "null",
    "~",
    "yes",
    "no",
    "on",
    "012",
    "0x1F",
    "1:20",
    "1e3",
    ".inf",
    "2024",
    "2024-02",
    "2024-02-30",
    "2024-03-01T10:00",
    "+02:00",
    "Z",
    "Europe/Paris",
    "../etc",
    "．．／etc",
    "a" * 201,
    "[[",
    "]]",
    "![[",
    "[[#h]]",
    "\\|",
    "](",
    ")",
    "%20",
    "(../../x.md)",
    "```\n",
    "~~~\n",
    "# ",
    "[[a|b]]",
    "[x](rel/a%20b.md)",
]
TEXT = st.lists(st.one_of(st.sampled_from(FRAGMENTS), st.text(max_size=12)), max_size=60).map(
    "".join
)
NOTE_TEXT = st.one_of(TEXT, st.tuples(TEXT, TEXT).map(lambda p: f"---\n{p[0]}\n---\n{p[1]}"))


def _check(path: str, data: bytes, parsed: ParsedNote) -> None:
    assert parsed.path == path
    assert parsed.revision == hashlib.sha256(data).hexdigest()
    assert parsed.note is not None or parsed.issues
    for issue in parsed.issues:
        assert issue.path == path
        assert issue.code in CODES, issue
        assert issue.line is None or issue.line >= 1
    note = parsed.note
    if note is not None:
        assert isinstance(note.id, str)
        assert isinstance(note.title, str)
        assert note.kind in ("page", "claim", "relationship")
        assert all(1 <= link.line <= note.line_count for link in note.links), note.links
        assert note.body_line >= 1


@settings(max_examples=200, deadline=None, database=None)
@given(path=PATHS, data=st.binary(max_size=2048))
def test_parse_note_never_raises_on_arbitrary_bytes(path: str, data: bytes) -> None:
    _check(path, data, parse_note(path, data))


@settings(max_examples=200, deadline=None, database=None)
@given(path=PATHS, data=st.binary(max_size=512).map(lambda b: b"---\n" + b + b"\n---\n"))
def test_parse_note_never_raises_on_arbitrary_frontmatter_bytes(path: str, data: bytes) -> None:
    _check(path, data, parse_note(path, data))


@settings(max_examples=200, deadline=None, database=None)
@given(path=PATHS, text=NOTE_TEXT, encoding=st.sampled_from(["utf-8", "utf-8-sig", "utf-16"]))
def test_parse_note_never_raises_on_frontmatter_like_text(
    path: str, text: str, encoding: str
) -> None:
    data = text.encode(encoding, "surrogatepass")
    _check(path, data, parse_note(path, data))
