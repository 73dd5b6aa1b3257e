from __future__ import annotations

import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from almanac import temporal
from almanac.temporal import LifecycleFilter, MatchMode, RecordFilter
from almanac.temporal.store import search_table
from almanac.vault import InvalidInput
from tests import vaults
from tests.temporal.helpers import check_search

NOW = 1_800_000_000_000_000
ALL_SCOPES = ["default", "private", "team"]

NOTES = vaults.files("search")


def write(root: Path, files: dict[str, str]) -> None:
    for path, text in files.items():
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)


CONFIG = temporal.VaultConfig(scopes={"team": "team/", "private": "private/"})


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    write(root, NOTES)
    return root


@pytest.fixture
def store(vault: Path, tmp_path: Path) -> Iterator[temporal.Store]:
    store = temporal.Store.open(tmp_path / "state.db", fingerprint=CONFIG.fingerprint("t"))
    temporal.Reconciler(store, vault, CONFIG).reconcile(now_us=NOW)
    yield store
    store.close()


def run(
    store: temporal.Store,
    query: str,
    *,
    mode: MatchMode = MatchMode.ALL,
    flt: RecordFilter | None = None,
    scopes: list[str] | None = None,
    first: int = 100,
    offset: int = 0,
) -> temporal.queries.SearchPage:
    with store.read() as reader:
        return temporal.search_records(
            reader,
            query,
            mode=mode,
            flt=flt or RecordFilter(),
            scopes=ALL_SCOPES if scopes is None else scopes,
            first=first,
            offset=offset,
        )


def ids(page: temporal.queries.SearchPage) -> list[str]:
    return [h.record.id for h in page.hits]


@pytest.mark.parametrize(
    ("text", "tokens"),
    [
        ("Müller", ("muller",)),
        ("MÜLLER muller", ("muller", "muller")),
        ("a-b, c.d", ("a", "b", "c", "d")),
        ("NEAR(a b)", ("near", "a", "b")),
        ("title:x", ("title", "x")),
        ("a*", ("a",)),
        ('"unbalanced', ("unbalanced",)),
        ("^x -x", ("x", "x")),
        ("a AND OR NOT b", ("a", "and", "or", "not", "b")),
        ("😀 map", ("map",)),
        ("東京 タワー", ("東京", "タワー")),
        ("Ærø straße", ("ærø", "straße")),
    ],
    ids=[
        "diacritics",
        "case",
        "punctuation",
        "near",
        "column-filter",
        "prefix-star",
        "quote",
        "caret-minus",
        "operators",
        "emoji",
        "cjk",
        "letters-kept",
    ],
)
def test_search_tokens_cut_and_fold_like_the_index(text: str, tokens: tuple[str, ...]) -> None:
    assert temporal.queries.search_tokens(text) == tokens


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "not 0"),
        ("(*) - ^ :", "not 0"),
        ("😀", "not 0"),
        (" ".join(["w"] * 65), "not 65"),
        ("x" * 501, "at most 500 characters"),
        ("bad \ud800 surrogate", "valid Unicode"),
    ],
    ids=["empty", "only-punctuation", "only-emoji", "65-tokens", "501-chars", "lone-surrogate"],
)
def test_search_tokens_out_of_bounds_name_the_query(text: str, message: str) -> None:
    with pytest.raises(InvalidInput, match=message) as caught:
        temporal.queries.search_tokens(text)
    assert "'query'" in str(caught.value)


def test_search_tokens_accept_the_bounds() -> None:
    assert len(temporal.queries.search_tokens(" ".join(["w"] * 64))) == 64
    assert temporal.queries.search_tokens("x" * 500) == ("x" * 500,)


def test_title_outranks_alias_outranks_body(store: temporal.Store) -> None:
    page = run(store, "ledger", scopes=["default"])
    assert ids(page) == ["notes/title-hit", "notes/alias-hit", "notes/body-hit"]
    scores = [h.score for h in page.hits]
    assert all(s is not None and s > 0 for s in scores)
    assert scores == sorted(scores, reverse=True)  # type: ignore[type-var]


@pytest.mark.parametrize(
    ("mode", "query", "expected"),
    [
        (MatchMode.ALL, "red apple", ["notes/apple-red", "notes/red-apple"]),
        (MatchMode.ANY, "red apple", ["notes/apple-red", "notes/red-apple", "notes/red-only"]),
        (MatchMode.PHRASE, "red apple", ["notes/red-apple"]),
        (MatchMode.PHRASE, "RED, apple!", ["notes/red-apple"]),
        (MatchMode.PHRASE, "apple red", []),
        (MatchMode.ALL, "red banana", []),
    ],
    ids=["all", "any", "phrase", "phrase-punctuation", "phrase-order", "all-needs-every-token"],
)
def test_modes(store: temporal.Store, mode: MatchMode, query: str, expected: list[str]) -> None:
    page = run(store, query, mode=mode)
    assert sorted(ids(page)) == expected
    assert page.total == len(expected)


def test_any_reports_the_tokens_each_record_matched(store: temporal.Store) -> None:
    page = run(store, "red apple red", mode=MatchMode.ANY)
    matches = {h.record.id: h.matches for h in page.hits}
    assert matches == {
        "notes/red-apple": ("red", "apple"),
        "notes/apple-red": ("red", "apple"),
        "notes/red-only": ("red",),
    }


@pytest.mark.parametrize(
    "query",
    [
        "NEAR(red apple)",
        "title:red",
        "body:apple",
        "red*",
        '"unbalanced',
        "^red",
        "red AND OR NOT apple",
        "-red",
        "( red",
        "red) OR (apple",
        "{title body}: red",
        "red + apple",
        "😀 red",
        "東京",
    ],
)
def test_fts_syntax_in_the_query_is_inert(store: temporal.Store, query: str) -> None:
    page = run(store, query, mode=MatchMode.ANY)
    tokens = set(temporal.queries.search_tokens(query))
    # Every hit holds one of the words, as words; no operator, prefix or column filter ran.
    for hit in page.hits:
        assert set(hit.matches) <= tokens and hit.matches
    if "red" in tokens and "near" not in tokens:
        assert "notes/red-only" in ids(page)


def test_operator_words_are_searched_as_words(store: temporal.Store) -> None:
    # `red NOT apple` would exclude the apples if NOT were an operator.
    assert run(store, "red NOT apple", mode=MatchMode.ALL).total == 0
    assert run(store, "red* apple", mode=MatchMode.ALL).total == 2


@pytest.mark.parametrize("query", ["Müller", "muller", "MULLER", "müller"])
def test_case_and_diacritics_are_ignored(store: temporal.Store, query: str) -> None:
    assert sorted(ids(run(store, query))) == ["notes/mueller", "notes/muller"]


def test_filters_apply_before_counting(store: temporal.Store) -> None:
    people = run(store, "works", flt=RecordFilter(type="person"))
    assert sorted(ids(people)) == ["notes/mueller", "notes/muller"]
    assert people.total == 2
    assert run(store, "works", flt=RecordFilter(type="decision")).total == 0
    assert ids(run(store, "line", flt=RecordFilter(tag="x"))) == ["notes/lines"]


def test_scopes_decide_hits_and_totals(store: temporal.Store) -> None:
    everywhere = run(store, "ledger")
    assert {"private/secret", "team/plan"} <= set(ids(everywhere))
    team = run(store, "ledger", scopes=["team"])
    assert ids(team) == ["team/plan"] and team.total == 1
    readable = run(store, "ledger", scopes=["default", "team"])
    assert "private/secret" not in ids(readable)
    assert readable.total == everywhere.total - 1
    filtered = run(store, "ledger", flt=RecordFilter(scope="team"), scopes=["default", "team"])
    assert ids(filtered) == ["team/plan"]


def test_superseded_match_returns_the_current_record_after_direct_hits(
    store: temporal.Store,
) -> None:
    page = run(store, "quartz")
    # decisions/old -> mid (superseded) -> new; dead-end -> gone (withdrawn): nothing.
    assert [(h.record.id, h.via.id if h.via else None, h.score) for h in page.hits] == [
        ("decisions/new", "decisions/old", None)
    ]
    assert page.total == 1
    hit = page.hits[0]
    assert hit.matches == ("quartz",)
    assert hit.snippet is not None and not hit.snippet.match_located
    assert hit.snippet.text == "# Use granite\n\nGranite after all."
    assert hit.locator.path == "decisions/new.md"
    assert run(store, "quartz", flt=RecordFilter(type="decision")).hits == page.hits


def test_replacements_follow_direct_hits_once(store: temporal.Store) -> None:
    page = run(store, "use", mode=MatchMode.ANY)
    direct = [h for h in page.hits if h.via is None]
    assert "decisions/new" in [h.record.id for h in direct]
    # new is a direct hit: old and mid add nothing; to-note adds its replacement once.
    later = [(h.record.id, h.via.id) for h in page.hits if h.via is not None]
    assert later == [("notes/target-note", "decisions/to-note")]
    assert page.hits[-1].via is not None and page.total == len(page.hits)


def test_replacement_outside_the_filter_returns_nothing(store: temporal.Store) -> None:
    assert run(store, "slate").total == 1
    assert run(store, "slate", flt=RecordFilter(type="decision")).total == 0


def test_a_chain_through_a_filtered_out_record_returns_nothing(vault: Path, tmp_path: Path) -> None:
    write(vault, {"decisions/mid.md": NOTES["decisions/mid.md"].replace("decision", "note", 1)})
    store = temporal.Store.open(tmp_path / "other.db", fingerprint=CONFIG.fingerprint("t"))
    temporal.Reconciler(store, vault, CONFIG).reconcile(now_us=NOW)
    assert ids(run(store, "quartz")) == ["decisions/new"]
    assert run(store, "quartz", flt=RecordFilter(type="decision")).total == 0
    store.close()


def test_lifecycle_filters_show_superseded_records_themselves(store: temporal.Store) -> None:
    superseded = run(store, "quartz", flt=RecordFilter(lifecycle=LifecycleFilter.SUPERSEDED))
    assert sorted(ids(superseded)) == ["decisions/dead-end", "decisions/old"]
    assert all(h.via is None and h.score is not None for h in superseded.hits)
    every = run(store, "quartz", flt=RecordFilter(lifecycle=LifecycleFilter.ALL))
    assert sorted(ids(every)) == ["decisions/dead-end", "decisions/old"]


def test_withdrawn_records_are_never_found(store: temporal.Store) -> None:
    for lifecycle in LifecycleFilter:
        found = run(store, "obsidian", flt=RecordFilter(lifecycle=lifecycle))
        assert found.total == 0 and found.hits == ()


def test_snippet_offsets_and_file_lines(store: temporal.Store) -> None:
    (hit,) = run(store, "zebra", flt=RecordFilter(tag="x")).hits
    snippet = hit.snippet
    assert snippet is not None and snippet.match_located
    body = "first line\n\nthird line holds the zebra\nlast line\n"
    assert snippet.text == body[snippet.start : snippet.end]
    assert snippet.text == body.strip()
    # Frontmatter is lines 1-4; the body starts on line 5, the zebra is on line 7.
    assert (snippet.start_line, snippet.end_line) == (5, 8)
    assert hit.locator == temporal.Locator("notes/lines.md", 1, 8, hit.locator.revision)


def test_snippet_of_a_long_body_starts_near_the_match(tmp_path: Path) -> None:
    words = [f"w{i}" for i in range(200)]
    words[120] = "needle"
    body = "\n".join(" ".join(words[i : i + 10]) for i in range(0, 200, 10)) + "\n"
    root = tmp_path / "v"
    write(root, {"long.md": "---\ntitle: Long\n---\n" + body})
    store = temporal.Store.open(tmp_path / "s.db")
    temporal.Reconciler(store, root, temporal.VaultConfig()).reconcile(now_us=NOW)
    with store.read() as reader:
        (hit,) = temporal.search_records(
            reader, "needle", mode=MatchMode.ALL, flt=RecordFilter(), scopes=["default"], first=5
        ).hits
    store.close()
    snippet = hit.snippet
    assert snippet is not None and snippet.match_located
    at = body.index("needle")
    assert snippet.start <= at < at + len("needle") <= snippet.end
    assert snippet.text == body[snippet.start : snippet.end]
    assert snippet.start > 0 and body[snippet.start - 1] in " \n"
    assert len(snippet.text) <= 200
    # needle is word 120: body line 13, file line 13 + 3 (frontmatter and its fences).
    assert snippet.start_line <= 16 <= snippet.end_line
    assert snippet.start_line == 4 + body.count("\n", 0, snippet.start)


def test_title_only_match_gives_the_body_opening(store: temporal.Store) -> None:
    (hit,) = run(store, "reconciliation").hits
    assert hit.snippet == temporal.Snippet("Nothing else here today.", 0, 24, 4, 4, False)


def test_empty_body_has_no_snippet(store: temporal.Store) -> None:
    (hit,) = run(store, "crossing").hits
    assert hit.record.id == "notes/empty-body" and hit.snippet is None


def test_pages_concatenate_to_the_whole_list_deterministically(store: temporal.Store) -> None:
    whole = run(store, "use red ledger works", mode=MatchMode.ANY)
    assert whole.total == len(whole.hits) > 6
    pages: list[temporal.SearchHit] = []
    for offset in range(0, whole.total, 3):
        page = run(store, "use red ledger works", mode=MatchMode.ANY, first=3, offset=offset)
        assert page.total == whole.total
        pages.extend(page.hits)
    assert tuple(pages) == whole.hits
    assert run(store, "use red ledger works", mode=MatchMode.ANY) == whole
    keys = [(-(h.score or 0), h.record.id, h.scope) for h in whole.hits if h.score is not None]
    assert keys == sorted(keys)


def test_ties_are_ordered_by_id_then_scope(tmp_path: Path) -> None:
    root = tmp_path / "v"
    same = "# Same\n\nidentical words\n"
    write(root, {"b.md": same, "a.md": same, "team/a.md": "---\nid: a\n---\n" + same})
    config = temporal.VaultConfig(scopes={"team": "team/"})
    store = temporal.Store.open(tmp_path / "s.db", fingerprint=config.fingerprint("t"))
    temporal.Reconciler(store, root, config).reconcile(now_us=NOW)
    with store.read() as reader:
        page = temporal.search_records(
            reader,
            "identical",
            mode=MatchMode.ALL,
            flt=RecordFilter(),
            scopes=["default", "team"],
            first=10,
        )
    store.close()
    assert [(h.record.id, h.scope) for h in page.hits] == [
        ("a", "default"),
        ("a", "team"),
        ("b", "default"),
    ]


QUERIES = [
    ("ledger", MatchMode.ALL),
    ("red apple", MatchMode.ANY),
    ("red apple", MatchMode.PHRASE),
    ("quartz", MatchMode.ALL),
    ("use granite basalt", MatchMode.ANY),
    ("cobalt", MatchMode.ANY),
    ("works maps tiles", MatchMode.ANY),
]


def everything(store: temporal.Store) -> list[temporal.queries.SearchPage]:
    return [run(store, q, mode=m) for q, m in QUERIES]


def test_incremental_reconciles_search_like_a_clean_rebuild(vault: Path, tmp_path: Path) -> None:
    store = temporal.Store.open(tmp_path / "state.db", fingerprint=CONFIG.fingerprint("t"))
    rec = temporal.Reconciler(store, vault, CONFIG)
    rec.reconcile(now_us=NOW)
    edits: list[Callable[[], object]] = [
        lambda: (vault / "notes/red-only.md").write_text("# Fruit three\n\nNow cobalt apples.\n"),
        lambda: write(vault, {"notes/new.md": "# Cobalt ledger\n\nred red apple\n"}),
        lambda: (vault / "notes/title-hit.md").unlink(),
        lambda: (vault / "notes/apple-red.md").rename(vault / "team/apple-red.md"),
        lambda: (vault / "decisions/new.md").write_text(
            "---\ntype: decision\nlifecycle: withdrawn\n---\n# Use granite\n"
        ),
        lambda: write(vault, {"notes/muller.md": "---\naliases: [Cobalt works]\n---\n# Anna\n"}),
    ]
    for number, edit in enumerate(edits, start=1):
        edit()
        rec.reconcile(now_us=NOW + number)
        clean = tmp_path / f"clean-{number}"
        shutil.copytree(vault, clean)
        fresh = temporal.Store.open(tmp_path / f"clean-{number}.db", fingerprint=store.fingerprint)
        temporal.Reconciler(fresh, clean, CONFIG).reconcile(now_us=NOW + number)
        assert everything(store) == everything(fresh), f"after edit {number}"
        check_search(store.conn)
        fresh.close()
    changed = everything(store)
    assert [h.record.id for h in changed[5].hits][:1] == ["notes/new"]
    store.close()


def test_a_bulk_load_indexes_like_row_by_row_writes(tmp_path: Path) -> None:
    root = tmp_path / "v"
    files = {f"n/{i:04d}.md": f"# Note {i}\n\nword{i % 7} shared text {i}\n" for i in range(2100)}
    write(root, files)
    bulk = temporal.Store.open(tmp_path / "bulk.db")
    temporal.Reconciler(bulk, root, temporal.VaultConfig()).reconcile(now_us=NOW)
    small = tmp_path / "small"
    write(small, dict(list(files.items())[:10]))
    rows = temporal.Store.open(tmp_path / "rows.db")
    rec = temporal.Reconciler(rows, small, temporal.VaultConfig())
    rec.reconcile(now_us=NOW)
    for path, text in list(files.items())[10:]:
        write(small, {path: text})
    rec.reconcile(now_us=NOW + 1, paths=list(files)[10:20])  # below the bulk threshold
    rec.reconcile(now_us=NOW + 2)  # the rest: a bulk write over existing rows
    for query in ("word3", "shared text", "note 1999"):
        a = run(bulk, query, scopes=["default"], first=50)
        b = run(rows, query, scopes=["default"], first=50)
        assert a == b and a.total > 0
    for store in (bulk, rows):
        check_search(store.conn)
        store.close()


@pytest.mark.parametrize("table", [search_table("team"), "search_keys", "search_scopes"])
def test_a_missing_search_table_rebuilds_the_projections(
    vault: Path, tmp_path: Path, table: str
) -> None:
    db = tmp_path / "state.db"
    fingerprint = CONFIG.fingerprint("t")
    store = temporal.Store.open(db, fingerprint=fingerprint)
    temporal.Reconciler(store, vault, CONFIG).reconcile(now_us=NOW)
    before = everything(store)
    store.conn.execute(f"DROP TABLE {table}")
    store.close()
    store = temporal.Store.open(db, fingerprint=fingerprint)
    temporal.Reconciler(store, vault, CONFIG).reconcile(now_us=NOW + 1)
    assert everything(store) == before
    store.close()


# Team notes that hold the words at different rates, so scores differ and some are close.
TEAM = {
    f"team/t{i}.md": f"# Team {i}\n\n{'ledger ' * (1 + i % 3)}budget {'words ' * i}review\n"
    for i in range(8)
}
# Private notes full of the same words: on a shared index they move every IDF and length.
PRIVATE = {
    f"private/p{i}.md": f"# Ledger budget {i}\n\n{'ledger budget review ' * (5 + i)}\n"
    for i in range(12)
}
SCOPED = [
    ("ledger", MatchMode.ALL),
    ("ledger budget", MatchMode.ALL),
    ("ledger review words", MatchMode.ANY),
    ("budget words", MatchMode.PHRASE),
]


def scoped_pages(store: temporal.Store, scopes: list[str]) -> list[temporal.queries.SearchPage]:
    """Every query's whole list, and its pages of two."""
    pages = []
    for query, mode in SCOPED:
        pages.append(run(store, query, mode=mode, scopes=scopes))
        for offset in range(0, 10, 2):
            pages.append(run(store, query, mode=mode, scopes=scopes, first=2, offset=offset))
    return pages


def test_notes_of_an_unreadable_scope_never_move_a_readable_scope_s_results(
    tmp_path: Path,
) -> None:
    root = tmp_path / "v"
    write(root, {**TEAM, "notes/d.md": "# Default\n\nledger budget\n"})
    store = temporal.Store.open(tmp_path / "s.db", fingerprint=CONFIG.fingerprint("t"))
    rec = temporal.Reconciler(store, root, CONFIG)
    rec.reconcile(now_us=NOW)
    before = {
        "team": scoped_pages(store, ["team"]),
        "both": scoped_pages(store, ["default", "team"]),
    }
    assert before["team"][0].total == 8 and len({h.score for h in before["team"][0].hits}) > 3
    write(root, PRIVATE)  # a new scope: its index is made by this reconcile
    rec.reconcile(now_us=NOW + 1)
    assert run(store, "ledger", scopes=["private"]).total == 12
    write(root, {p: text + "ledger words words\n" for p, text in list(PRIVATE.items())[:6]})
    rec.reconcile(now_us=NOW + 2)
    for readable, scopes in (("team", ["team"]), ("both", ["default", "team"])):
        assert scoped_pages(store, scopes) == before[readable], readable
    check_search(store.conn)
    for path in PRIVATE:  # emptied, the scope's index goes
        (root / path).unlink()
    rec.reconcile(now_us=NOW + 3)
    check_search(store.conn)
    assert store.conn.execute("SELECT scope FROM search_scopes ORDER BY scope").fetchall() == [
        ("default",),
        ("team",),
    ]
    assert scoped_pages(store, ["team"]) == before["team"]
    store.close()


def test_several_scopes_are_ranked_each_alone_and_merged_by_score_then_id(
    tmp_path: Path,
) -> None:
    root = tmp_path / "v"
    same = "---\nid: a\n---\n# Same\n\nledger review\n"
    write(root, {**TEAM, **PRIVATE, "a.md": same, "team/a.md": same, "private/a.md": same})
    write(root, {"b.md": same.replace("id: a", "id: b"), "c.md": "# Other\n\nnothing\n"})
    store = temporal.Store.open(tmp_path / "s.db", fingerprint=CONFIG.fingerprint("t"))
    temporal.Reconciler(store, root, CONFIG).reconcile(now_us=NOW)
    for query, mode in SCOPED:
        alone = {s: run(store, query, mode=mode, scopes=[s]) for s in ALL_SCOPES}
        merged = run(store, query, mode=mode)
        assert merged.total == sum(p.total for p in alone.values())
        # Each hit keeps the score of its scope alone; the merge is by score, id, scope.
        expected = sorted(
            (h for p in alone.values() for h in p.hits),
            key=lambda h: (-(h.score or 0), h.record.id, h.scope),
        )
        assert list(merged.hits) == expected, query
        paged: list[temporal.SearchHit] = []
        for offset in range(0, merged.total, 3):
            paged += run(store, query, mode=mode, first=3, offset=offset).hits
        assert paged == expected
    # Equal scores across scopes: test_ties_are_ordered_by_id_then_scope.
    store.close()


def test_a_scope_name_of_any_text_gets_its_own_index(tmp_path: Path) -> None:
    # The name is quoted in the index's view and triggers, and spelt in hex in its table's name.
    config = temporal.VaultConfig(scopes={'l\'équipe "x"; --': "team/"})
    root = tmp_path / "v"
    write(root, {"team/a.md": "# Ledger\n\nledger\n", "b.md": "# B\n\nledger budget\n"})
    store = temporal.Store.open(tmp_path / "s.db", fingerprint=config.fingerprint("t"))
    rec = temporal.Reconciler(store, root, config)
    rec.reconcile(now_us=NOW)
    page = run(store, "ledger", scopes=[*config.scopes])
    assert [(h.record.id, h.scope) for h in page.hits] == [("team/a", *config.scopes)]
    write(root, {"team/c.md": "# C\n\nledger again\n"})
    rec.reconcile(now_us=NOW + 1)
    assert run(store, "ledger", scopes=[*config.scopes]).total == 2
    check_search(store.conn)
    store.close()
