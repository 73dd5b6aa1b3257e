"""`--watch auto|on|off`: a vault on a network or FUSE mount is scanned, not watched, and the
service says which mode is in force (`status.watchMode`, and at start-up)."""

from __future__ import annotations

import shutil
from pathlib import Path

import httpx2 as httpx
import pytest

from almanac.api.app import create_app
from almanac.api.settings import DEMO_VAULT, Settings
from almanac.vault import StartupError
from tests.api.helpers import DEMO_RECORDS, LocalClient, data
from tests.api.served import serve

MODE = "{ status { watchMode recordCount } }"


def _table(vault: Path, fstype: str, source: str) -> str:
    """A mount table in which `vault` is on its own mount of `fstype`."""
    return (
        "27 1 254:0 / / rw,relatime - ext4 /dev/vda rw\n"
        f"90 27 0:90 / {vault.resolve()} rw,relatime - {fstype} {source} rw\n"
    )


def _build(vault: Path, tmp_path: Path, watch: str | bool, table: str | None) -> Settings:
    return Settings.build(
        vault=vault, state=tmp_path / "state.db", config=None, watch=watch, mountinfo=table
    )


@pytest.mark.parametrize(
    ("fstype", "source"),
    [
        ("nfs4", "nas:/notes"),
        ("cifs", "//box/notes"),
        ("9p", "hostshare"),
        ("fuse.sshfs", "me@h:/"),
    ],
)
def test_auto_scans_a_vault_on_a_network_mount(
    demo_vault: Path, tmp_path: Path, fstype: str, source: str
) -> None:
    settings = _build(demo_vault, tmp_path, "auto", _table(demo_vault, fstype, source))
    assert settings.watch is False
    assert fstype in settings.watch_reason and source in settings.watch_reason


def test_auto_scans_a_local_vault_that_holds_a_network_mount(
    demo_vault: Path, tmp_path: Path
) -> None:
    table = _table(demo_vault, "ext4", "/dev/vda") + (
        f"91 90 0:91 / {(demo_vault / 'people').resolve()} rw - cifs //box/people rw\n"
    )
    settings = _build(demo_vault, tmp_path, "auto", table)
    assert settings.watch is False
    assert "cifs" in settings.watch_reason


def test_auto_watches_a_local_mount(demo_vault: Path, tmp_path: Path) -> None:
    settings = _build(demo_vault, tmp_path, "auto", _table(demo_vault, "tmpfs", "tmpfs"))
    assert settings.watch is True
    assert _build(demo_vault, tmp_path, "on", _table(demo_vault, "nfs", "a:/b")).watch is True
    assert _build(demo_vault, tmp_path, "off", _table(demo_vault, "tmpfs", "tmpfs")).watch is False


def test_a_bad_watch_mode_is_a_startup_error(demo_vault: Path, tmp_path: Path) -> None:
    with pytest.raises(StartupError, match="auto, on or off"):
        _build(demo_vault, tmp_path, "sometimes", None)
    with pytest.raises(StartupError, match="ALMANAC_WATCH"):
        Settings.from_env({"ALMANAC_VAULT": str(demo_vault), "ALMANAC_WATCH": "yes"})


def test_the_fallback_scans_and_sees_every_change(demo_vault: Path, tmp_path: Path) -> None:
    settings = _build(demo_vault, tmp_path, "auto", _table(demo_vault, "nfs4", "nas:/notes"))
    with LocalClient(create_app(settings)) as client:
        assert data(client, MODE)["status"] == {"watchMode": "scan", "recordCount": DEMO_RECORDS}
        # As a change made on another machine: written here, but the service has no watcher to
        # tell it; the scan of the next query finds it.
        (demo_vault / "people/zoe-new.md").write_text("---\ntype: person\n---\n# Zoe New\n")
        assert data(client, MODE)["status"]["recordCount"] == DEMO_RECORDS + 1


def test_a_local_vault_is_watched(tmp_path: Path) -> None:
    shm = Path("/dev/shm")
    if not shm.is_dir():
        pytest.skip("no /dev/shm here")
    folder = Path(shutil.copytree(DEMO_VAULT, shm / f"almanac-{tmp_path.name}"))
    try:
        settings = _build(folder, tmp_path, "auto", None)  # this machine's own mount table
        with LocalClient(create_app(settings)) as client:
            assert data(client, MODE)["status"]["watchMode"] == "inotify"
    finally:
        shutil.rmtree(folder)


def test_serve_says_which_mode_is_in_force(demo_vault: Path, tmp_path: Path) -> None:
    with serve(demo_vault, tmp_path, "--watch", "off") as base:
        answer = httpx.post(f"{base}/graphql", json={"query": MODE}, timeout=10).json()
    assert answer["data"]["status"]["watchMode"] == "scan"
    log = (tmp_path / "server.log").read_text()
    assert "Scanning" in log and "--watch off" in log


def test_serve_on_a_local_disk_says_it_watches(demo_vault: Path, tmp_path: Path) -> None:
    with serve(demo_vault, tmp_path) as base:
        answer = httpx.post(f"{base}/graphql", json={"query": MODE}, timeout=10).json()
    assert answer["data"]["status"]["watchMode"] == "inotify"
    assert "Watching" in (tmp_path / "server.log").read_text()
