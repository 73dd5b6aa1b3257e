"""The built wheel as a user installs it (SPEC 6, issue 26): one import name, in a new venv, from
a folder whose own `api`, `graph`, `temporal` and `vault` packages would shadow ours."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from collections.abc import Iterator
from pathlib import Path

import httpx2 as httpx
import pytest

from tests.api.served import serve

ROOT = Path(__file__).resolve().parents[1]
CLASHING = ("api", "graph", "temporal", "vault")


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    command = [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "-w", str(out)]
    subprocess.run([*command, str(ROOT)], check=True, capture_output=True)
    (built,) = out.glob("almanac-*.whl")
    return built


@pytest.fixture(scope="module")
def installed(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A new venv with the wheel (not the checkout) installed; yields its python."""
    venv = tmp_path_factory.mktemp("venv")
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = venv / "bin" / "python"
    install = [str(python), "-m", "pip", "install", "--quiet", str(wheel)]
    subprocess.run([*install, "-c", str(ROOT / "tests" / "constraints.txt")], check=True)
    yield python


@pytest.fixture
def clashing(tmp_path: Path) -> Path:
    """A user's project with packages of the folders' names, each failing on import."""
    project = tmp_path / "project"
    for name in CLASHING:
        (project / name).mkdir(parents=True)
        (project / name / "__init__.py").write_text(
            f"raise ImportError('the user\\'s own {name}')\n"
        )
    return project


def test_the_wheel_holds_almanac_alone(wheel: Path) -> None:
    names = zipfile.ZipFile(wheel).namelist()
    assert {name.split("/")[0] for name in names} == {"almanac", "almanac-0.1.0.dist-info"}
    # The folders are inside it, with the files the pages and the demo need.
    for inside in ("vault/note.py", "temporal/__init__.py", "graph/traverse.py", "api/cli.py"):
        assert f"almanac/{inside}" in names
    assert "almanac/api/demo_vault/index.md" in names
    assert "almanac/api/static/explorer/index.html" in names
    assert "almanac/api/static/vendor/graphiql/graphiql.min.js" in names


def test_import_almanac_beside_clashing_packages(installed: Path, clashing: Path) -> None:
    script = (
        "import almanac, almanac.api.app, almanac.graph, almanac.temporal, almanac.vault\n"
        "import sys\n"
        "assert almanac.__file__.startswith(sys.prefix), almanac.__file__\n"
        "print(almanac.open.__module__)\n"
    )
    done = subprocess.run(
        [str(installed), "-c", script], cwd=clashing, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "almanac.client"


def test_almanac_serve_from_the_wheel(installed: Path, clashing: Path, tmp_path: Path) -> None:
    # `python -m` puts the working directory first on sys.path: the clashing packages are seen.
    with serve(None, tmp_path, python=str(installed), cwd=clashing) as base:
        explorer = httpx.get(f"{base}/")
        assert explorer.status_code == 200 and "<html" in explorer.text.lower()
        graphiql = httpx.get(f"{base}/graphql", headers={"Accept": "text/html"})
        assert graphiql.status_code == 200 and "graphiql" in graphiql.text.lower()
        asset = httpx.get(f"{base}/static/vendor/graphiql/graphiql.min.js")
        assert asset.status_code == 200 and len(asset.content) > 100_000
        answer = httpx.post(f"{base}/graphql", json={"query": "{ status { recordCount } }"})
        assert answer.status_code == 200, answer.text
        assert answer.json()["data"]["status"]["recordCount"] > 50


def test_the_command_from_the_wheel(installed: Path, clashing: Path) -> None:
    command = installed.parent / "almanac"
    done = subprocess.run(
        [str(command), "check", "--help"], cwd=clashing, capture_output=True, text=True
    )
    assert done.returncode == 0 and "--vault" in done.stdout, done.stderr


def test_the_checkout_imports_the_same_names_from_its_folders() -> None:
    # The editable install (README) and the checkout import almanac.graph from graph/ itself.
    import almanac.graph
    import almanac.vault

    assert Path(almanac.graph.__file__).resolve() == ROOT / "graph" / "__init__.py"
    assert Path(almanac.vault.__file__).resolve() == ROOT / "vault" / "__init__.py"
