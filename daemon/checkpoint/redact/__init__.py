"""Secrets out of transcript text before it is stored or sent: each becomes a typed placeholder,
`[REDACTED:aws_access_key]`.

Where. Every turn's text is redacted as it is read, before it is stored (`pipeline.scan`), so the
database never holds a secret; every chunk is redacted again right before it goes to an extractor
(`runner.extract_due`): rows stored while redaction was off, or before a pattern was added. Turn
ids come from the records' uuids or a hash of the raw line, never from the text, so redacting
changes no id; items come from redacted text, so they hold no secret either.

What. The regexes of detect-secrets' plugins (the maintained detector; read from the installed
package, see `detect_secrets_table`), less the ones in SKIPPED, plus what it lacks (ADDED, each with
its reason), plus `redact_patterns` from the settings. Detectors that need a secret-sounding name
(`api_key = "..."`, `GITHUB_TOKEN=...`) run only where such a name is assigned something (the
assignment candidates); the others run over the text of a whole batch of turns at once, most of them
only near a literal they need (their trigger). And each runs only on the texts that hold one of the
literals it needs (its anchors, derived from its regex), which most texts lack; the named ones only
on the texts where one of their names may be assigned something.

The units: `detectors` (the Detector record, ADDED, `redact_patterns`), `plugins` (the detect-secrets
table), `anchors` and `gate` (the anchor gate), `engine` (the Redactor), `cache` (their cache files),
`outside` (`hide_secrets`: the one redaction of strings from outside, errors, messages, URLs, logs,
with the configured credentials by value).
This module is the facade: `redact.redactor(...)` builds the redactor for the settings.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache

from checkpoint.redact.detectors import ADDED, PLACEHOLDER, Check, Detector, added_detectors, custom_detectors
from checkpoint.redact.engine import Redacted, Redactor
from checkpoint.redact.gate import Gate, Plan
from checkpoint.redact.literals import Anchors
from checkpoint.redact.outside import configured_credentials, hide_secrets, hide_secrets_in_logs
from checkpoint.redact.plugins import SKIPPED, detect_secrets_table, plugin_detectors

__all__ = [
    "ADDED", "OFF", "PLACEHOLDER", "SKIPPED", "Anchors", "Check", "Detector", "Gate", "Plan", "Redacted", "Redactor",
    "configured_credentials", "custom_detectors", "detect_secrets_table", "hide_secrets", "hide_secrets_in_logs",
    "redactor",
]


@lru_cache(maxsize=8)
def _redactor(patterns: tuple[tuple[str, str], ...]) -> Redactor:
    return Redactor([*plugin_detectors(), *added_detectors(), *custom_detectors(dict(patterns))])


OFF = Redactor([])  # redaction turned off: finds nothing


def redactor(enabled: bool = True, patterns: Mapping[str, str] | None = None) -> Redactor:
    """The redactor for these settings (built once per process); OFF when redaction is off."""
    if not enabled:
        return OFF
    return _redactor(tuple(sorted((patterns or {}).items())))
