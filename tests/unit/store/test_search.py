"""Full-text search over items: ranking, user text that looks like FTS5 syntax, an empty query, the
index kept in step with the items table, 100,000 items."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from checkpoint.answer import ItemDraft
from checkpoint.model import ItemKind, ItemState
from checkpoint.store import Store
from checkpoint.store.search import WINDOW, match_expression, query_terms
from tests.support import item_corpus


def _draft(statement: str, turn: str, rationale: str | None = None, kind: ItemKind = ItemKind.DECISION,
           files: list[str] | None = None) -> ItemDraft:
    return ItemDraft(kind=kind, statement=statement, rationale=rationale, turn_ids=[turn], files=files or [])


@pytest.fixture
def store(tmp_path: Path) -> Store:
    store = Store(tmp_path / "db")
    [turn] = item_corpus.session(store, "s1", "/work/app")
    item_corpus.commit(store, "s1", [
        _draft("Keep the cache warm between runs", turn, rationale="because postgres is slow to start"),
        _draft("Use postgres for the event log", turn, rationale="it has transactions"),
        _draft("Retries must back off exponentially", turn, kind=ItemKind.CONSTRAINT, files=["src/retry.py"]),
        _draft("Le café du coin ferme à midi", turn),
        _draft("数据库 迁移 使用 alembic", turn),
        _draft('Quote "NEAR" and OR words: col:value -minus * star', turn),
    ])
    return store


def _statements(store: Store, text: str, **kwargs: object) -> list[str]:
    return [item.statement for item, _ in store.search(text, **kwargs).hits]  # type: ignore[arg-type]


def test_a_statement_match_ranks_above_a_rationale_match(store: Store) -> None:
    assert _statements(store, "postgres") == ["Use postgres for the event log", "Keep the cache warm between runs"]
    scores = [score for _, score in store.search("postgres").hits]
    assert scores == sorted(scores)  # bm25: lower is better, best first


def test_files_are_searched_and_kind_filters(store: Store) -> None:
    assert _statements(store, "retry.py") == ["Retries must back off exponentially"]
    assert _statements(store, "retry", kind="decision") == []
    assert _statements(store, "retry", kind=ItemKind.CONSTRAINT) == ["Retries must back off exponentially"]


@pytest.mark.parametrize("text", [
    '"', '""', '"postgres', "postgres*", "*", "NEAR", "NEAR(postgres log)", "postgres NEAR log", "-postgres",
    "postgres -log", ":", "statement:postgres", "rationale : postgres", "postgres AND", "OR", "NOT postgres",
    "(postgres", "postgres)", "^postgres", "{statement}: postgres", "'postgres'", "post+gres", "a_b__", "\\",
    "\x00postgres", "postgres\u202e", "🙂", "日本", "ß", "x" * 10_000, "word " * 500,
])
def test_text_that_looks_like_fts5_syntax_is_searched_as_words_never_an_sql_error(store: Store, text: str) -> None:
    result = store.search(text)
    assert all(t and "\"" not in t for t in result.terms)
    assert result.terms == tuple(query_terms(text))


def test_operators_and_punctuation_in_a_query_are_plain_words(store: Store) -> None:
    assert _statements(store, '"NEAR"') == ['Quote "NEAR" and OR words: col:value -minus * star']
    assert _statements(store, "col:value") == ['Quote "NEAR" and OR words: col:value -minus * star']
    assert _statements(store, "-minus") == ['Quote "NEAR" and OR words: col:value -minus * star']
    # a column filter in the query is two words, not a filter: no item has "statement" in it
    assert store.search("statement:postgres").matched == "any"


def test_non_ascii_text_is_found_accents_and_case_aside(store: Store) -> None:
    assert _statements(store, "CAFE") == ["Le café du coin ferme à midi"]
    assert _statements(store, "Café") == ["Le café du coin ferme à midi"]
    assert _statements(store, "数据库") == ["数据库 迁移 使用 alembic"]


def test_an_empty_query_finds_nothing_and_says_it_had_no_words(store: Store) -> None:
    for text in ("", "   ", "***", '""', "-:", "🙂"):
        result = store.search(text)
        assert result.terms == () and result.hits == ()
        assert result.as_json() == {"terms": [], "matched": "all", "items": []}


def test_every_word_must_match_else_any_and_the_result_says_which(store: Store) -> None:
    assert _statements(store, "postgres event") == ["Use postgres for the event log"]
    both = store.search("postgres exponentially")
    assert both.matched == "any" and len(both.hits) == 3


def test_the_last_word_matches_as_typed_so_far(store: Store) -> None:
    assert _statements(store, "exponent") == ["Retries must back off exponentially"]
    assert sorted(_statements(store, "ca")) == ["Keep the cache warm between runs", "Le café du coin ferme à midi"]


def test_the_index_follows_the_items_table(store: Store, tmp_path: Path) -> None:
    [item] = [i for i, _ in store.search("exponentially").hits]
    with store.transaction() as c:  # a rewrite of the statement (a merge updates rationale and files)
        c.execute("UPDATE items SET statement = 'Retries use jitter' WHERE id = ?", (item.id,))
    assert _statements(store, "exponentially") == []
    assert _statements(store, "jitter") == ["Retries use jitter"]
    store.set_item_state(item.id, ItemState.DISMISSED)
    assert _statements(store, "jitter") == []
    assert _statements(store, "jitter", include_dismissed=True) == ["Retries use jitter"]
    with store.transaction() as c:
        c.execute("DELETE FROM items WHERE id = ?", (item.id,))
    assert store.conn.execute("SELECT count(*) FROM item_search_rows WHERE item_id = ?", (item.id,)).fetchone() == (0,)
    assert _statements(store, "jitter", include_dismissed=True) == []
    # VACUUM may renumber a table's rowids: the index is keyed by its own rows, not by items.rowid
    store.compact()
    assert _statements(store, "postgres") == ["Use postgres for the event log", "Keep the cache warm between runs"]


def test_workspace_keeps_to_sessions_run_in_that_folder_or_below(store: Store) -> None:
    [turn] = item_corpus.session(store, "s2", "/work/app/sub")
    [other] = item_corpus.session(store, "s3", "/work/application")
    item_corpus.commit(store, "s2", [_draft("Postgres in the sub folder too", turn)])
    item_corpus.commit(store, "s3", [_draft("Postgres in a folder whose name starts the same", other)])
    found = _statements(store, "postgres", workspaces=["/work/app"])
    assert "Postgres in the sub folder too" in found and len(found) == 3
    assert _statements(store, "postgres", workspaces=["/work/application/"]) == [
        "Postgres in a folder whose name starts the same"]
    assert len(_statements(store, "postgres", workspaces=["/work/app/sub", "/work/application"])) == 2
    assert _statements(store, "postgres", workspaces=[]) == []


def test_the_match_expression_quotes_every_word() -> None:
    assert match_expression([]) is None
    assert match_expression(["a", 'b"c']) == '"a" "b""c"'
    assert match_expression(["a", "b"], any_term=True, prefix_last=True) == '"a" OR "b"*'
    assert query_terms("Café café CAFÉ x_y") == ["Café", "x", "y"]


def test_search_over_100000_items_is_quick_and_ranks_past_the_window(tmp_path: Path) -> None:
    store = item_corpus.build(tmp_path / "big.db", 100_000, sessions=4)
    assert store.conn.execute("SELECT count(*) FROM item_search").fetchone() == (100_000,)
    words = item_corpus.vocabulary()
    common, rare = words[0], words[3000]
    result, steps = item_corpus.sqlite_steps(store.conn, lambda: store.search(common, limit=20))
    assert len(result.hits) == 20
    assert store.conn.execute(  # the word is in far more items than the window scores
        "SELECT count(*) FROM item_search WHERE item_search MATCH ?", (f'"{common}"',)).fetchone()[0] > 10 * WINDOW
    assert all(common in item.statement or common in (item.rationale or "") for item, _ in result.hits)
    # Quick as work, not as time (scripts/bench_search.py measures the p95): a tenth of the steps of one
    # pass over the items, which is what a search that scored every match would at least take.
    _, one_pass = item_corpus.sqlite_steps(store.conn, lambda: store.conn.execute(
        "SELECT count(*) FROM items WHERE statement LIKE ?", (f"%{common}%",)).fetchone())
    assert steps * 10 < one_pass, (steps, one_pass)
    for item, _ in store.search(rare, limit=50).hits:
        assert rare in item.statement or rare in (item.rationale or "")
    # a filter that leaves few of the newest matches widens the window until it finds enough
    hits = store.search(common, limit=30, kind="question").hits
    assert len(hits) == 30 and {item.kind for item, _ in hits} == {ItemKind.QUESTION}


def test_the_search_command_prints_json_and_says_when_the_query_has_no_words(
    store: Store, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from checkpoint import cli

    monkeypatch.setenv("CHECKPOINT_SOURCES", str(store.path.parent / "none"))
    db = ["--db", str(store.path)]
    assert cli.main(["search", "postgres", "--json", *db]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [i["statement"] for i in out["items"]] == ["Use postgres for the event log",
                                                      "Keep the cache warm between runs"]
    assert cli.main(["search", "postgres", "--limit", "1", "--workspace", "/elsewhere", *db]) == 0
    printed = capsys.readouterr().out
    assert "No item matches 'postgres'.\nSearched /elsewhere and the folders below it.\n" in printed
    assert cli.main(["search", "back", "off", "--kind", "constraint", *db]) == 0
    printed = capsys.readouterr().out
    assert "[constraint] Retries must back off exponentially" in printed and "1 item found." in printed
    # every workspace, unlike the MCP tool's default (the agent's folder): said (issue 27)
    assert printed.endswith("Searched every workspace (--workspace DIR: one folder and those below it).\n")
    assert cli.main(["search", '"*"', *db]) == 2
    assert "Nothing to search for" in capsys.readouterr().err
    assert cli.main(["search", "postgres", "exponentially", *db]) == 0
    assert "No item has all of 'postgres exponentially'; items with any of them:" in capsys.readouterr().out
