"""Secrets said in sentences, round two (issue 37): the kinds that still got through when said in
prose. An AWS secret key next to the word "secret" with no "aws" near; a password said in another
language ("Das Passwort ist ..."); a weak one after "password is" (hunter2); a YAML passphrase of
several words; a Datadog key (32 hex); a Heroku key (a UUID); a 32-hex token next to "auth
token" without the provider's name (a Twilio auth token).

Provider shapes and context words: each entry runs only in windows around a literal trigger (the
gate's anchors: `datadog`, `heroku`, `auth token`, `passwort`, ...), never on text that lacks one, and
each match passes a check that tells a random value from a word, a hash name or a placeholder. Each
entry: (kind, regex, how it runs, why), as in `detectors.ADDED`.
"""

from __future__ import annotations

import re
from typing import Any

from checkpoint.redact.spoken import _aws_secret, _spoken_password

# "password" in the languages developers write to agents in, besides English (spoken.py's).
_PASSWORD_WORDS = (r"passwort|kennwort|mot[ \t]+de[ \t]+passe|contraseña|contrasena|senha|wachtwoord|"
                   r"lösenord|losenord|haslo|salasana|adgangskode|heslo")
# Case ignored for ASCII letters only, as the triggers (matched on the lowered text) see them: IGNORECASE
# alone would take ſ for s where the trigger does not, and the gate and a whole batch would differ.
_FLAGS = re.IGNORECASE | re.ASCII
# The gate's anchors are ASCII literals: a word with none of two letters or more (Russian's пароль), or
# whose only one is common English (Polish hasło: "has"), would run this on almost every text.
_PASSWORD_TRIGGER = (r"passwort|kennwort|mot de passe|contraseña|contrasena|senha|wachtwoord|lösenord|losenord|"
                     r"haslo|salasana|adgangskode|heslo")
# "is", "was", "will be" and "is now" in those languages, and an assignment's signs.
_IS = (r"(?:is|was|ist|war|lautet|wird|est|était|sera|es|era|será|é|foi|är|var|jest|je|on|er|"
       r"=|:=|:)")
_NOW = r"(?:now|still|just|jetzt|noch|nun|maintenant|toujours|ahora|agora|nu|teraz)"
_HASHES = ("sha1", "sha2", "sha3", "sha5", "sha-", "md5", "bcrypt", "argon", "scrypt", "pbkdf", "hash", "salt", "utf-8",
           "utf8", "base64")
_REFERENCE = ("${", "{{", "<", "%(", "!vault", "env(", "secret(", "[redacted:")
_FALSY = frozenset({"true", "false", "null", "none", "nil", "yes", "no", "on", "off", "changeme", "required",
                    "optional", "empty", "unset", "redacted", "hidden", "secret", "*****", "xxxx"})


def _weak_password(m: re.Match[str]) -> bool:
    """After "password is": a value with letters and a digit or a symbol (hunter2, abc123!), not a
    hash's name (sha256-hashed), a number, a path or a placeholder."""
    value = m.group("secret")
    low = value.lower()
    if len(value) < 5 or value[0] in "$%<{[(/\\" or low.startswith(_HASHES) or "hash" in low or "://" in value:
        return False
    letters = any(c.isalpha() for c in value)
    return letters and (any(c.isdigit() for c in value) or any(not c.isalnum() for c in value.strip(".-_")))


def _phrase(m: re.Match[str]) -> bool:
    """A YAML value of several words under a password-like key: a passphrase, not a reference, a
    template, a comment or a sentence about the setting."""
    value = m.group("secret").strip()
    low = value.lower()
    if len(value) < 8 or " " not in value or any(low.startswith(r) or r in low for r in _REFERENCE):
        return False
    return low not in _FALSY and not low.startswith(("must ", "should ", "see ", "set ", "use ", "the "))


def _random_hex(m: re.Match[str]) -> bool:
    """Hex that reads as random: digits and letters, ten or more distinct characters."""
    value = m.group()
    return any(c.isdigit() for c in value) and any(c.isalpha() for c in value) and len(set(value)) >= 10


_HEX32 = r"(?<![0-9a-z])[0-9a-f]{32}(?![0-9a-z])"
_UUID = r"(?<![0-9a-z-])[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}(?![0-9a-z-])"


def prose() -> list[tuple[str, str, dict[str, Any], str]]:
    """The entries for detectors.ADDED."""
    return [
        ("aws_secret_access_key", r"(?<![A-Za-z0-9/+=])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])",
         {"trigger": r"secret|geheim|secreto|secrète|segreto|sekret|hemlig", "before": 200, "after": 200,
          "check": _aws_secret},
         "an AWS secret key next to the word secret (in several languages) with no AWS near"),
        ("password_in_prose",
         r"(?:" + _PASSWORD_WORDS + r")\w*[ \t]*(?:(?:für|for|pour|para|voor)(?:[ \t]+[^\s]+){1,3}?[ \t]+" + _IS
         + r"[ \t]*|(?:" + _IS + r"[ \t]*)?)(?:" + _NOW + r"[ \t]+)?[\"'`«„]?"
         r"(?P<secret>[^\s\"'`»“]*[^\s\"'`»“.,;:)!?])",
         {"trigger": _PASSWORD_TRIGGER, "before": 0, "after": 200, "group": "secret", "flags": _FLAGS,
          "check": _spoken_password},
         "a password said in German, French, Spanish, Portuguese, Dutch, Swedish, Finnish, Danish, Czech ..."),
        ("password_in_prose",
         r"(?:passw(?:or)?[dt]|passphrase|kennwort|mot[ \t]+de[ \t]+passe|contraseña|senha|wachtwoord)s?[ \t]+"
         r"(?:is|was|ist|war|lautet|est|es|era|é|är)[ \t]+(?:" + _NOW + r"[ \t]+)?[\"'`]?"
         r"(?P<secret>[^\s\"'`]*[^\s\"'`.,;:)!?])",
         {"trigger": r"passw|passphrase|kennwort|mot de passe|contraseña|senha|wachtwoord", "before": 0,
          "after": 200, "group": "secret", "flags": _FLAGS, "check": _weak_password},
         "a weak password said after 'password is' (hunter2): the strength check of the others lets it by"),
        ("passphrase_in_yaml",
         r"(?m)^[ \t]*(?:-[ \t]+)?[\"']?[\w.-]*(?:passphrase|password|passwd|passwort|secret)[\"']?[ \t]*:"
         r"[ \t]+(?P<secret>[^\s#\"'|>&*!][^\n#]*?)[ \t]*$",
         {"group": "secret", "flags": _FLAGS, "check": _phrase},
         "a YAML passphrase of several words: an assignment's value ends at the first space for the others"),
        ("passphrase_in_prose",
         r"(?:passphrase|password|passwort|kennwort|mot[ \t]+de[ \t]+passe|contraseña|senha)s?[ \t]*(?:(?:"
         + _IS + r"|to|as|auf|sur|a)[ \t]*)?(?:" + _NOW + r"[ \t]+)?[\"'`“«„]"
         r"(?P<secret>[^\s\"'`”»“][^\"'`”»“\n]{7,79}?)[\"'`”»“]",
         {"trigger": r"passphrase|password|passwort|kennwort|mot de passe|contraseña|senha", "before": 0,
          "after": 200, "group": "secret", "flags": _FLAGS, "check": _phrase},
         "a passphrase of several words quoted in a sentence: the others stop at the first space"),
        ("heroku_api_key", _UUID, {"lower": True, "trigger": r"heroku", "before": 200, "after": 300},
         "Heroku API keys are UUIDs: near the provider's name"),
        # One kind (hex_api_key) for every hex key found by its context, pasted.py's Twilio detectors too:
        # they find the same span near other words, and one span has one kind whichever trigger's window
        # reached it (a batch's windows reach across its texts; the gate's do not).
        # 32 only: 40 hex is a commit's hash as often as a Datadog application key.
        ("hex_api_key", _HEX32,
         {"lower": True, "trigger": r"datadog|dd_api|dd-api|dd api|ddog", "before": 200, "after": 300,
          "check": _random_hex},
         "Datadog API keys (32 hex) have no prefix: near the provider's name"),
        ("hex_api_key", _HEX32,
         {"lower": True, "trigger": r"auth token|auth_token|auth-token|authtoken", "before": 100, "after": 200,
          "check": _random_hex},
         "a 32-hex auth token said without the word twilio (Twilio's have no prefix)"),
    ]
