"""The extractors' names, and nothing else: the values the `extractor` setting may take. A leaf: config
reads them at every command's start and every extractor imports config, so the names live apart from
the registry (extract/registry.py, which registers one entry per name: its test checks they agree)."""

from __future__ import annotations

NAMES: tuple[str, ...] = ("anthropic", "claude-code", "codex", "openai", "heuristic")
OFFLINE = "heuristic"  # the extractor that always runs: it stands in for one that cannot

# The `extractor` setting left unset ("auto" in the editor): choose.py's automatic choice.
AUTOMATIC = "auto"
