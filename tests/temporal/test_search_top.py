"""`top` (each index ranks alone and stops at a limit, then the filter) against the plain
reference: every match joined to its filter, all ranked, then the page cut.

The vault is large enough (over 2,000 matches of `apple`) that a search ranks with `top`'s
limited statements, and its best-scored notes (60 short `person` notes, all tied) are what
a `type: memo` filter drops: the first limit finds no memo, so only doubling it finds the page.
"""

from __future__ import annotations

import random
import sqlite3
from collections.abc import Iterator, Sequence

import pytest

from almanac import temporal
from almanac.temporal import LifecycleFilter, MatchMode, RecordFilter
from almanac.temporal.queries.matching import expression, search_tokens
from almanac.temporal.store import parts, scope_counts, search_table, top

NOW = 1_800_000_000_000_000
SCOPES = ["clean", "default", "private", "team"]
CONFIG = temporal.VaultConfig(scopes={"team": "team/", "private": "private/", "clean": "clean/"})
WEIGHTS = "8.0, 6.0, 1.0"
DAY_US = 86_400_000_000
JAN_1_2024_US = 1_704_067_200_000_000


def _note(rng: random.Random, i: int, folder: str) -> tuple[str, str]:
    """A memo of `apple`, `pear`, `fig` or `plum`, and filler: lengths repeat, so scores tie."""
    front = ["type: memo"]
    if i % 3 == 0:
        front.append("tags: [x]")
    if i % 5 == 0:
        front.append(f"occurred_at: 2024-01-{1 + i % 28:02}")
    if i % 41 == 0:
        front.append("lifecycle: withdrawn")
    elif i % 37 == 0:
        front.append("lifecycle: superseded")
    if i % 97 == 0:
        front.append("id: twin")  # the same id twice or more: not eligible
    words = ["apple"] * (1 + i % 3 if i % 11 == 0 else 1)
    words.append(("pear", "pear", "fig", "fig", "plum")[i % 5])  # each in 40 % or less
    words += ["filler"] * (i % 150) + rng.choices(["kiwi", "lime", "yam", "date"], k=i % 3)
    rng.shuffle(words)
    return f"{folder}/m{i:04}.md", "---\n" + "\n".join(front) + f"\n---\n# M{i}\n\n" + " ".join(
        words
    ) + "\n"


def _files() -> dict[str, str]:
    rng = random.Random(15)
    files = dict(_note(rng, i, "notes") for i in range(2300))
    files |= dict(_note(rng, i, "team") for i in range(2300, 2500))
    files |= dict(_note(rng, i, "private") for i in range(2500, 2650))
    # A scope whose every note is active and eligible: its matches are counted from the index.
    files |= {f"clean/c{i:02}.md": f"# C{i}\n\napple {'pear ' * (i % 4)}\n" for i in range(40)}
    # The best `apple` scores (a title weighs most): all alike (one tie), and not memos.
    # Their ids run against their paths, so the rows a limit keeps of the tie (the first
    # found) are not those of the smallest ids.
    person = "---\ntype: person\nid: person-{:02}\n---\n# Apple P{}\n\napple\n"
    files |= {f"people/p{i:02}.md": person.format(59 - i, i) for i in range(60)}
    files |= {
        f"team/q{i:02}.md": f"---\ntype: person\n---\n# Apple Q{i}\n\napple pear\n"
        for i in range(30)
    }
    return files


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[temporal.Store]:
    root = tmp_path_factory.mktemp("top") / "vault"
    for path, text in _files().items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    store = temporal.Store.open(root.parent / "state.db", fingerprint=CONFIG.fingerprint("t"))
    temporal.Reconciler(store, root, CONFIG).reconcile(now_us=NOW)
    yield store
    store.close()


def reference(
    reader: temporal.Reader, match: str, flt: RecordFilter, scopes: Sequence[str]
) -> list[tuple[int, float, str, str]]:
    """Every match that passes the filter, ranked: (rowid, score, id, scope) by score, then
    id, then scope (then rowid)."""
    chosen = [s for s in scopes if flt.scope is None or s == flt.scope]
    found: list[tuple[int, float, str, str]] = []
    for scope in chosen:
        table = search_table(scope)
        try:
            reader.conn.execute(f"SELECT 1 FROM {table} LIMIT 0")
        except sqlite3.OperationalError:
            continue  # no note in this scope
        where, params = reader._filter(flt, [scope])
        sql = (
            f"SELECT n.rowid, -bm25({table}, {WEIGHTS}), n.id, n.scope FROM {table}"
            f" CROSS JOIN search_keys n ON n.rowid = {table}.rowid"
            f" WHERE {table} MATCH ? AND {where}"
        )
        found += reader.conn.execute(sql, [match, *params]).fetchall()
    return sorted(found, key=lambda r: (-r[1], r[2], r[3], r[0]))


FILTERS = {
    "default": RecordFilter(),
    "memos": RecordFilter(type="memo"),
    "people": RecordFilter(type="person"),
    "tagged": RecordFilter(tag="x"),
    "any-lifecycle": RecordFilter(lifecycle=LifecycleFilter.ALL),
    "superseded": RecordFilter(lifecycle=LifecycleFilter.SUPERSEDED),
    "team": RecordFilter(scope="team"),
    "january": RecordFilter(
        since_us=JAN_1_2024_US + 3 * DAY_US, until_us=JAN_1_2024_US + 9 * DAY_US
    ),
    "memos-tagged": RecordFilter(type="memo", tag="x"),
}
SCOPE_SETS = (["default"], ["default", "team"], SCOPES, ["team", "private"], ["clean"])
PAGES = ((1, 0), (20, 0), (20, 40), (100, 0), (7, 200), (201, 0), (30, 2500))
QUERIES = (
    ("apple", MatchMode.ALL),
    ("apple pear", MatchMode.ALL),
    ("pear kiwi", MatchMode.ANY),
    ("filler apple", MatchMode.PHRASE),
)


@pytest.mark.parametrize("flt_name", sorted(FILTERS))
def test_top_ranks_like_full_ranking_then_filter(store: temporal.Store, flt_name: str) -> None:
    flt = FILTERS[flt_name]
    with store.read() as reader:
        for text, mode in QUERIES:
            match = expression(search_tokens(text), mode)
            for scopes in SCOPE_SETS:
                expected = reference(reader, match, flt, scopes)
                found = parts(reader, flt, scopes, match)
                for first, offset in PAGES:
                    # matches=None: `top` never knows the count, so it always ranks alone.
                    got = top(reader, found, limit=first, offset=offset)
                    want = [(r[0], r[1]) for r in expected[offset : offset + first]]
                    assert got == want, (text, mode, scopes, first, offset)


def test_the_vault_forces_the_doubling(store: temporal.Store) -> None:
    """The premise of the tests: more than 2,000 memos match `apple` (a search does not join
    them all), and none of the 56 best `apple` matches is a memo."""
    with store.read() as reader:
        match = expression(["apple"], MatchMode.ALL)
        best = reference(reader, match, RecordFilter(type="person"), SCOPES)
        memos = reference(reader, match, RecordFilter(type="memo"), ["default"])
        every = reference(reader, match, RecordFilter(), ["default"])
    assert len(memos) > 2000
    assert sorted(r[0] for r in every[:60]) == sorted(r[0] for r in best if r[3] == "default")
    assert len({r[1] for r in every[:60]}) == 1  # one tie


@pytest.mark.parametrize("flt_name", sorted(FILTERS))
def test_scope_counts_are_the_notes_kept_and_left_out(store: temporal.Store, flt_name: str) -> None:
    flt = FILTERS[flt_name]
    with store.read() as reader:
        for scopes in SCOPE_SETS:
            chosen = [s for s in scopes if flt.scope is None or s == flt.scope]
            where, params = reader._filter(flt, scopes)
            kept = reader.conn.execute(f"SELECT count(*) FROM notes n WHERE {where}", params)
            every = reader.conn.execute(
                f"SELECT count(*) FROM notes WHERE scope IN ({', '.join('?' * len(chosen))})",
                chosen,
            )
            expected = kept.fetchone()[0]
            assert scope_counts(reader, flt, scopes) == (expected, every.fetchone()[0] - expected)


def test_the_clean_scope_leaves_nothing_out(store: temporal.Store) -> None:
    with store.read() as reader:
        assert scope_counts(reader, RecordFilter(), ["clean"]) == (40, 0)
        assert scope_counts(reader, RecordFilter(), ["clean", "team"])[1] > 0


@pytest.mark.parametrize("scopes", [SCOPES, ["clean"]])
@pytest.mark.parametrize("flt_name", ["default", "memos", "any-lifecycle", "tagged"])
@pytest.mark.parametrize(("first", "offset"), [(20, 0), (20, 60), (5, 2100)])
def test_search_pages_are_the_reference_pages(
    store: temporal.Store, scopes: list[str], flt_name: str, first: int, offset: int
) -> None:
    flt = FILTERS[flt_name]
    with store.read() as reader:
        page = temporal.search_records(
            reader, "apple", mode=MatchMode.ALL, flt=flt, scopes=scopes, first=first, offset=offset
        )
        expected = reference(reader, '"apple"', flt, scopes)
    assert page.total >= len(expected)  # and the replacements of superseded matches
    assert page.retrieval.per_query_matches == (len(expected),)
    direct = [(h.record.id, h.scope, h.score) for h in page.hits if h.via is None]
    assert direct == [(r[2], r[3], r[1]) for r in expected[offset : offset + first]]


def test_variants_fuse_the_reference_lists(store: temporal.Store) -> None:
    """With a variant, each list is the reference's best 100 (fused by reciprocal rank)."""
    flt = FILTERS["memos"]
    with store.read() as reader:
        page = temporal.search_records(
            reader,
            "apple",
            mode=MatchMode.ALL,
            flt=flt,
            scopes=SCOPES,
            first=100,
            variants=["apple kiwi"],
        )
        lists = [
            [r[0] for r in reference(reader, m, flt, SCOPES)[:100]]
            for m in ('"apple"', '"apple" AND "kiwi"')
        ]
        keys = dict(reader.conn.execute("SELECT rowid, id FROM search_keys"))
    scores: dict[int, float] = {}
    for ranking in lists:
        for rank, rowid in enumerate(ranking, start=1):
            scores[rowid] = scores.get(rowid, 0.0) + 1 / (60 + rank)
    order = sorted(scores, key=lambda r: (-scores[r], keys[r]))
    assert [h.record.id for h in page.hits] == [keys[r] for r in order[:100]]


def test_a_relaxed_recall_is_the_reference_best_201(store: temporal.Store) -> None:
    """`apple` is in more than half of the notes and dropped; `pear` and `fig` are recalled
    with OR over more than 2,000 candidates, of which the best 200 are kept."""
    flt = RecordFilter()
    with store.read() as reader:
        page = temporal.search_records(
            reader,
            "apple pear fig zebra",
            mode=MatchMode.ALL,
            flt=flt,
            scopes=SCOPES,
            first=200,
            strategy=temporal.SearchStrategy.AUTO,
        )
        recall = reference(reader, '"fig" OR "pear"', flt, SCOPES)
    fallback = page.retrieval.fallback
    assert fallback is not None and fallback.keywords == ("fig", "pear")
    assert fallback.candidate_limit_reached and fallback.recalled == 200
    assert len(recall) > 2000
    held = {(h.record.id, h.scope): len(h.matches) for h in page.hits}
    best = [(r[2], r[3]) for r in recall[:200]]
    assert sorted(held) == sorted(best)
    assert [(h.record.id, h.scope) for h in page.hits] == sorted(best, key=lambda k: -held[k])


def test_a_search_past_2000_matches_ranks_the_index_alone_then_doubles(
    store: temporal.Store,
) -> None:
    """No statement ranks every match joined to the filter: the `default` index is asked for
    its best 56 (all people, one tie, which the memo filter drops), then for its best 112."""
    statements: list[str] = []
    with store.read() as reader:
        reader.conn.set_trace_callback(statements.append)
        try:
            page = temporal.search_records(
                reader,
                "apple",
                mode=MatchMode.ALL,
                flt=FILTERS["memos"],
                scopes=["default"],
                first=20,
            )
        finally:
            reader.conn.set_trace_callback(None)
    ranking = f"SELECT rowid, bm25({search_table('default')}, {WEIGHTS}) AS s FROM"
    limits = [int(s.rsplit("LIMIT ", 1)[1]) for s in statements if s.startswith(ranking)]
    assert limits == [56, 112]
    assert not any("bm25" in s and "CROSS JOIN search_keys" in s for s in statements)
    assert len(page.hits) == 20
