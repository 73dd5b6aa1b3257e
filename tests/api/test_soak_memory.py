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
    reason="open (issue 11, item 6): after 30 s of warm-up RSS still rises 7.3 % (10.4 and 9.2 %"
    " before the edge fix and the heap trim), in one step of ~3.5 MB of anonymous memory around"
    " 240 s, flat from there to 600 s; the editor's picks are seeded, so the step comes at the"
    " same edit every run: likely one large reconcile raising the heap's high-water mark",
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
