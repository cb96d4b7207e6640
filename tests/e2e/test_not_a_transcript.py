"""A file that is not a transcript among the transcripts (random bytes named like a session) is one
problem, said with its path, in `now` and in `status` alike: not one warning per line. A transcript
with some bad lines still has each of them said, and a file that later gets records has them read."""

from __future__ import annotations

import random
from pathlib import Path

from tests.support.cli_home import SESSION, Home, claude_record, line

NOISE_SESSION = "0bad1a9e-0000-4000-8000-0000000a0a0a"


def _warned_lines(err: str, path: Path) -> list[int]:
    """The line numbers of the warnings on stderr about `path`."""
    prefix = f"warning: {path}:"
    return sorted(int(w[len(prefix):].split(":")[0]) for w in err.splitlines() if w.startswith(prefix))


def _noise(lines: int) -> bytes:
    """Random bytes cut into `lines` lines, none of them JSON."""
    rng = random.Random(27)
    return b"".join(bytes(rng.choice(range(1, 256)) for _ in range(rng.randint(20, 200))).replace(b"\n", b"")
                    + b"\x80\n" for _ in range(lines))


def test_random_bytes_are_one_problem_in_now_and_in_status(tmp_path: Path) -> None:
    home = Home(tmp_path)
    home.path.write_bytes(line(claude_record(1)))
    noise = home.path.with_name(f"{NOISE_SESSION}.jsonl")
    noise.write_bytes(_noise(1500))

    now = home.cli("now").check()

    said = f"{noise}:1: not a transcript: no JSON record in 1500 lines read"
    warnings = [w for w in now.err.splitlines() if w.startswith("warning: ")]
    assert len(warnings) == 1 and warnings[0].startswith(f"warning: {said}"), now.err
    assert "1 problem reading transcripts" in now.out
    status = home.status()
    assert [(p["path"], p["line"]) for p in status["problems"]] == [(str(noise), 1)]
    assert status["problems"][0]["message"].startswith(said.split(":1: ", 1)[1])
    assert "Problems reading transcripts (1;" in home.cli("status").check().out
    assert home.markers() == ["marker-good-01"]


def test_records_written_after_the_noise_are_read(tmp_path: Path) -> None:
    home = Home(tmp_path)
    home.path.write_bytes(_noise(30))
    home.cli("now").check()

    with home.path.open("ab") as f:
        f.write(line(claude_record(2)) + _noise(2) + line(claude_record(3)))
    again = home.cli("now").check()

    assert home.markers() == ["marker-good-02", "marker-good-03"]
    # Once the file holds records, each bad line after them is said, as in any transcript.
    assert _warned_lines(again.err, home.path) == [32, 33]
    assert len(home.status()["problems"]) == 3


def test_a_transcript_with_bad_lines_says_each_of_them(tmp_path: Path) -> None:
    home = Home(tmp_path)
    home.path.write_bytes(_noise(1) + line(claude_record(1)) + _noise(1) + line(claude_record(2)) + _noise(1))

    now = home.cli("now").check()

    assert _warned_lines(now.err, home.path) == [1, 3, 5]
    assert sorted(p["line"] for p in home.status()["problems"]) == [1, 3, 5]
    assert home.markers() == ["marker-good-01", "marker-good-02"]
    assert SESSION in {s["id"] for s in home.status()["sessions"]}
