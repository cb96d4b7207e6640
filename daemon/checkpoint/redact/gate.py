"""The anchor gate: which detectors can match a text. One google-re2 set of every detector's,
trigger's and keyword's anchors (`anchors.py`), and of the triggers without anchors that can be
prefiltered (`bare_prefilter`), is matched once per text (one pass, ~3 ms per million characters);
a detector runs only on the texts holding one of its anchors (and of its trigger's, and
of a keyword its names need). The plan for each combination of anchors found is made once."""

from __future__ import annotations

import importlib
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from checkpoint.redact.anchors import Anchors, RegexKey, anchors_of
from checkpoint.redact.detectors import ASSIGNMENT_CANDIDATES, Detector

# Characters Python's IGNORECASE takes for an ASCII letter beyond its two cases (re._casefix, and İ
# whose simple lowercase is i): a gate that ignores case must find them too (checked in the tests).
_FOLDS = {"i": "\u0130\u0131", "k": "\u212a", "s": "\u017f"}
# The view a detector sees is unescaped (`engine._unescaped`): a character of it may stand for this in the text.
_ESCAPED_AS = {"\n": "\\n", "\r": "\\r", "\t": "\\t", '"': '\\"', "/": "\\/", "\\": "\\\\"}
_sre: Any = importlib.import_module("re._parser")


# What an RE2 class must hold to find every run Python's [\w-] finds in a str: ASCII word characters
# and `-`, and every non-ASCII character (more than \w takes: a prefilter may say yes for nothing).
_WORD_OR_ANY_WIDE = r"[\w\-\x{80}-\x{10FFFF}]"


def bare_prefilter(trigger: str) -> str | None:
    """For a trigger without anchors (telegram's `:[\\w-]{35}`, discord's `\\.[\\w-]{6}\\.[\\w-]{27}`,
    which would otherwise run on every text): an RE2 pattern searched on the text as stored (in the
    gate's one set) that finds every text where the trigger hits the lowered, unescaped view. That
    holds for a regex of ASCII punctuation no JSON escape stands for, and repeats of word characters
    and `-`: no escape yields a word character or such punctuation (so a run of them in the view is
    the same run in the text), and str.lower keeps a character a word character or not (checked for
    every code point in the tests). Each repeat is searched at its least count (a longer run holds
    one) with a class wider than Python's. None: any other trigger (it runs on every text, as before)."""
    def plain(op: Any, av: Any) -> bool:
        if op is _sre.LITERAL:
            c = chr(av)
            return c.isascii() and not c.isalnum() and c not in _ESCAPED_AS and c not in "\x00\n\r"
        return False

    def word(op: Any, av: Any) -> bool:
        return (op is _sre.CATEGORY and av is _sre.CATEGORY_WORD) or (op is _sre.LITERAL and chr(av) in "-_")

    parsed = _sre.parse(trigger)
    if parsed.state.flags & ~(re.UNICODE) or not len(parsed):
        return None
    out = []
    for op, av in parsed:
        if plain(op, av):
            out.append(re2_char(chr(av), False))
        elif op is _sre.MAX_REPEAT and av[0] >= 1 and len(av[2]) == 1 and av[2][0][0] is _sre.IN \
                and all(word(o, a) for o, a in av[2][0][1]):
            out.append(f"{_WORD_OR_ANY_WIDE}{{{av[0]}}}")
        else:
            return None
    return "".join(out)


def _re2_pattern(anchors: Anchors) -> str:
    """The anchors as an RE2 alternation over the text as stored: a letter compared ignoring case as a
    class of its Python equivalents, a character of the unescaped view also as its JSON escape."""
    return "|".join("".join(re2_char(c, anchors.fold) for c in s) for s in sorted(anchors.strings))


@lru_cache(maxsize=1024)  # the gate's patterns are built of a few dozen characters, thousands of times at start
def re2_char(char: str, fold: bool) -> str:
    """One character of an anchor as RE2 must look for it in the text as stored."""

    def code(c: str) -> str:
        return c if c.isascii() and c.isalnum() else f"\\x{{{ord(c):x}}}"

    if fold and char.isascii() and char.isalpha():
        return "[" + "".join(map(code, char.lower() + char.upper() + _FOLDS.get(char.lower(), ""))) + "]"
    if char in _ESCAPED_AS:
        return f"(?:{code(char)}|{''.join(map(code, _ESCAPED_AS[char]))})"
    return code(char)


@dataclass(frozen=True, eq=False)  # one per set of active detectors: compared and hashed by identity
class Plan:
    """The detectors to run on a text, and the keywords whose assignments to look for."""

    whole: tuple[Detector, ...]
    triggered: tuple[Detector, ...]
    named: tuple[Detector, ...]
    keywords: tuple[str, ...]


class Gate:
    """Which detectors can match a text: one RE2 set of every detector's, trigger's and keyword's
    anchors, matched once per text; the plan for each combination of anchors found is made once."""

    def __init__(self, whole: list[Detector], triggered: list[Detector], named: list[Detector]) -> None:
        import re2  # here: a process that redacts nothing does not load it

        # What must be found for a detector to run: its anchors, its trigger's; for a keyword: its anchors.
        own = {id(d): (d.source, d.flags, d.lower) for d in (*whole, *triggered, *named)}
        trigger = {id(d): (d.trigger, 0, True) for d in triggered if d.trigger is not None}
        keyword = {kw: (c.pattern, c.flags, True) for kw, c in ASSIGNMENT_CANDIDATES.items()}
        anchors = anchors_of([*own.values(), *trigger.values(), *keyword.values()])
        # What the set looks for, by its index: each anchors' RE2 pattern, and each prefiltered trigger's
        # without anchors (`bare_prefilter`).
        self._needs: dict[str, int] = {}

        def need(*keys: RegexKey) -> tuple[int, ...]:
            found = [_re2_pattern(a) for a in map(anchors.__getitem__, keys) if a is not None]
            return tuple(self._needs.setdefault(p, len(self._needs)) for p in found)

        def bare(d: Detector) -> tuple[int, ...]:
            if d.trigger is None or anchors[trigger[id(d)]] is not None:
                return ()
            prefilter = bare_prefilter(d.trigger)
            return () if prefilter is None else (self._needs.setdefault(prefilter, len(self._needs)),)

        self._whole = [(d, need(own[id(d)])) for d in whole]
        self._triggered = [(d, need(own[id(d)], trigger[id(d)]) + bare(d)) for d in triggered]
        self._named = [(d, need(own[id(d)])) for d in named]
        self._keywords = [(kw, need(key)) for kw, key in keyword.items()]
        self._set: Any = None
        if self._needs:
            options = re2.Options()
            options.max_mem = 64 << 20  # a set's DFA that ran out would miss matches silently
            self._set = re2.Set.SearchSet(options)
            for pattern in self._needs:  # in index order
                self._set.Add(pattern)
            self._set.Compile()
        self._plans: dict[frozenset[int], Plan | None] = {}  # anchors found -> plan
        self._unique: dict[tuple[object, ...], Plan] = {}  # active detectors and keywords -> plan

    def plan(self, text: str) -> Plan | None:
        """The plan for this text; None when no detector can match it."""
        if self._set is None:
            found: frozenset[int] = frozenset()
        else:
            found = frozenset(self._set.Match(text.encode("utf-8", "surrogatepass")) or ())
        try:
            return self._plans[found]
        except KeyError:
            plan = self._plans[found] = self._make(found)
            return plan

    def _make(self, found: frozenset[int]) -> Plan | None:
        def active(pairs: list[tuple[Any, tuple[int, ...]]]) -> list[Any]:
            return [x for x, need in pairs if found.issuperset(need)]

        # Every keyword found is looked for (not only those the named detectors found need): the
        # assignments found, and their order, are then exactly those of an ungated run.
        keywords = tuple(active(self._keywords))
        named = [d for d in active(self._named) if d.named.intersection(keywords)]
        whole, triggered = active(self._whole), active(self._triggered)
        if not (whole or triggered or named):
            return None
        key = (*(id(d) for d in (*whole, *triggered, *named)), *(keywords if named else ()))
        if key not in self._unique:
            self._unique[key] = Plan(tuple(whole), tuple(triggered), tuple(named), keywords if named else ())
        return self._unique[key]
