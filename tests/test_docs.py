"""README and docs/ as a reader meets them: every relative link leads somewhere, and every
example in README runs as written and answers what the page shows (on a copy of the demo vault).
"""

from __future__ import annotations

import contextlib
import io
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from almanac.api.settings import DEMO_VAULT

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
PAGES = [README, *sorted((ROOT / "docs").glob("*.md"))]
MAX_README_LINES = 300

_FENCE = re.compile(r"^```.*?^```", re.M | re.S)
_CODE = re.compile(r"`[^`\n]*`")
_LINK = re.compile(r"!?\[[^\]\n]*\]\(([^)\s]+)\)")


def _links(page: Path) -> list[str]:
    """The targets of the page's Markdown links, outside code blocks and code spans."""
    text = _CODE.sub("", _FENCE.sub("", page.read_text(encoding="utf-8")))
    return _LINK.findall(text)


def _anchors(page: Path) -> set[str]:
    """The page's headings as GitHub names their anchors."""
    headings = re.findall(r"^#+ (.+)$", _FENCE.sub("", page.read_text(encoding="utf-8")), re.M)
    return {re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-") for h in headings}


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_resolves(page: Path) -> None:
    broken = []
    for target in _links(page):
        if re.match(r"[a-z]+:", target):
            continue  # a URL: not ours to check offline
        path, _, anchor = target.partition("#")
        file = (page.parent / path).resolve() if path else page
        if not file.exists() or (anchor and file.suffix == ".md" and anchor not in _anchors(file)):
            broken.append(target)
    assert broken == []


def test_every_docs_page_is_linked_from_the_readme() -> None:
    linked = {(ROOT / target.partition("#")[0]).resolve() for target in _links(README)}
    assert [page.name for page in PAGES[1:] if page not in linked] == []


def test_the_readme_is_a_front_door() -> None:
    assert len(README.read_text(encoding="utf-8").splitlines()) <= MAX_README_LINES


def _query_examples() -> list[tuple[str, str]]:
    """Each `almanac query '…'` block of README with the JSON block that follows it."""
    text = README.read_text(encoding="utf-8")
    found = re.findall(r"\n    almanac query '(.*?)'\n.*?```json\n(.*?)```", text, re.S)
    return [(" ".join(document.split()), answer) for document, answer in found]


QUERIES = _query_examples()


def test_the_readme_has_its_examples() -> None:
    assert len(QUERIES) == 2
    assert len(re.findall(r"```python\n", README.read_text(encoding="utf-8"))) == 1


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    folder = tmp_path_factory.mktemp("demo")
    shutil.copytree(DEMO_VAULT, folder / "vault")
    return folder / "vault", folder / "state.db"


@pytest.mark.parametrize(("document", "answer"), QUERIES, ids=["first", "overdue"])
def test_a_query_example_answers_as_shown(
    document: str, answer: str, demo: tuple[Path, Path]
) -> None:
    vault, state = demo
    command = [sys.executable, "-m", "almanac", "query", "--vault", str(vault)]
    done = subprocess.run(
        [*command, "--state", str(state), document], capture_output=True, text=True, check=True
    )
    assert json.loads(done.stdout) == json.loads(answer)


def test_the_python_example_runs(demo: tuple[Path, Path]) -> None:
    (example,) = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), re.S)
    vault, state = demo
    opened = f"almanac.open({str(vault)!r}, state={str(state)!r})"
    code = example.replace('almanac.open("api/demo_vault")', opened)
    assert code != example
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "README.md", "exec"), {"__name__": "__readme__"})
    printed = out.getvalue().splitlines()
    assert printed[0] == "2026-03-02T09:30:00+01:00 meetings/2026-03-02-platform-standup"
    assert len(printed) == 11
