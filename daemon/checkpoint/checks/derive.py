"""A check derived from a sentence that names code (the offline rules, no model): what it says must no
longer appear becomes a `uses` check, in every language Checkpoint checks.

- "use X instead of Y", "X rather than Y", "switch from Y to X", "migrate from Y", "replace Y with X",
  "Y is no longer used", "no longer use Y", "stop using Y", "never use Y", "don't import Y": uses of Y;
- "don't call Y from Z", "never call Y": calls of Y (in the files Z names).

Y must read as code: an identifier, module or dotted name (in backticks, or followed by the end of the
sentence or by words such as "library", "for", "because"), never a pronoun or a plain phrase: "instead
of plain text files" derives nothing. A derived check is proposed: it acts only once its item is accepted.
"""

from __future__ import annotations

import re
from typing import Any

from checkpoint.model import ItemKind

_Y = r"`?(?P<y>[A-Za-z_@][\w@/-]*(?:\.[A-Za-z_]\w*)*)(?:\(\))?`?"
_Z = r"`?(?P<z>[\w./*-]+?)`?"
# What may follow a name for it to be read as one: the sentence's end or a word that ends the name.
_AFTER = (r"(?=\s*$|[,.;:!?)]|\s+(?:library|module|package|crate|sdk|client|anymore|any\s+more|for|because|since"
          r"|in|from|here|now|so|as|when|and|or|—|–|-|calls?|directly|anywhere|at\s+all)\b)")
_INSTEAD = re.compile(rf"\b(?:instead\s+of|rather\s+than)\s+(?:the\s+|using\s+)?{_Y}{_AFTER}", re.IGNORECASE)
_FROM_TO = re.compile(rf"\b(?:switch\w*|mov(?:e|ed|es|ing)|migrat\w*)\s+(?:over\s+|away\s+)?from\s+(?:the\s+)?{_Y}"
                      rf"(?=\s+(?:library\s+|module\s+|package\s+)?to\b|{_AFTER[3:]}", re.IGNORECASE)
_REPLACE = re.compile(rf"\breplac(?:e|ed|es|ing)\s+(?:the\s+)?{_Y}\s+(?:library\s+|module\s+|package\s+)?(?:with|by)\b",
                      re.IGNORECASE)
_NO_LONGER = re.compile(rf"^(?:the\s+)?{_Y}\s+(?:library\s+|module\s+|package\s+)?(?:is|are)\s+no\s+longer\s+"
                        r"(?:used|needed|in\s+use)\b", re.IGNORECASE)
_STOP = re.compile(rf"\b(?:no\s+longer\s+use|stop\s+using|never\s+use|never\s+import|avoid(?:\s+using)?|"
                   rf"(?:do\s+not|don't|must\s+not|mustn't|should\s+not|shouldn't)\s+(?:use|import))\s+"
                   rf"(?:the\s+)?{_Y}{_AFTER}", re.IGNORECASE)
_CALL = re.compile(rf"\b(?:never|(?:do\s+not|don't|must\s+not|mustn't|should\s+not|shouldn't))\s+call\s+"
                   rf"(?:the\s+)?{_Y}(?:\s+(?:function|method|api))?(?:\s+from\s+(?:within\s+)?{_Z})?"
                   r"(?=\s*$|[,;:!?)]|\.(?:\s|$)|\s)", re.IGNORECASE)

# Words that fit the shape of a name but name no code.
_NOT_CODE = frozenset(re.split(r"\s+", """
a an the it its it's this that these those them they one ones any anything something everything nothing
there here which what me us you him her our my your their manually directly locally later again before now
hand mocks mock tests test code files file text plain raw that's other others another both either neither
""".strip()))


def _name(match: re.Match[str]) -> str | None:
    name = match.group("y")
    if name.lower() in _NOT_CODE or len(name) < 2 or name.isdigit():
        return None
    if "`" in match.group(0):  # in backticks: code as written
        return name
    if name.isupper():  # an acronym (YAML, JSON, REST): a format or an idea, not a module
        return None
    # A product named in prose ("Redis", "Axios") is imported by its package's name, in lower case
    return name.lower() if name[0].isupper() and name[1:].islower() else name


def _glob(where: str) -> str:
    """Z as a glob: a path as given, a bare module name as its file anywhere ("util" -> "util.*")."""
    where = where.rstrip(".")
    return where if "/" in where or "." in where or "*" in where else f"{where}.*"


def derive_check(sentence: str, kind: ItemKind) -> dict[str, Any] | None:
    """The check a decision's or constraint's sentence implies, as checks.model reads it; None: none."""
    if kind is ItemKind.QUESTION:
        return None
    text = sentence.strip()
    call = _CALL.search(text)
    if call is not None:
        name = _name(call)
        if name:
            where = call.group("z")
            return {"uses": name, "calls": True, **({"paths": [_glob(where)]} if where else {})}
    for rule in (_INSTEAD, _FROM_TO, _REPLACE, _NO_LONGER, _STOP):
        found = rule.search(text)
        if found is not None:
            name = _name(found)
            if name:
                return {"uses": name}
    return None
