"""`read_note_text`: a note file read again by its path, only when the path is a plain regular
note file below the vault; anything else is refused without ever being opened.

"Never opened" is checked twice: with inotify (the kernel reports every open of the watched
file, IN_OPEN), and with FIFOs, whose plain open would wait for a writer forever."""

from __future__ import annotations

import ctypes
import ctypes.util
import hashlib
import os
import struct
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from almanac.vault import FileBytes, Issue, NoteText, note_lines, read_bytes, read_note_text, scan

_IN_OPEN = 0x20
_IN_NONBLOCK = os.O_NONBLOCK


@contextmanager
def opens(path: Path) -> Iterator[Callable[[], int]]:
    """Count the opens of the file at `path` (its inode, however it is reached) from now on."""
    libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
    fd = libc.inotify_init1(_IN_NONBLOCK)
    assert fd >= 0, os.strerror(ctypes.get_errno())
    try:
        assert libc.inotify_add_watch(fd, os.fsencode(path), _IN_OPEN) >= 0

        def count() -> int:
            try:
                data = os.read(fd, 65536)
            except BlockingIOError:
                return 0
            found, at = 0, 0
            while at < len(data):
                _, mask, _, size = struct.unpack_from("iIII", data, at)
                found += bool(mask & _IN_OPEN)
                at += 16 + size
            return found

        yield count
    finally:
        os.close(fd)


def read_in_time(root: Path, path: str, fifo: Path | None = None) -> NoteText | Issue:
    """`read_note_text`, failing (not hanging) if it waits on a FIFO: a writer then frees it."""
    result: list[NoteText | Issue] = []
    worker = threading.Thread(target=lambda: result.append(read_note_text(root, path)))
    worker.start()
    worker.join(10)
    if worker.is_alive() and fifo is not None:
        os.close(os.open(fifo, os.O_WRONLY))  # the blocked open returns; the read sees EOF
        worker.join()
        pytest.fail(f"{path} was opened and waited on a FIFO")
    return result[0]


@pytest.fixture
def root(tmp_path: Path) -> Path:
    vault = tmp_path / "vault"
    (vault / "a").mkdir(parents=True)
    (vault / "a" / "note.md").write_bytes(b"---\nid: n\n---\nbody\n")
    (tmp_path / "x.md").write_bytes(b"outside\n")  # what `../x.md` would reach
    return vault


# -- the lines, as locators number them -------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "lines"),
    [
        pytest.param(b"---\nid: n\n---\nbody\n", ("---", "id: n", "---", "body"), id="lf"),
        pytest.param(b"a\r\nb\r\n", ("a", "b"), id="crlf"),
        pytest.param(b"a\rb\r", ("a", "b"), id="old-mac-cr"),
        pytest.param(b"a\nb", ("a", "b"), id="no-final-newline"),
        pytest.param(b"a\n\n", ("a", ""), id="blank-last-line"),
        pytest.param(b"", ("",), id="empty-file-is-one-line"),
        pytest.param(b"\xef\xbb\xbfa\n", ("a",), id="bom-dropped"),
        pytest.param(b"a\xff\nb\n", ("a\ufffd", "b"), id="not-utf8-replaced"),
        pytest.param(b"  a \t\n", ("  a \t",), id="blanks-kept"),
    ],
)
def test_note_lines_number_lines_as_locators_do(data: bytes, lines: tuple[str, ...]) -> None:
    assert note_lines(data) == lines


def test_a_note_reads_with_the_revision_locators_give(root: Path) -> None:
    found = read_note_text(root, "a/note.md")
    data = (root / "a" / "note.md").read_bytes()
    assert found == NoteText("a/note.md", hashlib.sha256(data).hexdigest(), note_lines(data))


# -- what is refused, never opened -------------------------------------------------------------


def _symlink_to_note(root: Path) -> Path:
    (root / "link.md").symlink_to(root / "a" / "note.md")  # inside the vault: scan follows it
    return root / "a" / "note.md"


def _symlink_to_outside(root: Path) -> Path:
    (root / "out.md").symlink_to(root.parent / "x.md")
    return root.parent / "x.md"


def _symlinked_folder(root: Path) -> Path:
    (root / "b").symlink_to(root / "a")
    return root / "a" / "note.md"


def _absolute(root: Path) -> Path:
    return root / "a" / "note.md"


def _hidden(root: Path) -> Path:
    (root / ".obsidian").mkdir()
    (root / ".obsidian" / "x.md").write_text("hidden\n")
    return root / ".obsidian" / "x.md"


def _not_a_note(root: Path) -> Path:
    (root / "a" / "note.txt").write_text("text\n")
    return root / "a" / "note.txt"


def _outside(root: Path) -> Path:
    return root.parent / "x.md"


@pytest.mark.parametrize(
    ("path", "build", "code"),
    [
        pytest.param("../x.md", _outside, "unsafe_path", id="dot-dot-leaves-the-vault"),
        pytest.param("a/../../x.md", _outside, "unsafe_path", id="dot-dot-inside-the-path"),
        pytest.param("a/./note.md", _absolute, "unsafe_path", id="dot-part"),
        pytest.param("a//note.md", _absolute, "unsafe_path", id="empty-part"),
        pytest.param("{root}/a/note.md", _absolute, "unsafe_path", id="absolute-path"),
        pytest.param("{outside}", _outside, "unsafe_path", id="absolute-path-outside"),
        pytest.param("link.md", _symlink_to_note, "unsafe_path", id="symlink-inside-the-vault"),
        pytest.param("out.md", _symlink_to_outside, "unsafe_path", id="symlink-leaving"),
        pytest.param("b/note.md", _symlinked_folder, "unsafe_path", id="symlinked-folder"),
        pytest.param(".obsidian/x.md", _hidden, "unsafe_path", id="hidden-folder"),
        pytest.param("a/note.txt", _not_a_note, "unsafe_path", id="not-a-note-name"),
    ],
)
def test_a_path_that_is_not_a_plain_note_is_refused_unopened(
    root: Path, path: str, build: Callable[[Path], Path], code: str
) -> None:
    target = build(root)
    path = path.format(root=root, outside=root.parent / "x.md")
    with opens(target) as count:
        found = read_note_text(root, path)
        assert count() == 0
    assert isinstance(found, Issue) and found.code == code


def test_the_watch_sees_an_open(root: Path) -> None:
    """The check of the table above can fail: a read of the note is an open it counts."""
    with opens(root / "a" / "note.md") as count:
        assert isinstance(read_note_text(root, "a/note.md"), NoteText)
        assert count() == 1


@pytest.mark.parametrize(
    ("name", "link", "code"),
    [
        pytest.param("fifo.md", False, "not_regular_file", id="fifo"),
        pytest.param("pipe.md", True, "unsafe_path", id="symlink-to-fifo-inside"),
        pytest.param("far.md", "outside", "unsafe_path", id="symlink-to-fifo-outside"),
    ],
)
def test_a_fifo_is_never_opened(root: Path, name: str, link: bool | str, code: str) -> None:
    fifo = root.parent / "fifo.md" if link == "outside" else root / "a" / "fifo.md"
    os.mkfifo(fifo)
    path = f"a/{name}" if not link else name
    if link:
        (root / name).symlink_to(fifo)
    with opens(fifo) as count:
        found = read_in_time(root, path, fifo)
        assert count() == 0
    assert isinstance(found, Issue) and found.code == code


@pytest.mark.parametrize(
    ("make", "code"),
    [
        pytest.param(lambda p: None, "missing", id="missing"),
        pytest.param(lambda p: p.mkdir(), "not_regular_file", id="a-folder-named-like-a-note"),
    ],
)
def test_what_is_not_a_file_now_is_refused(
    root: Path, make: Callable[[Path], None], code: str
) -> None:
    make(root / "a" / "gone.md")
    found = read_note_text(root, "a/gone.md")
    assert isinstance(found, Issue) and found.code == code


def test_a_file_on_the_way_is_not_a_folder(root: Path) -> None:
    found = read_note_text(root, "a/note.md/x.md")
    assert isinstance(found, Issue) and found.code == "unsafe_path"


def test_read_bytes_refuses_a_fifo_put_in_a_note_s_place(root: Path) -> None:
    """The scanner's reader too: a FIFO where a note was seen is refused, not waited on."""
    note = root / "a" / "note.md"
    (seen,) = [f for f in scan(root).files if f.path == "a/note.md"]
    note.unlink()
    os.mkfifo(note)
    result: list[FileBytes | Issue] = []
    worker = threading.Thread(target=lambda: result.append(read_bytes(seen)))
    worker.start()
    worker.join(10)
    if worker.is_alive():
        os.close(os.open(note, os.O_WRONLY))
        worker.join()
        pytest.fail("read_bytes waited on a FIFO")
    assert isinstance(result[0], Issue) and result[0].code == "not_regular_file"
