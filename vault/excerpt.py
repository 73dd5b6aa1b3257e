"""Reading one note file again, by its vault-relative path, to show its lines (`excerpt`).

The path comes from a client. The caller checks first that the index knows it as a note of a
readable scope; here it must also be a plain path below the vault (no `..`, no absolute path,
no hidden or ignored part) whose every folder is a real folder and whose file is a regular file:
each step is opened relative to the one before without following a symlink, and the file is
looked at (`lstat`) before it is opened, so a symlink, a FIFO or a device is never opened.
A symlink the scanner would follow (one staying inside the vault) is refused too: its target
can be read under its own path.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat as stat_module
from dataclasses import dataclass

from almanac.vault.content import FileBytes, note_lines, read_bytes
from almanac.vault.issue import Issue
from almanac.vault.scan import NoteFile, is_ignored_name

__all__ = ["NoteText", "read_note_text"]

_FOLDER_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW


@dataclass(frozen=True, slots=True)
class NoteText:
    """A note file as it reads now: its revision (SHA-256 hex of its bytes) and its lines."""

    path: str
    revision: str
    lines: tuple[str, ...]


def read_note_text(root: str | os.PathLike[str], path: str) -> NoteText | Issue:
    """The lines of the note file at vault-relative `path`, read now.

    Returns:
        The text, or why it cannot be shown (`unsafe_path`, `not_regular_file`, `missing`,
        `unreadable`, and the issues of `read_bytes`).
    """
    parts = path.split("/")
    if (
        not path.endswith(".md")
        or any(p in ("", ".", "..") or is_ignored_name(p) for p in parts)
        or "\\" in path
        or "\x00" in path
    ):
        return Issue(path, None, None, "unsafe_path", "Not a vault-relative note path")
    with contextlib.ExitStack() as stack:
        try:
            folder = os.open(os.path.realpath(root), _FOLDER_FLAGS)
        except OSError as exc:
            return _refusal(path, exc)
        stack.callback(os.close, folder)
        for name in parts[:-1]:
            try:
                folder = os.open(name, _FOLDER_FLAGS, dir_fd=folder)
            except OSError as exc:
                return _refusal(path, exc)
            stack.callback(os.close, folder)
        try:
            st = os.stat(parts[-1], dir_fd=folder, follow_symlinks=False)
        except OSError as exc:
            return _refusal(path, exc)
        if not stat_module.S_ISREG(st.st_mode):
            kind = "unsafe_path" if stat_module.S_ISLNK(st.st_mode) else "not_regular_file"
            return Issue(path, None, None, kind, "Not a regular file: not read")
        file = NoteFile(path, parts[-1], st.st_size, st.st_mtime_ns, st.st_ino)
        content = read_bytes(file, dir_fd=folder)
    if isinstance(content, Issue):
        return content
    if content.ino != st.st_ino:  # another file was put in its place in between
        return Issue(path, None, None, "unstable_file", "File was replaced while being read")
    return _text(path, content)


def _text(path: str, content: FileBytes) -> NoteText:
    return NoteText(path, content.sha256, note_lines(content.data))


def _refusal(path: str, exc: OSError) -> Issue:
    if exc.errno in (errno.ELOOP, errno.ENOTDIR):  # a symlink on the way, or a file
        return Issue(path, None, None, "unsafe_path", "Path goes through a symlink or a file")
    code = "missing" if exc.errno == errno.ENOENT else "unreadable"
    return Issue(path, None, None, code, f"Cannot open: {exc.strerror}")
