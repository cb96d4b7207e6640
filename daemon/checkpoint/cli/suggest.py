"""An ArgumentParser that answers a mistyped option in one line with the nearest one ("did you mean
--session?"), as a mistyped setting is answered, instead of the whole usage."""

from __future__ import annotations

import argparse
import difflib
import sys
from collections.abc import Sequence
from typing import NoReturn


def options_of(parser: argparse.ArgumentParser) -> list[str]:
    return [option for action in parser._actions for option in action.option_strings]


def unknown_sentence(unknown: Sequence[str], parser: argparse.ArgumentParser) -> str:
    """`unknown option --sesion (did you mean --session?)`, for each unknown argument."""
    said = []
    for n, given in enumerate(unknown):
        name = given.split("=", 1)[0]
        if not name.startswith("-"):
            if n == 0 or not unknown[n - 1].startswith("-"):  # else most likely the unknown option's value
                said.append(f"unexpected argument {given!r}")
            continue
        near = difflib.get_close_matches(name, options_of(parser), n=1, cutoff=0.6)
        said.append(f"unknown option {name}" + (f" (did you mean {near[0]}?)" if near else ""))
    return "; ".join(said)


class SuggestingParser(argparse.ArgumentParser):
    """Unknown arguments are refused by the parser of the command they were given to, in one line that
    names the nearest option and where the options are listed."""

    def parse_args(self, args: Sequence[str] | None = None,  # type: ignore[override]
                   namespace: argparse.Namespace | None = None) -> argparse.Namespace:
        parsed, unknown = self.parse_known_args(args, namespace)
        if unknown:
            owner = self._chosen(parsed)
            owner.exit(2, f"{owner.prog}: error: {unknown_sentence(unknown, owner)} "
                          f"(`{owner.prog} --help` lists the options)\n")
        return parsed

    def _chosen(self, parsed: argparse.Namespace) -> argparse.ArgumentParser:
        """The (sub)command's parser the arguments went to: the deepest one chosen."""
        parser: argparse.ArgumentParser = self
        while True:
            subparsers = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
            chosen = getattr(parsed, subparsers[0].dest, None) if subparsers else None
            if not subparsers or chosen not in subparsers[0].choices:
                return parser
            parser = subparsers[0].choices[chosen]

    def error(self, message: str) -> NoReturn:  # the other mistakes (a missing argument): usage, then why
        self.print_usage(sys.stderr)
        self.exit(2, f"{self.prog}: error: {message}\n")
