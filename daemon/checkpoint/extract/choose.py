"""Which extractor a run uses, and the sentence that says which and why. Shared by every front end
(the CLI prints the sentence, the daemon logs it or shows it once); nothing here prints.

An extractor asked for by name is built from its registry entry (registry.py) when it can run, and
the offline one stands in, said aloud, when it cannot. The automatic choice (no name) is this
module's policy: Claude through the SDK when credentials are set; else through the user's `claude`
CLI when it runs and is logged in; else the offline heuristic."""

from __future__ import annotations

from dataclasses import dataclass

from checkpoint.config import Settings
from checkpoint.extract import Extractor
from checkpoint.extract.registry import BY_NAME, OFFLINE, ExtractorEntry, credentials_variable

OFFLINE_SAID = "the offline heuristic extractor (phrase rules, no network)"


@dataclass(frozen=True)
class ExtractorChoice:
    extractor: Extractor
    sentence: str  # which extractor runs, and why
    fallback: bool  # the offline extractor stands in for Claude (no credentials): worth telling the user


def choose_extractor(settings: Settings) -> ExtractorChoice:
    wanted = settings.extractor
    if wanted is not None:
        return _asked_for(BY_NAME[wanted], settings)
    if (credentials := credentials_variable()) is not None:
        return _chosen(BY_NAME["anthropic"], settings, f"{credentials} is set")
    cli = BY_NAME["claude-code"]
    ready = cli.readiness(settings)
    if ready.ready:
        return _chosen(cli, settings, "no ANTHROPIC_API_KEY set; the claude CLI is logged in")
    return ExtractorChoice(_offline(settings), f"No ANTHROPIC_API_KEY set and {ready.said}: using {OFFLINE_SAID}.",
                           fallback=True)


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
