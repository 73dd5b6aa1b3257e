"""Ten minutes of mixed load on a real server (`bench/load.py`): memory stays flat (soak tier)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"


@pytest.mark.soak
@pytest.mark.xfail(
    reason="open (issue 11, item 6): after 30 s of warm-up (the five most referenced notes edited"
    " in it) RSS still reached 5.4 % above its level then (10.4 % before the edge fix, 7.3 %"
    " before the hub-first warm-up), ending 2.8 % above it; steps of 1-2 MB of anonymous memory"
    " at 240 s and 540 s when hubs are edited again (a reconcile that re-resolves hundreds of"
    " referrers), flat between",
    strict=True,
)
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
