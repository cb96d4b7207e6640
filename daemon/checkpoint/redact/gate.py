"""The anchor gate: which detectors can match a text. One google-re2 set of every detector's and
trigger's anchors (`anchors.py`), and of where each keyword may be assigned something
(`view_prefilter`), is matched once per text (one pass, ~3 ms per million characters); a detector
runs only on the texts holding one of its anchors (and of its trigger's, and of a keyword its names
need). The plan for each combination of anchors found is made once."""

from __future__ import annotations

import importlib
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from checkpoint.redact.detectors import ASSIGNMENT_CANDIDATES, Detector
from checkpoint.redact.literals import Anchors, RegexKey, anchors_of

# Characters Python's IGNORECASE takes for an ASCII letter beyond its two cases (re._casefix, and İ
# whose simple lowercase is i): a gate that ignores case must find them too (checked in the tests).
_FOLDS = {"i": "\u0130\u0131", "k": "\u212a", "s": "\u017f"}
# The view a detector sees is unescaped (`engine._unescaped`): a character of it may stand for this in the text.
_ESCAPED_AS = {"\n": "\\n", "\r": "\\r", "\t": "\\t", '"': '\\"', "/": "\\/", "\\": "\\\\"}
_sre: Any = importlib.import_module("re._parser")


def bare_prefilter(trigger: str) -> re.Pattern[str] | None:
    """For a trigger without anchors (telegram's `:[\\w-]{35}`, discord's `\\.[\\w-]{6}\\.[\\w-]{27}`,
    which would otherwise run on every text): the trigger itself, searched on the text as stored,
    when any hit of it on the lowered, unescaped view is also a hit on the stored text. That holds for
    a regex of ASCII punctuation no JSON escape stands for, and repeats of word characters and `-`:
    no escape yields a word character or such punctuation (so a run of them in the view is the same
    run in the text), and str.lower keeps a character a word character or not (checked for every
    code point in the tests). None: any other trigger (it runs on every text, as before)."""
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
    for op, av in parsed:
        if plain(op, av):
            continue
        if op is _sre.MAX_REPEAT and av[0] >= 1 and len(av[2]) == 1 and av[2][0][0] is _sre.IN \
                and all(word(o, a) for o, a in av[2][0][1]):
            continue
        return None
    return re.compile(trigger)


def _re2_pattern(anchors: Anchors) -> str:
    """The anchors as an RE2 alternation over the text as stored: a letter compared ignoring case as a
    class of its Python equivalents, a character of the unescaped view also as its JSON escape."""
    return "|".join("".join(re2_char(c, anchors.fold) for c in s) for s in sorted(anchors.strings))


def _code(c: str) -> str:
    return c if c.isascii() and c.isalnum() else f"\\x{{{ord(c):x}}}"


@lru_cache(maxsize=1024)  # the gate's patterns are built of a few dozen characters, thousands of times at start
def re2_char(char: str, fold: bool) -> str:
    """One character of an anchor as RE2 must look for it in the text as stored."""
    if fold and char.isascii() and char.isalpha():
        return "[" + "".join(map(_code, char.lower() + char.upper() + _FOLDS.get(char.lower(), ""))) + "]"
    if char in _ESCAPED_AS:
        return f"(?:{_code(char)}|{''.join(map(_code, _ESCAPED_AS[char]))})"
    return _code(char)


_ANY = r"(?s:\x{5c}?.)"  # any character of the view: one of the text, or an escape (two)
_FEW = 3  # a repeat up to this many is kept; a longer one is left unbounded (a counter costs RE2 a state per count)


def view_prefilter(pattern: str, flags: int) -> str | None:
    """A regex run on the lowered, unescaped view (a keyword's assignment candidate) as an RE2 pattern
    searched on the text as stored, that finds every text the regex matches (and some it does not):
    each letter as its cases and folds, each character also as its JSON escape, a negated class or a
    category as any character, zero-width assertions left out, long repeats unbounded (needing at
    most _FEW); from the first part it cannot render (a back-reference, a flag group), only what comes
    before it is looked for. None: nothing of it can be rendered."""
    found, _ = _view_sequence(_sre.parse(pattern, flags))
    return found or None


def _view_sequence(items: Any) -> tuple[str, bool]:
    """The items rendered in turn, and whether all were (False: what follows the last one is not looked for)."""
    out = []
    for op, av in items:
        if op in (_sre.AT, _sre.ASSERT, _sre.ASSERT_NOT):
            continue
        part, whole = _view_item(op, av)
        out.append(part)
        if not whole:
            break
    else:
        return "".join(out), True
    return "".join(out), False


def _view_item(op: Any, av: Any) -> tuple[str, bool]:
    if op is _sre.LITERAL:
        # A non-ASCII character of the view may stand for another case of it: any character.
        return (re2_char(chr(av), True), True) if chr(av).isascii() else (_ANY, True)
    if op is _sre.ANY:
        return _ANY, True
    if op is _sre.IN:
        return _view_class(tuple(av)), True
    if op is _sre.SUBPATTERN and not av[1] and not av[2]:
        inner, whole = _view_sequence(av[3])
        return (f"(?:{inner})" if inner else ""), whole
    if op is _sre.BRANCH:
        alternatives = [_view_sequence(b) for b in av[1]]
        if any(not inner for inner, _ in alternatives):
            return "", False  # an alternative of which nothing is looked for: nothing is
        return "(?:" + "|".join(inner for inner, _ in alternatives) + ")", all(whole for _, whole in alternatives)
    if op in (_sre.MAX_REPEAT, _sre.MIN_REPEAT, _sre.POSSESSIVE_REPEAT):
        low, high, body = av
        inner, whole = _view_sequence(body)
        if not inner or not whole:
            return (inner if low >= 1 else ""), False
        counts = f"{low},{high}" if high <= _FEW else f"{min(low, _FEW)},"  # fewer required: still a superset
        return f"(?:{inner}){{{counts}}}", True
    return "", False


@lru_cache(maxsize=64)  # the keywords' candidates share their classes
def _view_class(items: tuple[tuple[Any, Any], ...]) -> str:
    chars: set[str] = set()
    for kind, value in items:
        if kind is _sre.LITERAL:
            chars.add(chr(value))
        elif kind is _sre.RANGE and value[1] - value[0] < 128:
            chars.update(map(chr, range(value[0], value[1] + 1)))
        else:
            return _ANY  # negated, a category, a wide range
    if not all(c.isascii() for c in chars):
        return _ANY
    stored = {s for c in chars for s in (c.lower() + c.upper() + _FOLDS.get(c.lower(), "") if c.isalpha() else c)}
    escapes = sorted("".join(map(_code, _ESCAPED_AS[c])) for c in chars if c in _ESCAPED_AS)
    return "(?:" + "|".join(["[" + "".join(map(_code, sorted(stored))) + "]", *escapes]) + ")"


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
        keyword = {kw: (source, 0, True) for kw, source in ASSIGNMENT_CANDIDATES.items()}
        anchors = anchors_of([*own.values(), *trigger.values(), *keyword.values()])
        self._needs: dict[str, int] = {}  # what the set looks for (RE2 patterns) -> its index in the set
        # Triggers without anchors searched themselves (`bare_prefilter`): found as index -1, -2, ... (in
        # the set, their runs of 35 and 27 would cost its DFA ~7 ms more to build than they take in Python)
        self._bare: dict[str, tuple[int, re.Pattern[str]]] = {}

        rendered: dict[Anchors, str] = {}

        def need(*keys: RegexKey) -> tuple[int, ...]:
            found = [a for a in map(anchors.__getitem__, keys) if a is not None]
            patterns = [rendered.get(a) or rendered.setdefault(a, _re2_pattern(a)) for a in found]
            return tuple(self._needs.setdefault(p, len(self._needs)) for p in patterns)

        def bare(d: Detector) -> tuple[int, ...]:
            if d.trigger is None or anchors[trigger[id(d)]] is not None:
                return ()
            if d.trigger not in self._bare:
                prefilter = bare_prefilter(d.trigger)
                if prefilter is None:
                    return ()
                self._bare[d.trigger] = (-1 - len(self._bare), prefilter)
            return (self._bare[d.trigger][0],)

        self._whole = [(d, need(own[id(d)])) for d in whole]
        self._triggered = [(d, need(own[id(d)], trigger[id(d)]) + bare(d)) for d in triggered]
        self._named = [(d, need(own[id(d)])) for d in named]
        # A keyword is found where its assignment candidate may be (`view_prefilter`), not wherever the
        # word is: most texts that hold `key` assign nothing to it.
        views = {kw: view_prefilter(source, 0) for kw, source in ASSIGNMENT_CANDIDATES.items()}
        self._keywords = [(kw, need(key) if view is None else (self._needs.setdefault(view, len(self._needs)),))
                          for (kw, key), view in zip(keyword.items(), views.values(), strict=True)]
        # What RE2 cannot look for in a text that is not UTF-8 (a lone surrogate): counted found in one.
        self._loose = frozenset(self._needs[v] for v in views.values() if v is not None)
        self._set: Any = None
        if self._needs:
            options = re2.Options()
            options.max_mem = 64 << 20  # a set's DFA that ran out would miss matches silently
            self._set = re2.Set.SearchSet(options)
            for pattern in self._needs:  # in index order
                self._set.Add(pattern)
            self._set.Compile()
        self._bare_list = list(self._bare.values())
        self._plans: dict[frozenset[int], Plan | None] = {}  # anchors found -> plan
        self._unique: dict[tuple[object, ...], Plan] = {}  # active detectors and keywords -> plan

    def plan(self, text: str) -> Plan | None:
        """The plan for this text; None when no detector can match it."""
        found: list[int] = []
        if self._set is not None:
            try:
                found = self._set.Match(text.encode()) or found
            except UnicodeEncodeError:
                found = [*self._loose, *(self._set.Match(text.encode("utf-8", "surrogatepass")) or ())]
        for i, prefilter in self._bare_list:
            if prefilter.search(text) is not None:
                found = [*found, i]
        key = frozenset(found)
        try:
            return self._plans[key]
        except KeyError:
            plan = self._plans[key] = self._make(key)
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
