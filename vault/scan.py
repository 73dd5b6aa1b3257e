from __future__ import annotations

import os
import stat as stat_module
from collections.abc import Mapping
from dataclasses import dataclass

from vault.issue import Issue

__all__ = ["NoteFile", "ScanResult", "is_ignored_name", "scan", "stat_note"]


@dataclass(frozen=True, slots=True)
class NoteFile:
    """A regular `*.md` file inside the vault, as seen by one `stat`."""

    path: str
    fspath: str
    size: int
    mtime_ns: int
    ino: int


@dataclass(frozen=True, slots=True)
class ScanResult:
    """The note files of a vault and the issues of what was skipped.

    Args:
        files: Every note file; with `known`, only those whose stat differs from it.
        issues: What was skipped and why.
        gone: With `known`, the known paths that are no longer notes.
    """

    files: tuple[NoteFile, ...]
    issues: tuple[Issue, ...]
    gone: tuple[str, ...] = ()


@dataclass(slots=True)
class _Walk:
    top: str
    files: list[NoteFile]
    issues: list[Issue]
    seen_dirs: set[tuple[int, int]]
    known: Mapping[str, tuple[int, int, int]]
    unchanged: list[str]


def is_ignored_name(name: str) -> bool:
    """Whether a file or folder name is never part of the vault.

    Hidden names (`.git`, `.obsidian`, `.trash`, `.stversions`, Syncthing's
    `.syncthing.*.tmp`) and Syncthing's `~syncthing~*.tmp` are skipped.
    """
    return name.startswith((".", "~syncthing~"))


def scan(
    root: str | os.PathLike[str],
    *,
    ordered: bool = True,
    known: Mapping[str, tuple[int, int, int]] | None = None,
) -> ScanResult:
    """List every note of the vault at `root` without reading any.

    Symlinks are followed only while their target stays inside the vault;
    directory loops are cut by `(st_dev, st_ino)`. Anything that is not a
    regular file, leaves the vault or has an undecodable name is an issue.

    Args:
        ordered: Sort the files by path; without it they come in directory order.
        known: Path to (size, mtime_ns, inode) as last seen: files that still match are
            left out of `files` (no object is made for them), and vanished ones are `gone`.
    """
    top = os.path.realpath(root)
    root_stat = os.stat(top)
    walk = _Walk(top, [], [], {(root_stat.st_dev, root_stat.st_ino)}, known or {}, [])
    _walk(walk, top, "")
    files = walk.files
    if ordered:
        files.sort(key=lambda f: f.path)
    walk.issues.sort(key=lambda i: (i.path, i.code))
    gone: tuple[str, ...] = ()
    if known:
        seen = len(walk.unchanged) + sum(1 for f in files if f.path in known)
        if seen != len(known):
            present = {*walk.unchanged, *(f.path for f in files)}
            gone = tuple(sorted(known.keys() - present))
    return ScanResult(tuple(files), tuple(walk.issues), gone)


def stat_note(root: str | os.PathLike[str], path: str) -> NoteFile | Issue | None:
    """Look at one vault-relative path the way `scan` would; None when it is not a note."""
    top = os.path.realpath(root)
    if not _decodable(path):
        return Issue(_printable(path), None, None, "not_utf8", "File name is not valid UTF-8")
    parts = path.split("/")
    if not path.endswith(".md") or any(is_ignored_name(p) or p in ("", "..") for p in parts):
        return None
    fspath = os.path.join(top, *parts)
    try:
        st = os.lstat(fspath)
    except OSError:
        return None
    folder = os.path.dirname(fspath)
    if os.path.realpath(folder) != folder:
        return Issue(path, None, None, "unsafe_path", "Path goes through a symlinked folder")
    return _note_or_issue(top, fspath, path, st)


def _walk(walk: _Walk, folder: str, prefix: str) -> None:
    top, files, issues, seen_dirs = walk.top, walk.files, walk.issues, walk.seen_dirs
    known, unchanged = walk.known, walk.unchanged
    try:
        entries: list[os.DirEntry[str]] = list(os.scandir(folder))
    except OSError as exc:
        issues.append(Issue(prefix.rstrip("/") or ".", None, None, "unreadable", str(exc)))
        return
    if any(e.is_symlink() for e in entries):
        # Real entries before symlinks, so a folder is always reached by its own path first.
        entries.sort(key=lambda e: (e.is_symlink(), e.name))
    for entry in entries:
        name = entry.name
        if name[0] in ".~" and is_ignored_name(name):
            continue
        path = prefix + name
        if name.endswith(".md") and entry.is_file(follow_symlinks=False):
            # The common case, kept short: a regular note file.
            try:
                st = entry.stat(follow_symlinks=False)
            except OSError as exc:
                issues.append(Issue(path, None, None, "unreadable", f"Cannot stat: {exc.strerror}"))
                continue
            if path.isascii() or _decodable(name):
                if known.get(path) == (st.st_size, st.st_mtime_ns, st.st_ino):
                    unchanged.append(path)
                else:
                    files.append(NoteFile(path, entry.path, st.st_size, st.st_mtime_ns, st.st_ino))
                continue
        if not _decodable(name):
            issues.append(
                Issue(_printable(path), None, None, "not_utf8", "File name is not valid UTF-8")
            )
            continue
        try:
            if entry.is_symlink():
                _follow_link(walk, entry.path, path)
            elif entry.is_dir(follow_symlinks=False):
                st = entry.stat(follow_symlinks=False)
                key = (st.st_dev, st.st_ino)
                if key not in seen_dirs:
                    seen_dirs.add(key)
                    _walk(walk, entry.path, path + "/")
            elif name.endswith(".md"):
                _keep(
                    walk, _note_or_issue(top, entry.path, path, entry.stat(follow_symlinks=False))
                )
        except OSError as exc:
            issues.append(Issue(path, None, None, "unreadable", f"Cannot stat: {exc.strerror}"))


def _follow_link(walk: _Walk, fspath: str, path: str) -> None:
    top, issues, seen_dirs = walk.top, walk.issues, walk.seen_dirs
    real = os.path.realpath(fspath)
    if real != top and not real.startswith(top + os.sep):
        if path.endswith(".md") or os.path.isdir(real):
            issues.append(
                Issue(
                    path, None, None, "unsafe_path", "Symlink leaves the vault: skipped, not read"
                )
            )
        return
    try:
        st = os.stat(real)
    except OSError:
        issues.append(Issue(path, None, None, "unsafe_path", "Broken symlink: skipped"))
        return
    if stat_module.S_ISDIR(st.st_mode):
        key = (st.st_dev, st.st_ino)
        if key in seen_dirs:
            issues.append(Issue(path, None, None, "unsafe_path", "Symlink loop: skipped"))
            return
        seen_dirs.add(key)
        _walk(walk, real, path + "/")
    elif path.endswith(".md"):
        _keep(walk, _note_or_issue(top, real, path, st))


def _keep(walk: _Walk, found: NoteFile | Issue | None) -> None:
    if isinstance(found, NoteFile):
        walk.files.append(found)
    elif found is not None:
        walk.issues.append(found)


def _note_or_issue(top: str, fspath: str, path: str, st: os.stat_result) -> NoteFile | Issue | None:
    if stat_module.S_ISLNK(st.st_mode):
        real = os.path.realpath(fspath)
        if not real.startswith(top + os.sep):
            return Issue(path, None, None, "unsafe_path", "Symlink leaves the vault: skipped")
        try:
            st = os.stat(real)
        except OSError:
            return Issue(path, None, None, "unsafe_path", "Broken symlink: skipped")
        fspath = real
    if stat_module.S_ISDIR(st.st_mode):
        return None
    if not stat_module.S_ISREG(st.st_mode):
        return Issue(path, None, None, "not_regular_file", "Not a regular file: skipped")
    return NoteFile(path, fspath, st.st_size, st.st_mtime_ns, st.st_ino)


def _decodable(name: str) -> bool:
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _printable(path: str) -> str:
    return path.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
