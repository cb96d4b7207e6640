r"""The anchors of a regex: literals at least one of which occurs in any text it can match, derived
from the regex itself (parsed by the stdlib's own parser, `re._parser`), and kept in a cache file.

Each regex pass over a text costs about the same whatever the text holds, and most texts hold none
of the literals most detectors need (AKIA, eyJ, ghp_, sk-, xox, ...): the gate (`gate.py`) runs a
detector only on the texts holding one of its anchors. A regex without a usable anchor (the telegram
trigger `:[\w-]{35}`) has none, and always runs.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import re
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from checkpoint.redact.cache import cache_dir, write_whole
from checkpoint.redact.detectors import SEPARATOR

_sre: Any = importlib.import_module("re._parser")  # the stdlib's regex parser (no stubs, hence Any)
_MAX_STRINGS = 64  # a finite set of strings (a branch, a small class, their products) is kept up to this many
_MAX_CLASS = 16  # a character class is expanded into its characters up to this many
MIN_ANCHOR = 2  # a single character occurs in nearly every text: no anchor

@dataclass(frozen=True)
class Anchors:
    """Literals at least one of which occurs in any text a regex matches."""

    strings: frozenset[str]
    fold: bool  # compared ignoring case: the regex ignores case, or runs on the lowered text (strings lowered)


_NOTHING = frozenset({""})


@dataclass(frozen=True)
class _Part:
    """What the derivation knows of a part of a regex."""

    exact: frozenset[str] | None  # each match of it is one of these strings (None: too many or unbounded)
    required: tuple[frozenset[str], ...] = ()  # each match of it holds one string of each of these
    starts: frozenset[str] = _NOTHING  # each match of it starts with one of these ...
    ends: frozenset[str] = _NOTHING  # ... and ends with one of these


def _exactly(strings: Iterable[str]) -> _Part:
    exact = frozenset(strings)
    return _Part(exact, (exact,), exact, exact)


_OPAQUE = _Part(None)


def derive_anchors(pattern: str, flags: int, lowered: bool = False) -> Anchors | None:
    """The most selective anchors of a regex (its longest required literals), or None when it has
    none of at least two characters: required literal runs of its sequence (zero-width assertions
    skipped), joined to the literals every match of the next part starts with; branches whose every
    alternative has anchors; small classes and repeats expanded."""
    parsed = _sre.parse(pattern, flags)
    fold = lowered or bool((flags | parsed.state.flags) & re.IGNORECASE) or _ignores_case_inside(parsed)
    best = _best(_sequence(parsed, fold).required)
    return None if best is None else Anchors(best, fold)


def _ignores_case_inside(node: Any) -> bool:
    """A `(?i:...)` anywhere in the parsed regex."""
    if isinstance(node, _sre.SubPattern):
        return any((op is _sre.SUBPATTERN and av[1] & re.IGNORECASE) or _ignores_case_inside(av) for op, av in node)
    return isinstance(node, tuple | list) and any(_ignores_case_inside(x) for x in node)


def _sequence(items: Any, fold: bool) -> _Part:
    run: frozenset[str] = _NOTHING  # the strings the latest stretch of literals matches exactly
    starts: frozenset[str] | None = None  # once a part is not literal: what every match starts with
    required: list[frozenset[str]] = []
    for op, av in items:
        if op in (_sre.AT, _sre.ASSERT, _sre.ASSERT_NOT):
            continue  # zero-width: the characters on both sides are adjacent in the match
        part = _item(op, av, fold)
        if part.exact is not None and (joined := _product(run, part.exact)) is not None:
            run = joined
            continue
        # The run ends here, followed by what the part starts with; the part's own anchors; a new run
        # from what it ends with.
        run_on = _product(run, part.starts) or run
        starts = run_on if starts is None else starts
        required += [run_on, *part.required]
        run = part.ends
    required.append(run)
    if starts is None:
        return _exactly(run)
    return _Part(None, tuple(required), starts, run)


def _item(op: Any, av: Any, fold: bool) -> _Part:
    if op is _sre.LITERAL:
        char = _anchor_char(chr(av), fold)
        return _OPAQUE if char is None else _exactly({char})
    if op is _sre.IN:
        chars: set[str] = set()
        for kind, value in av:
            if kind is _sre.LITERAL:
                codes = [value]
            elif kind is _sre.RANGE and value[1] - value[0] < _MAX_CLASS:
                codes = list(range(value[0], value[1] + 1))
            else:
                return _OPAQUE  # negated, a category (\d, \w, \s) or a wide range
            for code in codes:
                char = _anchor_char(chr(code), fold)
                if char is None:
                    return _OPAQUE
                chars.add(char)
        return _exactly(chars) if len(chars) <= _MAX_CLASS else _OPAQUE
    if op is _sre.SUBPATTERN:
        return _sequence(av[3], fold)
    if op is _sre.ATOMIC_GROUP:
        return _sequence(av, fold)
    if op is _sre.BRANCH:
        branches = [_sequence(b, fold) for b in av[1]]
        exact = _union(b.exact for b in branches)
        if exact is not None:
            return _exactly(exact)
        # Some alternative matches: each contributes its own best anchors.
        picks = [p for b in branches if (p := _best(b.required, least=1)) is not None]
        either = (frozenset(s for p in picks for s in p),) if len(picks) == len(branches) else ()
        return _Part(None, either, _union(b.starts for b in branches) or _NOTHING,
                     _union(b.ends for b in branches) or _NOTHING)
    if op in (_sre.MAX_REPEAT, _sre.MIN_REPEAT, _sre.POSSESSIVE_REPEAT):
        low, high, body = av[0], av[1], _sequence(av[2], fold)
        if body.exact is not None and (exact := _repeated(body.exact, low, high)) is not None:
            return _exactly(exact)
        return _Part(None, body.required, body.starts, body.ends) if low >= 1 else _OPAQUE
    return _OPAQUE  # any character, a category, a back-reference, a conditional


def _product(heads: frozenset[str], tails: frozenset[str]) -> frozenset[str] | None:
    """Each head followed by each tail; None: too many."""
    if len(heads) * len(tails) > _MAX_STRINGS:
        return None
    return frozenset(h + t for h in heads for t in tails)


def _union(sets: Iterable[frozenset[str] | None]) -> frozenset[str] | None:
    """All their strings; None: one is unknown, or too many."""
    out: set[str] = set()
    for strings in sets:
        if strings is None or len(out | strings) > _MAX_STRINGS:
            return None
        out |= strings
    return frozenset(out)


def _anchor_char(char: str, fold: bool) -> str | None:
    """The character as part of an anchor; None: it cannot be one. The separator's characters (an
    anchor with one could occur across two joined texts), surrogates (not in UTF-8), and non-ASCII
    characters when case is ignored (their case equivalences are many)."""
    if char in SEPARATOR or "\ud800" <= char <= "\udfff":
        return None
    if fold:
        return char.lower() if char.isascii() else None
    return char


def _repeated(exact: frozenset[str], low: int, high: int) -> frozenset[str] | None:
    """A literal part repeated low to high times (`-{4,5}`, `[ ]?`); None: too many strings."""
    if high > _MAX_STRINGS:  # MAXREPEAT (unbounded) is far above
        return None
    out: set[str] = set()
    layer: frozenset[str] | None = _NOTHING
    for count in range(high + 1):
        if layer is None or len(out) > _MAX_STRINGS:
            return None
        if count >= low:
            out |= layer
        layer = _product(layer, exact)
    return frozenset(out) if len(out) <= _MAX_STRINGS else None


def _reduced(strings: frozenset[str]) -> frozenset[str]:
    """Without the strings that hold another one of the set (a text holding `password` holds `pass`)."""
    return frozenset(s for s in strings if not any(t != s and t in s for t in strings))


def _best(candidates: Iterable[frozenset[str]], least: int = MIN_ANCHOR) -> frozenset[str] | None:
    """The most selective of several required sets: longest shortest string, then fewest strings."""
    scored = [(min(map(len, r)), -len(r), sorted(r), r) for r in map(_reduced, candidates) if r]
    best = max(scored, default=None)
    return None if best is None or best[0] < least else best[3]


RegexKey = tuple[str, int, bool]  # a regex, its flags, whether it runs on the lowered text


def anchors_of(keys: Iterable[RegexKey]) -> dict[RegexKey, Anchors | None]:
    """`derive_anchors` of each regex, kept in a cache file: deriving them all takes ~20 ms, at every start
    of a process that redacts. The file is named by a hash of this module's source (the derivation), of
    the separator (no anchor holds its characters) and of the Python version: a change to the
    derivation, or to the regex parser, derives them again."""
    try:
        source = Path(__file__).read_bytes() + SEPARATOR.encode() + sys.version.encode()
        tag = hashlib.blake2b(source, digest_size=8).hexdigest()
        cache: Path | None = cache_dir() / f"anchors-{tag}.json"
    except OSError:
        cache = None
    try:
        stored = json.loads(cache.read_text()) if cache else {}
    except (OSError, ValueError):
        stored = {}  # none yet, or damaged
    stored = stored if isinstance(stored, dict) else {}
    out: dict[RegexKey, Anchors | None] = {}
    derived = False
    for key in keys:
        name = json.dumps(key)
        entry = stored.get(name, False)
        if entry is None or (isinstance(entry, list) and len(entry) == 2 and isinstance(entry[0], bool)
                             and isinstance(entry[1], list) and entry[1]
                             and all(isinstance(s, str) and len(s) >= MIN_ANCHOR for s in entry[1])):
            out[key] = None if entry is None else Anchors(frozenset(entry[1]), entry[0])
            continue
        found = out[key] = derive_anchors(*key)
        stored[name] = None if found is None else [found.fold, sorted(found.strings)]
        derived = True
    if derived and cache is not None and write_whole(cache, stored):
        for old in cache.parent.glob("anchors-*.json"):
            if old != cache:
                old.unlink(missing_ok=True)  # an earlier version's
    return out

