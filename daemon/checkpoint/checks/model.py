"""A check: what code BREAKS a decision or constraint, as data that never runs.

Three shapes, each a small JSON object (stored with the item, carried in a shared decision record's
front matter, proposed by a model or by the offline rules, or given by hand):

- structural: `{"lang": "python", "rule": {...}, "paths": [...]}`: an ast-grep rule (pattern, kind,
  regex, inside, has, not, all, any, ...) in one language; the rule's matches break the item;
- uses: `{"uses": "requests", "calls": false, "paths": [...]}`: a library, module or function that must
  not appear; expanded (checks/uses.py) into ast-grep rules for every language Checkpoint checks
  (imports and calls in Python, TypeScript/JavaScript, Go, Rust), so a decision said once holds in
  whichever of them the repository holds; `calls: true`: calls only ("don't call Y from Z");
- regex: `{"regex": "...", "paths": ["Justfile"]}`: re2 (linear time) over the text of the files the
  globs name, for files with no grammar (a Justfile, YAML, Dockerfile).

`paths` are globs relative to the repository's top folder (a glob without '/' matches a file's name in
any folder); empty: every file of the check's languages. Reading a check never raises: what cannot be
read is a `CheckProblem` (its sentence), shown once, never a crash.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from checkpoint.checks.needles import ALIASES, EXTENSIONS, language_of_file, languages

__all__ = ["ALIASES", "EXTENSIONS", "language_of_file"]  # read from here by the CLI and the daemon too

MAX_CHECK_CHARS = 4096  # the whole check as JSON: a rule is a few lines, not a program
MAX_DEPTH = 8  # nesting of inside/has/not/all/any
MAX_PATHS = 20
MAX_NAME = 200

LANGUAGES = (*EXTENSIONS, "regex")
# The rule keys a check may use: matching only (no `fix`, `transform`, `utils`, `matches`).
RULE_KEYS = frozenset({"pattern", "kind", "regex", "inside", "has", "not", "all", "any", "precedes", "follows",
                       "stopBy", "field", "nthChild", "context", "selector", "strictness"})
_NAME = re.compile(r"^[A-Za-z_@][\w.@/-]*$")
# What `checkpoint check --format` prints (checks/report.py); here, so that building the CLI's parser
# (every command does) does not load the report and the engine behind it.
FORMATS = ("text", "json", "sarif", "github")

Shape = Literal["structural", "uses", "regex"]


class CheckProblem(ValueError):
    """Why a check cannot act, in one sentence (shown by `checkpoint check` and `status`)."""


@dataclass(frozen=True)
class Check:
    shape: Shape
    lang: str | None  # structural: its language; uses: None (every language) or one; regex: None
    rule: Mapping[str, Any] | None  # structural: the ast-grep rule
    name: str | None  # uses: the library, module or function
    regex: str | None  # regex: the re2 expression
    paths: tuple[str, ...] = ()
    calls_only: bool = False  # uses: calls only, imports allowed
    message: str | None = None  # what to do instead, when the item's statement does not say it

    def as_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.shape == "structural":
            out = {"lang": self.lang, "rule": dict(self.rule or {})}
        elif self.shape == "uses":
            out = {"uses": self.name, **({"lang": self.lang} if self.lang else {}),
                   **({"calls": True} if self.calls_only else {})}
        else:
            out = {"regex": self.regex}
        if self.paths:
            out["paths"] = list(self.paths)
        if self.message:
            out["message"] = self.message
        return out

    def text(self) -> str:
        """One line of JSON, keys sorted: what is stored and written in a record."""
        return json.dumps(self.as_json(), sort_keys=True, separators=(", ", ": "), ensure_ascii=False)

    def describe(self) -> str:
        where = f" in {', '.join(self.paths)}" if self.paths else ""
        if self.shape == "uses":
            return f"{'calls of' if self.calls_only else 'uses of'} {self.name}{where}"
        if self.shape == "regex":
            return f"text matching /{self.regex}/{where}"
        pattern = (self.rule or {}).get("pattern")
        return f"{self.lang} code matching {pattern if isinstance(pattern, str) else 'a rule'}{where}"


def check_id(item_id: str, check: Check) -> str:
    """Stable across machines: the item and the check's text (a record read in a clone names the same)."""
    return hashlib.blake2b(f"{item_id}|{check.text()}".encode(), digest_size=6).hexdigest()


def _rule_problem(rule: object, depth: int) -> str | None:
    if depth > MAX_DEPTH:
        return f"the rule nests deeper than {MAX_DEPTH} levels"
    if isinstance(rule, list):
        return next((p for p in (_rule_problem(r, depth + 1) for r in rule) if p), None)
    if isinstance(rule, str | int | bool):
        return None
    if not isinstance(rule, dict) or not rule:
        return "a rule is an object such as {\"pattern\": \"import requests\"}"
    unknown = sorted(k for k in rule if k not in RULE_KEYS)
    if unknown:
        return f"the rule key {unknown[0]!r} is not one a check may use ({', '.join(sorted(RULE_KEYS))})"
    return next((p for p in (_rule_problem(v, depth + 1) for v in rule.values()) if p), None)


def _strings(value: object, what: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise CheckProblem(f"{what}: expected a list of globs")
    if len(value) > MAX_PATHS:
        raise CheckProblem(f"{what}: at most {MAX_PATHS} globs")
    return tuple(v.strip() for v in value)


def language(name: str) -> str:
    lang = ALIASES.get(name.strip().lower(), name.strip().lower())
    if lang not in LANGUAGES:
        raise CheckProblem(f"language {name!r} is not one Checkpoint checks ({', '.join(LANGUAGES)})")
    return lang


def read_check(data: object) -> Check:
    """The check a JSON value (or its text) says. Raises CheckProblem."""
    if isinstance(data, str):
        if len(data) > MAX_CHECK_CHARS:
            raise CheckProblem(f"the check is longer than {MAX_CHECK_CHARS} characters")
        try:
            data = json.loads(data)
        except ValueError as exc:
            raise CheckProblem(f"the check is not JSON ({exc.args[0] if exc.args else exc})") from None
    if not isinstance(data, dict):
        raise CheckProblem("a check is an object with 'rule' and 'lang', 'uses', or 'regex'")
    if len(json.dumps(data)) > MAX_CHECK_CHARS:
        raise CheckProblem(f"the check is longer than {MAX_CHECK_CHARS} characters")
    paths = _strings(data.get("paths"), "paths")
    message = data.get("message")
    message = message.strip()[:300] if isinstance(message, str) and message.strip() else None
    shapes = [k for k in ("rule", "uses", "regex") if data.get(k) is not None]
    if len(shapes) != 1:
        raise CheckProblem("a check has exactly one of 'rule' (with 'lang'), 'uses' or 'regex'")
    if shapes == ["regex"]:
        regex = data["regex"]
        if not isinstance(regex, str) or not regex:
            raise CheckProblem("regex: expected a non-empty string")
        if not paths:
            raise CheckProblem("a regex check names the files it reads ('paths': globs such as 'Justfile')")
        return Check("regex", None, None, None, regex, paths, message=message)
    lang_given = data.get("lang")
    if lang_given is not None and not isinstance(lang_given, str):
        raise CheckProblem("lang: expected a language name")
    if shapes == ["uses"]:
        name = data["uses"]
        if not isinstance(name, str) or len(name) > MAX_NAME or not _NAME.match(name):
            raise CheckProblem(f"uses: expected a library, module or function name, got {name!r}")
        lang = language(lang_given) if lang_given else None
        if lang == "regex":
            raise CheckProblem("uses: lang is a programming language")
        return Check("uses", lang, None, name, None, paths, calls_only=data.get("calls") is True, message=message)
    if not lang_given:
        raise CheckProblem("a rule check names its language ('lang': python, typescript, go, rust...)")
    lang = language(lang_given)
    if lang == "regex":
        raise CheckProblem("a rule check's language is a programming language (a regex check has 'regex')")
    rule = data["rule"]
    if isinstance(rule, str):  # a bare pattern
        rule = {"pattern": rule}
    problem = _rule_problem(rule, 0)
    if problem:
        raise CheckProblem(problem)
    return Check("structural", lang, rule, None, None, paths, message=message)


def languages_of(check: Check) -> Sequence[str]:
    """The ast-grep languages a check reads (a "typescript" check reads .tsx files with tsx's grammar)."""
    return languages(check.shape, check.lang)
