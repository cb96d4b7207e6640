"""Open questions answered later in their session: a question is marked answered (`items.answered_by`,
the answering item, and `answered_turn`, the turn that says the answer: its citation) when

- a model says so: a decision or constraint names the question in `answers` (a known item of the
  workspace, as the prompt lists them), or
- a decision or constraint of the same session, said after the question (a later turn), takes up
  its subject: it holds the question's own words (at least two, and a third of them), or
- the user accepts such a decision (Store.set_item_state).

What is answered is no open question: `checkpoint items` says what answered it and where. Run inside
the transaction that stores an answer's items, so a question and its answer are never seen apart.
"""

from __future__ import annotations

import itertools
import re
import sqlite3
import unicodedata
from collections.abc import Sequence

import orjson

_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af"
# A run of CJK characters (no spaces between its words) apart from a run of other letters and digits.
_WORD = re.compile(f"[{_CJK}]+|[^\\W_{_CJK}]+")
_COMMON = frozenset((
    "should", "would", "could", "which", "what", "when", "where", "whether", "there", "their", "about", "that",
    "this", "with", "from", "have", "will", "into", "them", "then", "than", "does", "open", "question", "still",
    "unclear", "decide", "decided", "decision", "need", "want", "using", "make", "keep",
))


def subject_words(text: str) -> set[str]:
    """The words that say what a sentence is about: four letters or more, common ones aside (CJK
    text, which has no spaces, by its pairs of characters)."""
    words: set[str] = set()
    for word in _WORD.findall(unicodedata.normalize("NFKC", text).casefold()):
        if re.match(f"[{_CJK}]", word):
            words.update(word[i:i + 2] for i in range(len(word) - 1))
        elif len(word) >= 4 and word not in _COMMON and not word.isdigit():
            words.add(word)
    return words


def takes_up(question: str, answer: str) -> bool:
    """The answer is about what the question asks: it holds at least two of the question's own words
    and at least a third of them (a question names its alternatives; the answer keeps one)."""
    asked = subject_words(question)
    shared = asked & subject_words(answer)
    return len(shared) >= 2 and 3 * len(shared) >= len(asked)


# The session's open questions (and answers) an answer's items are weighed against: its latest. A
# question is answered in the turns that follow it; and a commit stays linear in its items.
CANDIDATES = 50


def _rows(c: sqlite3.Connection, sql: str, args: Sequence[object]) -> list[tuple[str, str, str, list[str]]]:
    """(id, kind, statement, turn_ids) of the items the query selects."""
    return [(i, k, st, orjson.loads(t)) for i, k, st, t in c.execute(sql, list(args))]


def _first_seqs(c: sqlite3.Connection, rows: Sequence[tuple[str, str, str, list[str]]]) -> dict[str, int]:
    """item id -> the seq of the earliest turn it cites (items citing no stored turn are left out)."""
    cited = sorted({t for *_, turns in rows for t in turns})
    seq = dict(c.execute("SELECT id, seq FROM turns WHERE id IN (SELECT value FROM json_each(?))",
                         (orjson.dumps(cited).decode(),)).fetchall())
    firsts = {}
    for item_id, _, _, turns in rows:
        known = [seq[t] for t in turns if t in seq]
        if known:
            firsts[item_id] = min(known)
    return firsts


def mark_answered(c: sqlite3.Connection, session_id: str, item_ids: Sequence[str],
                  named: dict[str, str] | None = None) -> int:
    """Mark the open questions these items answer (`named`: answering item id -> the question id a
    model gave), and those of them that are questions answered by items already stored. Returns how
    many questions were marked."""
    if not item_ids:
        return 0
    marks = 0
    mine = _rows(c, "SELECT id, kind, statement, turn_ids FROM items WHERE id IN (SELECT value FROM json_each(?))",
                 [orjson.dumps(list(item_ids)).decode()])
    for item_id, kind, _, turns in mine:
        question_id = (named or {}).get(item_id)
        if question_id and kind in ("decision", "constraint"):
            marks += c.execute(
                "UPDATE items SET answered_by = ?, answered_turn = ? WHERE id = ? AND kind = 'question'"
                " AND answered_by IS NULL AND coalesce(workspace, session_id) = (SELECT coalesce(workspace,"
                " session_id) FROM items WHERE id = ?)",
                (item_id, turns[0] if turns else None, question_id, item_id)).rowcount
    questions = _rows(c, "SELECT id, kind, statement, turn_ids FROM items WHERE session_id = ? AND kind = 'question'"
                      " AND answered_by IS NULL AND state != 'dismissed' ORDER BY created_at DESC, id LIMIT ?",
                      [session_id, CANDIDATES])
    answers = _rows(c, "SELECT id, kind, statement, turn_ids FROM items WHERE session_id = ? AND kind IN"
                    " ('decision', 'constraint') AND state != 'dismissed' ORDER BY created_at DESC, id LIMIT ?",
                    [session_id, CANDIDATES])
    # Each of these items as a question against the latest answers, and as an answer against the
    # latest open questions: pairs in turn order only, a question before its answer.
    mine_questions = [r for r in mine if r[1] == "question"]
    mine_answers = [r for r in mine if r[1] != "question"]
    if not (questions and mine_answers) and not (mine_questions and answers):
        return marks
    seqs = _first_seqs(c, [*{r[0]: r for r in (*questions, *answers, *mine)}.values()])
    pairs = itertools.chain(((q, a) for q in questions for a in mine_answers),
                            ((q, a) for q in mine_questions for a in answers))
    words: dict[str, set[str]] = {}
    answered: set[str] = set()
    for (q_id, _, q_statement, _), (a_id, _, a_statement, a_turns) in pairs:
        if q_id in answered or q_id not in seqs or a_id not in seqs or seqs[q_id] >= seqs[a_id]:
            continue
        asked = words.setdefault(q_id, subject_words(q_statement))
        shared = asked & words.setdefault(a_id, subject_words(a_statement))
        if len(shared) >= 2 and 3 * len(shared) >= len(asked):
            marks += c.execute("UPDATE items SET answered_by = ?, answered_turn = ? WHERE id = ? AND answered_by IS"
                               " NULL", (a_id, a_turns[0] if a_turns else None, q_id)).rowcount
            answered.add(q_id)
    return marks
