"""Links of a note body as `parse_note` extracts them: kinds, targets, code, line numbers."""

from __future__ import annotations

import pytest
from hypothesis import given, strategies as st

from almanac.vault import Link, parse_note, wiki_target
from almanac.vault.links import first_heading


def _links(
    body: str, path: str = "notes/n.md", frontmatter: str = ""
) -> list[tuple[str, str, str, int]]:
    text = f"---\n{frontmatter}---\n{body}" if frontmatter else body
    parsed = parse_note(path, text.encode())
    assert parsed.issues == ()
    assert parsed.note is not None
    return [(link.kind, link.target, link.text, link.line) for link in parsed.note.links]


@pytest.mark.parametrize(
    ("written", "kind", "target"),
    [
        pytest.param("[[a]]", "wiki", "a", id="plain"),
        pytest.param("[[a|b]]", "wiki", "a", id="label"),
        pytest.param("[[a\\|b]]", "wiki", "a", id="escaped-pipe-in-table"),
        pytest.param("[[a#h]]", "wiki", "a", id="heading"),
        pytest.param("[[a#h|b]]", "wiki", "a", id="heading-and-label"),
        pytest.param("[[a#^block]]", "wiki", "a", id="block-ref"),
        pytest.param("![[a]]", "embed", "a", id="embed"),
        pytest.param("![[a.png|100]]", "embed", "a.png", id="embed-with-size"),
        pytest.param("[[ a ]]", "wiki", "a", id="trimmed"),
        pytest.param(
            "[[people/Ada Lovelace]]", "wiki", "people/Ada Lovelace", id="folder-and-spaces"
        ),
        pytest.param("[[Zoë]]", "wiki", "Zoë", id="non-ascii"),
    ],
)
def test_wiki_links_resolve_to_their_target(written: str, kind: str, target: str) -> None:
    assert _links(f"See {written} here.\n") == [(kind, target, written, 1)]


@pytest.mark.parametrize(
    "written",
    [
        pytest.param("[[#heading]]", id="same-note-heading"),
        pytest.param("[[#heading|label]]", id="same-note-heading-label"),
        pytest.param("[[|label]]", id="label-only"),
        pytest.param("[[]]", id="empty"),
        pytest.param("[[a\nb]]", id="across-lines"),
        pytest.param("[a]", id="single-brackets"),
    ],
)
def test_wiki_links_without_target_make_no_link(written: str) -> None:
    assert _links(f"See {written} here.\n") == []


@pytest.mark.parametrize(
    ("inner", "target"),
    [
        pytest.param("a", "a", id="plain"),
        pytest.param("a|b", "a", id="label"),
        pytest.param("a\\|b", "a", id="escaped-pipe"),
        pytest.param("a#h", "a", id="heading"),
        pytest.param(" a #h", "a", id="spaces"),
        pytest.param("#h", "", id="heading-only"),
    ],
)
def test_wiki_target(inner: str, target: str) -> None:
    assert wiki_target(inner) == target


@pytest.mark.parametrize(
    ("path", "written", "target"),
    [
        pytest.param(
            "dir/n.md", "[x](rel/path%20x.md)", "dir/rel/path x", id="url-decoded-relative"
        ),
        pytest.param("dir/n.md", "[x](./a.md)", "dir/a", id="dot-slash"),
        pytest.param("dir/sub/n.md", "[x](../up.md)", "dir/up", id="parent-folder"),
        pytest.param("n.md", "[x](a.md)", "a", id="vault-root"),
        pytest.param("dir/n.md", "[x](a.md#section)", "dir/a", id="fragment-dropped"),
        pytest.param("dir/n.md", "[x](<a.md>)", "dir/a", id="angle-brackets"),
        pytest.param("dir/n.md", '[x](a.md "Title")', "dir/a", id="with-title"),
        pytest.param("dir/n.md", "[x](Caf%C3%A9.md)", "dir/Café", id="utf8-escapes"),
        pytest.param("dir/n.md", "[](a.md)", "dir/a", id="empty-label"),
        pytest.param("dir/sub/n.md", "[x](%2e%2e/x.md)", "dir/x", id="encoded-dots"),
    ],
)
def test_markdown_links_resolve_relative_to_the_note_folder(
    path: str, written: str, target: str
) -> None:
    assert _links(f"See {written}.\n", path) == [("markdown", target, written, 1)]


@pytest.mark.parametrize(
    ("path", "written"),
    [
        pytest.param("dir/n.md", "[x](../../out.md)", id="leaves-the-vault"),
        pytest.param("n.md", "[x](../out.md)", id="leaves-from-root"),
        pytest.param("n.md", "[x](%2e%2e/out.md)", id="encoded-escape"),
        pytest.param("n.md", "[x](/etc/passwd.md)", id="absolute"),
        pytest.param("n.md", "[x](https://example.com/a.md)", id="url"),
        pytest.param("n.md", "[x](mailto:a@example.md)", id="mailto"),
        pytest.param("n.md", "[x](file:///a.md)", id="file-url"),
        pytest.param("n.md", "[x](#heading)", id="same-note-anchor"),
        pytest.param("n.md", "[x](picture.png)", id="not-markdown"),
        pytest.param("n.md", "![x](a.md)", id="image"),
        pytest.param("n.md", "\\[x](a.md)", id="escaped"),
    ],
)
def test_markdown_links_outside_the_vault_or_to_other_files_make_no_link(
    path: str, written: str
) -> None:
    assert _links(f"See {written}.\n", path) == []


@pytest.mark.parametrize(
    "body",
    [
        pytest.param("```\n[[a]]\n```\n", id="backtick-fence"),
        pytest.param("~~~\n[[a]]\n~~~\n", id="tilde-fence"),
        pytest.param("```python\n[[a]] [x](a.md)\n```\n", id="fence-with-info"),
        pytest.param("   ```\n[[a]]\n   ```\n", id="fence-indented-3"),
        pytest.param("````\n```\n[[a]]\n````\n", id="shorter-fence-does-not-close"),
        pytest.param("~~~\n```\n[[a]]\n~~~\n", id="other-fence-char-does-not-close"),
        pytest.param("```\n[[a]]\n", id="unclosed-fence-runs-to-end"),
        pytest.param("`[[a]]`\n", id="inline-code"),
        pytest.param("``a ` [[a]]``\n", id="double-backtick-inline-code"),
        pytest.param("`[x](a.md)`\n", id="inline-code-markdown-link"),
    ],
)
def test_links_in_code_are_ignored(body: str) -> None:
    assert _links(body) == []


def test_links_after_code_are_kept_with_their_lines() -> None:
    body = "```\n[[in]]\n```\n`[[inline]]` [[after]]\n````\n```\n[[still-in]]\n````\n![[last]]\n"

    assert _links(body) == [
        ("wiki", "after", "[[after]]", 4),
        ("embed", "last", "![[last]]", 9),
    ]


def test_unclosed_inline_backtick_is_not_code() -> None:
    assert _links("a ` [[b]]\n") == [("wiki", "b", "[[b]]", 1)]


def test_link_lines_count_the_frontmatter() -> None:
    frontmatter = "id: n\ntitle: N\n\ntags: [a]\n"  # lines 2-5, closing fence on 6

    links = _links("[[first]]\n\ntext [[third|x]] and [y](b.md)\n", frontmatter=frontmatter)

    assert links == [
        ("wiki", "first", "[[first]]", 7),
        ("wiki", "third", "[[third|x]]", 9),
        ("markdown", "notes/b", "[y](b.md)", 9),
    ]


def test_link_lines_count_crlf_frontmatter() -> None:
    data = b"---\r\nid: n\r\n---\r\n\r\n[[x]]\r\n"

    note = parse_note("n.md", data).note

    assert note is not None
    assert note.links == (Link("wiki", "x", "[[x]]", 5),)


def test_links_in_frontmatter_are_not_body_links() -> None:
    assert _links("body\n", frontmatter="note: '[[not-a-link]]'\n") == []


def test_every_link_on_a_line_is_kept() -> None:
    assert [target for _, target, _, _ in _links("[[a]][[b]] ![[c]] [[a]]\n")] == [
        "a",
        "b",
        "c",
        "a",
    ]


@given(st.text(alphabet="# a\n\t\u00a0", max_size=40))
def test_first_heading_reads_a_body_without_code_as_one_with_code(body: str) -> None:
    # A body with no code is searched in one pass; a closed code block after it sends the
    # same text through the line-by-line reading, which must find the same heading.
    assert first_heading(body) == first_heading(body + "\n```\n# not this\n```\n")


def test_first_heading_skips_empty_headings_and_code() -> None:
    assert first_heading("#  \n# ##\n# Real #\n# Later\n") == "Real"
    assert first_heading("```\n# In code\n```\n# After\n") == "After"
    assert first_heading("#No space\n ## Not level one\n") is None


def test_links_of_both_kinds_come_in_reading_order() -> None:
    assert _links("[a](a.md) then [[b]]\n[[c]] [d](d.md) [[e]]\n") == [
        ("markdown", "notes/a", "[a](a.md)", 1),
        ("wiki", "b", "[[b]]", 1),
        ("wiki", "c", "[[c]]", 2),
        ("markdown", "notes/d", "[d](d.md)", 2),
        ("wiki", "e", "[[e]]", 2),
    ]
