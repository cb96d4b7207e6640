"""Benchmark: `checkpoint check --all-files` over a generated repository of 5,000 files (Python,
TypeScript, Go, Rust) with 50 accepted checks carried by decision records (as a teammate's CI reads
them: no database of its own, an empty HOME), beside `ast-grep scan` of the same rules (the floor: the
same engine in one Rust process, multi-threaded), and the cost of checking one open 5,000-line file
with the 50 checks, as the daemon would on each change (in process, the engine compiled once).

    .venv/bin/python -m scripts.bench_check [--files N] [--checks N] [--json PATH]

`ast-grep scan` runs when the ast-grep CLI is on PATH (or beside this Python: `pip install
ast-grep-cli`); otherwise its row says so. Wall time and peak RSS of each process (wait4's ru_maxrss).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from checkpoint.checks.engine import ActiveCheck, Engine
from checkpoint.checks.model import languages_of, read_check
from checkpoint.checks.uses import rules

CHECKPOINT = Path(sys.executable).with_name("checkpoint")
LANGS = {"python": (".py", 0.6), "typescript": (".ts", 0.2), "go": (".go", 0.1), "rust": (".rs", 0.1)}
_MEASURE = (
    "import os, subprocess, sys\n"
    "p = subprocess.Popen(sys.argv[2:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)\n"
    "_, status, usage = os.wait4(p.pid, 0)\n"
    "open(sys.argv[1], 'w').write(str(usage.ru_maxrss))\n"
    "sys.exit(os.waitstatus_to_exitcode(status))\n"
)


def _python(rng: random.Random, names: list[str], lines: int) -> str:
    used = rng.sample(names, 3)
    out = [f"import {n}" for n in used] + ["", ""]
    while len(out) < lines:
        n = rng.choice(used)
        out += [f"def f{len(out)}(x):", f"    y = {n}.call{rng.randint(0, 9)}(x, {rng.randint(0, 99)})",
                "    return y + 1", ""]
    return "\n".join(out) + "\n"


def _typescript(rng: random.Random, names: list[str], lines: int) -> str:
    used = rng.sample(names, 3)
    out = [f'import {n} from "{n}";' for n in used] + [""]
    while len(out) < lines:
        n = rng.choice(used)
        out += [f"export function f{len(out)}(x: number): number {{", f"  return {n}.call(x) + 1;", "}", ""]
    return "\n".join(out) + "\n"


def _go(rng: random.Random, names: list[str], lines: int) -> str:
    used = rng.sample(names, 3)
    out = ["package m", "", "import (", *(f'\t"example.com/{n}"' for n in used), ")", ""]
    while len(out) < lines:
        n = rng.choice(used)
        out += [f"func F{len(out)}(x int) int {{", f"\treturn {n}.Call(x) + 1", "}", ""]
    return "\n".join(out) + "\n"


def _rust(rng: random.Random, names: list[str], lines: int) -> str:
    used = rng.sample(names, 3)
    out = [f"use {n}::Thing;" for n in used] + [""]
    while len(out) < lines:
        n = rng.choice(used)
        out += [f"pub fn f{len(out)}(x: i64) -> i64 {{", f"    {n}::call(x) + 1", "}", ""]
    return "\n".join(out) + "\n"


WRITERS = {"python": _python, "typescript": _typescript, "go": _go, "rust": _rust}


def make_repo(root: Path, files: int, checks: int, seed: int = 7) -> list[str]:
    """The files (60 lines each on average) and `checks` decision records, each ruling out one name;
    names `lib0..` of which a tenth of the files use one that a check rules out."""
    rng = random.Random(seed)
    allowed = [f"okmod{i}" for i in range(40)]
    banned = [f"lib{i}" for i in range(checks)]
    for n in range(files):
        lang = rng.choices(list(LANGS), weights=[w for _, w in LANGS.values()])[0]
        names = allowed + ([rng.choice(banned)] * 3 if n % 10 == 0 else [])
        path = root / "src" / f"pkg{n % 50}" / f"mod{n}{LANGS[lang][0]}"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(WRITERS[lang](rng, names if n % 10 else names[-3:] + allowed[:3], rng.randint(30, 90)))
    records = root / "docs" / "decisions"
    records.mkdir(parents=True)
    for i, name in enumerate(banned):
        (records / f"2026-12-01-no-{name}.md").write_text(
            f"---\nstatus: accepted\ndate: 2026-12-01\ndecision-makers: Bench\nid: {i:012x}\nkind: decision\n"
            f'files: []\nchecks:\n  - {{"uses": "{name}"}}\n---\n\n# We no longer use {name}\n')
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    subprocess.run(["git", "-C", str(root), "add", "-A"], check=True)
    return banned


def _sg_rules(root: Path, banned: list[str]) -> None:
    """The same checks as ast-grep project rules (one file per check and language)."""
    folder = root / ".sg-rules"
    folder.mkdir()
    for name in banned:
        check = read_check({"uses": name})
        for lang in languages_of(check):
            found = rules(name, lang, False)
            rule = found[0] if len(found) == 1 else {"any": found}
            (folder / f"{name}-{lang}.yml").write_text(json.dumps(
                {"id": f"{name}-{lang}", "language": lang, "severity": "warning", "message": f"uses {name}",
                 "rule": rule}))
    (root / "sgconfig.yml").write_text("ruleDirs:\n  - .sg-rules\n")


def _measure(argv: list[str], cwd: Path, env: dict[str, str]) -> dict[str, Any]:
    with tempfile.NamedTemporaryFile(mode="r") as rss:
        start = time.perf_counter()
        done = subprocess.run([sys.executable, "-c", _MEASURE, rss.name, *argv], cwd=cwd, env=env, check=False)
        seconds = time.perf_counter() - start
        kib = int(Path(rss.name).read_text() or 0)
    return {"seconds": round(seconds, 2), "peak_rss_mib": round(kib / 1024, 1), "exit": done.returncode}


def _hits(argv: list[str], cwd: Path, env: dict[str, str], sarif: bool) -> int:
    out = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, check=False).stdout
    if sarif:
        return len(json.loads(out)["runs"][0]["results"])
    return sum(1 for line in out.splitlines() if line.strip())


def open_file_cost(checks: int, lines: int = 5000, rounds: int = 10) -> dict[str, float]:
    rng = random.Random(3)
    active = [ActiveCheck(f"c{i}", f"i{i}", read_check({"uses": f"lib{i}"}), f"no lib{i}", "decision", "local")
              for i in range(checks)]
    text = _python(rng, [f"okmod{i}" for i in range(40)] + ["lib3"] * 3, lines)
    start = time.perf_counter()
    engine = Engine(active)
    compile_ms = (time.perf_counter() - start) * 1000
    samples = []
    for _ in range(rounds):
        start = time.perf_counter()
        engine.scan("src/big.py", text)
        samples.append((time.perf_counter() - start) * 1000)
    return {"lines": lines, "compile_ms": round(compile_ms, 1), "scan_median_ms": round(statistics.median(samples), 1),
            "scan_max_ms": round(max(samples), 1)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, default=5000)
    parser.add_argument("--checks", type=int, default=50)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    report: dict[str, Any] = {"files": args.files, "checks": args.checks}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "repo"
        banned = make_repo(root, args.files, args.checks)
        home = Path(tmp) / "home"
        home.mkdir()
        env = {"HOME": str(home), "PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LC_ALL": "C.UTF-8"}
        command = [str(CHECKPOINT), "check", "--all-files", "--format", "sarif"]
        report["checkpoint_check"] = {**_measure(command, root, env), "hits": _hits(command, root, env, True)}
        sg = shutil.which("ast-grep") or shutil.which("ast-grep", path=str(Path(sys.executable).parent))
        if sg:
            _sg_rules(root, banned)
            scan = [sg, "scan", "--json=stream", "src"]
            report["ast_grep_scan"] = {**_measure(scan, root, env), "hits": _hits(scan, root, env, False),
                                       "rules": len(list((root / ".sg-rules").iterdir()))}
            one = [sg, "scan", "--json=stream", "-j", "1", "src"]
            report["ast_grep_scan_one_thread"] = _measure(one, root, env)
        else:
            report["ast_grep_scan"] = "not run: the ast-grep CLI is not installed (pip install ast-grep-cli)"
    report["open_file_5000_lines"] = open_file_cost(args.checks)
    text = json.dumps(report, indent=2)
    print(text)
    if args.json:
        args.json.write_text(text + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
