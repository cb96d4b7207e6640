"""Running checks over text: ast-grep (ast-grep-py, a Rust engine: declarative rules, no code runs) for
the languages with a grammar, re2 (linear time) for regex checks. Nothing here executes what it reads.

Bounds: a check's size (checks/model.py), a file's size (`MAX_FILE_BYTES`: a larger file is skipped and
counted), the hits one check reports in one file, and a time budget per file (`FILE_SECONDS`: the rules
not yet run when it is spent are skipped for that file, and it is said). A check that cannot be compiled
or fails on a file is one `CheckIssue`, never an exception.
"""

from __future__ import annotations

import bisect
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from checkpoint.checks import needles
from checkpoint.checks.model import Check, CheckProblem, language_of_file, languages_of
from checkpoint.checks.uses import rules as uses_rules

MAX_FILE_BYTES = 2_000_000
MAX_HITS_PER_FILE = 200  # one check, one file
FILE_SECONDS = 5.0
MAX_LINE_SHOWN = 200
# A line holding this is left alone by every check (the editor's "Dismiss for this line" writes it in
# the language's comment style, as linters' suppression comments are).
SUPPRESS = "checkpoint: ignore"


@dataclass(frozen=True)
class ActiveCheck:
    """A check that acts, with the item it enforces."""

    id: str
    item_id: str
    check: Check
    statement: str
    kind: str  # the item's kind: a constraint's hit is an error, a decision's a warning
    source: str  # "local" (this machine's store) or the decision record's path
    state: str = "accepted"


@dataclass(frozen=True)
class Hit:
    check_id: str
    item_id: str
    path: str  # as given (relative to the repository's top folder for `checkpoint check`)
    line: int  # 1-based
    column: int  # 1-based
    end_line: int
    end_column: int
    text: str  # the line, cut to MAX_LINE_SHOWN

    def as_json(self) -> dict[str, Any]:
        return {"check": self.check_id, "item": self.item_id, "path": self.path, "line": self.line,
                "column": self.column, "end_line": self.end_line, "end_column": self.end_column, "text": self.text}


@dataclass(frozen=True)
class CheckIssue:
    """A check that cannot act (or not on one file), and why."""

    check_id: str
    item_id: str
    message: str
    path: str | None = None

    def as_json(self) -> dict[str, Any]:
        return {"check": self.check_id, "item": self.item_id, "message": self.message, "path": self.path}


Finder = Callable[[Any], list[tuple[int, int, int, int]]]  # root node -> (line, col, end_line, end_col), 0-based


def _first_line(exc: BaseException) -> str:
    text = str(exc).split("\n\nStack backtrace", 1)[0]
    parts = [p.strip() for p in text.splitlines() if p.strip()]
    # ast-grep's message is "cannot get matcher / Caused by: / 0: ... / 3: the reason": the last says why
    return (parts[-1].split(": ", 1)[-1] if len(parts) > 1 else (parts[0] if parts else type(exc).__name__))[:300]


def _fatal(exc: BaseException) -> bool:
    return isinstance(exc, KeyboardInterrupt | SystemExit | GeneratorExit | MemoryError)


def _positions(nodes: Iterable[Any]) -> list[tuple[int, int, int, int]]:
    out = []
    for node in nodes:
        r = node.range()
        out.append((r.start.line, r.start.column, r.end.line, r.end.column))
    return out


def _pattern_problem(pattern: str, lang: str) -> str | None:
    from ast_grep_py import SgRoot

    if not pattern.strip():
        return "the pattern is empty"
    # ast-grep reads a metavariable ($A, $$$) as an identifier: in the languages where '$' cannot start
    # one it swaps in its own character first (µ), as this does before looking for a syntax error
    code = pattern if lang in ("javascript", "typescript", "tsx") else pattern.replace("$", "µ")
    if SgRoot(code, lang).root().find(kind="ERROR") is not None:
        return f"the pattern is not valid {lang} code: {pattern[:80]!r}"
    return None


def _patterns(rule: object) -> Iterable[str]:
    if isinstance(rule, dict):
        for key, value in rule.items():
            if key == "pattern" and isinstance(value, str):
                yield value
            else:
                yield from _patterns(value)
    elif isinstance(rule, list):
        for value in rule:
            yield from _patterns(value)


def needle(check: Check, lang: str) -> str | None:
    """Text every match of the check holds (checks/needles.py), so a file without it is not parsed for it."""
    return needles.needle(check.shape, check.name, check.rule, lang)


def _compile_rules(check: Check, lang: str) -> Finder:
    """A finder for one language; raises CheckProblem when the rule cannot be compiled."""
    from ast_grep_py import SgRoot

    if check.shape == "uses":
        assert check.name is not None
        found = uses_rules(check.name, lang, check.calls_only)
        rule: dict[str, Any] = found[0] if len(found) == 1 else {"any": found}
    else:
        rule = dict(check.rule or {})
        for pattern in _patterns(rule):
            problem = _pattern_problem(pattern, lang)
            if problem:
                raise CheckProblem(problem)
    try:  # compiled once against an empty file: a bad kind, regex or key fails here, not per file
        SgRoot("", lang).root().find(**rule)
    except BaseException as exc:
        if _fatal(exc):
            raise
        raise CheckProblem(f"ast-grep refused the rule: {_first_line(exc)}") from None
    return lambda root: _positions(root.find_all(**rule))


def _compile_regex(pattern: str) -> Any:
    import re2

    options = re2.Options()
    options.max_mem = 8 << 20
    options.log_errors = False
    try:
        return re2.compile(pattern, options)
    except re2.error as exc:
        message = exc.args[0].decode(errors="replace") if exc.args and isinstance(exc.args[0], bytes) else str(exc)
        raise CheckProblem(f"the regex cannot be read by re2: {message[:200]}") from None


def matches_paths(check: Check, path: str) -> bool:
    """Whether the check's globs take the file (checks/needles.py)."""
    return needles.paths_take(check.paths, path)


@dataclass
class Engine:
    """The active checks compiled once; `scan` runs them over one file's text. `lazy`: an ast-grep rule
    is compiled when a file of its language first holds its needle (the pre-edit hook and the MCP tool
    check one file: neither loads the grammars of the other languages, nor ast-grep for a text that no
    check's needle is in); a rule that cannot be compiled is then said when it is first wanted."""

    checks: Sequence[ActiveCheck]
    lazy: bool = False
    issues: list[CheckIssue] = field(default_factory=list)
    _ast: dict[str, list[tuple[ActiveCheck, Finder | None, str | None]]] = field(default_factory=dict)
    _regex: list[tuple[ActiveCheck, Any]] = field(default_factory=list)
    _failed: set[str] = field(default_factory=set)
    _finders: dict[tuple[str, str], Finder] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for active in self.checks:
            try:
                if active.check.shape == "regex":
                    assert active.check.regex is not None
                    self._regex.append((active, _compile_regex(active.check.regex)))
                    continue
                for lang in languages_of(active.check):
                    finder = None if self.lazy else _compile_rules(active.check, lang)
                    self._ast.setdefault(lang, []).append((active, finder, needle(active.check, lang)))
            except CheckProblem as exc:
                self._issue(active, str(exc))

    def _finder(self, active: ActiveCheck, lang: str) -> Finder | None:
        found = self._finders.get((active.id, lang))
        if found is None:
            try:
                found = self._finders[(active.id, lang)] = _compile_rules(active.check, lang)
            except CheckProblem as exc:
                self._issue(active, str(exc))
        return found

    def _issue(self, active: ActiveCheck, message: str, path: str | None = None) -> None:
        if active.id not in self._failed:  # one problem per check, not one per file
            self._failed.add(active.id)
            self.issues.append(CheckIssue(active.id, active.item_id, message, path))

    def wants(self, path: str) -> bool:
        """Whether any check could read this file (before it is read)."""
        lang = language_of_file(path)
        if lang and any(matches_paths(a.check, path) for a, _, _ in self._ast.get(lang, ())):
            return True
        return any(matches_paths(a.check, path) for a, _ in self._regex)

    def scan(self, path: str, text: str) -> list[Hit]:
        """The hits in one file's text (`path` as the hits should name it, '/'-separated)."""
        if len(text) > MAX_FILE_BYTES:
            return []
        lines = _Lines(text)
        hits: list[Hit] = []
        deadline = time.monotonic() + FILE_SECONDS
        lang = language_of_file(path)
        # a check whose needle the text lacks cannot match: the file is not parsed for it
        wanted: list[tuple[ActiveCheck, Finder]] = []
        for a, f, n in self._ast.get(lang or "", ()):
            if a.id in self._failed or (n is not None and n not in text) or not matches_paths(a.check, path):
                continue
            finder = f if f is not None else self._finder(a, lang or "")
            if finder is not None:
                wanted.append((a, finder))
        if wanted and lang:
            from ast_grep_py import SgRoot

            root = SgRoot(text, lang).root()
            for active, finder in wanted:
                if time.monotonic() > deadline:
                    self.issues.append(CheckIssue(active.id, active.item_id,
                                                  f"skipped: the file took over {FILE_SECONDS:g} s", path))
                    break
                try:
                    found = finder(root)
                except BaseException as exc:
                    if _fatal(exc):
                        raise
                    self._issue(active, f"ast-grep failed: {_first_line(exc)}", path)
                    continue
                hits += self._hits(active, path, lines, [(a + 1, b + 1, c + 1, d + 1) for a, b, c, d in found])
        for active, compiled in self._regex:
            if not matches_paths(active.check, path):
                continue
            spans: list[tuple[int, int, int, int]] = []
            for match in compiled.finditer(text):
                if len(spans) >= MAX_HITS_PER_FILE:
                    break
                (line, column), (end_line, end_column) = lines.at(match.start()), lines.at(match.end())
                spans.append((line, column, end_line, end_column))
            hits += self._hits(active, path, lines, spans)
        return hits

    @staticmethod
    def _hits(active: ActiveCheck, path: str, lines: _Lines, spans: list[tuple[int, int, int, int]]) -> list[Hit]:
        out: list[Hit] = []
        seen: set[int] = set()
        for line, column, end_line, end_column in sorted(spans):
            text = lines.text(line)
            if line in seen or SUPPRESS in text:  # one hit a line per check; a suppressed line is left alone
                continue
            seen.add(line)
            out.append(Hit(active.id, active.item_id, path, line, column, end_line, end_column,
                           text.strip()[:MAX_LINE_SHOWN]))
            if len(out) >= MAX_HITS_PER_FILE:
                break
        return out


class _Lines:
    """Offsets to 1-based (line, column), and a line's text."""

    def __init__(self, text: str) -> None:
        self._text = text
        self._starts: list[int] | None = None

    def _line_starts(self) -> list[int]:
        if self._starts is None:
            starts = [0]
            find = self._text.find
            at = find("\n")
            while at != -1:
                starts.append(at + 1)
                at = find("\n", at + 1)
            self._starts = starts
        return self._starts

    def at(self, offset: int) -> tuple[int, int]:
        starts = self._line_starts()
        n = bisect.bisect_right(starts, offset) - 1
        return n + 1, offset - starts[n] + 1

    def text(self, line: int) -> str:
        starts = self._line_starts()
        if not 1 <= line <= len(starts):
            return ""
        end = starts[line] - 1 if line < len(starts) else len(self._text)
        return self._text[starts[line - 1]:end]
