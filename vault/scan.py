from __future__ import annotations

import os
import stat as stat_module
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
    """Every note file of a vault and the issues of what was skipped."""

    files: tuple[NoteFile, ...]
    issues: tuple[Issue, ...]


def is_ignored_name(name: str) -> bool:
    """Whether a file or folder name is never part of the vault.

    Hidden names (`.git`, `.obsidian`, `.trash`, `.stversions`, Syncthing's
    `.syncthing.*.tmp`) and Syncthing's `~syncthing~*.tmp` are skipped.
    """
    return name.startswith((".", "~syncthing~"))


def scan(root: str | os.PathLike[str], *, ordered: bool = True) -> ScanResult:
    """List every note of the vault at `root` without reading any.

    Symlinks are followed only while their target stays inside the vault;
    directory loops are cut by `(st_dev, st_ino)`. Anything that is not a
    regular file, leaves the vault or has an undecodable name is an issue.

    Args:
        ordered: Sort the files by path; without it they come in directory order,
            which is what a caller that only compares them with a mapping wants.
    """
    top = os.path.realpath(root)
    files: list[NoteFile] = []
    issues: list[Issue] = []
    root_stat = os.stat(top)
    seen_dirs = {(root_stat.st_dev, root_stat.st_ino)}
    _walk(top, top, "", files, issues, seen_dirs)
    if ordered:
        files.sort(key=lambda f: f.path)
    issues.sort(key=lambda i: (i.path, i.code))
    return ScanResult(tuple(files), tuple(issues))


def stat_note(root: str | os.PathLike[str], path: str) -> NoteFile | Issue | None:
    """Look at one vault-relative path the way `scan` would; None when it is not a note."""
    top = os.path.realpath(root)
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


def _walk(
    top: str,
    folder: str,
    prefix: str,
    files: list[NoteFile],
    issues: list[Issue],
    seen_dirs: set[tuple[int, int]],
) -> None:
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
                files.append(NoteFile(path, entry.path, st.st_size, st.st_mtime_ns, st.st_ino))
                continue
        if not _decodable(name):
            issues.append(
                Issue(_printable(path), None, None, "not_utf8", "File name is not valid UTF-8")
            )
            continue
        try:
            if entry.is_symlink():
                _follow_link(top, entry.path, path, files, issues, seen_dirs)
            elif entry.is_dir(follow_symlinks=False):
                st = entry.stat(follow_symlinks=False)
                key = (st.st_dev, st.st_ino)
                if key not in seen_dirs:
                    seen_dirs.add(key)
                    _walk(top, entry.path, path + "/", files, issues, seen_dirs)
            elif name.endswith(".md"):
                found = _note_or_issue(top, entry.path, path, entry.stat(follow_symlinks=False))
                if isinstance(found, NoteFile):
                    files.append(found)
                elif found is not None:
                    issues.append(found)
        except OSError as exc:
            issues.append(Issue(path, None, None, "unreadable", f"Cannot stat: {exc.strerror}"))


def _follow_link(
    top: str,
    fspath: str,
    path: str,
    files: list[NoteFile],
    issues: list[Issue],
    seen_dirs: set[tuple[int, int]],
) -> None:
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
        _walk(top, real, path + "/", files, issues, seen_dirs)
    elif path.endswith(".md"):
        found = _note_or_issue(top, real, path, st)
        if isinstance(found, NoteFile):
            files.append(found)
        elif found is not None:
            issues.append(found)


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
