from __future__ import annotations

import posixpath
import re
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import unquote

from almanac.vault.issue import reduce_by_fields

__all__ = ["Link", "extract_links", "first_heading", "wiki_target"]

# No optional prefix: a pattern that starts with a literal is searched for fast.
_WIKI = re.compile(r"\[\[([^\[\]\n]+?)\]\]")
_MARKDOWN = re.compile(r"(?<![!\\])\[([^\]\n]*)\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_INLINE_CODE = re.compile(r"(`+)(.+?)\1")
_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})")
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:")
_HEADING = re.compile(r"^# (.*)", re.M)


@dataclass(frozen=True, slots=True)
class Link:
    """A link in a note body.

    Args:
        kind: `wiki`, `embed` or `markdown`.
        target: What to resolve: the wiki target without label or heading, or, for a
            Markdown link, the vault-relative path of the linked note without `.md`.
        text: The link as written.
        line: 1-based file line (counting frontmatter).
    """

    kind: str
    target: str
    text: str
    line: int

    __reduce__ = reduce_by_fields


def wiki_target(inner: str) -> str:
    """The target of a wiki link's inner text: no label (`|`, also `\\|`), no `#heading`."""
    target = inner.split("|", 1)[0]
    if target.endswith("\\"):
        target = target[:-1]
    return target.split("#", 1)[0].strip()


def extract_links(body: str, *, first_line: int, note_path: str) -> tuple[Link, ...]:
    """Every link of a body outside code, in reading order.

    `[[#heading]]` points into the same note and is left out, and so are
    Markdown links to anything but a relative `.md` path inside the vault.
    """
    if "[" not in body:
        return ()
    links: list[tuple[int, int, Link]] = []
    folder = posixpath.dirname(note_path)
    markdown = False  # wiki links alone are found in reading order already
    if "`" in body or "~~~" in body:
        chunks = [(first_line + offset, line) for offset, line in _prose_lines(body) if "[" in line]
    else:
        chunks = [(first_line, body)]  # no code anywhere: one pass over the whole body
    for start_line, text in chunks:
        newlines = _newline_counter(text)
        for match in _WIKI.finditer(text):
            target = wiki_target(match.group(1))
            if target:
                start = match.start()
                embed = start > 0 and text[start - 1] == "!"
                written = "!" + match.group(0) if embed else match.group(0)
                line = start_line + newlines(start)
                links.append(
                    (line, start, Link("embed" if embed else "wiki", target, written, line))
                )
        if "](" in text:
            for match in _MARKDOWN.finditer(text):
                path = _markdown_target(match.group(2), folder)
                if path is not None:
                    markdown = True
                    line = start_line + newlines(match.start())
                    links.append(
                        (line, match.start(), Link("markdown", path, match.group(0), line))
                    )
    if markdown:
        links.sort(key=lambda item: (item[0], item[1]))
    return tuple(link for _, _, link in links)


def first_heading(body: str) -> str | None:
    """The text of the first `# ` heading outside code blocks, if any."""
    if "`" in body or "~~~" in body:
        texts = (line[2:] for _, line in _prose_lines(body) if line.startswith("# "))
    else:
        texts = (match.group(1) for match in _HEADING.finditer(body))
    for text in texts:
        title = text.strip().rstrip("#").strip()
        if title:
            return title
    return None


def _newline_counter(text: str) -> Callable[[int], int]:
    """Newlines before an offset, for offsets asked in increasing order (restarts otherwise)."""
    state = [0, 0]  # offset counted to, newlines before it

    def count(offset: int) -> int:
        if offset < state[0]:
            state[0] = state[1] = 0
        state[1] += text.count("\n", state[0], offset)
        state[0] = offset
        return state[1]

    return count


def _prose_lines(body: str) -> list[tuple[int, str]]:
    if "`" not in body and "~~~" not in body:
        return list(enumerate(body.split("\n")))
    result: list[tuple[int, str]] = []
    fence: str | None = None
    for offset, line in enumerate(body.split("\n")):
        match = _FENCE.match(line)
        if fence is not None:
            if match and match.group(1)[0] == fence[0] and len(match.group(1)) >= len(fence):
                fence = None
            continue
        if match:
            fence = match.group(1)
            continue
        if "`" in line:
            line = _INLINE_CODE.sub(lambda m: " " * len(m.group(0)), line)
        result.append((offset, line))
    return result


def _markdown_target(href: str, folder: str) -> str | None:
    if href.startswith(("#", "/")) or _SCHEME.match(href):
        return None
    path = unquote(href.split("#", 1)[0])
    if not path.endswith(".md"):
        return None
    joined = posixpath.normpath(posixpath.join(folder, path))
    if joined.startswith("../") or joined == "..":
        return None
    return joined[:-3]
