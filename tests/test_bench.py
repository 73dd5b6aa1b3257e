"""The benchmarks under bench/ still run against today's code (they are run by hand)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parent.parent / "bench"
SCRIPTS = sorted(p.name for p in BENCH.glob("*.py") if p.name not in ("floors.py", "generate.py"))


@pytest.mark.parametrize("script", SCRIPTS)
def test_each_benchmark_imports_and_parses_its_options(script: str) -> None:
    result = subprocess.run(
        [sys.executable, script, "--help"], cwd=BENCH, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr


def test_the_search_benchmark_measures_a_small_vault(tmp_path: Path) -> None:
    command = [sys.executable, "search.py", "--vault", str(tmp_path / "vault")]
    command += ["--state", str(tmp_path / "state.db"), "--notes", "200", "--runs", "1"]
    result = subprocess.run(command, cwd=BENCH, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert '"fts_rebuild_s"' in result.stdout
