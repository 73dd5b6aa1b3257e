"""The TOML configuration: scopes, type aliases, limits, tokens."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from almanac.api import Settings, create_app
from almanac.vault import StartupError
from tests.api.helpers import LocalClient


def write_config(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "almanac.toml"
    path.write_text(text)
    return path


def test_type_aliases_are_expanded_before_filtering(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "ada.md").write_text("---\ntype: people\n---\n# Ada\n")
    config = write_config(tmp_path, '[type_aliases]\npeople = "person"\n')
    settings = Settings.build(vault=vault, state=tmp_path / "s.db", config=config, watch=False)
    with LocalClient(create_app(settings)) as client:
        query = '{ records(filter: {type: "person"}) { total nodes { id type } } }'
        body = client.post("/graphql", json={"query": query}).json()
    assert body["data"]["records"] == {"total": 1, "nodes": [{"id": "ada", "type": "person"}]}


def test_a_token_read_from_the_environment_grants_its_scopes(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    (vault / "team").mkdir(parents=True)
    (vault / "team" / "a.md").write_text("# A\n")
    (vault / "b.md").write_text("# B\n")
    config = write_config(
        tmp_path,
        '[scopes]\nteam = "team/"\n\n[[tokens]]\nenv = "TEAM_TOKEN"\nscopes = ["team"]\n',
    )
    environ = {"TEAM_TOKEN": "s3cret-team"}
    settings = Settings.build(
        vault=vault, state=tmp_path / "s.db", config=config, watch=False, environ=environ
    )
    assert settings.tokens == {hashlib.sha256(b"s3cret-team").hexdigest(): ("team",)}
    with LocalClient(create_app(settings)) as client:
        query = {"query": "{ status { recordCount scopes } }"}
        denied = client.post("/graphql", json=query)
        allowed = client.post(
            "/graphql", json=query, headers={"authorization": "Bearer s3cret-team"}
        )
    assert denied.status_code == 401
    assert allowed.json()["data"]["status"] == {"recordCount": 1, "scopes": ["team"]}


@pytest.mark.parametrize(
    "text,words",
    [
        ("[scopes\n", "unusable"),
        ("[scopes]\nteam = 3\n", "[scopes]"),
        ("[limits]\nmax_frobs = 3\n", "[limits]"),
        ('[[tokens]]\nscopes = ["a"]\n', "no 'sha256'"),
        ('[[tokens]]\nenv = "UNSET_VARIABLE"\nscopes = ["a"]\n', "no 'sha256'"),
        ('[fields]\noccured_at = ["date"]\n', "'occured_at' is not an Almanac time field"),
        ('[fields]\ntitle = ["name"]\n', "'title' is not an Almanac time field"),
        ("[fields]\noccurred_at = 3\n", "non-empty list"),
        ("[fields]\noccurred_at = []\n", "non-empty list"),
        ('[fields]\noccurred_at = ["title"]\n', "not one Almanac reads itself"),
        ('[fields]\noccurred_at = ["due_at"]\n', "not one Almanac reads itself"),
        ('[fields]\noccurred_at = ["date"]\nrecorded_at = ["date"]\n', "'date' to both"),
        ('fields = "date"\n', "[fields] must map"),
        ('[daily_notes]\nfoldr = "Daily"\n', "[daily_notes] accepts only folder and format"),
        ('[daily_notes]\nformat = "YYYY-MM-DD"\n', "[daily_notes] needs folder"),
        ('[daily_notes]\nfolder = "Daily"\nformat = "YYYY-MM"\n', "year, month and day"),
    ],
    ids=[
        "bad-toml",
        "scope-not-text",
        "unknown-limit",
        "token-without-secret",
        "env-unset",
        "fields-typo",
        "fields-not-a-time-field",
        "fields-not-a-list",
        "fields-empty-list",
        "fields-an-almanac-name",
        "fields-another-time-field",
        "fields-one-name-twice",
        "fields-not-a-table",
        "daily-typo",
        "daily-without-folder",
        "daily-bad-format",
    ],
)
def test_a_bad_config_is_a_startup_error_naming_the_problem(
    tmp_path: Path, text: str, words: str
) -> None:
    config = write_config(tmp_path, text)
    with pytest.raises(StartupError, match=words.replace("[", r"\[").replace("]", r"\]")):
        Settings.build(vault=tmp_path, state=tmp_path.parent / "s.db", config=config, environ={})


def test_pages_walk_records_that_share_an_id_across_scopes(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    for folder in ("team", "ops"):
        (vault / folder).mkdir(parents=True)
        (vault / folder / "plan.md").write_text(f"---\nid: plan\n---\n# {folder} plan\n")
    config = write_config(tmp_path, '[scopes]\nteam = "team/"\nops = "ops/"\n')
    settings = Settings.build(vault=vault, state=tmp_path / "s.db", config=config, watch=False)
    query = """query($after: String) { records(first: 1, after: $after) {
        total nodes { id scope } pageInfo { hasNextPage endCursor } } }"""
    seen = []
    with LocalClient(create_app(settings)) as client:
        after = None
        for _ in range(3):
            body = client.post("/graphql", json={"query": query, "variables": {"after": after}})
            page = body.json()["data"]["records"]
            seen += [(n["id"], n["scope"]) for n in page["nodes"]]
            if not page["pageInfo"]["hasNextPage"]:
                break
            after = page["pageInfo"]["endCursor"]
    assert page["total"] == 2
    assert seen == [("plan", "ops"), ("plan", "team")]
