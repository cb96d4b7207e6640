"""Open questions answered later in their session (checkpoint.store.answered), in a real SQLite store:
a later decision that takes up the question marks it answered with the answer's citation (its turn);
one said before the question, about something else, or in another session does not; a model's
`answers` names the question; accepting a decision answers what it takes up; chunks committed out of
order still pair a question with its later answer."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from checkpoint.answer import Extraction, ItemDraft
from checkpoint.model import FileCursor, ItemKind, ItemState, Role, ScannedTurn, SessionInfo, TurnDraft
from checkpoint.store import Store
from checkpoint.store.answered import takes_up
from tests.support import item_corpus

D, C, Q = ItemKind.DECISION, ItemKind.CONSTRAINT, ItemKind.QUESTION


def session(store: Store, session_id: str, texts: list[str], chunk_tokens: int = 10_000_000,
            tokens: int = 10) -> list[str]:
    drafts = [TurnDraft(id=f"{session_id}-{n}", role=Role.USER if n % 2 == 0 else Role.ASSISTANT, text=text,
                        timestamp=f"2026-10-05T09:{n:02d}:00Z") for n, text in enumerate(texts)]
    turns = [ScannedTurn(d, i + 1, tokens, 5) for i, d in enumerate(drafts)]
    store.ingest(FileCursor(f"/t/{session_id}.jsonl"), "claude", session_id, False, {}, turns,
                 SessionInfo(id=session_id, agent="claude", cwd="/w"), Counter(), Counter(), [],
                 chunk_tokens=chunk_tokens)
    return [d.id for d in drafts]


def by_statement(store: Store) -> dict[str, object]:
    return {i.statement: i for i in store.items(include_dismissed=True)}


def test_the_subject_of_a_question_is_taken_up_by_its_answer() -> None:
    assert takes_up("Should we store sessions in Redis or Postgres?", "We'll store sessions in Postgres.")
    assert not takes_up("Should we store sessions in Redis or Postgres?", "We'll use pytest for the tests.")
    assert takes_up("缓存应该放在内存还是Redis？", "缓存放在内存里。")
    assert not takes_up("缓存应该放在内存还是Redis？", "日志用JSON格式。")


def test_a_later_decision_answers_the_question_with_its_turn_as_citation(tmp_path: Path) -> None:
    store = Store(tmp_path / "c.db")
    [q_turn, _, a_turn, other] = session(store, "s1", ["open?", "hm", "decided", "tests"])
    item_corpus.commit(store, "s1", [
        ItemDraft(kind=Q, statement="Open question: should we store sessions in Redis or Postgres?",
                  turn_ids=[q_turn]),
        ItemDraft(kind=D, statement="We'll store sessions in Postgres.", turn_ids=[a_turn]),
        ItemDraft(kind=D, statement="We'll use pytest for the tests.", turn_ids=[other]),
    ])
    items = {i.statement: i for i in store.items()}
    question = items["Open question: should we store sessions in Redis or Postgres?"]
    assert question.answered_by == items["We'll store sessions in Postgres."].id
    assert question.answered_turn == a_turn
    assert items["We'll use pytest for the tests."].answered_by is None


def test_a_decision_before_the_question_or_in_another_session_does_not_answer_it(tmp_path: Path) -> None:
    store = Store(tmp_path / "c.db")
    [early, q_turn] = session(store, "s1", ["early", "open?"])
    item_corpus.commit(store, "s1", [
        ItemDraft(kind=D, statement="We'll store sessions in Postgres.", turn_ids=[early]),
        ItemDraft(kind=Q, statement="Should we store sessions in Redis or Postgres?", turn_ids=[q_turn]),
    ])
    [later] = session(store, "s2", ["later"])
    item_corpus.commit(store, "s2", [ItemDraft(kind=D, statement="Sessions are stored in Postgres.",
                                               turn_ids=[later])])
    question = next(i for i in store.items() if i.kind is Q)
    assert question.answered_by is None


def test_out_of_order_chunks_a_models_answers_and_an_accepted_decision(tmp_path: Path) -> None:
    store = Store(tmp_path / "c.db")
    turns = session(store, "s1", ["q " * 40, "x " * 40, "a " * 40, "b " * 40], chunk_tokens=150, tokens=100)
    chunks = store.claim_chunks(10, "x")
    assert len(chunks) >= 2
    # The answer's chunk is committed first, the question's after: still paired.
    [first, *_, last] = sorted(chunks, key=lambda ch: ch.turns[0].seq)
    store.commit_extraction(Extraction(chunk_id=last.chunk_id, extractor="t", items=[
        ItemDraft(kind=D, statement="The cache stays in memory for the prototype.", turn_ids=[turns[-1]])]), "x")
    store.commit_extraction(Extraction(chunk_id=first.chunk_id, extractor="t", items=[
        ItemDraft(kind=Q, statement="TBD: does the cache stay in memory?", turn_ids=[turns[0]]),
        ItemDraft(kind=Q, statement="Which license do we ship under?", turn_ids=[turns[0]])]), "x")
    items = {i.statement: i for i in store.items()}
    assert items["TBD: does the cache stay in memory?"].answered_turn == turns[-1]
    license_q = items["Which license do we ship under?"]
    assert license_q.answered_by is None
    # A model's answer names the question it answers, whatever its words.
    [s2] = session(store, "s2", ["apache"])
    item_corpus.commit(store, "s2", [ItemDraft(kind=D, statement="Ship it as Apache-2.0.", turn_ids=[s2],
                                               answers=license_q.id)])
    assert next(i for i in store.items() if i.id == license_q.id).answered_turn == s2


def test_accepting_a_decision_answers_the_question_it_takes_up(tmp_path: Path) -> None:
    store = Store(tmp_path / "c.db")
    [q_turn, a_turn] = session(store, "s1", ["open?", "answer"])
    item_corpus.commit(store, "s1", [
        ItemDraft(kind=Q, statement="Should retries use exponential backoff?", turn_ids=[q_turn])])
    question = next(i for i in store.items() if i.kind is Q)
    # Stored while the question is already answered by nothing, then the decision is accepted.
    store.conn.execute("UPDATE items SET answered_by = NULL")
    [s2q] = session(store, "s2", ["x"])
    item_corpus.commit(store, "s2", [ItemDraft(kind=C, statement="Retries use exponential backoff, capped.",
                                               turn_ids=[s2q])])
    assert next(i for i in store.items() if i.id == question.id).answered_by is None  # another session
    decision = next(i for i in store.items() if i.kind is C)
    store.conn.execute("UPDATE items SET session_id = 's1', turn_ids = ? WHERE id = ?",
                       (f'["{a_turn}"]', decision.id))
    assert store.set_item_state(decision.id, ItemState.ACCEPTED)
    assert next(i for i in store.items() if i.id == question.id).answered_by == decision.id
