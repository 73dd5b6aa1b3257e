"""Ten minutes of mixed load on a real server (`bench/load.py`): memory stays flat (soak tier)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import temporal

BENCH = Path(__file__).resolve().parents[2] / "bench"


@pytest.mark.soak
def test_memory_stays_flat_under_ten_minutes_of_mixed_load() -> None:
    command = [sys.executable, "load.py", "--notes", "2000", "--clients", "16"]
    command += ["--seconds", "600", "--warmup", "30"]
    result = subprocess.run(command, cwd=BENCH, capture_output=True, text=True, timeout=1200)
    assert result.returncode == 0, result.stderr[-2000:]
    report = json.loads(result.stdout)
    assert report["failures"] == 0, report["failure_examples"]
    assert report["requests"] > 10_000, report["requests"]
    # Resident memory after the warm-up never exceeds its level then by more than 5 %.
    assert report["rss_growth_after_warmup"] <= 0.05, report["rss_mb"]


@pytest.mark.skipif(not Path("/proc/self/maps").exists(), reason="reads /proc/self/maps (Linux)")
def test_read_connections_do_not_map_the_database_file(tmp_path: Path) -> None:
    # SQLite drops a connection's map of the file whenever another one has committed, so
    # mapped readers' resident pages come and go with every edit (the soak's RSS swung by up
    # to 8 %): only the writer maps the file.
    path = tmp_path / "state.db"
    store = temporal.Store.open(path)
    store.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # pages read from the file, not the log
    try:
        with store.read() as first, store.read() as second:
            for reader in (first, second):
                assert reader.run("SELECT count(*) FROM sqlite_master").fetchone()[0] > 0
            maps = Path("/proc/self/maps").read_text(encoding="ascii", errors="replace")
            mapped = [line for line in maps.splitlines() if line.endswith(str(path))]
        assert len(mapped) <= 1, mapped
    finally:
        store.close()
