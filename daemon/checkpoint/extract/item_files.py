"""Which files an item is about: the files its statement names (resolved against the workspace) and the
files its own turn, or the next turn of the same speaker, edited; never every file its session or its
chunk wrote. Each file keeps where it came from (FROM_STATEMENT, FROM_EDIT, or both), so that the
editor can anchor a named file by its name and an edited one by what was written.

Edits are read from the chunk's turn headers (TurnSlice.files: what a turn's tool calls really
changed). An agent's edits land on the tool-result turns that follow its message, so a turn's own
edits are its files and those of the tool turns right after it. A user's statement edits nothing: its
files are the ones it names ("Keep src/billing.py free of I/O" said just before the agent edits it
gets src/billing.py), never what the agent went on to touch.

Applied by runner.validate to every extractor's items: a model's own `files` are replaced, since a
model tends to copy every path in the chunk's headers onto every item.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence

from checkpoint.answer import MAX_FILES
from checkpoint.model import ChunkInput, Role

FROM_STATEMENT, FROM_EDIT, FROM_BOTH = "statement", "edit", "statement+edit"

_EXTENSIONS = (
    "py|pyi|rs|ts|tsx|js|jsx|mjs|cjs|go|java|kt|kts|swift|rb|php|c|h|cc|cpp|hpp|cs|m|mm|scala|clj|ex|exs|erl|hs|ml"
    "|lua|r|jl|dart|vue|svelte|sh|bash|zsh|fish|ps1|sql|toml|yaml|yml|json|jsonc|lock|ini|cfg|conf|env|md|mdx|rst"
    "|txt|html|htm|css|scss|less|xml|proto|graphql|tf|nix|gradle|cmake|mk|ipynb|csv"
)
_BARE_NAMES = "Justfile|justfile|Makefile|makefile|Dockerfile|Containerfile|Procfile|Gemfile|Rakefile|Vagrantfile"
# A path as a statement writes it: folders and a name with a known extension, a known bare name, or an
# absolute path of two parts or more ("/etc/passwd"); not part of a URL, a version ("v1.2") or a module
# path with dots ("os.path").
_NAMED = re.compile(
    r"(?<![\w/.:@~-])(?P<path>(?:\.{0,2}/)?(?:[\w@.+-]+/)*(?:[\w.+-]+\.(?:" + _EXTENSIONS + r")|(?:" + _BARE_NAMES
    + r"))|~?/(?:[\w@.+-]+/)+[\w@+-][\w@.+-]*)(?![\w/-])",
)


def named_files(statement: str) -> list[str]:
    """The paths a statement names, as written, in order, each once."""
    found: dict[str, None] = {}
    for match in _NAMED.finditer(statement):
        before = statement[max(0, match.start() - 3):match.start()]
        if before.endswith("://"):
            continue
        found.setdefault(match.group("path").removeprefix("./"), None)
    return list(found)


def _resolve(name: str, cwd: str | None, known: Sequence[str]) -> str:
    """A named path as the workspace holds it: a file the chunk's turns edited that ends with it, else
    the file under the session's folder when it exists, else the name as written (a file to be made,
    matched later by its last parts)."""
    tail = "/" + name.lstrip("/")
    for path in known:
        if path == name or path.endswith(tail):
            return path
    if cwd and not os.path.isabs(name):
        candidate = os.path.normpath(os.path.join(cwd, name))
        if os.path.isfile(candidate):
            return candidate
    return name


def _edited(chunk: ChunkInput, index: int) -> list[str]:
    """Files the turn at `index` edited: its own and those of the tool turns right after it."""
    files = list(chunk.turns[index].files)
    for turn in chunk.turns[index + 1:]:
        if turn.role is not Role.TOOL:
            break
        files += turn.files
    return files


def _next_of_speaker(chunk: ChunkInput, index: int) -> int | None:
    """The next turn that is not tool output, when the same speaker says it."""
    role = chunk.turns[index].role
    for later in range(index + 1, len(chunk.turns)):
        if chunk.turns[later].role is not Role.TOOL:
            return later if chunk.turns[later].role is role else None
    return None


def item_files(chunk: ChunkInput, turn_ids: Sequence[str], statement: str) -> dict[str, str]:
    """path -> where it came from, for an item citing `turn_ids` of `chunk` with this statement."""
    position = {t.turn_id: i for i, t in enumerate(chunk.turns)}
    edited: dict[str, None] = {}
    for turn_id in turn_ids:
        index = position.get(turn_id)
        if index is None or chunk.turns[index].role is Role.TOOL:
            continue
        edited.update(dict.fromkeys(_edited(chunk, index)))
        later = _next_of_speaker(chunk, index)
        if later is not None:
            edited.update(dict.fromkeys(_edited(chunk, later)))
    every = [f for t in chunk.turns for f in t.files]
    sources: dict[str, str] = {}
    for name in named_files(statement):
        sources[_resolve(name, chunk.cwd, every)] = FROM_STATEMENT
    for path in edited:
        sources[path] = FROM_BOTH if sources.get(path) == FROM_STATEMENT else FROM_EDIT
    return dict(list(sources.items())[:MAX_FILES])  # as bounded as a model's own list
