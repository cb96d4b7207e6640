"""What to say when an extractor's command is not on PATH: said by the registry's readiness checks
and by the extractors themselves. A leaf, so that the extractors need not import the registry that
builds them."""

from __future__ import annotations

CODEX_INSTALL_HINT = "install it with `npm install -g @openai/codex`, or set codex_command"


def claude_not_found(command: str) -> str:
    return f"`{command}` not found on PATH (install Claude Code: npm install -g @anthropic-ai/claude-code, or set " \
           "claude_command)"


def codex_not_found(command: str) -> str:
    return f"`{command}` is not on PATH (codex_command = {command!r}; {CODEX_INSTALL_HINT})"
