"""The redactor: finds the detectors' secrets in many texts at once (`redact_many`: grouped by the
detectors the gate says can match them, each group searched joined), in one text (`spans`), or in a
slice of one (`redact_slice`: a turn split over two chunks), and replaces each by its placeholder."""

from __future__ import annotations

import bisect
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from typing import Any

from checkpoint.redact.detectors import (
    NAMED_KEYWORDS,
    PLACEHOLDER,
    PLACEHOLDER_PATTERN,
    SEPARATOR,
    Detector,
    assignment_candidates,
)
from checkpoint.redact.gate import Gate, Plan

PASSES = 4  # a find can uncover another only in a few ways (a placeholder's kind read as a word): a bound
_TOKEN_CHARS = re.compile(r"[A-Za-z0-9_\-]+")  # a token's tail: a match stopping short is widened over it
_NAME_CHAR = re.compile(r"[A-Za-z0-9_.\-]")


@dataclass
class Redacted:
    """A text redacted, and what was found in it."""

    text: str
    found: dict[str, int] = field(default_factory=dict)  # secrets replaced, by kind


class Redactor:
    """Finds secrets in many texts at once and replaces each by its placeholder."""

    def __init__(self, detectors: Iterable[Detector], gate: bool = True) -> None:
        self.detectors = list(detectors)
        self._whole = [d for d in self.detectors if not d.named and d.trigger is None]
        self._triggered = [d for d in self.detectors if not d.named and d.trigger is not None]
        self._named = [d for d in self.detectors if d.named]
        self._gated = gate  # False: every detector runs on every text (the tests compare both)
        self._every = Plan(tuple(self._whole), tuple(self._triggered), tuple(self._named), NAMED_KEYWORDS)

    @cached_property
    def _gate(self) -> Gate:
        return Gate(self._whole, self._triggered, self._named)

    def prepare(self) -> None:
        """Build the gate now (RE2 loaded, its set compiled: ~10 ms), not at the first text: a scan
        does it while its read-ahead child reads the first batch, which it would otherwise wait for."""
        if self.detectors and self._gated:
            self._gate  # noqa: B018 (a cached property: built by reading it)

    def _plan(self, text: str) -> Plan | None:
        if not self.detectors:
            return None
        return self._gate.plan(text) if self._gated else self._every

    def redact(self, text: str) -> Redacted:
        return self.redact_many([text]).get(0) or Redacted(text)

    def redact_slice(
        self, text: str, start: int, end: int, spans: Sequence[tuple[int, int, str]] | None = None
    ) -> Redacted:
        """text[start:end] redacted as part of the whole text (whose `spans` a caller sending several
        parts may keep): a secret that crosses the slice's edge (a turn split over two chunks) is
        found in the whole and replaced in both parts."""
        parts: list[str] = []
        found: Counter[str] = Counter()
        pos = start
        for s, e, kind in self.spans(text) if spans is None else spans:
            if e <= start or s >= end:
                continue
            parts.append(text[pos:max(s, start)])
            parts.append(PLACEHOLDER.format(kind))
            found[kind] += 1
            pos = min(e, end)
        parts.append(text[pos:end])
        return Redacted("".join(parts), dict(found))

    def redact_many(self, texts: Sequence[str]) -> dict[int, Redacted]:
        """The texts in which something was found (by index), redacted, with what was found.

        The texts are grouped by the detectors that can match them (`Gate`); each group is searched
        joined, with its detectors only; a text no detector can match is not searched. What one pass
        changed is searched again until nothing more is found (`PASSES` at most): a redacted text holds
        nothing a redaction would take, so each stored or shown string needs one call."""
        out = self._redact_once(texts)
        changed = sorted(out)
        for _ in range(PASSES - 1):
            if not changed:
                break
            again = self._redact_once([out[i].text for i in changed])
            changed = [changed[j] for j in again]
            for i, result in zip(changed, again.values(), strict=True):
                out[i] = Redacted(result.text, dict(Counter(out[i].found) + Counter(result.found)))
        return out

    def _redact_once(self, texts: Sequence[str]) -> dict[int, Redacted]:
        groups: dict[Plan, list[int]] = {}
        for i, text in enumerate(texts):
            plan = self._plan(text)
            if plan is not None:
                groups.setdefault(plan, []).append(i)
        out: dict[int, Redacted] = {}
        for plan, members in groups.items():
            group = [texts[i] for i in members]
            joined = group[0] if len(group) == 1 else SEPARATOR.join(group)
            for j, found in _pieces(group, self._spans_in(joined, plan)).items():
                out[members[j]] = _replace(group[j], found)
        return dict(sorted(out.items()))

    def spans(self, text: str) -> list[tuple[int, int, str]]:
        """Where the secrets are: (start, end, kind), sorted, not overlapping; those `redact` replaces
        (a find of a later pass over text and placeholders covers the secrets those replaced)."""
        spans = self._spans_once(text)
        for _ in range(PASSES - 1):
            if not spans:
                break
            redacted = _replace(text, spans).text
            more = self._spans_once(redacted)
            if not more:
                break
            spans = _widened(spans, more)
        return spans

    def _spans_once(self, text: str) -> list[tuple[int, int, str]]:
        plan = self._plan(text)
        return [] if plan is None else self._spans_in(text, plan)

    def _spans_in(self, text: str, plan: Plan) -> list[tuple[int, int, str]]:
        """Text with JSON string escapes (a tool call's input is rendered as JSON: a Bash command, a
        file written, each quote as \\" and each line break as \\n) is searched as it reads
        unescaped, and what is found is cut from the text as stored."""
        if "\\" in text:
            view, escapes = _unescaped(text)
            if escapes:
                # escape i sits at escapes[i] in the text (2 characters) and at escapes[i] - i in the view (1)
                at = [e - i for i, e in enumerate(escapes)]
                return [(s + bisect.bisect_left(at, s), e + bisect.bisect_left(at, e), kind)
                        for s, e, kind in self._spans(view, plan)]
        return self._spans(text, plan)

    def _spans(self, text: str, plan: Plan) -> list[tuple[int, int, str]]:
        low: str | None = None
        raw: list[tuple[int, int, str, bool]] = []
        for d in plan.whole:
            if d.lower and low is None:
                low = _lower(text)
            for m in d.pattern.finditer(low if d.lower and low is not None else text):
                self._take(d, m, text, raw)
        if plan.triggered or plan.named:
            low = low if low is not None else _lower(text)
        hits: dict[str, list[tuple[int, int]]] = {}
        for d in plan.triggered:
            assert d.trigger is not None and low is not None
            found = hits.get(d.trigger)
            if found is None:
                found = hits[d.trigger] = [m.span() for m in _compiled(d.trigger).finditer(low)]
            subject = low if d.lower else text
            for start, end in found:
                a, b = max(0, start - d.before), min(len(text), end + d.after)
                for m in d.pattern.finditer(subject, a, b):
                    self._take(d, m, text, raw)
        if plan.named:
            assert low is not None
            self._named_spans(text, low, raw, plan)
        if raw and "[REDACTED:" in text:
            raw = _whole_placeholders(text, raw)
        return _merge(raw)

    @staticmethod
    def _named_spans(text: str, low: str, raw: list[tuple[int, int, str, bool]], plan: Plan) -> None:
        names: dict[int, tuple[int, set[str]]] = {}  # name start -> (line end, keywords in the name)
        candidates = assignment_candidates()
        for kw in plan.keywords:
            for hit in candidates[kw].finditer(low):
                start = hit.start()
                while start > 0 and _NAME_CHAR.match(low, start - 1):
                    start -= 1
                entry = names.get(start)
                if entry is None:
                    line_end = text.find("\n", hit.end())
                    names[start] = (len(text) if line_end < 0 else line_end, {kw})
                else:
                    entry[1].add(kw)
        for start, (line_end, keywords) in names.items():
            # Where a match may begin: a quote or bracket before the name, the name, or inside it at a
            # part boundary or a keyword (detect-secrets' names start at its keyword: db_password).
            name_end = start
            while name_end < line_end and _NAME_CHAR.match(low, name_end):
                name_end += 1
            begins = {max(0, start - 2), max(0, start - 1), start}
            line_start = text.rfind("\n", 0, start) + 1
            if low[line_start:start].strip() in ("", "export"):
                begins.add(line_start)  # a config line: KEY=value, key: value, export KEY=value
            begins.update(i + 1 for i in range(start, name_end) if low[i] in "_.-")
            for kw in NAMED_KEYWORDS:
                i = low.find(kw, start, name_end)
                while i >= 0:
                    begins.add(i)
                    i = low.find(kw, i + 1, name_end)
            ordered = sorted(begins)
            for d in plan.named:
                if not (d.named & keywords):
                    continue
                subject = low if d.lower else text
                for b in ordered:
                    m = d.pattern.match(subject, b, line_end)
                    if m is not None and Redactor._take(d, m, text, raw):
                        break

    @staticmethod
    def _take(d: Detector, m: re.Match[str], text: str, raw: list[tuple[int, int, str, bool]]) -> bool:
        if d.check is not None and not d.check(m):
            return False
        if d.group == "value":
            s, e = _value_span(m)
        elif d.group is not None:
            s, e = m.span(d.group)
        else:
            s, e = m.span()
        # Quotes stay around the placeholder; a whole-match regex may take a delimiter with it: that stays.
        edge = " \t\n\"'`=:" if d.group is None or d.group == "value" else "\"'`"
        while s < e and text[s] in edge:
            s += 1
        while e > s and text[e - 1] in edge:
            e -= 1
        if s >= e or _only_placeholders(text[s:e]):
            return False
        tail = _TOKEN_CHARS.match(text, e)
        if tail is not None and e == m.end():
            e = tail.end()
        raw.append((s, e, d.kind, d.specific))
        return True


def _whole_placeholders(text: str, raw: list[tuple[int, int, str, bool]]) -> list[tuple[int, int, str, bool]]:
    """The finds that take a placeholder whole or leave it alone: one that starts or ends inside a
    placeholder read its kind as text (`-u [REDACTED:x]:` is no user and password)."""
    inside = [(m.start(), m.end()) for m in PLACEHOLDER_PATTERN.finditer(text)]
    starts = [a for a, _ in inside]

    def cuts(at: int) -> bool:
        i = bisect.bisect_right(starts, at) - 1
        return i >= 0 and inside[i][0] < at < inside[i][1]

    return [r for r in raw if not (cuts(r[0]) or cuts(r[1]))]


def _widened(spans: list[tuple[int, int, str]], more: list[tuple[int, int, str]]) -> list[tuple[int, int, str]]:
    """`spans` with the finds of a later pass (`more`, in the text with `spans` replaced by placeholders)
    in the text's own offsets: a find that holds placeholders covers the secrets they replaced."""
    # The redacted text in pieces, text and placeholder in turn: (start, end) there, (start, end) in the text
    pieces: list[tuple[int, int, int, int]] = []
    at = pos = 0
    for s, e, kind in spans:
        pieces.append((at, at + s - pos, pos, s))
        at += s - pos
        size = len(PLACEHOLDER.format(kind))
        pieces.append((at, at + size, s, e))
        at, pos = at + size, e
    pieces.append((at, at, pos, pos))  # the rest of the text, as long as it is
    starts = [p[0] for p in pieces]

    def origin(offset: int, end: bool) -> int:
        i = bisect.bisect_right(starts, offset - end) - 1
        if i < 0:
            return offset
        a, _, s, e = pieces[i]
        if i % 2:  # a placeholder: the secret it replaced, whole
            return e if end else s
        return s + (offset - a)

    found = [(origin(s, False), origin(e, True), kind, True) for s, e, kind in more]
    kept = [(s, e, kind, False) for s, e, kind in spans if not any(fs <= s and e <= fe for fs, fe, _, _ in found)]
    out = sorted([*kept, *found])
    return [(s, e, kind) for s, e, kind, _ in out]


def _only_placeholders(found: str) -> bool:
    """Already redacted: a placeholder, perhaps with an escape or punctuation next to it."""
    if "[REDACTED:" not in found:
        return False
    rest = PLACEHOLDER_PATTERN.sub("", found)
    return sum(c.isalnum() for c in rest) < 4


def _pieces(texts: Sequence[str], spans: list[tuple[int, int, str]]) -> dict[int, list[tuple[int, int, str]]]:
    """Spans of the texts joined with SEPARATOR, as spans of each text (by index; a span over a separator is cut)."""
    pieces: dict[int, list[tuple[int, int, str]]] = {}
    if not spans:
        return pieces
    starts: list[int] = []
    pos = 0
    for t in texts:
        starts.append(pos)
        pos += len(t) + len(SEPARATOR)
    for s, e, kind in spans:
        i = bisect.bisect_right(starts, s) - 1
        while i < len(texts) and s < e:
            base, end = starts[i], starts[i] + len(texts[i])
            if s < end:
                pieces.setdefault(i, []).append((s - base, min(e, end) - base, kind))
            i += 1
            s = max(s, starts[i]) if i < len(texts) else e
    return pieces


@lru_cache(maxsize=64)
def _compiled(source: str) -> re.Pattern[str]:
    return re.compile(source)


def _value_span(m: re.Match[str]) -> tuple[int, int]:
    """detect-secrets' rule for a plugin regex with groups: the value is the last group that ends the
    match (`...key = "(VALUE)"`, `://user:(PASSWORD)@`); a group elsewhere (a prefix such as ghp) is
    not the secret, the whole match is."""
    for g in range(m.re.groups, 0, -1):
        s, e = m.span(g)
        if s >= 0 and e > s and m.end() - e <= 2:
            return s, e
    return m.span()


_UNESCAPE = {"\\": "\\", "n": "\n", "r": "\r", "t": "\t", '"': '"', "/": "/"}  # by the character after the backslash


def _unescaped(text: str) -> tuple[str, list[int]]:
    """The text with JSON's two-character escapes (\\\\ \\n \\r \\t \\" \\/) as the characters
    they stand for, and where each escape starts in the text. Read left to right from backslash to
    backslash (an escaped backslash is one escape, whatever follows it): one pass, where a chain of
    str.replace copies the whole text once per escape."""
    escapes: list[int] = []
    parts: list[str] = []
    pos = 0  # what is not copied yet starts here
    find, unescape = text.find, _UNESCAPE.get
    i = find("\\")
    while i >= 0:
        char = unescape(text[i + 1:i + 2])
        if char is None:  # a backslash escaping nothing stays (the next character is not one)
            i = find("\\", i + 1)
            continue
        escapes.append(i)
        parts.append(text[pos:i])
        parts.append(char)
        pos = i + 2
        i = find("\\", pos)
    if not escapes:
        return text, escapes
    parts.append(text[pos:])
    return "".join(parts), escapes


def _lower(text: str) -> str:
    """Lowercase without changing any offset: str.lower never shortens a character, and lengthens one
    only (İ, U+0130, to i + a combining dot), which is left as it is. Character by character, so that a
    text is lowered the same whatever it is joined with (the KELVIN SIGN K lowers to k in any batch)."""
    low = text.lower()
    return low if len(low) == len(text) else "İ".join(part.lower() for part in text.split("İ"))


def _merge(raw: list[tuple[int, int, str, bool]]) -> list[tuple[int, int, str]]:
    """Overlapping finds become one; its kind is the most specific one's (a format over an assignment),
    then the longest one's."""
    raw.sort(key=lambda r: (r[0], -r[1]))
    out: list[list[Any]] = []  # [start, end, kind, specific, length of the kind's find]
    for s, e, kind, specific in raw:
        if out and s < out[-1][1]:
            last = out[-1]
            if (specific, e - s) > (last[3], last[4]):
                last[2], last[3], last[4] = kind, specific, e - s
            last[1] = max(last[1], e)
        else:
            out.append([s, e, kind, specific, e - s])
    return [(s, e, kind) for s, e, kind, _, _ in out]


def _replace(text: str, found: list[tuple[int, int, str]]) -> Redacted:
    parts: list[str] = []
    counts: dict[str, int] = {}
    pos = 0
    for s, e, kind in found:
        parts.append(text[pos:s])
        parts.append(PLACEHOLDER.format(kind))
        counts[kind] = counts.get(kind, 0) + 1
        pos = e
    parts.append(text[pos:])
    return Redacted("".join(parts), counts)


