"""Which file system a vault lives on, and whether a file watcher can see every change there.

inotify reports the changes made through this machine's kernel. On a network or shared mount
(NFS, SMB/CIFS, 9p, virtiofs, FUSE sync clients) a change made on another machine, or by the
host of a VM, reaches the kernel's cache without an event: a watcher there would answer "nothing
changed" while the vault did. Such a vault is scanned instead.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

__all__ = ["MOUNTINFO", "REMOTE_TYPES", "Mount", "mount_of", "remote", "remote_mount"]

MOUNTINFO = "/proc/self/mountinfo"

# File system types whose files can change without this kernel seeing it. FUSE types are
# `fuse` or `fuse.<name>` (sshfs, rclone, s3fs, ...) and count as remote, whatever they serve.
REMOTE_TYPES = frozenset(
    {
        "9p",
        "afs",
        "ceph",
        "cifs",
        "coda",
        "davfs",
        "fuse",
        "fuseblk",
        "gfs2",
        "glusterfs",
        "gpfs",
        "lustre",
        "ncpfs",
        "nfs",
        "nfs4",
        "ocfs2",
        "prl_fs",
        "smb3",
        "smbfs",
        "vboxsf",
        "virtiofs",
        "vmhgfs",
    }
)
_ESCAPE = re.compile(r"\\([0-7]{3})")


@dataclass(frozen=True, slots=True)
class Mount:
    """One line of a mount table: where it is mounted, its type and what it mounts."""

    point: str
    fstype: str
    source: str


def remote(fstype: str) -> bool:
    """Whether files on a file system of this type may change unseen by this kernel."""
    return fstype in REMOTE_TYPES or fstype.startswith("fuse.")


def mount_of(path: str, mountinfo: str | None = None) -> Mount | None:
    """The mount that holds `path` (resolved): the last-mounted entry of the table whose mount
    point is the longest prefix of it; None when the table cannot be read or names none.

    Args:
        mountinfo: The text of a mount table in `/proc/<pid>/mountinfo` form; this process's
            own when None.
    """
    if mountinfo is None:
        mountinfo = _read_table()
        if mountinfo is None:
            return None
    target = os.path.realpath(path)
    best: Mount | None = None
    for line in mountinfo.splitlines():
        mount = _parse(line)
        if mount is None or not _holds(mount.point, target):
            continue
        if best is None or len(mount.point) >= len(best.point):
            best = mount
    return best


def remote_mount(path: str, mountinfo: str | None = None) -> Mount | None:
    """The mount that makes `path` unfit for a watcher: the one holding it if remote, else a
    remote one mounted somewhere below it (a shared folder inside a local vault); None when
    every file below `path` is on a local file system (or the table cannot be read)."""
    if mountinfo is None:
        mountinfo = _read_table()
        if mountinfo is None:
            return None
    holder = mount_of(path, mountinfo)
    if holder is not None and remote(holder.fstype):
        return holder
    target = os.path.realpath(path)
    for line in mountinfo.splitlines():
        mount = _parse(line)
        if mount is not None and remote(mount.fstype) and _holds(target, mount.point):
            return mount
    return None


def _read_table() -> str | None:
    try:
        with open(MOUNTINFO, encoding="utf-8", errors="surrogateescape") as f:
            return f.read()
    except OSError:
        return None


def _parse(line: str) -> Mount | None:
    """`36 35 98:0 /root /mnt/point options [optional...] - fstype source superoptions`."""
    fields = line.split()
    if "-" not in fields[6:]:
        return None
    dash = fields.index("-", 6)
    if len(fields) < dash + 3:
        return None
    point = _ESCAPE.sub(lambda m: chr(int(m[1], 8)), fields[4])
    return Mount(
        point, fields[dash + 1], _ESCAPE.sub(lambda m: chr(int(m[1], 8)), fields[dash + 2])
    )


def _holds(point: str, path: str) -> bool:
    if point == "/":
        return path.startswith("/")
    return path == point or path.startswith(point.rstrip("/") + "/")
