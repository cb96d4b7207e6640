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
only near a literal they need (their trigger). A scan of the seed-sized session takes about 12 %
more CPU with redaction than without.
"""

from __future__ import annotations

import bisect
import importlib.util
import json
import os
import re
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
    try:
        cache.parent.mkdir(parents=True, exist_ok=True)
        tmp = cache.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps(rows))
        os.replace(tmp, cache)
    except OSError:
        pass  # a read-only home: built again next time
    return version, tuple(rows)


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


# -- the redactor -----------------------------------------------------------------------------------


class Redactor:
    """Finds secrets in many texts at once and replaces each by its placeholder."""

    def __init__(self, detectors: Iterable[Detector]) -> None:
        self.detectors = list(detectors)
        self._whole = [d for d in self.detectors if not d.named and d.trigger is None]
        self._triggered = [d for d in self.detectors if not d.named and d.trigger is not None]
        self._named = [d for d in self.detectors if d.named]

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
        """The texts in which something was found (by index), redacted, with what was found."""
        if not texts:
            return {}
        joined = texts[0] if len(texts) == 1 else _SEP.join(texts)
        spans = self.spans(joined)
        out: dict[int, Redacted] = {}
        if not spans:
            return out
        starts: list[int] = []
        pos = 0
        for t in texts:
            starts.append(pos)
            pos += len(t) + len(_SEP)
        pieces: dict[int, list[tuple[int, int, str]]] = {}
        for s, e, kind in spans:
            i = bisect.bisect_right(starts, s) - 1
            while i < len(texts) and s < e:
                base, end = starts[i], starts[i] + len(texts[i])
                if s < end:
                    pieces.setdefault(i, []).append((s - base, min(e, end) - base, kind))
                i += 1
                s = max(s, starts[i]) if i < len(texts) else e
        for i, found in pieces.items():
            out[i] = _replace(texts[i], found)
        return out

    def spans(self, text: str) -> list[tuple[int, int, str]]:
        """Where the secrets are: (start, end, kind), sorted, not overlapping.

        Text with JSON string escapes (a tool call's input is rendered as JSON: a Bash command, a
        file written, each quote as \\" and each line break as \\n) is searched as it reads
        unescaped, and what is found is cut from the text as stored."""
        if not self.detectors:
            return []
        if "\\" in text:
            view, escapes = _unescaped(text)
            if escapes:
                # escape i sits at escapes[i] in the text (2 characters) and at escapes[i] - i in the view (1)
                at = [e - i for i, e in enumerate(escapes)]
                return [(s + bisect.bisect_left(at, s), e + bisect.bisect_left(at, e), kind)
                        for s, e, kind in self._spans(view)]
        return self._spans(text)

    def _spans(self, text: str) -> list[tuple[int, int, str]]:
        low: str | None = None
        raw: list[tuple[int, int, str, bool]] = []
        for d in self._whole:
            if d.lower and low is None:
                low = _lower(text)
            for m in d.pattern.finditer(low if d.lower and low is not None else text):
                self._take(d, m, text, raw)
        if self._triggered or self._named:
            low = low if low is not None else _lower(text)
        hits: dict[str, list[tuple[int, int]]] = {}
        for d in self._triggered:
            assert d.trigger is not None and low is not None
            found = hits.get(d.trigger)
            if found is None:
                found = hits[d.trigger] = [m.span() for m in _compiled(d.trigger).finditer(low)]
            subject = low if d.lower else text
            for start, end in found:
                a, b = max(0, start - d.before), min(len(text), end + d.after)
                for m in d.pattern.finditer(subject, a, b):
                    self._take(d, m, text, raw)
        if self._named:
            assert low is not None
            self._named_spans(text, low, raw)
        return _merge(raw)

    def _named_spans(self, text: str, low: str, raw: list[tuple[int, int, str, bool]]) -> None:
        names: dict[int, tuple[int, set[str]]] = {}  # name start -> (line end, keywords in the name)
        for kw, candidate in _CANDIDATES.items():
            for hit in candidate.finditer(low):
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
            for d in self._named:
                if not (d.named & keywords):
                    continue
                subject = low if d.lower else text
                for b in ordered:
                    m = d.pattern.match(subject, b, line_end)
                    if m is not None and self._take(d, m, text, raw):
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
