"""Which extractor a run uses, and the sentence that says which and why. Shared by every front end
(the CLI prints the sentence, the daemon logs it or shows it once); nothing here prints.

An extractor asked for by name is built from its registry entry (registry.py) when it can run, and
the offline one stands in, said aloud, when it cannot. The automatic choice (no name) is this
module's policy, one row each in the README's table ("Extractors: which one you get and what it costs"):

    an API key (ANTHROPIC_API_KEY / ANTHROPIC_AUTH_TOKEN)   -> anthropic
    else a logged-in `claude` CLI                           -> claude-code
    else a logged-in `codex` CLI                            -> codex
    else openai_base_url set and its server answers         -> openai
    else                                                    -> heuristic, saying what would give a model

Each check is local and quick; the only one on the network is a `GET {openai_base_url}/models` with a
one-second timeout, and only when the user set openai_base_url. No extractor module is imported for a
check that fails (the SDK alone takes over a second to import)."""

from __future__ import annotations

from dataclasses import dataclass

from checkpoint.config import Settings
from checkpoint.extract import Extractor
from checkpoint.extract.registry import BY_NAME, OFFLINE, ExtractorEntry, credentials_variable

OFFLINE_SAID = "the offline heuristic extractor (phrase rules, no network)"
# Said by `now` whenever the offline extractor runs: what it can and cannot do, and what else there is.
OFFLINE_CATCHES = ("Offline, only items worded as such are caught (\"we decided ...\", \"we'll use ...\","
                   " \"never ...\", \"TBD\"): most of what a session decides is missed. Everything said stays"
                   " searchable without a model: `checkpoint search --said WORDS`. A model finds the rest.")
FOR_A_MODEL = ("For a model: set ANTHROPIC_API_KEY, log in to `claude` or `codex`, or set openai_base_url to a "
               "local model server (Ollama, llama.cpp, LM Studio, vLLM).")


@dataclass(frozen=True)
class ExtractorChoice:
    extractor: Extractor
    sentence: str  # which extractor runs, and why
    fallback: bool  # the offline extractor stands in for Claude (no credentials): worth telling the user
    # The same in at most two short lines, for a terminal that reads it at every run (`checkpoint now`);
    # empty: `sentence` is short already.
    brief: str = ""


def choose_extractor(settings: Settings) -> ExtractorChoice:
    wanted = settings.extractor
    if wanted is not None:
        return _asked_for(BY_NAME[wanted], settings)
    if (credentials := credentials_variable()) is not None:
        return _chosen(BY_NAME["anthropic"], settings, f"{credentials} is set")
    claude = BY_NAME["claude-code"].readiness(settings)
    if claude.ready:
        return _chosen(BY_NAME["claude-code"], settings, "no ANTHROPIC_API_KEY set; the claude CLI is logged in",
                       claude.said)
    codex = BY_NAME["codex"].readiness(settings)
    if codex.ready:
        return _chosen(BY_NAME["codex"], settings, f"no ANTHROPIC_API_KEY set and {claude.said}; the codex CLI is "
                       "logged in", codex.said)
    missing = [claude.said, codex.said]
    if settings.openai_base_url:  # only a server the user named is looked for
        server = BY_NAME["openai"].readiness(settings)
        if server.ready:
            return _chosen(BY_NAME["openai"], settings, "no ANTHROPIC_API_KEY set, no logged-in claude or codex CLI; "
                           "openai_base_url answers", server.said)
        missing.append(server.said)
    said = f"No ANTHROPIC_API_KEY set and {'; '.join(missing)}: using {OFFLINE_SAID}. {FOR_A_MODEL}"
    brief = (f"Using {OFFLINE_SAID}: no ANTHROPIC_API_KEY; {'; '.join(_brief(m) for m in missing)}.\n"
             "For a model: set ANTHROPIC_API_KEY, log in to `claude` or `codex`, or run `checkpoint model serve` "
             "(docs/choosing-an-extractor.md).")
    return ExtractorChoice(_offline(settings), said, fallback=True, brief=brief)


def _brief(reason: str) -> str:
    """A reason with its advice in brackets only when that is short: "Claude Code is not logged in (run
    `claude auth login`)", but "`claude` not found on PATH" (not the npm line that follows)."""
    head, _, advice = reason.partition(" (")
    return reason if len(advice) <= 30 else head


def _asked_for(entry: ExtractorEntry, settings: Settings) -> ExtractorChoice:
    if entry.name == OFFLINE:
        return ExtractorChoice(_offline(settings), f"Using {OFFLINE_SAID}, as configured.", fallback=False)
    ready = entry.readiness(settings)
    if not ready.ready:
        why = (f"The {entry.title} extractor was asked for, but {ready.said}: using the offline heuristic "
               "extractor instead (phrase rules, no network).")
        return ExtractorChoice(_offline(settings), why, fallback=True)
    return _chosen(entry, settings, "as configured", ready.said)


def _chosen(entry: ExtractorEntry, settings: Settings, why: str, said: str | None = None) -> ExtractorChoice:
    """`entry`'s extractor, said with what it runs as (its readiness, unless already found) and why."""
    if said is None:
        said = entry.readiness(settings).said
    extractor = entry.factory(settings)
    return ExtractorChoice(extractor, f"Using {extractor.description}{said} ({why}).", fallback=False)


def _offline(settings: Settings) -> Extractor:
    return BY_NAME[OFFLINE].factory(settings)
