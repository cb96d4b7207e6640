"""What the edit fixtures of the real agent CLIs plant: per agent, a file its own edit tool writes in
the project folder, and a decision the model says about it in the same answer (before the call, so
the extractor's "files the work after it touched" holds the file).

The sessions are made in PROJECT, a fixed folder (emptied before and after), so that a test can move
them to its own workspace by replacing that one path in what the agent stored. The generators are
tests/support/real_transcripts.py (`edits`), gemini_transcripts.py (`edits`), real_copilot.py
(`edits`) and opencode_sessions.py (`edits`); tests/server/test_server_edit_anchors.py reads them.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

PROJECT = Path("/tmp/checkpoint-edit-fixture/project")
PROMPT = "Edit: write the new module."


@dataclass(frozen=True)
class PlantedEdit:
    path: str  # relative to the project folder
    text: str  # what the edit tool wrote
    marker: str
    topic: str

    @property
    def said(self) -> str:
        """The model's sentence: one decision naming its marker."""
        return f"We'll use {self.marker} for {self.topic}."

    @property
    def absolute(self) -> Path:
        return PROJECT / self.path


def _module(name: str, doc: str, body: str) -> str:
    return f'def {name}(value):\n    """{doc}"""\n    {body}\n'


EDITS = {
    "claude": PlantedEdit("src/config_parser.py", _module(
        "parse_config", "Settings from key=value lines.",
        'return dict(line.split("=", 1) for line in value.splitlines() if "=" in line)'),
        "marker-edit-claude", "the config parser"),
    "codex": PlantedEdit("src/retry_policy.py", _module(
        "retry_delay", "Seconds to wait before the next attempt.", "return min(30.0, 0.5 * 2 ** value)"),
        "marker-edit-codex", "the retry delays"),
    "gemini": PlantedEdit("src/cache_keys.py", _module(
        "cache_key", "The cache key of a request path.", 'return "cache:" + value.strip("/").lower()'),
        "marker-edit-gemini", "the cache keys"),
    "copilot": PlantedEdit("src/queue_names.py", _module(
        "queue_name", "The queue a job kind goes to.", 'return f"jobs-{value}".replace("_", "-")'),
        "marker-edit-copilot", "the queue names"),
    "opencode": PlantedEdit("src/log_format.py", _module(
        "log_line", "One log record as a line of text.", 'return " ".join(f"{k}={v}" for k, v in value.items())'),
        "marker-edit-opencode", "the log format"),
}


@contextmanager
def project() -> Iterator[Path]:
    """PROJECT, empty, with the folder the edits go in; removed afterwards."""
    shutil.rmtree(PROJECT, ignore_errors=True)
    (PROJECT / "src").mkdir(parents=True)
    try:
        yield PROJECT
    finally:
        shutil.rmtree(PROJECT.parent, ignore_errors=True)
