"""The automatic choice of extractor (checkpoint.extract.choose): one test per row of the README's table
"Which extractor runs", each with the sentence it says; and the choice stays quick (no SDK import to
end up offline). The `claude` and `codex` CLIs are stubs in a temp folder that answer the two local
probes the choice makes (`claude --version` + `claude auth status --json`; `codex login status`)."""

from __future__ import annotations

import stat
import subprocess
import sys
from pathlib import Path

import pytest

from checkpoint.config import Settings
from checkpoint.extract.choose import FOR_A_MODEL, OFFLINE_SAID, choose_extractor
from checkpoint.extract.missing_commands import claude_not_found, codex_not_found
from tests.support.fake_chat import FakeChat


def stub(folder: Path, name: str, script: str) -> Path:
    path = folder / name
    path.write_text("#!/bin/sh\n" + script)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


@pytest.fixture
def machine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A machine with no key, no CLI and no server: a temp HOME, PATH with only the system's tools."""
    for var in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL", "OPENAI_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    monkeypatch.setenv("PATH", f"{bin_dir}:/usr/bin:/bin")
    return bin_dir


def settings(tmp_path: Path, **extra: object) -> Settings:
    return Settings(db=tmp_path / "c.db", sources=[], **extra)  # type: ignore[arg-type]


def claude_logged_in(bin_dir: Path) -> None:
    stub(bin_dir, "claude", 'case "$1" in --version) echo "2.1.328 (Claude Code)";;\n'
                            'auth) echo \'{"loggedIn": true, "authMethod": "claude.ai"}\';; esac\n')


def codex_logged_in(bin_dir: Path) -> None:
    stub(bin_dir, "codex", 'echo "Logged in using ChatGPT"\n')


def test_row_1_an_api_key_chooses_claude_through_the_api(machine: Path, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    claude_logged_in(machine)
    codex_logged_in(machine)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-not-a-key")
    choice = choose_extractor(settings(tmp_path))
    assert (choice.extractor.name, choice.fallback, choice.sentence) == \
        ("anthropic", False, "Using Claude (claude-haiku-4-5) (ANTHROPIC_API_KEY is set).")


def test_row_2_a_logged_in_claude_cli_chooses_claude_code(machine: Path, tmp_path: Path) -> None:
    claude_logged_in(machine)
    codex_logged_in(machine)
    choice = choose_extractor(settings(tmp_path))
    assert (choice.extractor.name, choice.fallback) == ("claude-code", False)
    assert choice.sentence == ("Using Claude through the Claude Code CLI (claude-haiku-4-5; the CLI's own login): "
                               "Claude Code 2.1.328, claude.ai login (no ANTHROPIC_API_KEY set; the claude CLI is "
                               "logged in).")


def test_row_3_a_logged_in_codex_cli_chooses_codex(machine: Path, tmp_path: Path) -> None:
    codex_logged_in(machine)
    choice = choose_extractor(settings(tmp_path))
    assert (choice.extractor.name, choice.fallback) == ("codex", False)
    assert choice.sentence == ("Using the Codex CLI (its default model, through `codex exec`) (no ANTHROPIC_API_KEY "
                               f"set and {claude_not_found('claude')}; the codex CLI is logged in).")


def test_row_4_a_configured_openai_base_url_that_answers_chooses_openai(machine: Path, tmp_path: Path) -> None:
    with FakeChat(model="llama3.2") as fake:
        choice = choose_extractor(settings(tmp_path, openai_base_url=fake.base_url))
        base = fake.base_url
        probes = [(r.method, r.path) for r in fake.requests]
    assert (choice.extractor.name, choice.fallback) == ("openai", False)
    assert choice.sentence == (
        f"Using an OpenAI-compatible server at {base} (llama3.2; 4,096-token window assumed: the server does not say "
        "its window (set openai_context_tokens to the real one); a local server: no cost): model llama3.2 (the first "
        "it lists) (no ANTHROPIC_API_KEY set, no logged-in claude or codex CLI; openai_base_url answers).")
    # The one quick look, then the chosen extractor asks the server its window; no transcript is sent.
    assert probes[0] == ("GET", "/v1/models") and ("POST", "/v1/chat/completions") not in probes


def test_row_5_nothing_chooses_the_heuristic_and_says_what_would_give_a_model(machine: Path, tmp_path: Path) -> None:
    choice = choose_extractor(settings(tmp_path))  # openai_base_url unset: no server is looked for
    assert (choice.extractor.name, choice.fallback) == ("heuristic", True)
    assert choice.sentence == (f"No ANTHROPIC_API_KEY set and {claude_not_found('claude')}; "
                               f"{codex_not_found('codex')}: using {OFFLINE_SAID}. {FOR_A_MODEL}")
    assert "openai_base_url to a local model server" in FOR_A_MODEL
    # What `checkpoint now` prints at every offline run: two lines, each short, the reasons without the npm lines.
    first, second = choice.brief.split("\n")
    assert first == f"Using {OFFLINE_SAID}: no ANTHROPIC_API_KEY; `claude` not found on PATH; `codex` is not on PATH."
    assert second.startswith("For a model: ") and "`checkpoint model serve`" in second
    assert max(len(first), len(second)) <= 160


def test_row_5_a_configured_server_that_does_not_answer_is_said_too(machine: Path, tmp_path: Path) -> None:
    with FakeChat() as fake:
        base = fake.base_url  # its port, free again once the fake stops
    choice = choose_extractor(settings(tmp_path, openai_base_url=base))
    assert (choice.extractor.name, choice.fallback) == ("heuristic", True)
    assert f"; the OpenAI-compatible server at {base} does not answer (connection failed (" in choice.sentence
    assert choice.sentence.endswith(f"openai_base_url): start it, or set openai_base_url: using {OFFLINE_SAID}. "
                                    f"{FOR_A_MODEL}")


def test_the_openai_extractor_asked_for_without_a_server_says_so_and_runs_offline(machine: Path,
                                                                                   tmp_path: Path) -> None:
    with FakeChat() as fake:
        base = fake.base_url
    choice = choose_extractor(settings(tmp_path, extractor="openai", openai_base_url=base))
    assert (choice.extractor.name, choice.fallback) == ("heuristic", True)
    assert choice.sentence.startswith(f"The OpenAI-compatible extractor was asked for, but the OpenAI-compatible "
                                      f"server at {base} does not answer (connection failed (")


def test_the_automatic_choice_that_ends_offline_imports_no_sdk(tmp_path: Path) -> None:
    """Issue 27: `checkpoint now` without a key took 2 s because the choice imported the Anthropic SDK."""
    probe = ("import sys\nfrom checkpoint.config import Settings\n"
             "from checkpoint.extract.choose import choose_extractor\n"
             f"choice = choose_extractor(Settings(db={str(tmp_path / 'c.db')!r}, sources=[]))\n"
             "print(choice.extractor.name, sorted(m for m in ('anthropic', 'httpx2', 'urllib.request') "
             "if m in sys.modules))")
    env = {"HOME": str(tmp_path), "PATH": "/usr/bin:/bin"}
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, env=env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["heuristic", "[]"]
