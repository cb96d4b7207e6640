"""What a person said in a turn, as whole sentences: the offline extractor's input.

A turn's text as the readers give it also holds what nobody said in the session: the agent's
private reasoning and its tool calls, written after its text (where they start: the turn-text owner,
`sources.turn_text`), machine notices the harness writes as user text (task notifications, slash-command
wrappers and their output, hook output, "[Request interrupted ...]"), terminal escape codes, code
blocks and tables. This module removes those and splits the rest into sentences without ever
cutting one: a sentence too long to be an item is left out whole, never shortened.
"""

from __future__ import annotations

import re

from checkpoint.sources.turn_text import not_said_from

MIN_LEN, MAX_LEN = 15, 300

_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b[@-Z\\-_]")
# Whole turns the harness writes as if the user typed them.
_MACHINE_TURN = (
    "<task-notification>", "<local-command-stdout>", "<local-command-stderr>", "<command-name>",
    "<command-message>", "<bash-stdout>", "<bash-stderr>", "<user-prompt-submit-hook>",
    "[Request interrupted", "Caveat: The messages below were generated",
    "This session is being continued from a previous conversation",
    # Claude Code's own prompts, sent as user text: /init's instructions and a loaded skill's body.
    "Please analyze this codebase and create a CLAUDE.md file", "Base directory for this skill:",
)
# Machine blocks that may sit inside a turn; removed with what they hold.
_MACHINE_BLOCK = re.compile(
    r"<(system-reminder|task-notification|local-command-std\w+|command-\w+|bash-std\w+|"
    r"user-prompt-submit-hook|persisted-output)>.*?</\1>",
    re.DOTALL,
)
_LIST_ITEM = re.compile(r"^(?:>\s*)*(?:[-*+]|\d+[.)])\s+")
_QUOTE = re.compile(r"^(?:>\s*)+")
# A sentence ends at . ! ? before a capital, or at the full stops of Chinese and Japanese (。！？), which
# take no space after them.
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z`\"'(*])|(?<=[。！？])\s*")
_MARKUP = re.compile(r"\*\*|(?<!\w)\*(?!\s)|(?<=\S)\*(?!\w)|`")
_WORD = re.compile(r"[^\W\d_]{2,}")
# Scripts written without spaces: two characters count as a word.
_CJK = re.compile("[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]")


def said_text(text: str) -> str:
    """The part of a turn's text that a person said, escape codes and machine blocks removed."""
    text = _ANSI.sub("", text)
    if text.lstrip().startswith(_MACHINE_TURN):
        return ""
    cut = not_said_from(text)
    if cut is not None:
        text = text[:cut]
    return _MACHINE_BLOCK.sub("", text)


def _paragraphs(text: str) -> list[tuple[str, bool]]:
    """Prose paragraphs (a list item is one), and whether each was quoted; code and tables left out."""
    out: list[tuple[str, bool]] = []
    current: list[str] = []
    quoted = False
    fenced = False

    def close() -> None:
        if current:
            out.append((" ".join(current), quoted))
            current.clear()

    for raw in text.split("\n"):
        line = raw.strip()
        if line.lstrip("> ").startswith(("```", "~~~")):
            fenced = not fenced
            close()
            continue
        bare = _QUOTE.sub("", line)
        if fenced or not bare or bare.startswith(("|", "#", "<", "{", "[", "    ")) or raw.startswith(("    ", "\t")):
            close()
            continue
        if _LIST_ITEM.match(line):
            close()
            bare = _LIST_ITEM.sub("", line)
        quoted = line.startswith(">") if not current else quoted
        current.append(bare)
        if bare.endswith((".", "!", "?", ":", "。", "！", "？")):  # a line that ends a sentence ends it
            close()
    close()
    return out


def _words(sentence: str) -> int:
    """Words of any alphabet (letters, two or more), a CJK run counting a word per two characters."""
    cjk = len(_CJK.findall(sentence))
    return len(_WORD.findall(_CJK.sub(" ", sentence))) + cjk // 2


def sentences(text: str) -> list[tuple[str, bool]]:
    """Whole sentences of what was said, markup removed, each with whether it was quoted (a spec)."""
    out = []
    for paragraph, quoted in _paragraphs(said_text(text)):
        for raw in _SENTENCE_END.split(paragraph):
            sentence = " ".join(_MARKUP.sub("", raw).split())
            if MIN_LEN <= len(sentence) <= MAX_LEN and _words(sentence) >= 3:
                out.append((sentence, quoted))
    return out
