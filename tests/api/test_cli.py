"""The `almanac` command: check, reconcile, query, export-schema (serve: test_server.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from almanac.api.cli import main
from almanac.api.schema import build_schema
from tests.api.helpers import DEMO_RECORDS, LocalClient


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    code = main(list(args))
    return code, capsys.readouterr().out


def test_check_json_on_a_clean_vault(
    demo_vault: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out = run(
        capsys, "check", "--vault", str(demo_vault), "--state", str(tmp_path / "s.db"), "--json"
    )
    assert code == 0
    assert json.loads(out) == {"records": DEMO_RECORDS, "issues": []}


def test_check_json_reports_issues_and_exits_one(
    demo_vault: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (demo_vault / "broken.md").write_text("---\ntitle: Broken\noccurred_at: 2024-02-30\n---\n")
    code, out = run(
        capsys, "check", "--vault", str(demo_vault), "--state", str(tmp_path / "s.db"), "--json"
    )
    assert code == 1
    report = json.loads(out)
    assert report["records"] == DEMO_RECORDS + 1
    assert report["issues"] == [
        {
            "code": "invalid_date",
            "path": "broken.md",
            "line": 3,
            "field": "occurred_at",
            "recordId": "broken",
            "message": report["issues"][0]["message"],
        }
    ]
    assert "2024-02-30" in report["issues"][0]["message"]


def test_check_text_names_file_line_and_code(
    demo_vault: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (demo_vault / "broken.md").write_text("---\nlifecycle: gone\n---\n")
    code, out = run(capsys, "check", "--vault", str(demo_vault), "--state", str(tmp_path / "s.db"))
    assert code == 1
    assert "broken.md:2: invalid_field:" in out


def test_reconcile_prints_counts(
    demo_vault: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out = run(
        capsys, "reconcile", "--vault", str(demo_vault), "--state", str(tmp_path / "s.db")
    )
    assert code == 0
    assert out.startswith(f"{DEMO_RECORDS} records, 0 issues, snapshot ")


def test_query_prints_the_json_result_with_variables(
    demo_vault: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    document = "query($id: ID!) { record(id: $id) { title } }"
    variables = json.dumps({"id": "people/ada-lopez"})
    state = str(tmp_path / "s.db")
    args = ["query", "--vault", str(demo_vault), "--state", state, document]
    code, out = run(capsys, *args, "--variables", variables)
    assert code == 0
    assert json.loads(out) == {"data": {"record": {"title": "Ada Lopez"}}}


@pytest.mark.parametrize("variables", ["{not json", "[1, 2]"], ids=["not-json", "not-object"])
def test_query_refuses_bad_variables(
    demo_vault: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], variables: str
) -> None:
    state = str(tmp_path / "s.db")
    code = main(
        [
            "query",
            "--vault",
            str(demo_vault),
            "--state",
            state,
            "{ status { recordCount } }",
            "--variables",
            variables,
        ]
    )
    assert code == 2
    assert "--variables" in capsys.readouterr().err


def test_query_with_errors_exits_one(
    demo_vault: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    state = str(tmp_path / "s.db")
    code, out = run(
        capsys,
        "query",
        "--vault",
        str(demo_vault),
        "--state",
        state,
        "{ records(first: 0) { total } }",
    )
    assert code == 1
    assert json.loads(out)["errors"][0]["extensions"]["code"] == "BAD_USER_INPUT"


def test_export_schema_writes_the_schema(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "schema.graphql"
    assert main(["export-schema", "--output", str(target)]) == 0
    assert target.read_text() == build_schema().as_str() + "\n"


def test_a_missing_vault_is_a_clear_startup_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["check", "--vault", str(tmp_path / "nope"), "--state", str(tmp_path / "s.db")])
    assert code == 2
    assert "is not a folder" in capsys.readouterr().err


def test_state_inside_the_vault_is_refused(
    demo_vault: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["check", "--vault", str(demo_vault), "--state", str(demo_vault / "s.db")])
    assert code == 2
    assert "outside the vault" in capsys.readouterr().err


def test_app_from_env_reads_almanac_variables(
    demo_vault: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:

    from almanac.api import app_from_env

    monkeypatch.setenv("ALMANAC_VAULT", str(demo_vault))
    monkeypatch.setenv("ALMANAC_STATE", str(tmp_path / "s.db"))
    monkeypatch.setenv("ALMANAC_WATCH", "0")
    with LocalClient(app_from_env()) as client:
        assert client.get("/healthz").json() == {"status": "ok"}
        body = client.post("/graphql", json={"query": "{ status { recordCount } }"}).json()
    assert body == {"data": {"status": {"recordCount": DEMO_RECORDS}}}


def test_app_from_env_names_a_bad_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    from almanac.api import app_from_env
    from almanac.vault import StartupError

    monkeypatch.setenv("ALMANAC_WATCH", "maybe")
    with pytest.raises(StartupError, match="ALMANAC_WATCH"):
        app_from_env()
