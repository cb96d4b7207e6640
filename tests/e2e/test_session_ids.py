"""A session named on the command line (`items --session`, `now --session`, `forget`): the short id every
table prints names it when it is unique; an ambiguous prefix is refused with the candidates, an unknown
one with "no session ... in this database"; an empty list says what was asked for."""

from __future__ import annotations

from pathlib import Path

from tests.support.cli_home import CODEX_SESSION, SESSION, Home, claude_record, codex_record, line

NO_SUCH = "no session 'zzzz' in this database (`checkpoint status` lists them)"


def _two_sessions(tmp_path: Path) -> Home:
    """A Claude Code and a Codex session whose ids share their first 8 characters (0bad1a9e), captured."""
    home = Home(tmp_path)
    home.path.write_bytes(b"".join(line(claude_record(n)) for n in (1, 2)))
    home.codex_path.write_bytes(b"".join(line(codex_record(n)) for n in (3, 4)))
    home.cli("now").check()
    return home


def _statement_markers(out: str) -> list[str]:
    return sorted(word for word in out.split() if word.startswith("marker-good-"))


def test_items_of_a_session_named_by_a_unique_prefix(tmp_path: Path) -> None:
    home = _two_sessions(tmp_path)
    claude_prefix = SESSION[:-3]  # ...00000000c: the Claude session's, not the Codex one's (...0000000c0de0)

    listed = home.cli("items", "--session", claude_prefix).check()

    assert _statement_markers(listed.out) == ["marker-good-01", "marker-good-02"]
    by_json = home.cli("items", "--session", CODEX_SESSION[:-2], "--json").check().json()["items"]
    assert {item["session_id"] for item in by_json} == {CODEX_SESSION}


def test_an_ambiguous_prefix_lists_the_sessions_it_names(tmp_path: Path) -> None:
    home = _two_sessions(tmp_path)

    ambiguous = home.cli("items", "--session", SESSION[:8])

    assert ambiguous.rc == 2 and ambiguous.out == ""
    assert ambiguous.err == (f"checkpoint: '0bad1a9e' names 2 sessions: {SESSION}, {CODEX_SESSION}; "
                             "give more of the id.\n")


def test_an_unknown_session_is_an_error_not_an_empty_list(tmp_path: Path) -> None:
    home = _two_sessions(tmp_path)

    for args in (["items", "--session", "zzzz"], ["items", "--session", "zzzz", "--json"]):
        unknown = home.cli(*args)
        assert (unknown.rc, unknown.out, unknown.err) == (2, "", f"checkpoint: {NO_SUCH}\n"), args


def test_now_for_an_unknown_session_does_not_say_nothing_new(tmp_path: Path) -> None:
    home = _two_sessions(tmp_path)

    unknown = home.cli("now", "--session", "zzzz")

    assert unknown.rc == 2, unknown.out + unknown.err
    assert "Nothing new to extract" not in unknown.out
    assert unknown.err.splitlines()[-1] == f"checkpoint: {NO_SUCH}"


def test_now_for_a_session_named_by_a_prefix_extracts_it_alone(tmp_path: Path) -> None:
    home = Home(tmp_path)
    home.path.write_bytes(line(claude_record(1)))
    home.codex_path.write_bytes(line(codex_record(3)))
    home.cli("scan").check()

    home.cli("now", "--session", SESSION[:-3]).check()

    sessions = {s["id"]: (s["captured"], s["pending"]) for s in home.status()["sessions"]}
    assert sessions == {SESSION: (1, 0), CODEX_SESSION: (0, 1)}


def test_empty_lists_say_what_was_asked_for(tmp_path: Path) -> None:
    home = _two_sessions(tmp_path)

    assert home.cli("items", "--kind", "question").check().out == "No open questions captured.\n"
    in_session = home.cli("items", "--kind", "constraint", "--session", SESSION[:-3]).check().out
    assert in_session == f"No constraints captured in session {SESSION}.\n"
    empty = Home(tmp_path / "empty")
    assert empty.cli("items").check().out == "No items captured yet. Run `checkpoint now`.\n"


def test_forget_takes_the_same_prefixes(tmp_path: Path) -> None:
    home = _two_sessions(tmp_path)

    unknown = home.cli("forget", "zzzz")
    assert (unknown.rc, unknown.err) == (2, f"checkpoint: {NO_SUCH}\n")
    assert home.cli("forget", SESSION[:8]).rc == 2
    home.cli("forget", SESSION[:-3]).check()
    assert [s["id"] for s in home.status()["sessions"]] == [CODEX_SESSION]
