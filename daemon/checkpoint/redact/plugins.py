"""detect-secrets' plugins as detectors: the regexes of the installed detect-secrets, read once into a
table (kept in a cache file per detect-secrets version, as its import costs ~0.1 s), less the plugins
in SKIPPED, each run as `_PLUGIN_RUN` says (near a trigger, or only at a secret-sounding name)."""

from __future__ import annotations

import importlib.util
import json
import re
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path
from typing import Any

from checkpoint.redact.cache import cache_dir, write_whole
from checkpoint.redact.detectors import SK_PREFIXED, Detector

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
    ("OpenAIDetector", 0): SK_PREFIXED,
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
TABLE_FORMAT = 1


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
    cache = cache_dir() / f"detect-secrets-{version}-{TABLE_FORMAT}.json"
    try:
        rows = json.loads(cache.read_text())
        if isinstance(rows, list) and rows and all(_row_ok(r) for r in rows):
            return version, tuple(rows)
    except (OSError, ValueError):
        pass  # none yet, or damaged: built again
    rows = _build_table()
    write_whole(cache, rows)  # a read-only home: built again next time
    return version, tuple(rows)


@lru_cache(maxsize=1)
def _jwt_valid() -> Callable[[str], bool]:
    from detect_secrets.plugins.jwt import JwtTokenDetector

    check: Callable[[str], bool] = JwtTokenDetector.is_formally_valid
    return check


def _kind_of(secret_type: str) -> str:
    return _KINDS.get(secret_type) or re.sub(r"[^a-z0-9]+", "_", secret_type.lower()).strip("_")


def plugin_detectors() -> list[Detector]:
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

