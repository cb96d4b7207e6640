"""What says, before any parsing, whether a check can match a file's text: which files it reads (its
languages' extensions and its globs) and its needle, text every match of it holds. The engine
(checks/engine.py) skips a file for a check by these; the pre-edit hook's narrow path
(agent/pre_edit_narrow.py) reads them to know that no accepted check can match what an edit would
write, without the engine (dataclasses, ast-grep, re2: more than the rest of the hook). Plain values
and the standard library only (`re` and `fnmatch` when a check has a pattern or globs): it loads with
the narrow path."""

from __future__ import annotations

TYPE_CHECKING = False  # typing itself is not loaded on the narrow path (mypy reads this name as typing's)
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from typing import Any

# ast-grep's languages Checkpoint checks, and the file names each takes. TypeScript's grammar does not
# read JSX: a .tsx file is read with tsx's, which a "typescript" check covers too.
EXTENSIONS: dict[str, tuple[str, ...]] = {
    "python": (".py", ".pyi"),
    "javascript": (".js", ".mjs", ".cjs", ".jsx"),
    "typescript": (".ts", ".mts", ".cts"),
    "tsx": (".tsx",),
    "go": (".go",),
    "rust": (".rs",),
}
ALIASES = {"py": "python", "js": "javascript", "ts": "typescript", "golang": "go", "rs": "rust",
           "jsx": "javascript", "re": "regex", "re2": "regex"}
_IDENTIFIER = r"\$*[A-Za-z_][A-Za-z0-9_]{2,}"  # `re` and `fnmatch` load only when a check needs them


def language_of_file(path: str) -> str | None:
    lower = path.lower()
    return next((lang for lang, exts in EXTENSIONS.items() if lower.endswith(exts)), None)


def languages(shape: str, lang: str | None) -> Sequence[str]:
    """The ast-grep languages a check of this shape and language reads (a "typescript" check reads .tsx
    files with tsx's grammar; a `uses` check without one, all of them)."""
    if shape == "regex":
        return ()
    if lang is None:
        return tuple(EXTENSIONS)
    return ("typescript", "tsx") if lang == "typescript" else (lang,)


def paths_take(globs: Sequence[str], path: str) -> bool:
    """Whether the check's globs take the file (every file, without globs). A glob without '/' matches a
    file's name in any folder ('Justfile', '*.yml'), one with '/' its path from the top folder."""
    if not globs:
        return True
    import fnmatch

    name = path.rsplit("/", 1)[-1]
    for glob in globs:
        if "/" in glob:
            glob = glob.removeprefix("./").rstrip("/")
            if fnmatch.fnmatchcase(path, glob) or fnmatch.fnmatchcase(path, glob + "/*"):
                return True
        elif fnmatch.fnmatchcase(name, glob) or path.startswith(glob + "/"):
            return True
    return False


def needle(shape: str, name: str | None, rule: Mapping[str, Any] | None, lang: str) -> str | None:
    """Text every match of the check holds, so a file without it is not parsed for it (None: no such
    text is known). A name used is spelled in the import or the call; a pattern's longest identifier
    (not a metavariable) is in the code it matches, when the rule is that pattern alone."""
    if shape == "uses":
        assert name is not None
        if lang == "go":
            return name.rsplit("/", 1)[-1]
        return name.replace("-", "_") if lang == "rust" else name
    if shape != "structural":
        return None
    rule = rule or {}
    pattern = rule.get("pattern")
    if set(rule) - {"inside", "has", "precedes", "follows", "stopBy"} != {"pattern"} or not isinstance(pattern, str):
        return None  # `not`, `any`, `kind`... : a match may hold no literal the rule names
    import re

    words = [w for w in re.findall(_IDENTIFIER, pattern) if not w.startswith("$")]
    return max(words, key=len) if words else None
