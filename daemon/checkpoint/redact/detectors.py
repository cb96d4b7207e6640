"""What a secret looks like: the `Detector` record, the detectors checkpoint adds to detect-secrets'
(ADDED, each with why detect-secrets does not cover it), those a user configures (`redact_patterns`),
and where the detectors that need a secret-sounding name may run (the assignment candidates)."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cache, cached_property
from typing import Any

from checkpoint.redact.pasted import PASTED
from checkpoint.redact.prose import prose
from checkpoint.redact.spoken import spoken

PLACEHOLDER = "[REDACTED:{}]"
PLACEHOLDER_PATTERN = re.compile(r"\[REDACTED:[a-z0-9_]+\]")
_KIND = re.compile(r"[a-z][a-z0-9_]{0,63}")
# Turns are joined with this between them: every pattern's `$`/`\s` sees a line end, none of ours
# crosses the NUL, and a match that still spans two turns is cut at the boundary.
SEPARATOR = "\n\x00\n"

Check = Callable[["re.Match[str]"], bool]


@dataclass
class Detector:
    """One regex for one kind of secret, and how and where it runs."""

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
    # An RE2 pattern the text as stored must hold for the detector to run, matched in the gate's one
    # set: for a regex whose anchors are in nearly every text (Vault's `s.`, the `ac` of a Twilio
    # account SID). It must find every text the detector (on the lowered, unescaped view) can match.
    gate: str | None = None

    @cached_property
    def pattern(self) -> re.Pattern[str]:
        return re.compile(self.source, self.flags)


# OpenAI and Anthropic keys: looked for after each `sk-` (detect-secrets' OpenAI plugin runs the same way).
SK_PREFIXED: dict[str, Any] = {"trigger": r"sk-", "before": 0, "after": 400}

_FALSY = frozenset({"true", "false", "null", "none", "nil", "yes", "no", "on", "off", "undefined", "changeme"})
_DOTTED = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+")
_TOKEN_PART = re.compile(r"(?=[\w\-]*\d)[\w\-]{12,}")  # a part of a dotted value no attribute name looks like


def _code_like(bare: str) -> bool:
    """An attribute path (settings.db.password), not a dotted token (hvs.CAESI..., dp.pt.x8K...)."""
    return _DOTTED.fullmatch(bare) is not None and not any(
        _TOKEN_PART.fullmatch(part) for part in bare.split(".")[1:])


def _literal(m: re.Match[str]) -> bool:
    """An assigned value that is a literal, not a reference, a template, a number or a flag."""
    value = m.group("secret")
    quoted = value[:1] in ("'", '"', "`")
    bare = value.strip("'\"`")
    if not bare or bare[0] in "$%<{" or PLACEHOLDER_PATTERN.fullmatch(bare) or bare.isdigit():
        return False
    if bare.lower() in _FALSY:
        return False
    if not quoted:
        following = m.string[m.end():m.end() + 1]
        if following in ("(", "[") or _code_like(bare):
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
    ("anthropic_api_key", r"sk-ant-[a-z]{2,10}\d{0,3}-[A-Za-z0-9_\-]{16,}", SK_PREFIXED,
     "detect-secrets has no Anthropic detector"),
    ("openai_api_key", r"sk-(?:proj|svcacct|admin|None)-[A-Za-z0-9_\-]{20,}", SK_PREFIXED,
     "detect-secrets' OpenAI plugin needs the T3BlbkFJ marker at fixed offsets; project, service-account "
     "and admin keys are longer and may lack it"),
    ("github_token", r"github_pat_[A-Za-z0-9_]{22,}", {},
     "fine-grained personal access tokens: detect-secrets knows ghp_/gho_/ghu_/ghs_/ghr_ only"),
    ("google_api_key", r"AIza[0-9A-Za-z_\-]{35}", {}, "detect-secrets has no Google Cloud detector"),
    ("npm_token", r"npm_[A-Za-z0-9]{36}", {},
     "npm access tokens anywhere: detect-secrets' NPM plugin knows only the .npmrc _authToken line"),
    ("password_in_url", r"://[^\s/:@\x00]*:(?P<secret>[^\s/@\x00]+)@", {"group": "secret"},
     "detect-secrets' BasicAuth plugin refuses passwords holding !$&'()*+,;= (RFC 3986 allows them in userinfo), "
     "and an empty user (redis://:pw@host)"),
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
    *PASTED,
    *spoken(),
    *prose(),
]

# Where a secret-sounding name is assigned something: the only places the `named` detectors run.
# One literal-prefixed regex per keyword on the lowered text (a regex starting with an alternation
# has no fast prefix search and costs several times more).
NAMED_KEYWORDS = ("key", "secret", "token", "pass", "pw", "credential", "contrase")
_ASSIGNED = (
    r"[a-z0-9_.\-]{0,40}[\"'\]`)]{0,2}[ \t]*"
    r"(?:(?:=>|:=|={1,3}|!==?|:)[ \t]*@?"  # an assignment (or comparison) whose value is ...
    r"(?:[\"'`][^\"'`\s]"  # ... quoted, or bare but no number, call, index, reference or structure
    r"|(?!\d+(?![\w\-./+=])|[a-z_][\w.]*[(\[])[^\s\"'`$({\[<,;#])"
    r"|\([\"']|[ \t][\"'])"  # secret("..."), private_key "..."
)
ASSIGNMENT_CANDIDATES = {kw: kw + _ASSIGNED for kw in NAMED_KEYWORDS}  # compiled on first use: `assignment_candidates`


@cache
def assignment_candidates() -> dict[str, re.Pattern[str]]:
    """ASSIGNMENT_CANDIDATES compiled (here, not at import: a process that never redacts never pays for them)."""
    return {kw: re.compile(source) for kw, source in ASSIGNMENT_CANDIDATES.items()}


def added_detectors() -> list[Detector]:
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

