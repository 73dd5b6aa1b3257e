"""The small hand-written vaults of tests/fixtures/vaults (README.md there says what each holds)."""

from __future__ import annotations

from pathlib import Path

VAULTS = Path(__file__).parent / "fixtures" / "vaults"


def files(name: str) -> dict[str, str]:
    """The notes of one fixture vault: vault-relative path -> text, in path order."""
    root = VAULTS / name
    return {
        path.relative_to(root).as_posix(): path.read_text(encoding="utf-8")
        for path in sorted(root.rglob("*"))
        if path.is_file()
    }
