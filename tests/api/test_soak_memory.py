"""Ten minutes of mixed load on a real server (`bench/load.py`): memory stays flat (soak tier)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

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
