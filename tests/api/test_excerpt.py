"""`excerpt`: following a locator. The lines of a note as the file reads now, its revision now,
and whether the cited one still holds; only note files the index knows in a readable scope,
never anything else (a path leaving the vault, a symlink, a FIFO: NOT_FOUND, never opened)."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from tests.api.helpers import codes, post
from tests.api.time_vaults import app_over, touch
from tests.vault.test_excerpt import opens

EXCERPT = """query($path: String!, $start: Int, $end: Int, $revision: String, $scope: String) {
  excerpt(path: $path, startLine: $start, endLine: $end, revision: $revision, scope: $scope) {
    path revision current lineCount lines { number text } record { id }
    meta { snapshot }
  }
}"""
LOCATOR = """query($id: ID!) { record(id: $id) { locator { path startLine endLine revision } } }"""

LONG = 1205  # lines of long.md
TEXTS = {
    "team/long.md": ["# Long", *(f"line {n}" for n in range(2, LONG + 1))],
    "team/short.md": ["one", "two", "three"],
}
TOKENS = {"all": "t0ken-all", "team": "t0ken-team"}
GRANTS = {"all": '["team", "ops"]', "team": '["team"]'}


def gql(client: TestClient, query: str, *, token: str = "all", **variables: Any) -> Any:
    """One document with a bearer token (`all` reads both scopes, `team` only team)."""
    headers = {"authorization": f"Bearer {TOKENS[token]}"}
    response = post(client, query, headers, **variables)
    assert response.status_code == 200, response.text
    return response.json()


def data(client: TestClient, query: str, **variables: Any) -> Any:
    body = gql(client, query, **variables)
    assert "errors" not in body, body["errors"]
    return body["data"]


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("excerpt")
    vault = folder / "vault"
    (vault / "team").mkdir(parents=True)
    (vault / "ops").mkdir()
    (vault / "team" / "ada.md").write_text("---\ntype: person\ntitle: Ada\n---\nAda's note.\n")
    for name, lines in TEXTS.items():
        (vault / name).write_text("".join(f"{line}\n" for line in lines))
    (vault / "team" / "gone.md").write_text("---\nlifecycle: withdrawn\n---\nretracted\n")
    (vault / "team" / "latin1.md").write_bytes(b"caf\xe9\n")  # no record: not UTF-8
    (vault / "ops" / "secret.md").write_text("ops only\n")
    (vault / ".obsidian").mkdir()
    (vault / ".obsidian" / "hidden.md").write_text("hidden\n")
    (vault / "team" / "notes.txt").write_text("not a note\n")
    (vault / "team" / "link.md").symlink_to(vault / "team" / "ada.md")  # scanned as a note
    os.mkfifo(vault / "team" / "pipe.md")
    (vault / "team" / "far.md").symlink_to(folder / "fifo.md")
    os.mkfifo(folder / "fifo.md")
    (folder / "x.md").write_text("outside the vault\n")
    (folder / "almanac.toml").write_text(
        '[scopes]\nteam = "team/"\nops = "ops/"\n'
        + "".join(
            f'\n[[tokens]]\nsha256 = "{hashlib.sha256(secret.encode()).hexdigest()}"\n'
            f"scopes = {GRANTS[name]}\n"
            for name, secret in TOKENS.items()
        )
    )
    return vault


@pytest.fixture(scope="module")
def client(root: Path) -> Iterator[TestClient]:
    with app_over(root, root.parent / "state.db", root.parent / "almanac.toml") as client:
        yield client


def excerpt(client: TestClient, path: str, **arguments: Any) -> dict[str, Any]:
    found: dict[str, Any] = data(client, EXCERPT, path=path, **arguments)["excerpt"]
    return found


def numbers(found: dict[str, Any]) -> list[int]:
    return [line["number"] for line in found["lines"]]


# -- the range: at most 1,000 lines, never clamped ----------------------------------------------


@pytest.mark.parametrize(
    ("path", "start", "end", "expected"),
    [
        pytest.param("team/long.md", None, 1000, (1, 1000), id="exactly-1000"),
        pytest.param("team/long.md", 5, 1004, (5, 1004), id="exactly-1000-from-5"),
        pytest.param("team/long.md", None, None, (1, 1000), id="no-end-reads-1000"),
        pytest.param("team/long.md", 1200, None, (1200, LONG), id="no-end-reads-to-the-end"),
        pytest.param("team/long.md", 1000, 1999, (1000, LONG), id="end-past-the-file"),
        pytest.param("team/long.md", 7, 7, (7, 7), id="one-line"),
        pytest.param("team/short.md", 2, 10, (2, 3), id="short-file-end-past-it"),
        pytest.param("team/short.md", 4, None, None, id="start-past-the-end-is-empty"),
        pytest.param("team/short.md", 1, None, (1, 3), id="short-file-whole"),
    ],
)
def test_lines_that_exist_in_the_range_are_returned(
    client: TestClient, path: str, start: int | None, end: int | None, expected: Any
) -> None:
    found = excerpt(client, path, start=start, end=end)
    assert numbers(found) == (list(range(expected[0], expected[1] + 1)) if expected else [])
    written = TEXTS[path]
    assert [line["text"] for line in found["lines"]] == [written[n - 1] for n in numbers(found)]
    assert found["lineCount"] == len(written)


@pytest.mark.parametrize(
    ("path", "start", "end", "named"),
    [
        pytest.param("team/long.md", None, 1001, "'endLine'", id="1001-lines"),
        pytest.param("team/long.md", 5, 1005, "'endLine'", id="1001-lines-from-5"),
        pytest.param("team/short.md", 1, 1001, "'endLine'", id="1001-lines-of-a-3-line-file"),
        pytest.param("team/long.md", 10, 9, "'endLine'", id="end-before-start"),
        pytest.param("team/long.md", 0, 5, "'startLine'", id="start-0"),
        pytest.param("team/long.md", -3, None, "'startLine'", id="start-negative"),
        pytest.param("team/long.md", None, 0, "'endLine'", id="end-0"),
    ],
)
def test_a_bad_range_is_refused_naming_the_argument(
    client: TestClient, path: str, start: int | None, end: int | None, named: str
) -> None:
    body = gql(client, EXCERPT, path=path, start=start, end=end)
    assert codes(body) == ["BAD_USER_INPUT"]
    assert named in body["errors"][0]["message"]


def test_a_bad_revision_is_refused(client: TestClient) -> None:
    for revision in ("abc", "G" * 64, "A" * 64, "0" * 65):
        body = gql(client, EXCERPT, path="team/ada.md", revision=revision)
        assert codes(body) == ["BAD_USER_INPUT"], revision


# -- revisions ------------------------------------------------------------------------------


def test_a_locator_followed_gives_its_lines_and_a_stale_revision_says_so(
    client: TestClient, root: Path
) -> None:
    note = root / "team" / "edited.md"
    touch(note, "---\ntitle: Before\n---\nfirst\n")
    locator = data(client, LOCATOR, id="team/edited")["record"]["locator"]
    cited = locator["revision"]
    found = excerpt(
        client, locator["path"], start=locator["startLine"], end=locator["endLine"], revision=cited
    )
    assert found["current"] is True and found["revision"] == cited
    assert found["lines"][-1] == {"number": 4, "text": "first"}
    assert found["lineCount"] == locator["endLine"]
    assert found["record"] == {"id": "team/edited"}
    touch(note, "---\ntitle: After\n---\nfirst\nsecond\n")
    stale = excerpt(client, "team/edited.md", revision=cited)
    assert stale["current"] is False
    assert stale["revision"] != cited
    assert (
        stale["revision"]
        == data(client, LOCATOR, id="team/edited")["record"]["locator"]["revision"]
    )
    assert [line["text"] for line in stale["lines"]] == [
        "---",
        "title: After",
        "---",
        "first",
        "second",
    ]
    assert excerpt(client, "team/edited.md")["current"] is True  # nothing cited


def test_a_file_without_an_eligible_record_still_reads(client: TestClient) -> None:
    withdrawn = excerpt(client, "team/gone.md")
    assert withdrawn["record"] is None and withdrawn["lines"][-1]["text"] == "retracted"
    latin1 = excerpt(client, "team/latin1.md")
    assert latin1["record"] is None and latin1["lines"] == [{"number": 1, "text": "caf\ufffd"}]


# -- only notes the index knows in a readable scope, never opened otherwise -----------------


@pytest.mark.parametrize(
    ("path", "watched"),
    [
        pytest.param("../x.md", "../x.md", id="dot-dot"),
        pytest.param("team/../../x.md", "../x.md", id="dot-dot-inside"),
        pytest.param("{vault}/team/ada.md", "team/ada.md", id="absolute-inside"),
        pytest.param("{folder}/x.md", "../x.md", id="absolute-outside"),
        pytest.param("/etc/passwd", None, id="absolute-system-file"),
        pytest.param("team/./ada.md", "team/ada.md", id="dot-part"),
        pytest.param("team/link.md", "team/ada.md", id="symlink-known-to-the-index"),
        pytest.param("team/pipe.md", "team/pipe.md", id="fifo"),
        pytest.param("team/far.md", "../fifo.md", id="symlink-to-fifo-outside"),
        pytest.param(".obsidian/hidden.md", ".obsidian/hidden.md", id="hidden-folder"),
        pytest.param("team/notes.txt", "team/notes.txt", id="not-a-note"),
        pytest.param("team/absent.md", None, id="no-such-file"),
        pytest.param("team", None, id="a-folder"),
        pytest.param("", None, id="empty"),
    ],
)
def test_anything_but_a_known_note_is_not_found_and_never_opened(
    client: TestClient, root: Path, path: str, watched: str | None
) -> None:
    path = path.format(vault=root, folder=root.parent)
    target = (root / watched).resolve() if watched else root / "team" / "ada.md"
    with opens(target) as count:
        body = gql(client, EXCERPT, path=path)
        assert count() == 0
    assert codes(body) == ["NOT_FOUND"]
    assert body["data"] is None


def test_notes_of_other_scopes_are_not_found(client: TestClient, root: Path) -> None:
    assert excerpt(client, "ops/secret.md")["lines"] == [{"number": 1, "text": "ops only"}]
    body = gql(client, EXCERPT, path="ops/secret.md", scope="team")
    assert codes(body) == ["NOT_FOUND"]
    with opens(root / "ops" / "secret.md") as count:
        body = gql(client, EXCERPT, path="ops/secret.md", token="team")
        assert count() == 0
    assert codes(body) == ["NOT_FOUND"]
    assert codes(gql(client, EXCERPT, path="ops/secret.md", token="team", scope="ops")) == [
        "FORBIDDEN"
    ]
    assert codes(gql(client, EXCERPT, path="team/ada.md", scope="nowhere")) == ["FORBIDDEN"]
    assert excerpt(client, "team/ada.md", scope="team")["record"] == {"id": "team/ada"}
