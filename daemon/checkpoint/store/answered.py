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


def _first_seq(c: sqlite3.Connection, session_id: str, turn_ids: Sequence[str]) -> int | None:
    if not turn_ids:
        return None
    row = c.execute(f"SELECT min(seq) FROM turns WHERE session_id = ? AND id IN ({','.join('?' * len(turn_ids))})",
                    [session_id, *turn_ids]).fetchone()
    return int(row[0]) if row and row[0] is not None else None


def mark_answered(c: sqlite3.Connection, session_id: str, item_ids: Sequence[str],
                  named: dict[str, str] | None = None) -> int:
    """Mark the open questions these items answer (`named`: answering item id -> the question id a
    model gave), and those of them that are questions answered by items already stored. Returns how
    many questions were marked."""
    if not item_ids:
        return 0
    marks = 0
    rows = c.execute(
        f"SELECT id, kind, statement, turn_ids, workspace FROM items WHERE id IN ({','.join('?' * len(item_ids))})",
        list(item_ids)).fetchall()
    for item_id, kind, statement, turn_ids_json, workspace in rows:
        turn_ids = orjson.loads(turn_ids_json)
        seq = _first_seq(c, session_id, turn_ids)
        if kind in ("decision", "constraint"):
            question_id = (named or {}).get(item_id)
            if question_id:
                scope, key = ("workspace = ?", workspace) if workspace else ("session_id = ?", session_id)
                marks += c.execute(
                    f"UPDATE items SET answered_by = ?, answered_turn = ? WHERE id = ? AND kind = 'question'"
                    f" AND answered_by IS NULL AND {scope}", (item_id, turn_ids[0] if turn_ids else None,
                                                            question_id, key)).rowcount
            for q_id, q_statement, q_turns in c.execute(
                "SELECT id, statement, turn_ids FROM items WHERE session_id = ? AND kind = 'question'"
                " AND answered_by IS NULL AND state != 'dismissed'", (session_id,)).fetchall():
                asked = _first_seq(c, session_id, orjson.loads(q_turns))
                if seq is not None and asked is not None and asked < seq and takes_up(q_statement, statement):
                    marks += _mark(c, q_id, item_id, turn_ids)
        elif kind == "question":
            for a_id, a_statement, a_turns in c.execute(
                "SELECT id, statement, turn_ids FROM items WHERE session_id = ? AND kind IN ('decision', 'constraint')"
                " AND state != 'dismissed' AND id != ?", (session_id, item_id)).fetchall():
                said = _first_seq(c, session_id, orjson.loads(a_turns))
                if seq is not None and said is not None and seq < said and takes_up(statement, a_statement):
                    marks += _mark(c, item_id, a_id, orjson.loads(a_turns))
                    break
    return marks


def _mark(c: sqlite3.Connection, question_id: str, answer_id: str, answer_turns: list[str]) -> int:
    return c.execute("UPDATE items SET answered_by = ?, answered_turn = ? WHERE id = ? AND answered_by IS NULL",
                     (answer_id, answer_turns[0] if answer_turns else None, question_id)).rowcount
