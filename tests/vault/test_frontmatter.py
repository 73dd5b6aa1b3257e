"""`parse_note`: frontmatter fields, defaults, YAML hazards and per-field validation."""

from __future__ import annotations

import hashlib
from typing import Any

import pytest

from almanac.vault import Issue, Note, ParsedNote, parse_note
from almanac.vault.frontmatter import MAX_DEPTH, MAX_FRONTMATTER_BYTES


def _parse(text: str, path: str = "notes/n.md", **kwargs: Any) -> ParsedNote:
    return parse_note(path, text.encode("utf-8"), **kwargs)


def _note(text: str, path: str = "notes/n.md", **kwargs: Any) -> Note:
    parsed = _parse(text, path, **kwargs)
    assert parsed.note is not None, parsed.issues
    return parsed.note


def _codes(parsed: ParsedNote) -> list[tuple[int | None, str | None, str]]:
    return sorted(((i.line, i.field, i.code) for i in parsed.issues), key=repr)


FULL_NOTE = """\
---
id: ada-at-acme
type: relationship
title: Ada works at Acme
aliases: [Ada's job, The engine post]
tags: [work, Work]
entities: ["[[ada]]", acme, "![[engine]]"]
owner: "[[ada|Ada L.]]"
from: ada
to: "[[acme#History]]"
source: minutes-1834
superseded_by: ada-at-acme-2
relation: works_at
weight: 0.75
source_event: true
lifecycle: superseded
state: open
timezone: Europe/London
recurrence: FREQ=WEEKLY;COUNT=3
occurred_at: 1834-06-05T10:00
ends_at: 1834-06-05T12:00
recorded_at: 2024-01-05T09:30:00Z
updated_at: 2024-02
due_at: 2024
valid_from: 1834-06-01
valid_until: 1843-09-01
reinstated_at: 2025-01-01T00:00:00+01:00
exdates: [1834-06-12T10:00]
rdates: 1834-07-01T10:00
mood: cheerful
rating: 5
---
# Heading that is not the title

Body text.
"""


def test_parse_note_reads_every_known_field() -> None:
    parsed = _parse(FULL_NOTE, "rel/ada.md")
    note = parsed.note

    assert parsed.issues == ()
    assert note is not None
    assert (note.path, note.slug, note.id) == ("rel/ada.md", "rel/ada", "ada-at-acme")
    assert (note.type, note.kind, note.title) == (
        "relationship",
        "relationship",
        "Ada works at Acme",
    )
    assert note.aliases == ("Ada's job", "The engine post")
    assert note.tags == ("work", "Work")
    assert note.entities == ("ada", "acme", "engine")
    assert dict(note.refs) == {
        "owner": "ada",
        "from": "ada",
        "to": "acme",
        "source": "minutes-1834",
        "superseded_by": "ada-at-acme-2",
    }
    assert (note.relation, note.weight, note.source_event) == ("works_at", 0.75, True)
    assert (note.lifecycle, note.state) == ("superseded", "open")
    assert (note.timezone, note.recurrence) == ("Europe/London", "FREQ=WEEKLY;COUNT=3")
    assert dict(note.dates) == {
        "occurred_at": "1834-06-05T10:00",
        "ends_at": "1834-06-05T12:00",
        "recorded_at": "2024-01-05T09:30:00Z",
        "updated_at": "2024-02",
        "due_at": "2024",
        "valid_from": "1834-06-01",
        "valid_until": "1843-09-01",
        "reinstated_at": "2025-01-01T00:00:00+01:00",
    }
    assert (note.exdates, note.rdates) == (("1834-06-12T10:00",), ("1834-07-01T10:00",))
    assert dict(note.extra) == {"mood": "cheerful", "rating": 5}
    assert note.lines["id"] == 2
    assert note.lines["rating"] == 31
    assert note.body == "# Heading that is not the title\n\nBody text.\n"
    assert (note.body_line, note.line_count) == (33, 35)
    assert note.valid


@pytest.mark.parametrize(
    ("path", "text", "expected"),
    [
        pytest.param("notes/n.md", "", ("notes/n", "n", "note"), id="empty-file"),
        pytest.param("notes/n.md", "---\n---\n", ("notes/n", "n", "note"), id="empty-frontmatter"),
        pytest.param(
            "notes/n.md", "---\n\n---\n", ("notes/n", "n", "note"), id="blank-frontmatter"
        ),
        pytest.param(
            "notes/n.md",
            "Intro\n\n# First Heading #\n# Second\n",
            ("notes/n", "First Heading", "note"),
            id="title-from-first-heading",
        ),
        pytest.param(
            "notes/n.md",
            "```\n# In code\n```\n# Real\n",
            ("notes/n", "Real", "note"),
            id="heading-in-fenced-code-skipped",
        ),
        pytest.param(
            "notes/n.md", "#NoSpace\n## Sub\n", ("notes/n", "n", "note"), id="no-level-1-heading"
        ),
        pytest.param(
            "notes/n.md",
            "---\ntitle: ~\n---\n# Head\n",
            ("notes/n", "Head", "note"),
            id="null-title",
        ),
        pytest.param(
            "notes/n.md",
            "---\ntitle: ''\ntype: ''\n---\n",
            ("notes/n", "n", "note"),
            id="empty-strings",
        ),
        pytest.param(
            "People/My Friend.md",
            "# \n",
            ("People/My Friend", "My Friend", "note"),
            id="slug-keeps-spaces-and-case",
        ),
        pytest.param(
            "cafe\u0301/Zoë.md",
            "",
            ("caf\u00e9/Zoë", "Zoë", "note"),
            id="slug-is-nfc",
        ),
        pytest.param(
            "a/b/c.md", "---\ntype: person\n---\n", ("a/b/c", "c", "person"), id="written-type"
        ),
    ],
)
def test_parse_note_defaults_id_title_and_type(
    path: str, text: str, expected: tuple[str, str, str]
) -> None:
    parsed = _parse(text, path)

    assert parsed.issues == ()
    assert parsed.note is not None
    assert (parsed.note.id, parsed.note.title, parsed.note.type) == expected


def test_parse_note_expands_type_aliases() -> None:
    note = _note("---\ntype: people\n---\n", type_aliases={"people": "person"})

    assert note.type == "person"


@pytest.mark.parametrize(
    ("written", "kind"),
    [
        pytest.param(
            "type: relationship\nfrom: a\nto: b\nrelation: knows", "relationship", id="relationship"
        ),
        pytest.param("type: claim\nsubject: a", "claim", id="claim"),
        pytest.param("type: person", "page", id="person"),
        pytest.param("title: untyped", "page", id="note"),
    ],
)
def test_parse_note_derives_kind_from_type(written: str, kind: str) -> None:
    assert _note(f"---\n{written}\n---\n").kind == kind


@pytest.mark.parametrize(
    ("line", "attribute", "expected"),
    [
        pytest.param("title: no", "title", "no", id="no-stays-text"),
        pytest.param("title: yes", "title", "yes", id="yes-stays-text"),
        pytest.param("title: off", "title", "off", id="off-stays-text"),
        pytest.param("title: 1:20", "title", "1:20", id="sexagesimal-stays-text"),
        pytest.param("title: 1e3", "title", "1e3", id="float-stays-text"),
        pytest.param("title: .inf", "title", ".inf", id="inf-stays-text"),
        pytest.param("title: 2024-01-02", "title", "2024-01-02", id="date-stays-text"),
        pytest.param("id: 012", "id", "012", id="octal-id-stays-text"),
        pytest.param("id: 0x1F", "id", "0x1F", id="hex-id-stays-text"),
        pytest.param("id: 12", "id", "12", id="integer-id-is-its-text"),
        pytest.param("tags: [on, off, 012, 1:20]", "tags", ("on", "off", "012", "1:20"), id="tags"),
        pytest.param("aliases: no", "aliases", ("no",), id="single-alias"),
        pytest.param("aliases: []", "aliases", (), id="no-aliases"),
        pytest.param("tags: [a, '', ' ']", "tags", ("a",), id="blank-tags-dropped"),
        pytest.param("timezone: UTC", "timezone", "UTC", id="timezone"),
        pytest.param("weight: 0.50", "weight", 0.5, id="weight"),
        pytest.param("weight: '1'", "weight", 1.0, id="quoted-weight"),
        pytest.param("source_event: True", "source_event", True, id="source-event"),
    ],
)
def test_parse_note_keeps_yaml_1_1_scalars_as_written(
    line: str, attribute: str, expected: object
) -> None:
    parsed = _parse(f"---\n{line}\n---\n")

    assert parsed.issues == ()
    assert parsed.note is not None
    assert getattr(parsed.note, attribute) == expected


@pytest.mark.parametrize(
    ("line", "field", "expected"),
    [
        pytest.param("occurred_at: 2024-01-02", "occurred_at", "2024-01-02", id="day"),
        pytest.param(
            "occurred_at: 2024-01-02 10:00:00", "occurred_at", "2024-01-02 10:00:00", id="space"
        ),
        pytest.param(
            "occurred_at: 2024-01-02T10:00:00Z", "occurred_at", "2024-01-02T10:00:00Z", id="utc"
        ),
        pytest.param(
            "due_at: 2024-02-30", "due_at", "2024-02-30", id="impossible-kept-for-temporal"
        ),
        pytest.param("updated_at: '2024'", "updated_at", "2024", id="quoted-year"),
    ],
)
def test_parse_note_keeps_date_text_as_written(line: str, field: str, expected: str) -> None:
    assert dict(_note(f"---\n{line}\n---\n").dates) == {field: expected}


def test_parse_note_types_extra_fields_with_the_core_schema() -> None:
    text = "---\nn: 5\nf: 2.5\nb: TRUE\nz: null\nq: '5'\nyes_no: yes\nnested: {a: [1, b, ~]}\n---\n"

    parsed = _parse(text)

    assert parsed.issues == ()
    assert parsed.note is not None
    assert dict(parsed.note.extra) == {
        "n": 5,
        "f": 2.5,
        "b": True,
        "z": None,
        "q": "5",
        "yes_no": "yes",
        "nested": {"a": [1, "b", None]},
    }


def test_parse_note_reports_duplicate_key_and_keeps_the_last() -> None:
    parsed = _parse("---\ntitle: First\nid: dk\ntitle: Second\n---\n")

    assert parsed.issues == (
        Issue("notes/n.md", 4, "title", "duplicate_key", "Key 'title' is repeated; the last wins"),
    )
    assert parsed.note is not None
    assert parsed.note.title == "Second"
    assert parsed.note.lines["title"] == 4
    assert parsed.note.valid


_DEEP_FLOW = "x: " + "[" * (MAX_DEPTH + 5) + "]" * (MAX_DEPTH + 5)
_DEEP_BLOCK = "".join("  " * i + f"k{i}:\n" for i in range(MAX_DEPTH + 5)).rstrip("\n")
_LAUGHS = "a: &a [x, x]\nb: &b [*a, *a]\nc: [*b, *b]"


@pytest.mark.parametrize(
    ("text", "line"),
    [
        pytest.param("---\ntitle: open\n", 1, id="unclosed"),
        pytest.param("---\n", 1, id="only-opening-line"),
        pytest.param("---\n- a\n- b\n---\n", 2, id="list"),
        pytest.param("---\njust text\n---\n", 2, id="scalar"),
        pytest.param("---\ntitle: a\nb: [unclosed\nc: d\n---\n", 3, id="syntax-error"),
        pytest.param("---\ntitle: a\n  bad indent: b\n---\n", 3, id="bad-indent"),
        pytest.param("---\n? [a]\n: b\n---\n", 2, id="non-string-key"),
        pytest.param("---\na: &a [*a]\n---\n", 2, id="recursive-alias"),
        pytest.param(f"---\n{_LAUGHS}\n---\n", 2, id="billion-laughs"),
        pytest.param("---\ntitle: &t x\nalias: *t\n---\n", 2, id="plain-alias"),
        pytest.param(
            '---\nx: !!python/object/apply:os.system ["echo hi"]\n---\n', 2, id="python-tag"
        ),
        pytest.param("---\nx: !!binary aGVsbG8=\n---\n", 2, id="binary-tag"),
        pytest.param("---\nx: !!int 5\n---\n", 2, id="int-tag"),
        pytest.param("---\nx: !local v\n---\n", 2, id="local-tag"),
        pytest.param(f"---\n{_DEEP_FLOW}\n---\n", 2, id="deep-flow"),
        pytest.param(f"---\n{_DEEP_BLOCK}\n---\n", 2, id="deep-block"),
        pytest.param("---\na: 1\n---\nb: 2\n---\n", None, id="second-document-is-body"),
    ],
)
def test_parse_note_rejects_unusable_frontmatter(text: str, line: int | None) -> None:
    parsed = _parse(text)

    if line is None:
        assert parsed.issues == ()
        return
    assert parsed.note is None
    assert [(i.code, i.line, i.record_id) for i in parsed.issues] == [
        ("invalid_frontmatter", line, None)
    ]


def test_parse_note_accepts_nesting_up_to_the_limit() -> None:
    depth = MAX_DEPTH - 1  # the top-level mapping is one level
    parsed = _parse("---\nx: " + "[" * depth + "]" * depth + "\n---\n")

    assert parsed.issues == ()


@pytest.mark.parametrize(
    ("line", "message_part"),
    [
        pytest.param("id: [a, b]", "non-empty string", id="list"),
        pytest.param("id: {a: 1}", "non-empty string", id="mapping"),
        pytest.param("id: ~", "must match", id="null"),
        pytest.param("id: ''", "non-empty string", id="empty"),
        pytest.param("id: '   '", "non-empty string", id="blank"),
        pytest.param("id: ../etc", "must match", id="path-like"),
        pytest.param("id: /etc/passwd", "must match", id="absolute"),
        pytest.param("id: ．．／etc", "must match", id="fullwidth"),
        pytest.param("id: a\u200bb", "must match", id="zero-width-space"),
        pytest.param("id: a\u202eb", "must match", id="bidi-override"),
        pytest.param("id: '-a'", "must match", id="leading-dash"),
        pytest.param("id: a b", "must match", id="space"),
        pytest.param("id: " + "a" * 201, "must match", id="201-characters"),
    ],
)
def test_parse_note_rejects_invalid_ids(line: str, message_part: str) -> None:
    parsed = _parse(f"---\ntitle: t\n{line}\n---\n")

    assert [(i.code, i.line, i.field, i.record_id) for i in parsed.issues] == [
        ("invalid_id", 3, "id", None)
    ]
    assert message_part in parsed.issues[0].message
    assert parsed.note is not None
    assert not parsed.note.valid


@pytest.mark.parametrize(
    "value",
    [
        pytest.param("a", id="one-letter"),
        pytest.param("A.b_c:d/e-f", id="every-punctuation"),
        pytest.param("0", id="digit"),
        pytest.param("a" * 200, id="200-characters"),
    ],
)
def test_parse_note_accepts_valid_ids(value: str) -> None:
    parsed = _parse(f"---\nid: {value}\n---\n")

    assert parsed.issues == ()
    assert parsed.note is not None
    assert (parsed.note.id, parsed.note.valid) == (value, True)


def test_parse_note_normalises_written_id_to_nfc() -> None:
    parsed = _parse("---\nid: cafe\u0301\n---\n")

    # NFC makes 'café', which then fails the ASCII id pattern: normalised first, then validated.
    assert parsed.note is not None
    assert parsed.note.id == "caf\u00e9"
    assert [i.code for i in parsed.issues] == ["invalid_id"]


@pytest.mark.parametrize(
    "path",
    [
        pytest.param("a\u200bb.md", id="zero-width"),
        pytest.param("a\u202eb.md", id="bidi"),
        pytest.param("a\tb.md", id="tab"),
    ],
)
def test_parse_note_rejects_slug_ids_with_control_or_format_characters(path: str) -> None:
    parsed = _parse("# T\n", path)

    assert [(i.code, i.field, i.record_id) for i in parsed.issues] == [("invalid_id", None, None)]
    assert parsed.note is not None
    assert not parsed.note.valid


def test_parse_note_conflict_copy_takes_the_original_slug_id() -> None:
    note = _note("# X\n", "notes/x.sync-conflict-20240101-120000-ABCDEFG.md")

    assert note.id == "notes/x"
    assert note.slug == "notes/x.sync-conflict-20240101-120000-ABCDEFG"


@pytest.mark.parametrize(
    ("line", "field", "attribute", "fallback", "still_valid"),
    [
        pytest.param("title: [a]", "title", "title", "n", True, id="title-list"),
        pytest.param("type: {a: 1}", "type", "type", "note", True, id="type-mapping"),
        pytest.param("tags: {a: 1}", "tags", "tags", (), True, id="tags-mapping"),
        pytest.param("aliases: [[a]]", "aliases", "aliases", (), True, id="aliases-nested"),
        pytest.param("weight: 2", "weight", "weight", None, True, id="weight-over-1"),
        pytest.param("weight: -0.1", "weight", "weight", None, True, id="weight-negative"),
        pytest.param("weight: heavy", "weight", "weight", None, True, id="weight-text"),
        pytest.param("relation: WorksAt", "relation", "relation", None, True, id="relation-case"),
        pytest.param("state: maybe", "state", "state", None, True, id="state"),
        pytest.param("source_event: yes", "source_event", "source_event", False, True, id="bool"),
        pytest.param("owner: [[ada]]", "owner", "refs", {}, True, id="unquoted-wiki-ref"),
        pytest.param("lifecycle: gone", "lifecycle", "lifecycle", "active", False, id="lifecycle"),
    ],
)
def test_parse_note_reports_field_of_wrong_shape(
    line: str, field: str, attribute: str, fallback: object, still_valid: bool
) -> None:
    parsed = _parse(f"---\nmood: fine\n{line}\n---\n")

    assert [(i.code, i.line, i.field, i.record_id) for i in parsed.issues] == [
        ("invalid_field", 3, field, "notes/n")
    ]
    assert parsed.note is not None
    value = getattr(parsed.note, attribute)
    assert (dict(value) if attribute == "refs" else value) == fallback
    assert parsed.note.valid is still_valid


@pytest.mark.parametrize(
    ("lines", "missing"),
    [
        pytest.param(["type: relationship"], ["from", "relation", "to"], id="relationship-empty"),
        pytest.param(["type: relationship", "from: a", "to: b"], ["relation"], id="no-relation"),
        pytest.param(["type: relationship", "from: a", "relation: knows"], ["to"], id="no-to"),
        pytest.param(["type: claim"], ["subject"], id="claim-without-subject"),
        pytest.param(["type: claim", "subject: ''"], ["subject"], id="claim-blank-subject"),
    ],
)
def test_parse_note_requires_endpoints_and_subject(lines: list[str], missing: list[str]) -> None:
    parsed = _parse("---\n" + "\n".join(lines) + "\n---\n")

    assert sorted(i.field or "" for i in parsed.issues) == missing
    assert {i.code for i in parsed.issues} == {"missing_field"}
    assert parsed.note is not None
    assert not parsed.note.valid


LF_NOTE = b"---\ntitle: T\ntags: [a]\n---\n# H\n\n[[x]]\n"


@pytest.mark.parametrize(
    "data",
    [
        pytest.param(b"\xef\xbb\xbf" + LF_NOTE, id="utf8-bom"),
        pytest.param(LF_NOTE.replace(b"\n", b"\r\n"), id="crlf"),
        pytest.param(LF_NOTE.replace(b"\n", b"\r"), id="lone-cr"),
        pytest.param(LF_NOTE.replace(b"---\n", b"---  \n"), id="trailing-spaces-on-fences"),
    ],
)
def test_parse_note_reads_bom_and_line_endings_like_plain_lf(data: bytes) -> None:
    parsed = parse_note("n.md", data)
    plain = parse_note("n.md", LF_NOTE)

    assert parsed.issues == ()
    assert parsed.note is not None and plain.note is not None
    assert parsed.note.title == "T"
    assert parsed.note.tags == ("a",)
    assert parsed.note.body == plain.note.body
    assert parsed.note.links == plain.note.links
    assert parsed.note.body_line == plain.note.body_line == 5


@pytest.mark.parametrize(
    ("data", "line"),
    [
        pytest.param(b"---\ntitle: caf\xe9\n---\n", 2, id="latin-1"),
        pytest.param(b"\xff\xfe" + "# UTF-16".encode("utf-16-le"), 1, id="utf16-le-bom"),
        pytest.param(b"\xfe\xff" + "# UTF-16".encode("utf-16-be"), 1, id="utf16-be-bom"),
        pytest.param(b"# title\x00\n", 1, id="nul-byte"),
        pytest.param(b"# t\n\nok\n\x00\n", 4, id="nul-byte-line-4"),
        pytest.param(b"\xed\xa0\x80", 1, id="encoded-surrogate"),
        pytest.param(b"\xc0\xaf", 1, id="overlong"),
        pytest.param(b"# t\n\nbody\n\nna\xefve\n", 5, id="in-the-body"),
        pytest.param(b"# t\r\n\r\nna\xefve\r\n", 3, id="crlf-lines"),
        pytest.param(b"# t\r\rna\xefve\r", 3, id="cr-lines"),
        pytest.param(b"\xef\xbb\xbf# t\nna\xefve\n", 2, id="after-a-bom"),
    ],
)
def test_parse_note_reports_bytes_that_are_not_utf8(data: bytes, line: int) -> None:
    parsed = parse_note("n.md", data)

    assert parsed.note is None
    assert [(i.code, i.line, i.path) for i in parsed.issues] == [("not_utf8", line, "n.md")]


def test_parse_note_refuses_frontmatter_over_64_kib() -> None:
    text = "---\ntitle: " + "x" * MAX_FRONTMATTER_BYTES + "\n---\n"

    parsed = _parse(text)

    assert parsed.note is None
    assert [(i.code, i.line) for i in parsed.issues] == [("file_too_large", 1)]


def test_parse_note_accepts_frontmatter_just_under_64_kib() -> None:
    text = "---\ntitle: " + "x" * (MAX_FRONTMATTER_BYTES - 100) + "\n---\n"

    assert _parse(text).issues == ()


def test_parse_note_revision_is_sha256_unless_given() -> None:
    data = b"# A\n"

    assert parse_note("a.md", data).revision == hashlib.sha256(data).hexdigest()
    assert parse_note("a.md", data, revision="given").revision == "given"
    assert parse_note("a.md", b"\xff").revision == hashlib.sha256(b"\xff").hexdigest()


@pytest.mark.parametrize(
    ("text", "body", "body_line", "line_count"),
    [
        pytest.param("", "", 1, 1, id="empty"),
        pytest.param("a\nb", "a\nb", 1, 2, id="no-frontmatter-no-final-newline"),
        pytest.param("---\ntitle: t\n---\n", "", 4, 3, id="frontmatter-only"),
        pytest.param("---\ntitle: t\n---", "", 4, 3, id="closing-fence-at-eof"),
        pytest.param("---\na: 1\nb: 2\n---\nline\n\nmore\n", "line\n\nmore\n", 5, 7, id="body"),
        pytest.param("---\ntitle: t\n...\nbody\n", "body\n", 4, 4, id="dots-close"),
    ],
)
def test_parse_note_splits_body_and_counts_lines(
    text: str, body: str, body_line: int, line_count: int
) -> None:
    note = _note(text)

    assert (note.body, note.body_line, note.line_count) == (body, body_line, line_count)


def test_parse_note_issue_lines_count_the_frontmatter() -> None:
    parsed = _parse("---\ntitle: t\n\n# comment\nweight: 7\n---\n")

    assert _codes(parsed) == [(5, "weight", "invalid_field")]


@pytest.mark.parametrize(
    ("data", "offset"),
    [
        pytest.param(b"---\ntitle: caf\xe9\n---\n", 14, id="plain"),
        pytest.param(b"\xef\xbb\xbf---\ntitle: caf\xe9\n---\n", 17, id="after-a-bom"),
    ],
)
def test_a_bad_byte_is_named_by_its_offset_in_the_file(data: bytes, offset: int) -> None:
    parsed = parse_note("n.md", data)

    assert data[offset] == 0xE9
    assert parsed.issues[0].message == f"File is not valid UTF-8 (line 2, byte {offset})"


@pytest.mark.parametrize(
    ("text", "line", "says"),
    [
        pytest.param("---\ntitle: x\ntags: [a, b\n---\n", 3, "flow sequence", id="unclosed-["),
        pytest.param("---\ntitle: x\ntags: [a, b\nc: d\n---\n", 3, "line 3", id="[-then-more"),
        pytest.param("---\na: {x: 1\nb: 2\n---\n", 2, "flow mapping", id="unclosed-{"),
        pytest.param('---\na: 1\ntitle: "x\n---\n', 3, "quoted scalar", id="unclosed-quote"),
        pytest.param("---\na: 1\nb:\n  - x\n - y\n---\n", 5, "expected key", id="bad-dedent"),
        pytest.param("---\na: 1\nb: x: y\n---\n", 3, "mapping values", id="colon-in-value"),
        pytest.param("---\na: 1\nb: @x\n---\n", 3, "cannot start", id="reserved-char"),
        pytest.param("---\na: 1\nb\n---\n", 3, "expected ':'", id="key-without-colon"),
        pytest.param("---\na: 1\nb\n\n\n---\n", 3, "expected ':'", id="then-blank-lines"),
    ],
)
def test_a_yaml_error_is_reported_at_the_line_the_parser_names(
    text: str, line: int, says: str
) -> None:
    (issue,) = _parse(text).issues

    assert (issue.code, issue.line) == ("invalid_frontmatter", line)
    assert says in issue.message
