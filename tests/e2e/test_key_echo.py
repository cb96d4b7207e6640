"""A gateway that quotes the credential in its errors: the fake API's 400/404 messages end with the
key the request presented. Through the real `checkpoint` process, the key (and the password in the
base URL) appears nowhere: stdout, stderr, `now --json`, `status --json`, the database, its WAL."""

from __future__ import annotations

import random
import secrets
from pathlib import Path

from tests.support import synth
from tests.support.cli_run import cli_env, run
from tests.support.fake_anthropic import FakeAnthropic

SESSION = "ec400000-0000-4000-8000-00000000000e"


def write_session(root: Path) -> None:
    plan = [synth.SynthTurn("user", "We'll use marker-echo0001 for the retry layer.", [], "marker-echo0001"),
            synth.SynthTurn("assistant", "Going with it.", [], None)]
    path = root / "claude" / "projects" / "-home-dev-echo" / f"{SESSION}.jsonl"
    path.parent.mkdir(parents=True)
    records = synth.claude_lines(SESSION, plan, "/home/dev/echo", random.Random(1))
    path.write_bytes(b"".join(synth.dumps(r) for r in records))


def test_a_key_quoted_by_the_api_is_stored_and_shown_nowhere(tmp_path: Path) -> None:
    key = "gw-" + secrets.token_hex(24)  # no known key shape: only its value can find it
    proxy_password = "Pr0xy" + secrets.token_hex(6)
    home, root, db = tmp_path / "home", tmp_path / "t", tmp_path / "data" / "checkpoint.db"
    write_session(root)
    with FakeAnthropic(echo_key=True) as fake:
        env = cli_env(home, ANTHROPIC_BASE_URL=fake.base_url, ANTHROPIC_API_KEY=key, CHECKPOINT_EXTRACTOR="anthropic",
                      CHECKPOINT_MODEL="claude-no-such-model")
        args = ["--db", str(db), "--source", str(root / "claude" / "projects")]
        now = run(["now", *args], env)
        now_json = run(["now", "--json", *args], env)
        status = run(["status", "--json", *args], env).check()
        echoed = [r for r in fake.requests if r.status in (400, 404)]
        # A password in the base URL (a proxy's): httpx sends it as Basic auth, which the fake refuses (401);
        # what matters is that the URL is printed and logged without it.
        proxied = cli_env(home, ANTHROPIC_BASE_URL=fake.base_url.replace("http://", f"http://gateway:{proxy_password}@"),
                          ANTHROPIC_API_KEY=key, CHECKPOINT_EXTRACTOR="anthropic")
        via_proxy = run(["now", *args], proxied)
        address = fake.base_url.split("//")[1]
    assert echoed, "the fake never answered an error quoting the key"
    assert any(key in str(r.response) for r in echoed)  # the gateway did quote it
    causes = " ".join(s["causes"][0] for s in status.json()["sessions"] if s["causes"])
    assert "model not found" in causes  # the failure is still said, without the key
    said = {"now stdout": now.out, "now stderr": now.err, "now --json": now_json.out, "now --json stderr": now_json.err,
            "status --json": status.out, "status stderr": status.err, "proxied now": via_proxy.out + via_proxy.err}
    stored = b"".join(p.read_bytes() for p in (db, Path(f"{db}-wal")) if p.exists())
    for secret in (key, key[:16], proxy_password):
        assert [name for name, text in said.items() if secret in text] == []
        assert secret.encode() not in stored
    assert "@" + address in via_proxy.out  # the base URL is still named, its password not
