"""A note file's bytes and text: read without following a symlink or waiting on a FIFO, while
its `stat` stays the same; decoded as UTF-8 (a BOM dropped, CR LF and CR read as LF), with the
line of the first bad byte when it is not; numbered in lines as locators count them."""

from __future__ import annotations

import hashlib
import os
import stat as stat_module
from dataclasses import dataclass

from almanac.vault.issue import Issue
from almanac.vault.scan import NoteFile

__all__ = [
    "MAX_NOTE_BYTES",
    "FileBytes",
    "decode",
    "line_count",
    "note_lines",
    "read_bytes",
]

MAX_NOTE_BYTES = 1024 * 1024
_READ_ATTEMPTS = 3
# O_NONBLOCK: no effect on a regular file; a FIFO or device opens without waiting for a writer.
_OPEN_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK


@dataclass(frozen=True, slots=True)
class FileBytes:
    """The bytes of a note file, read while its `stat` stayed the same."""

    data: bytes
    sha256: str
    size: int
    mtime_ns: int
    ino: int


def read_bytes(file: NoteFile, *, dir_fd: int | None = None) -> FileBytes | Issue:
    """Read a note file's bytes, retrying while it changes under the read.

    The file is opened without following a symlink and without waiting (a FIFO put in its
    place since it was seen is refused, never read).

    Args:
        dir_fd: A folder descriptor `file.fspath` is relative to.

    Returns:
        The bytes, or an issue (`file_too_large`, `unreadable`, `unstable_file`,
        `not_regular_file`).
    """
    if file.size > MAX_NOTE_BYTES:
        return Issue(file.path, None, None, "file_too_large", _too_large(file.size))
    for _ in range(_READ_ATTEMPTS):
        try:
            fd = os.open(file.fspath, _OPEN_FLAGS, dir_fd=dir_fd)
        except OSError as exc:
            return Issue(file.path, None, None, "unreadable", f"Cannot open: {exc.strerror}")
        try:
            before = os.fstat(fd)
            if not stat_module.S_ISREG(before.st_mode):
                message = "Not a regular file: skipped"
                return Issue(file.path, None, None, "not_regular_file", message)
            if before.st_size > MAX_NOTE_BYTES:
                return Issue(file.path, None, None, "file_too_large", _too_large(before.st_size))
            # One read of size + 1 bytes sees EOF for a file that stays put; more means it grew.
            chunks = [os.read(fd, before.st_size + 1)]
            while len(chunks[-1]) and len(chunks) < 3 and len(chunks[0]) > before.st_size:
                chunks.append(os.read(fd, MAX_NOTE_BYTES + 1))
            after = os.fstat(fd)
        except OSError as exc:
            return Issue(file.path, None, None, "unreadable", f"Cannot read: {exc.strerror}")
        finally:
            os.close(fd)
        data = b"".join(chunks)
        stable = (before.st_size, before.st_mtime_ns) == (after.st_size, after.st_mtime_ns)
        if stable and len(data) == after.st_size:
            digest = hashlib.sha256(data).hexdigest()
            return FileBytes(data, digest, after.st_size, after.st_mtime_ns, after.st_ino)
    return Issue(file.path, None, None, "unstable_file", "File kept changing while being read")


def note_lines(data: bytes) -> tuple[str, ...]:
    """A note file's lines as locators number them (line 1 first, frontmatter included), each
    without its line ending (LF, CRLF or CR): as many as a locator's `endLine`.

    Bytes that are not UTF-8 read as U+FFFD, so a file that makes no record can still be shown.
    """
    text, _, _ = decode(data)
    if text is None:
        text = data.decode("utf-8", "replace").replace("\r\n", "\n").replace("\r", "\n")
    lines = text.split("\n")
    if len(lines) > 1 and lines[-1] == "":
        lines.pop()  # the ending of the last line starts no line of its own
    assert len(lines) == line_count(text)
    return tuple(lines)


def decode(data: bytes) -> tuple[str | None, str, int | None]:
    """The text of a note's bytes, or None with the reason and the line of the first bad byte."""
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return None, "File is UTF-16; notes must be UTF-8", 1
    if b"\x00" in data:
        at = data.index(b"\x00")
        return None, "File contains NUL bytes; notes must be UTF-8 text", _line_at(data, at)
    bom = 3 if data.startswith(b"\xef\xbb\xbf") else 0  # (the C decoder; "utf-8-sig" is Python)
    try:
        text = data[bom:].decode("utf-8") if bom else data.decode("utf-8")
    except UnicodeDecodeError as exc:
        at = exc.start + bom
        line = _line_at(data, at)
        return None, f"File is not valid UTF-8 (line {line}, byte {at})", line
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text, "", None


def _line_at(data: bytes, offset: int) -> int:
    """The 1-based line of a byte offset, counting lines as a decoded note does (CR LF, CR, LF)."""
    head = data[:offset]
    return head.count(b"\n") + head.count(b"\r") - head.count(b"\r\n") + 1


def line_count(text: str) -> int:
    if not text:
        return 1
    return text.count("\n") + (0 if text.endswith("\n") else 1)


def _too_large(size: int) -> str:
    return f"File is {size} bytes; notes over {MAX_NOTE_BYTES} bytes are not read"
