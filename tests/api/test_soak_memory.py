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
    reason="open (issue 11, item 6): the readers' statement caches no longer grow (time queries"
    " bind their clock: 70 MB less RSS), but three 10-minute runs on one busy machine gave 2.0 %,"
    " 4.75 % and 10.1 % after warm-up: a few MB of anonymous memory (93.5 -> 97.8 MB in 259k"
    " requests) against a 5 % bound that is ~6 MB of a 118 MB server",
    strict=False,
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
