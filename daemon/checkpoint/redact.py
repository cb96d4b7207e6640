"""Secrets out of transcript text before it is stored or sent: each becomes a typed placeholder,
`[REDACTED:aws_access_key]`.

Where. Every turn's text is redacted as it is read, before it is stored (`pipeline.scan`), so the
database never holds a secret; every chunk is redacted again right before it goes to an extractor
(`pipeline.checkpoint`): rows stored while redaction was off, or before a pattern was added. Turn
ids come from the records' uuids or a hash of the raw line, never from the text, so redacting
changes no id; items come from redacted text, so they hold no secret either.

What. The regexes of detect-secrets' plugins (the maintained detector; read from the installed
package, see `detect_secrets_table`), less the ones in SKIPPED, plus what it lacks (ADDED, each with
its reason), plus `redact_patterns` from the settings. Detectors that need a secret-sounding name
(`api_key = "..."`, `GITHUB_TOKEN=...`) run only where such a name is assigned something (the
candidates below); the others run over the text of a whole batch of turns at once, most of them
only near a literal they need (their trigger). And each runs only on the texts that hold one of the
literals it needs (its anchors, derived from its regex: see the anchor gate), which most texts lack.
"""

from __future__ import annotations

import bisect
import hashlib
import importlib
import importlib.util
import json
import os
import re
import sys
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from pathlib import Path
from typing import Any

PLACEHOLDER = "[REDACTED:{}]"
_PLACEHOLDER = re.compile(r"\[REDACTED:[a-z0-9_]+\]")
_KIND = re.compile(r"[a-z][a-z0-9_]{0,63}")
# Turns are joined with this between them: every pattern's `$`/`\s` sees a line end, none of ours
# crosses the NUL, and a match that still spans two turns is cut at the boundary.
_SEP = "\n\x00\n"
_TOKEN_CHARS = re.compile(r"[A-Za-z0-9_\-]+")  # a token's tail: a match stopping short is widened over it

Check = Callable[["re.Match[str]"], bool]


@dataclass
class Detector:
    kind: str  # the placeholder's type
    source: str  # the regex (compiled on first use: a run that never needs one never pays for it)
    flags: int
    origin: str  # where it comes from: a detect-secrets plugin, checkpoint (and why), or the settings
    group: int | str | None = None  # the secret's group; None: the whole match; "value": detect-secrets' rule
    lower: bool = False  # run on the ASCII-lowercased text (same offsets): literal prefixes stay fast
    # Run only in windows around the hits of this regex on the lowered text (a literal prefix keeps it
    # fast; detectors sharing one share its hits): one pass over the text instead of one each, and a
    # regex without a literal prefix runs on a few windows instead of the whole text.
    trigger: str | None = None
    before: int = 0  # the window: this many characters before a trigger hit ...
    after: int = 0  # ... to this many after it
    named: frozenset[str] = frozenset()  # runs at the name of an assignment holding one of these keywords
    check: Check | None = None  # a match must also pass this
    specific: bool = True  # a known format (wins over a generic assignment when both match)

    @cached_property
    def pattern(self) -> re.Pattern[str]:
        return re.compile(self.source, self.flags)


@dataclass
class Redacted:
    text: str
    found: dict[str, int] = field(default_factory=dict)  # secrets replaced, by kind


# -- detect-secrets ---------------------------------------------------------------------------------

# Plugins left out, and why.
SKIPPED = {
    "Base64HighEntropyString": "flags every commit hash, uuid, turn id and base64 blob of a transcript",
    "HexHighEntropyString": "flags every commit hash, uuid, turn id and base64 blob of a transcript",
    "IPPublicDetector": "an address is not a credential",
    "PrivateKeyDetector": "flags the BEGIN line only: private_key in ADDED takes the whole block",
}
# Placeholder types for detect-secrets' secret types (the rest: the type in snake case).
_KINDS = {
    "Basic Auth Credentials": "password_in_url",
    "JSON Web Token": "jwt",
    "OpenAI Token": "openai_api_key",
    "Secret Keyword": "secret_keyword",
    "AWS Access Key": "aws_access_key",
}
# How each plugin runs (absent: over the whole text). `named`: only at assignments of these names.
_KEY_OR_PASS = frozenset({"key", "pw", "pass", "token"})
_GITLAB = {"trigger": r"gl(?:pat|dt|ft|soat|rt|cbt|imt|ptt|agent|oas)-", "before": 0, "after": 1100}
_SK = {"trigger": r"sk-", "before": 0, "after": 400}  # OpenAI and Anthropic keys
_PLUGIN_RUN: dict[tuple[str, int], dict[str, Any]] = {
    ("AWSKeyDetector", 1): {"named": _KEY_OR_PASS, "kind": "aws_secret_access_key"},
    ("CloudantDetector", 0): {"named": _KEY_OR_PASS},
    ("CloudantDetector", 1): {"named": _KEY_OR_PASS},
    ("CloudantDetector", 2): {"trigger": r"cloudant\.com", "before": 200, "after": 20},
    ("CloudantDetector", 3): {"trigger": r"cloudant\.com", "before": 200, "after": 20},
    ("IbmCloudIamDetector", 0): {"named": _KEY_OR_PASS},
    ("IbmCosHmacDetector", 0): {"named": frozenset({"secret", "key"})},
    ("SoftlayerDetector", 0): {"named": _KEY_OR_PASS},
    ("SoftlayerDetector", 1): {"trigger": r"softlayer\.com", "before": 40, "after": 120},
    ("StripeDetector", 0): {"trigger": r"k_live_", "before": 2, "after": 40},
    ("SlackDetector", 0): {"trigger": r"xox[abposr]-", "before": 0, "after": 300},
    ("GitLabTokenDetector", 0): _GITLAB,
    ("GitLabTokenDetector", 2): _GITLAB,
    ("GitLabTokenDetector", 3): _GITLAB,
    ("GitLabTokenDetector", 4): _GITLAB,
    ("GitLabTokenDetector", 5): _GITLAB,
    ("GitLabTokenDetector", 6): _GITLAB,
    ("OpenAIDetector", 0): _SK,
    ("PypiTokenDetector", 0): {"trigger": r"pypi-ag", "before": 0, "after": 400},
    ("PypiTokenDetector", 1): {"trigger": r"pypi-ag", "before": 0, "after": 400},
    ("SlackDetector", 1): {"trigger": r"hooks\.slack\.com", "before": 8, "after": 300},
    ("TelegramBotTokenDetector", 0): {"trigger": r":[\w-]{35}", "before": 11, "after": 37},
    ("DiscordBotTokenDetector", 0): {"trigger": r"\.[\w-]{6}\.[\w-]{27}", "before": 26, "after": 40},
    ("MailchimpDetector", 0): {"trigger": r"-us\d", "before": 33, "after": 4},
    ("ArtifactoryDetector", 0): {"trigger": r"akc[a-z0-9]{10}", "before": 1, "after": 400},
    ("ArtifactoryDetector", 1): {"trigger": r"ap[\da-f][a-z0-9]{8}", "before": 1, "after": 400},
    ("GitLabTokenDetector", 1): {"trigger": r"gr1348941", "before": 0, "after": 80},
}
_TABLE_FORMAT = 1


def _keyword_group_rows() -> list[dict[str, Any]]:
    from detect_secrets.plugins import keyword

    return [
        {"plugin": "KeywordDetector", "index": i, "secret_type": "Secret Keyword", "pattern": regex.pattern,
         "flags": int(regex.flags), "group": group}
        for i, (regex, group) in enumerate(keyword.QUOTES_REQUIRED_DENYLIST_REGEX_TO_GROUP.items())
    ]


def _build_table() -> list[dict[str, Any]]:
    """Every plugin regex of the installed detect-secrets, as data (the import costs ~0.1 s, so the
    table is kept in a cache file, per detect-secrets version)."""
    from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class

    rows: list[dict[str, Any]] = []
    plugins: dict[str, type] = dict(get_mapping_from_secret_type_to_class())
    for secret_type, plugin in sorted(plugins.items()):
        name = plugin.__name__
        if name == "KeywordDetector":
            rows += _keyword_group_rows()
            continue
        for i, regex in enumerate(getattr(plugin, "denylist", None) or ()):
            rows.append({"plugin": name, "index": i, "secret_type": secret_type, "pattern": regex.pattern,
                         "flags": int(regex.flags), "group": "value"})
    return rows


def _detect_secrets_version() -> tuple[str, Path]:
    spec = importlib.util.find_spec("detect_secrets")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("detect-secrets is not installed (pip install detect-secrets): redaction needs it")
    package = Path(next(iter(spec.submodule_search_locations)))
    match = re.search(r"""VERSION\s*=\s*['"]([^'"]+)""", (package / "__version__.py").read_text())
    return (match.group(1) if match else "unknown"), package


def _cache_dir() -> Path:
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "checkpoint"


def _row_ok(row: object) -> bool:
    return (
        isinstance(row, dict) and isinstance(row.get("plugin"), str) and isinstance(row.get("index"), int)
        and isinstance(row.get("secret_type"), str) and isinstance(row.get("pattern"), str)
        and isinstance(row.get("flags"), int) and (row.get("group") == "value" or isinstance(row.get("group"), int))
    )


@lru_cache(maxsize=1)
def detect_secrets_table() -> tuple[str, tuple[dict[str, Any], ...]]:
    """(detect-secrets version, its plugin regexes as rows), read from the cache file when it is there."""
    version, _ = _detect_secrets_version()
    cache = _cache_dir() / f"detect-secrets-{version}-{_TABLE_FORMAT}.json"
    try:
        rows = json.loads(cache.read_text())
        if isinstance(rows, list) and rows and all(_row_ok(r) for r in rows):
            return version, tuple(rows)
    except (OSError, ValueError):
        pass  # none yet, or damaged: built again
    rows = _build_table()
    _store(cache, rows)  # a read-only home: built again next time
    return version, tuple(rows)


def _store(path: Path, data: object) -> bool:
    """Write a cache file whole (a reader never sees half of one); False: it cannot be written."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps(data))
        os.replace(tmp, path)
        return True
    except OSError:
        return False


@lru_cache(maxsize=1)
def _jwt_valid() -> Callable[[str], bool]:
    from detect_secrets.plugins.jwt import JwtTokenDetector

    check: Callable[[str], bool] = JwtTokenDetector.is_formally_valid
    return check


def _kind_of(secret_type: str) -> str:
    return _KINDS.get(secret_type) or re.sub(r"[^a-z0-9]+", "_", secret_type.lower()).strip("_")


def _plugin_detectors() -> list[Detector]:
    version, rows = detect_secrets_table()
    out = []
    for row in rows:
        if row["plugin"] in SKIPPED:
            continue
        run = dict(_PLUGIN_RUN.get((row["plugin"], row["index"]), {}))
        if row["plugin"] == "KeywordDetector":
            run["named"] = frozenset({"key", "pass", "pw", "secret", "contrase"})
        out.append(Detector(
            kind=run.pop("kind", None) or _kind_of(row["secret_type"]),
            source=row["pattern"],
            flags=row["flags"],
            origin=f"detect-secrets {version} {row['plugin']}",
            group=row["group"],
            check=(lambda m: _jwt_valid()(m.group(0))) if row["plugin"] == "JwtTokenDetector" else None,
            specific=row["plugin"] != "KeywordDetector",
            **run,
        ))
    return out


# -- what detect-secrets lacks ----------------------------------------------------------------------

_FALSY = frozenset({"true", "false", "null", "none", "nil", "yes", "no", "on", "off", "undefined", "changeme"})
_DOTTED = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+")


def _literal(m: re.Match[str]) -> bool:
    """An assigned value that is a literal, not a reference, a template, a number or a flag."""
    value = m.group("secret")
    quoted = value[:1] in ("'", '"', "`")
    bare = value.strip("'\"`")
    if not bare or bare[0] in "$%<{" or _PLACEHOLDER.fullmatch(bare) or bare.isdigit():
        return False
    if bare.lower() in _FALSY:
        return False
    if not quoted:
        following = m.string[m.end():m.end() + 1]
        if following in ("(", "[") or _DOTTED.fullmatch(bare):
            return False  # code: a call, an index, an attribute
    return True


def _literal_secretish(m: re.Match[str]) -> bool:
    """For names that are not always secret (`sort_key`, `token_type`): the value must look like one,
    with a digit in it or at least 16 characters, and no spaces."""
    if not _literal(m):
        return False
    bare = m.group("secret").strip("'\"`")
    return " " not in bare and (len(bare) >= 16 or any(c.isdigit() for c in bare))


def _named_secret(m: re.Match[str]) -> bool:
    """Passwords and secrets are secret whatever they look like; keys and tokens must look like one."""
    name = m.group("name").lower()
    if any(word in name for word in ("pass", "pwd", "secret", "credential")):
        return _literal(m)
    return _literal_secretish(m)


_ANY_NAME = frozenset({"key", "secret", "token", "pass", "pw", "credential"})


def _has_digit(m: re.Match[str]) -> bool:
    return any(c.isdigit() for c in m.group("secret"))


_ENV_NAME = (
    r"(?:[A-Z0-9]+_)*[A-Z0-9]*(?:KEY|SECRET|TOKEN|PASSWORD|PASSWD|PWD|PASS|CREDENTIALS?)(?:_[A-Z0-9]+)*"
)
_VALUE = r"""(?P<secret>"[^"\n]*"|'[^'\n]*'|`[^`\n]*`|[^\s"'`;&|<>()\[\]{},]+)"""
_PEM_HEADER = (
    r"(?:-{4,5}[ ]?BEGIN[ ](?:DSA[ ]|EC[ ]|OPENSSH[ ]|PGP[ ]|RSA[ ]|SSH2[ ]ENCRYPTED[ ]|ENCRYPTED[ ])?PRIVATE[ ]KEY"
    r"(?:[ ]BLOCK)?[ ]?-{4,5}|PuTTY-User-Key-File-\d:[^\n\\\x00]{0,200})"
)
_PEM_BREAK = r"(?:[ \t]*(?:\r?\n|(?:\\r)?\\n)[ \t]*)+"
_PEM_LINE = (
    r"(?:[A-Za-z0-9+/=]{4,}(?=[ \t]*(?:\r?\n|(?:\\r)?\\n|$|[\"']))"
    r"|(?:Proc-Type|DEK-Info|Version|Comment|Hash|Encryption|Public-Lines|Private-Lines|Private-MAC"
    r"|Key-Derivation|Argon2-[A-Za-z]+):[^\n\\\x00]*)"
)
_PEM_END = (
    r"(?:-{4,5}[ ]?END[ ][A-Z0-9 ]*PRIVATE[ ]KEY(?:[ ]BLOCK)?[ ]?-{4,5})"
)
_PEM = _PEM_HEADER + r"(?:" + _PEM_BREAK + _PEM_LINE + r")*(?:" + _PEM_BREAK + _PEM_END + r")?"

# (kind, pattern, how it runs, why detect-secrets does not cover it)
ADDED: list[tuple[str, str, dict[str, Any], str]] = [
    ("anthropic_api_key", r"sk-ant-[a-z]{2,10}\d{0,3}-[A-Za-z0-9_\-]{16,}", _SK,
     "detect-secrets has no Anthropic detector"),
    ("openai_api_key", r"sk-(?:proj|svcacct|admin|None)-[A-Za-z0-9_\-]{20,}", _SK,
     "detect-secrets' OpenAI plugin needs the T3BlbkFJ marker at fixed offsets; project, service-account "
     "and admin keys are longer and may lack it"),
    ("github_token", r"github_pat_[A-Za-z0-9_]{22,}", {},
     "fine-grained personal access tokens: detect-secrets knows ghp_/gho_/ghu_/ghs_/ghr_ only"),
    ("google_api_key", r"AIza[0-9A-Za-z_\-]{35}", {}, "detect-secrets has no Google Cloud detector"),
    ("npm_token", r"npm_[A-Za-z0-9]{36}", {},
     "npm access tokens anywhere: detect-secrets' NPM plugin knows only the .npmrc _authToken line"),
    ("password_in_url", r"://[^\s/:@\x00]+:(?P<secret>[^\s/@\x00]+)@", {"group": "secret"},
     "detect-secrets' BasicAuth plugin refuses passwords holding !$&'()*+,;= (RFC 3986 allows them in userinfo)"),
    ("google_oauth_token", r"ya29\.[0-9A-Za-z_\-]{20,}", {},
     "Google OAuth access tokens (gcloud auth print-access-token)"),
    ("private_key", _PEM, {"trigger": "private key", "before": 40, "after": 1 << 16},
     "detect-secrets' PrivateKeyDetector flags the BEGIN line only: the key body and the end line must go too "
     "(also when escaped inside JSON, or cut off without its END line)"),
    ("private_key", _PEM, {"trigger": "putty-user-key-file", "before": 0, "after": 1 << 16},
     "PuTTY keys, the same way"),
    ("private", r"<private>[^\x00]*?(?:</private>|(?=\x00)|\Z)", {"lower": True},
     "text the user marked private, with the tags (an unclosed tag: to the end of the turn)"),
    ("bearer_token", r"bearer[ \t]+(?P<secret>[a-z0-9\-._~+/]{16,}=*)",
     {"lower": True, "group": "secret", "check": _has_digit},
     "HTTP Authorization headers (curl commands, logged requests): detect-secrets has none"),
    ("basic_auth_header", r"authorization[\"']?[ \t]*[:=][ \t]*[\"']?basic[ \t]+(?P<secret>[a-z0-9+/]{8,}={0,2})",
     {"lower": True, "group": "secret"}, "HTTP Basic credentials in a header (base64 of user:password)"),
    ("aws_secret_access_key",
     r"aws_secret_access_key[\"']?[ \t]*[=:][ \t]*[\"']?(?P<secret>[a-z0-9/+]{40})(?![a-z0-9/+])",
     {"lower": True, "group": "secret"},
     "~/.aws/credentials and environment lines are unquoted; detect-secrets' AWS plugin wants quotes"),
    ("env_assignment",
     r"(?<![\w$])(?:export[ \t]+)?" + _ENV_NAME + r"[ \t]*=[ \t]*" + _VALUE,
     {"group": "secret", "named": _ANY_NAME, "check": _literal, "specific": False},
     ".env and shell assignments (API_KEY=..., export GITHUB_TOKEN=...): detect-secrets' keyword plugin "
     "wants quotes outside config files and does not know TOKEN"),
    ("secret_assignment",
     r"(?<![\w$])[\"']?(?P<name>[A-Za-z0-9_.\-]*(?:key|secret|token|passw(?:or)?d|pwd|credentials?)"
     r"[A-Za-z0-9_.\-]*)[\"']?[ \t]*(?:=|:=|=>|:)[ \t]*(?P<secret>\"[^\"\n]+\"|'[^'\n]+'|`[^`\n]+`)",
     {"group": "secret", "named": _ANY_NAME, "check": _named_secret, "specific": False, "flags": re.IGNORECASE},
     "quoted assignments to *token / *key names in code, JSON and YAML (access_token, github_token, "
     "stripe_key): detect-secrets' keyword list has no token and no bare key"),
    ("secret_assignment",
     r"(?<![\w$])(?P<name>[A-Za-z0-9_.\-]*(?:key|secret|token|passw(?:or)?d|pwd|credentials?)[A-Za-z0-9_.\-]*)"
     r"=(?P<secret>[^\s&#\"'`<>;,()\[\]{}]+)",
     {"group": "secret", "named": _ANY_NAME, "check": _named_secret, "specific": False, "flags": re.IGNORECASE},
     "name=value mid-line: URL query strings (?access_token=...), command-line flags (--password=...), "
     "log lines (auth ok token=...)"),
    ("config_assignment",
     r"^[ \t]*(?:export[ \t]+)?(?P<name>[A-Za-z0-9_.\-]*(?:key|secret|token|passw(?:or)?d|pwd|credentials?)"
     r"[A-Za-z0-9_.\-]*)[ \t]*[=:][ \t]*" + _VALUE + r"[ \t]*(?:#.*)?$",
     {"group": "secret", "named": _ANY_NAME, "check": _named_secret, "specific": False,
      "flags": re.IGNORECASE | re.MULTILINE},
     "unquoted values in .env, ini, YAML and TOML lines of any case (db_password = hunter2): detect-secrets' "
     "keyword plugin wants quotes outside known config file types"),
]

# Where a secret-sounding name is assigned something: the only places the `named` detectors run.
# One literal-prefixed regex per keyword on the lowered text (a regex starting with an alternation
# has no fast prefix search and costs several times more).
_NAMED_KEYWORDS = ("key", "secret", "token", "pass", "pw", "credential", "contrase")
_ASSIGNED = (
    r"[a-z0-9_.\-]{0,40}[\"'\]`)]{0,2}[ \t]*"
    r"(?:(?:=>|:=|={1,3}|!==?|:)[ \t]*@?"  # an assignment (or comparison) whose value is ...
    r"(?:[\"'`][^\"'`\s]"  # ... quoted, or bare but no number, call, index, reference or structure
    r"|(?!\d+(?![\w\-./+=])|[a-z_][\w.]*[(\[])[^\s\"'`$({\[<,;#])"
    r"|\([\"']|[ \t][\"'])"  # secret("..."), private_key "..."
)
_CANDIDATES = {kw: re.compile(kw + _ASSIGNED) for kw in _NAMED_KEYWORDS}
_NAME_CHAR = re.compile(r"[A-Za-z0-9_.\-]")


def _added_detectors() -> list[Detector]:
    out = []
    for kind, pattern, run, why in ADDED:
        run = dict(run)
        flags = run.pop("flags", 0) | (re.DOTALL if kind == "private" else 0)
        out.append(Detector(kind=kind, source=pattern, flags=flags, origin=f"checkpoint: {why}", **run))
    return out


def custom_detectors(patterns: Mapping[str, str]) -> list[Detector]:
    """`redact_patterns` from the settings: name -> regex; a group named `secret`, if any, is what goes."""
    out = []
    for name, pattern in patterns.items():
        if not _KIND.fullmatch(name):
            raise ValueError(f"redact_patterns: {name!r} is not a name (lowercase letters, digits, _)")
        try:
            regex = re.compile(pattern)
        except re.error as exc:
            raise ValueError(f"redact_patterns.{name}: not a regular expression: {exc}") from None
        out.append(Detector(kind=name, source=pattern, flags=0, origin="settings: redact_patterns",
                            group="secret" if "secret" in regex.groupindex else None))
    return out


# -- the anchor gate --------------------------------------------------------------------------------
#
# Each regex pass over a text costs about the same whatever the text holds, and most texts hold none
# of the literals most detectors need (AKIA, eyJ, ghp_, sk-, xox, ...). So each regex gets its anchors:
# literals at least one of which occurs in any text it can match, derived from the regex itself. One
# RE2 set of all anchors says which occur in a text (one pass, ~4 ms per million characters), and a
# detector runs only on the texts holding one of its anchors (and of its trigger's, and of a keyword
# its names need). A regex without a usable anchor (the telegram trigger `:[\w-]{35}`) always runs.

_sre: Any = importlib.import_module("re._parser")  # the stdlib's regex parser (no stubs, hence Any)
_MAX_STRINGS = 64  # a finite set of strings (a branch, a small class, their products) is kept up to this many
_MAX_CLASS = 16  # a character class is expanded into its characters up to this many
_MIN_ANCHOR = 2  # a single character occurs in nearly every text: no anchor
# Characters Python's IGNORECASE takes for an ASCII letter beyond its two cases (re._casefix, and İ whose
# simple lowercase is i): a gate that ignores case must find them too (checked in the tests).
_FOLDS = {"i": "\u0130\u0131", "k": "\u212a", "s": "\u017f"}
# The view a detector sees is unescaped (`_unescaped`): a character of it may stand for this in the text.
_ESCAPED_AS = {"\n": "\\n", "\r": "\\r", "\t": "\\t", '"': '\\"', "/": "\\/", "\\": "\\\\"}


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


def _anchors(pattern: str, flags: int, lowered: bool = False) -> Anchors | None:
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
    if char in _SEP or "\ud800" <= char <= "\udfff":
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


def _best(candidates: Iterable[frozenset[str]], least: int = _MIN_ANCHOR) -> frozenset[str] | None:
    """The most selective of several required sets: longest shortest string, then fewest strings."""
    scored = [(min(map(len, r)), -len(r), sorted(r), r) for r in map(_reduced, candidates) if r]
    best = max(scored, default=None)
    return None if best is None or best[0] < least else best[3]


_Key = tuple[str, int, bool]  # a regex, its flags, whether it runs on the lowered text


def _anchors_of(keys: Iterable[_Key]) -> dict[_Key, Anchors | None]:
    """`_anchors` of each regex, kept in a cache file: deriving them all takes ~20 ms, at every start
    of a process that redacts. The file is named by a hash of this module's source and of the Python
    version: a change to the derivation, or to the regex parser, derives them again."""
    try:
        tag = hashlib.blake2b(Path(__file__).read_bytes() + sys.version.encode(), digest_size=8).hexdigest()
        cache: Path | None = _cache_dir() / f"anchors-{tag}.json"
    except OSError:
        cache = None
    try:
        stored = json.loads(cache.read_text()) if cache else {}
    except (OSError, ValueError):
        stored = {}  # none yet, or damaged
    stored = stored if isinstance(stored, dict) else {}
    out: dict[_Key, Anchors | None] = {}
    derived = False
    for key in keys:
        name = json.dumps(key)
        entry = stored.get(name, False)
        if entry is None or (isinstance(entry, list) and len(entry) == 2 and isinstance(entry[0], bool)
                             and isinstance(entry[1], list) and entry[1]
                             and all(isinstance(s, str) and len(s) >= _MIN_ANCHOR for s in entry[1])):
            out[key] = None if entry is None else Anchors(frozenset(entry[1]), entry[0])
            continue
        found = out[key] = _anchors(*key)
        stored[name] = None if found is None else [found.fold, sorted(found.strings)]
        derived = True
    if derived and cache is not None and _store(cache, stored):
        for old in cache.parent.glob("anchors-*.json"):
            if old != cache:
                old.unlink(missing_ok=True)  # an earlier version's
    return out


def _re2_pattern(anchors: Anchors) -> str:
    """The anchors as an RE2 alternation over the text as stored: a letter compared ignoring case as a
    class of its Python equivalents, a character of the unescaped view also as its JSON escape."""
    return "|".join("".join(_re2_char(c, anchors.fold) for c in s) for s in sorted(anchors.strings))


def _re2_char(char: str, fold: bool) -> str:
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
        keyword = {kw: (c.pattern, c.flags, True) for kw, c in _CANDIDATES.items()}
        anchors = _anchors_of([*own.values(), *trigger.values(), *keyword.values()])
        self._needs: dict[Anchors, int] = {}  # anchors -> their pattern's index in the set

        def need(*keys: _Key) -> tuple[int, ...]:
            found = [a for a in map(anchors.__getitem__, keys) if a is not None]
            return tuple(self._needs.setdefault(a, len(self._needs)) for a in found)

        self._whole = [(d, need(own[id(d)])) for d in whole]
        self._triggered = [(d, need(own[id(d)], trigger[id(d)])) for d in triggered]
        self._named = [(d, need(own[id(d)])) for d in named]
        self._keywords = [(kw, need(key)) for kw, key in keyword.items()]
        self._set: Any = None
        if self._needs:
            options = re2.Options()
            options.max_mem = 64 << 20  # a set's DFA that ran out would miss matches silently
            self._set = re2.Set.SearchSet(options)
            for a in self._needs:  # in index order
                self._set.Add(_re2_pattern(a))
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


# -- the redactor -----------------------------------------------------------------------------------


class Redactor:
    """Finds secrets in many texts at once and replaces each by its placeholder."""

    def __init__(self, detectors: Iterable[Detector], gate: bool = True) -> None:
        self.detectors = list(detectors)
        self._whole = [d for d in self.detectors if not d.named and d.trigger is None]
        self._triggered = [d for d in self.detectors if not d.named and d.trigger is not None]
        self._named = [d for d in self.detectors if d.named]
        self._gated = gate  # False: every detector runs on every text (the tests compare both)
        self._every = Plan(tuple(self._whole), tuple(self._triggered), tuple(self._named), _NAMED_KEYWORDS)

    @cached_property
    def _gate(self) -> Gate:
        return Gate(self._whole, self._triggered, self._named)

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
        joined, with its detectors only; a text no detector can match is not searched."""
        groups: dict[Plan, list[int]] = {}
        for i, text in enumerate(texts):
            plan = self._plan(text)
            if plan is not None:
                groups.setdefault(plan, []).append(i)
        out: dict[int, Redacted] = {}
        for plan, members in groups.items():
            group = [texts[i] for i in members]
            joined = group[0] if len(group) == 1 else _SEP.join(group)
            for j, found in _pieces(group, self._spans_in(joined, plan)).items():
                out[members[j]] = _replace(group[j], found)
        return dict(sorted(out.items()))

    def spans(self, text: str) -> list[tuple[int, int, str]]:
        """Where the secrets are: (start, end, kind), sorted, not overlapping."""
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
        return _merge(raw)

    @staticmethod
    def _named_spans(text: str, low: str, raw: list[tuple[int, int, str, bool]], plan: Plan) -> None:
        names: dict[int, tuple[int, set[str]]] = {}  # name start -> (line end, keywords in the name)
        for kw in plan.keywords:
            for hit in _CANDIDATES[kw].finditer(low):
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
            for kw in _NAMED_KEYWORDS:
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


def _only_placeholders(found: str) -> bool:
    """Already redacted: a placeholder, perhaps with an escape or punctuation next to it."""
    if "[REDACTED:" not in found:
        return False
    rest = _PLACEHOLDER.sub("", found)
    return sum(c.isalnum() for c in rest) < 4


def _pieces(texts: Sequence[str], spans: list[tuple[int, int, str]]) -> dict[int, list[tuple[int, int, str]]]:
    """Spans of the texts joined with _SEP, as spans of each text (by index; a span over a separator is cut)."""
    pieces: dict[int, list[tuple[int, int, str]]] = {}
    if not spans:
        return pieces
    starts: list[int] = []
    pos = 0
    for t in texts:
        starts.append(pos)
        pos += len(t) + len(_SEP)
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


_ESCAPE = re.compile(r'\\[\\nrt"/]')
_ESCAPED = (("\\n", "\n"), ("\\r", "\r"), ("\\t", "\t"), ('\\"', '"'), ("\\/", "/"))


def _unescaped(text: str) -> tuple[str, list[int]]:
    """The text with JSON's two-character escapes (\\\\ \\n \\r \\t \\" \\/) as the characters
    they stand for, and where each escape starts in the text."""
    escapes = [m.start() for m in _ESCAPE.finditer(text)]
    if not escapes:
        return text, escapes
    if "\x01" in text:
        return _ESCAPE.sub(lambda m: dict(_ESCAPED).get(m.group(), "\\"), text), escapes
    view = text.replace("\\\\", "\x01")  # an escaped backslash first: it may precede an n
    for escape, char in _ESCAPED:
        view = view.replace(escape, char)
    return view.replace("\x01", "\\"), escapes


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


@lru_cache(maxsize=8)
def _redactor(patterns: tuple[tuple[str, str], ...]) -> Redactor:
    return Redactor([*_plugin_detectors(), *_added_detectors(), *custom_detectors(dict(patterns))])


OFF = Redactor([])  # redaction turned off: finds nothing


def redactor(enabled: bool = True, patterns: Mapping[str, str] | None = None) -> Redactor:
    """The redactor for these settings (built once per process); OFF when redaction is off."""
    if not enabled:
        return OFF
    return _redactor(tuple(sorted((patterns or {}).items())))
