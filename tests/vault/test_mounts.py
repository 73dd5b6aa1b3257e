"""Which mount holds a vault, read from a mount table, and which file systems hide changes."""

from __future__ import annotations

from pathlib import Path

import pytest

from almanac.vault.mounts import Mount, mount_of, remote, remote_mount

TABLE = "\n".join(
    [
        "27 1 254:0 / / rw,relatime - ext4 /dev/vda rw",
        "30 27 0:27 / /dev/shm rw,relatime shared:5 - tmpfs tmpfs rw,size=24683584k",
        "40 27 0:40 / /mnt/nas rw,relatime shared:9 master:2 - nfs4 nas:/export/notes rw,vers=4.2",
        r"41 27 0:41 / /mnt/my\040drive rw - cifs //box/share\040one rw",
        "42 27 0:42 / /mnt/ssh rw - fuse.sshfs me@host:/notes rw,user_id=0",
        "43 27 0:43 / /mnt/vm rw - virtiofs shared rw",
        "44 40 0:44 / /mnt/nas/local rw - ext4 /dev/vdb rw",
        "45 27 0:45 / /mnt/stack rw - nfs srv:/a rw",
        "46 27 0:46 / /mnt/stack rw - tmpfs tmpfs rw",  # mounted over the NFS one: it wins
        "garbage line",
    ]
)


@pytest.mark.parametrize(
    ("path", "mount"),
    [
        ("/dev/shm/vault", Mount("/dev/shm", "tmpfs", "tmpfs")),
        ("/mnt/nas/notes/2026", Mount("/mnt/nas", "nfs4", "nas:/export/notes")),
        ("/mnt/nas", Mount("/mnt/nas", "nfs4", "nas:/export/notes")),
        ("/mnt/nas/local/v", Mount("/mnt/nas/local", "ext4", "/dev/vdb")),
        ("/mnt/nasty", Mount("/", "ext4", "/dev/vda")),
        ("/mnt/my drive/v", Mount("/mnt/my drive", "cifs", "//box/share one")),
        ("/mnt/ssh/v", Mount("/mnt/ssh", "fuse.sshfs", "me@host:/notes")),
        ("/mnt/stack/v", Mount("/mnt/stack", "tmpfs", "tmpfs")),
        ("/home/me/vault", Mount("/", "ext4", "/dev/vda")),
    ],
)
def test_the_mount_of_a_path_is_its_longest_last_mounted_prefix(path: str, mount: Mount) -> None:
    assert mount_of(path, TABLE) == mount


@pytest.mark.parametrize(
    ("fstype", "hidden"),
    [
        ("nfs", True),
        ("nfs4", True),
        ("cifs", True),
        ("smb3", True),
        ("9p", True),
        ("virtiofs", True),
        ("fuse", True),
        ("fuse.sshfs", True),
        ("fuse.rclone", True),
        ("ext4", False),
        ("tmpfs", False),
        ("btrfs", False),
        ("overlay", False),
    ],
)
def test_network_and_fuse_types_hide_changes_made_elsewhere(fstype: str, hidden: bool) -> None:
    assert remote(fstype) is hidden


def test_this_machines_own_table_names_a_mount_for_every_path(tmp_path: Path) -> None:
    found = mount_of(str(tmp_path))
    assert found is not None and found.point.startswith("/")
    assert mount_of(str(tmp_path), "") is None  # an empty table names nothing


@pytest.mark.parametrize(
    ("path", "point"),
    [
        ("/mnt/nas/notes", "/mnt/nas"),  # on a remote mount
        ("/mnt", "/mnt/nas"),  # local, but a remote one is mounted below it
        ("/mnt/nas/local", None),  # a local mount over a part of the remote one
        ("/dev/shm/vault", None),
        ("/home/me/vault", None),
    ],
)
def test_a_vault_is_unfit_for_a_watcher_when_it_is_on_or_holds_a_remote_mount(
    path: str, point: str | None
) -> None:
    found = remote_mount(path, TABLE)
    assert (found.point if found else None) == point
