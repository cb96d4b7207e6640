"""The `checkpoint` command. Thin: parse flags, call the pipeline, print what happened.

parser.py holds the arguments of every command, dispatch.py runs one (settings, database, the command's
module), and each command or family of commands has a module of its own: scan.py, now.py, status.py,
items.py (`items`, `accept`), supersessions.py (`supersede`), search.py, forget.py, team.py (`share`);
printing.py holds the lines and tables several print. The entry, `checkpoint.startup`, routes `hook`
and `mcp` to their front ends before this package is imported."""

from __future__ import annotations

from checkpoint.cli.dispatch import main

__all__ = ["main"]

if __name__ == "__main__":
    raise SystemExit(main())
