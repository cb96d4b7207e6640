"""Secrets said in sentences (issue 32): what a developer tells an agent in prose, where no assignment
and no known prefix marks them for the other detectors. A password in plain language ("we'll use the
password Tr0ub4dor&3-Gx for staging"), an AWS secret key near the word AWS or its key id, a private
key's body without its BEGIN line, an Azure SAS signature, an old-style Vault `s.` token, a Google
OAuth client secret, and a base64-wrapped file holding a credential (a `.env` in a Kubernetes secret or
a CI variable). Each entry: (kind, regex, how it runs, why), as in `detectors.ADDED`.

Each runs only where the gate finds its anchor or its trigger's (a literal: `passw`, `aws`, `sig=`, the
base64 of `password` at each of its three alignments...), so text without one costs nothing more.
"""

from __future__ import annotations

import base64
import binascii
import re
from functools import cache
from typing import Any

_SYMBOLS = frozenset("!#$%&*+;<>?@^~|=,")  # '-', '_', '.', '/' join words and paths too often to count


def _classes(value: str) -> int:
    """How many of lower case, upper case, digits and symbols the value mixes."""
    return (any(c.islower() for c in value) + any(c.isupper() for c in value) + any(c.isdigit() for c in value)
            + any(c in _SYMBOLS for c in value))


def _spoken_password(m: re.Match[str]) -> bool:
    """A password as people pick them (three of lower, upper, digits, symbols; 8 or more), not a word,
    a reference, a call, a path or a placeholder."""
    value = m.group("secret")
    if len(value) < 8 or value[0] in "$%<{[(/\\" or "[REDACTED:" in value or "(" in value or "://" in value:
        return False
    return _classes(value) >= 3


def _mixed(m: re.Match[str]) -> bool:
    """A random token: upper and lower case and a digit, ten or more distinct characters, and not inside
    a longer word or a dotted name (xs.Name..., hvs.X is the vault_token detector's)."""
    value, start = m.group(), m.start()
    before = m.string[start - 1:start]
    if before and (before.isalnum() or before in "_.-"):
        return False
    return _classes(value) >= 3 and len(set(value)) >= 10


def _aws_secret(m: re.Match[str]) -> bool:
    """40 characters of base64 that read as random: several of each case, a digit, few slashes (a path
    of that length has words between its slashes)."""
    value = m.group()
    upper, lower = sum(c.isupper() for c in value), sum(c.islower() for c in value)
    return (upper >= 4 and lower >= 4 and any(c.isdigit() for c in value) and value.count("/") <= 4
            and len(set(value)) >= 20)


def _sas_signature(m: re.Match[str]) -> bool:
    return len(set(m.group("secret"))) >= 10


# -- base64-wrapped credentials ------------------------------------------------------------------------

# Words whose base64 (at each of the three alignments a word can have in a blob) marks a blob worth
# decoding: the credential words of .env, JSON and YAML files, in the cases they are written in.
_WRAPPED_WORDS = (
    "password", "Password", "PASSWORD", "passwd", "PASSWD", "secret", "Secret", "SECRET", "token", "Token",
    "TOKEN", "api_key", "API_KEY", "apikey", "apiKey", "sk_live_", "rk_live_", "PRIVATE KEY", "private_key",
)
# What the decoded blob must hold: a credential word assigned something, a live Stripe key, a private key.
_WRAPPED_CREDENTIAL = re.compile(
    r"(?:passw(?:or)?d|secret|token|api_?key|private_key)[\w\"' ]{0,30}[=:]|[sr]k_live_|private key", re.IGNORECASE)


def base64_anchors(word: bytes) -> list[str]:
    """The base64 characters that `word` alone decides, at each of its three alignments in a blob."""
    out = []
    for shift in range(3):
        encoded = base64.b64encode(b"\0" * shift + word + b"\0\0").decode()
        first, last = -(-8 * shift // 6), (8 * (shift + len(word))) // 6  # chars wholly inside the word's bits
        out.append(encoded[first:last])
    return out


@cache
def _wrapped_trigger() -> str:
    anchors = {a.lower() for w in _WRAPPED_WORDS for a in base64_anchors(w.encode())}
    return "|".join(re.escape(a) for a in sorted(anchors, key=lambda a: (-len(a), a)))


def _wrapped_credential(m: re.Match[str]) -> bool:
    """The blob decodes to text (not an image or a binary) holding a credential."""
    blob = re.sub(r"\s|\\[nr]", "", m.group()).rstrip("=")
    blob = blob[:len(blob) - (len(blob) % 4 == 1)]
    try:
        data = base64.b64decode(blob + "=" * (-len(blob) % 4))
    except (binascii.Error, ValueError):
        return False
    text = data.decode("utf-8", "replace")
    printable = sum(c.isprintable() or c in "\n\r\t" for c in text)
    return printable >= 0.9 * len(text) and _WRAPPED_CREDENTIAL.search(text) is not None


_B64_LINE_END = r"(?=[ \t]*(?:\r?\n|(?:\\r)?\\n|$|[\"'`]))"
_BREAK = r"(?:[ \t]*(?:\r?\n|(?:\\r)?\\n)[ \t]*)"
# A key's body starts with what its format always starts with: openssh-key-v1, an RSA key's version and
# modulus (PKCS#1), an RSA key's algorithm (PKCS#8), an EC key's version and length (SEC1).
_KEY_BODY = (
    r"(?:b3BlbnNzaC1rZXktdjE|MII[A-Za-z0-9+/]{3}(?:IBAAK[BC]|IBADANBgkqhkiG9w0BAQEFAAS[BC])|MHcCAQEEI)"
    r"[A-Za-z0-9+/=]*(?:" + _BREAK + r"[A-Za-z0-9+/=]{4,}" + _B64_LINE_END + r")*"
)
_BLOB = r"(?<![A-Za-z0-9+/])(?:[A-Za-z0-9+/]{60,}" + _BREAK + r")*[A-Za-z0-9+/]{16,}={0,2}"


def spoken() -> list[tuple[str, str, dict[str, Any], str]]:
    """The entries for detectors.ADDED."""
    return [
        ("password_in_prose",
         r"(?:passw(?:or)?d|passphrase)s?\b[ \t]*(?:(?:is|was|will[ \t]+be|would[ \t]+be|to|as|of|=|:=|:)[ \t]*)?"
         r"(?:(?:now|still|just|simply)[ \t]+)?[\"'`]?(?P<secret>[^\s\"'`]*[^\s\"'`.,;:)!?])",
         {"trigger": r"passw(?:or)?d|passphrase", "before": 0, "after": 200, "group": "secret",
          "flags": re.IGNORECASE | re.ASCII, "check": _spoken_password},  # ASCII: as the trigger, no ſ for s
         "a password said in plain language (the password X, password is X): detect-secrets knows assignments only"),
        ("google_oauth_secret", r"(?<![A-Za-z0-9_])GOCSPX-[A-Za-z0-9_\-]{24,64}(?![A-Za-z0-9_])", {},
         "Google OAuth client secrets: detect-secrets has no Google detector"),
        # gate: the token's own shape (its anchor `s.` is in nearly every text: "this.", "is.")
        ("vault_token", r"s\.[A-Za-z0-9]{24}(?![A-Za-z0-9_.\-])", {"check": _mixed, "gate": r"s\.[A-Za-z0-9]{24}"},
         "old-style Vault service tokens (s. and 24 characters): gitleaks' vault rule, which detect-secrets lacks"),
        ("aws_secret_access_key", r"(?<![A-Za-z0-9/+=])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])",
         {"trigger": r"aws|a[ks]ia[0-9a-z]{16}", "before": 300, "after": 300, "check": _aws_secret},
         "an AWS secret key in a sentence near the word AWS or its key id, without the aws_secret_access_key label"),
        ("private_key", _KEY_BODY, {},
         "a private key's body pasted without its BEGIN line: its first bytes are the format's own"),
        ("azure_sas", r"(?<![\w])sig=(?P<secret>[A-Za-z0-9%+/=_\-]{20,})", {"group": "secret", "check": _sas_signature},
         "Azure SAS tokens and other signed URLs: the signature lets anyone holding the URL in"),
        ("base64_secret", _BLOB,
         {"trigger": _wrapped_trigger(), "before": 1 << 14, "after": 1 << 14, "check": _wrapped_credential},
         "a base64-wrapped file holding a credential (a .env in a Kubernetes secret or a CI variable)"),
    ]
