"""The user's documents: the README short, its two commands first and as they run, every link in it and
in docs/ leading to a file and heading that exist (sections moved out of the README stay reachable),
and docs/protocol.md naming every request, notification and command the daemon has."""

from __future__ import annotations

import re
from pathlib import Path

from checkpoint.server import protocol
from tests.support.paths import REPO_ROOT

README = REPO_ROOT / "README.md"
DOCS = sorted((REPO_ROOT / "docs").glob("*.md"))
LINK = re.compile(r"\]\(([^)\s]+)\)")


def _slug(heading: str) -> str:
    """GitHub's anchor for a heading."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def _anchors(path: Path) -> set[str]:
    text = re.sub(r"```.*?```", "", path.read_text(), flags=re.S)  # a `#` in a code block is no heading
    return {_slug(m[1]) for m in re.finditer(r"^#+ (.*)$", text, re.M)}


def test_the_readme_is_short_and_opens_with_the_two_commands() -> None:
    text = README.read_text()
    assert len(text.splitlines()) <= 250, len(text.splitlines())
    blocks = re.findall(r"```(?:bash)?\n(.*?)```", text, re.S)
    assert blocks[:2] == ["python3 -m venv .venv && .venv/bin/pip install -q -e . && .venv/bin/checkpoint now\n",
                          "bash scripts/test.sh\n"]
    assert "pipx install checkpoint-decisions" not in text  # not on PyPI: an install line that fails


def test_every_link_of_the_readme_and_docs_leads_somewhere() -> None:
    broken = []
    for doc in [README, *DOCS]:
        for target in LINK.findall(doc.read_text()):
            if target.startswith(("http://", "https://", "mailto:")):
                continue
            name, _, anchor = target.partition("#")
            path = (doc.parent / name).resolve() if name else doc
            if not path.exists():
                broken.append(f"{doc.name}: {target} (no such file)")
            elif anchor and path.suffix == ".md" and anchor not in _anchors(path):
                broken.append(f"{doc.name}: {target} (no such heading)")
    assert not broken, "\n".join(broken)


def test_the_protocol_doc_names_every_request_notification_and_command() -> None:
    names = [value for key, value in vars(protocol).items()
             if isinstance(value, str) and (key.startswith("CMD_") or key.startswith("CHECKPOINT_"))]
    assert {"checkpoint/search", "checkpoint.supersede", "checkpoint.share"} <= set(names)
    text = (REPO_ROOT / "docs" / "protocol.md").read_text()
    assert [n for n in names if f"`{n}`" not in text] == []
