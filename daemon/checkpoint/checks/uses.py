"""A `uses` check in each language: the ast-grep rules that find a library, module or function imported
or called. Rules by node kind and field, with anchored regexes on the node's text, not patterns: one
rule finds `import requests`, `import os, requests`, `import requests as r` and `import requests.adapters`.

A name is a module (`requests`, `net/http`, `@scope/pkg`) or a dotted function (`os.system`, `eval`).
"""

from __future__ import annotations

from typing import Any


def _literal(name: str) -> str:
    """The name as a regex literal (names hold only word characters, '.', '/', '-', '@')."""
    return name.replace(".", r"\.")


def _call(head: str, separators: str) -> dict[str, Any]:
    """A call whose callee is the name or a member of it (`requests.get(...)`, `eval(...)`)."""
    return {"kind": "call_expression", "has": {"field": "function", "regex": f"^{head}({separators}|$)"}}


def rules(name: str, lang: str, calls_only: bool) -> list[dict[str, Any]]:
    """The rules that find `name` used in `lang` (ast-grep's language name)."""
    n = _literal(name)
    if lang == "python":
        found: list[dict[str, Any]] = [
            {"kind": "call", "has": {"field": "function", "regex": f"^{n}(\\.|$)"}}]
        if not calls_only:
            found += [
                {"kind": "import_statement", "has": {"kind": "dotted_name", "regex": f"^{n}(\\.|$)",
                                                     "stopBy": "end"}},
                {"kind": "import_from_statement", "has": {"field": "module_name", "regex": f"^{n}(\\.|$)"}},
            ]
        return found
    if lang in ("javascript", "typescript", "tsx"):
        module = f"^['\"]{n}(/[^'\"]*)?['\"]$"
        found = [_call(n, r"\.")]
        if not calls_only:
            found += [
                {"kind": "import_statement", "has": {"field": "source", "regex": module}},
                {"kind": "call_expression", "all": [
                    {"has": {"field": "function", "regex": "^(require|import)$"}},
                    {"has": {"field": "arguments", "has": {"kind": "string", "regex": module}}}]},
            ]
        return found
    if lang == "go":
        last = name.rsplit("/", 1)[-1]
        found = [_call(_literal(last), r"\.")]
        if not calls_only:
            found.append({"kind": "import_spec", "has": {"field": "path", "regex": f"^\"(.*/)?{n}\"$"}})
        return found
    if lang == "rust":
        crate = _literal(name.replace("-", "_"))
        found = [_call(crate, "::|\\.")]
        if not calls_only:
            found += [
                {"kind": "use_declaration", "has": {"field": "argument", "regex": f"^(::)?{crate}(::|$)"}},
                {"kind": "extern_crate_declaration", "has": {"field": "name", "regex": f"^{crate}$"}},
            ]
        return found
    return []
