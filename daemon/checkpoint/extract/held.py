"""Which items are held for the user's review before any agent is shown them.

An item's statement comes back in every later agent session (the SessionStart context, the MCP
answers), so a transcript could plant an instruction for every agent that follows: a fetched page,
a pasted text, a hostile prompt. An item is held when it reads as such a planted instruction:

- known injection phrasing ("ignore all previous instructions", "you are now", "developer mode", a
  role marker such as "SYSTEM:", "do not tell the user") or markup that would close an agent's
  context (`</system-reminder>`, `</additionalContext>`, `<|im_start|>`): held whatever else it says;
- a download piped into a shell (`curl … | sh`): held, however it is phrased (it runs what a server sends);
- an instruction to an agent (an imperative: "Run …", "Always …", "you must …") that names a
  dangerous command (`rm -rf`, `chmod 777`, `eval`, `/dev/tcp`), a URL, or a credential path
  (`~/.ssh`, `id_rsa`, `.env`, `.aws/credentials`, `.netrc`).

A plain project instruction ("Run the tests with pytest -q before pushing.") and a decision that
names a URL or a key file ("We'll serve the docs from https://docs.example.com.") are not held: they
are what Checkpoint is for. A prohibition ("Never commit .env files.") is not an instruction to act.
A held item reaches agents once the user accepts it (`checkpoint accept`, the editor's Accept).

Pure: text in, the reason out (None: not held). Loads nothing heavy (the hooks call it)."""

from __future__ import annotations

import re

_INJECTION = re.compile(
    r"\b(?:ignore|disregard|forget|override)\s+(?:all\s+|any\s+)?(?:the\s+|your\s+|of\s+the\s+)?"
    r"(?:previous|prior|above|earlier|preceding|former|system|original)\s+"
    r"(?:instructions?|prompts?|rules|messages|directions|context|guidelines)"
    r"|\byou\s+are\s+now\b|\bdeveloper\s+mode\b|\bjailbr[eo]ak|\bDAN\s+mode\b|\bact\s+as\s+(?:an?\s+)?(?:unrestricted|unfiltered)"
    r"|\bnew\s+instructions\s*:"
    r"|\b(?:do\s+not|don'?t|never|without)\s+(?:ever\s+)?(?:tell|telling|mention|mentioning|inform|informing|reveal|revealing"
    r"|show|showing|disclose|disclosing|let)\b[^.!?]{0,40}?\b(?:the\s+)?(?:user|human|developer|operator)\b"
    r"|\b(?:hide|keep)\s+(?:this|it|that)\s+(?:secret\s+)?from\s+the\s+(?:user|human|developer)\b",
    re.IGNORECASE,
)
# A role marker as a chat format spells it: "SYSTEM:" anywhere, "system:" opening the text.
_ROLE_AT_START = re.compile(r"^\W*(?:system|assistant|developer)\s*:", re.IGNORECASE)
_ROLE_MARKER = re.compile(r"\b(?:SYSTEM|ASSISTANT|DEVELOPER)\s*:")  # upper case: "Build system: Bazel" is not one
# Markup an agent could read as the end of its context, or a chat template's own tokens.
_MARKUP = re.compile(
    r"</?\s*(?:system(?:-reminder)?|additional_?context|hook_context|untrusted_context|instructions?|"
    r"user|assistant|human|context|tool_result|function_results|antml:[\w-]+)\b[^>]*>"
    r"|<\|\s*(?:im_start|im_end|system|endoftext)\s*\|>|\[/?INST\]",
    re.IGNORECASE,
)
_PIPE_TO_SHELL = re.compile(
    r"\b(?:curl|wget|fetch|iwr|Invoke-WebRequest)\b[^|\n]{0,300}\|\s*(?:sudo\s+)?(?:ba|z|da|k|fi)?sh\b"
    r"|\b(?:curl|wget)\b[^|\n]{0,300}\|\s*(?:sudo\s+)?(?:python3?|perl|ruby|node|iex)\b"
    r"|\b(?:ba|z)?sh\s+(?:-c\s+)?[\"']?\$\(\s*(?:curl|wget)\b|\biex\s*\(\s*(?:iwr|irm|New-Object)",
    re.IGNORECASE,
)
_COMMAND = re.compile(
    r"\brm\s+-(?:[a-z]*r[a-z]*f|[a-z]*f[a-z]*r)[a-z]*\b|\bchmod\s+(?:-R\s+)?777\b|\beval\s*[\"'(`$]"
    r"|/dev/tcp/|\bnc\s+(?:-\w+\s+)*-e\b|\bmkfs\b|\bdd\s+if=|\bbase64\s+(?:-d|--decode)\b[^|\n]*\|"
    r"|\b(?:scp|rsync)\b[^\n]*\b\w+@[\w.-]+:|\bgit\s+push\s+(?:-f|--force)\b|\bsudo\s+\S",
    re.IGNORECASE,
)
_URL = re.compile(r"\b(?:https?|ftp|wss?)://\S+|\bwww\.[\w-]+\.\w+", re.IGNORECASE)
_CREDENTIAL_PATH = re.compile(
    r"(?:~|\$HOME|/home/\w+|/root)?/?\.ssh\b|\bid_(?:rsa|dsa|ecdsa|ed25519)\b|(?<![\w.])\.env(?:\.\w+)?\b"
    r"|\.aws/(?:credentials|config)\b|(?<![\w-])credentials(?:\.json|\.ya?ml|\.toml|\.ini)\b|/credentials\b"
    r"|(?<![\w.])\.(?:netrc|pgpass|npmrc|pypirc|git-credentials|gnupg|docker/config\.json|kube/config)\b"
    r"|/etc/(?:shadow|passwd|sudoers)\b|\bkeychain\b",
    re.IGNORECASE,
)
# Instructions to act: an imperative verb opening a clause, or a directive to the agent anywhere.
_ACT_VERBS = (
    "run|execute|exec|install|download|fetch|curl|wget|upload|send|post|copy|cp|move|mv|delete|remove|rm|"
    "read|cat|open|print|echo|export|source|eval|pipe|chmod|chown|sudo|ssh|scp|rsync|paste|include|email|"
    "share|leak|exfiltrate|disable|bypass|skip|call|visit|go|navigate|load|import|add|put|write|append|"
    "store|save|push|commit|deploy|set|use|start|launch|invoke|submit|transmit|forward|attach|embed|grant"
)
_FILLER = r"(?:(?:always|first|then|also|now|just|please|immediately|quietly|silently|secretly|next|finally|and)\s+)*"
_OPENS_WITH_VERB = re.compile(rf"^\W*{_FILLER}(?:{_ACT_VERBS})\b", re.IGNORECASE)
_DIRECTIVE = re.compile(
    r"^\W*(?:always|please|make\s+sure|be\s+sure|remember\s+to|from\s+now\s+on|every\s+time|each\s+time)\b"
    r"|\b(?:you|agents?|assistants?|claude|the\s+(?:model|agent|assistant|ai))\s+(?:must|should|shall|will|need\s+to|has\s+to|have\s+to|are\s+to|is\s+to)\b"
    r"|\b(?:never|don'?t|do\s+not)\s+(?:forget|skip|fail|neglect)\s+to\b"
    r"|\b(?:always|make\s+sure\s+to|be\s+sure\s+to|remember\s+to)\s+(?:" + _ACT_VERBS + r")\b",
    re.IGNORECASE,
)


def _instruction(text: str) -> bool:
    """An instruction to act: a clause opening with an imperative verb, or a directive to the agent."""
    if _DIRECTIVE.search(text) or _OPENS_WITH_VERB.search(text):
        return True
    clauses = re.split(r"[.;!?]\s+|,\s*(?:and\s+|then\s+)?|\s+and\s+then\s+|\n", text)
    return any(_OPENS_WITH_VERB.search(clause) for clause in clauses)


def review_reason(text: str) -> str | None:
    """Why an item with this text (its statement, or its rationale) is held for the user's review
    before agents are shown it; None: it is not held."""
    if _INJECTION.search(text) or _ROLE_AT_START.search(text) or _ROLE_MARKER.search(text):
        return "known prompt-injection phrasing"
    if _MARKUP.search(text):
        return "markup that could end an agent's context"
    if _PIPE_TO_SHELL.search(text):
        return "a download piped into a shell"
    if not _instruction(text):
        return None
    for pattern, what in ((_COMMAND, "a dangerous command"), (_URL, "a URL"), (_CREDENTIAL_PATH, "a credential path")):
        if pattern.search(text):
            return f"an instruction to an agent with {what}"
    return None


def item_review_reason(statement: str, rationale: str | None = None) -> str | None:
    """Why an item is held (its statement first, then its rationale); None: it is not held."""
    return review_reason(statement) or (review_reason(rationale) if rationale else None)


def held_for_review(statement: str, rationale: str | None = None) -> bool:
    return item_review_reason(statement, rationale) is not None
