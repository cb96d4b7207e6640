"""Orders about the task at hand, told from rules that hold for the project: "Delete all the Python
source files when you're done", "Don't stop until the tests pass", "Use the mock server for now" are
said for this run of the agent; an item made of one is kept in its session but given to no later
session, reminder, MCP answer (unless asked for) or shared record (ItemRecord.lasting).

The phrase rules here judge every item's statement, whichever extractor proposed it (a model answers
`lasting` itself; these catch what it misses), and are the offline extractor's only judgement. They
look for the words that tie a sentence to the current task, never for a topic: "never commit secrets"
is lasting, "don't commit until the tests pass" is not.
"""

from __future__ import annotations

import re

_ONE_OFF = re.compile(
    r"\b(?:when(?:ever)? (?:you(?:'re| are)|you've|you have|we(?:'re| are)) (?:done|finished|through)"
    r"|once (?:you(?:'re| are)|you've|you have|we(?:'re| are)|that's|this is|it's) (?:done|finished|through|complete)"
    r"|(?:do not|don't|never) stop (?:until|till|before)|keep going (?:until|till)|until (?:you(?:'re| are)) done"
    r"|for now|for the time being|for this (?:task|session|run|pr|change|ticket)|in this task"
    r"|before you (?:finish|stop|end|hand)|at the end of (?:this|the) (?:task|session|run)"
    r"|this task|the current task|the task at hand|temporarily|as a stopgap"
    r"|quand tu (?:as|auras) fini|pour l'instant|pour le moment|por ahora|de momento|cuando termines"
    r"|vorerst|fürs erste|wenn du fertig bist)\b"
    r"|暂时|先这样|完成后|做完|とりあえず|一旦|終わったら|今回(?:だけ|は)",
    re.IGNORECASE,
)
# A standing rule may name the task in passing ("always run the tests before you finish a task"):
# "always", "every time", "from now on" make it lasting whatever else it says.
_STANDING = re.compile(r"\b(?:always|every time|whenever|from now on|in (?:every|all) (?:task|session)s?"
                       r"|each time|going forward|in future|à l'avenir|desde ahora|以后|今後)\b", re.IGNORECASE)


def one_off(statement: str) -> bool:
    """The statement is an order about the task at hand, not a rule for the project."""
    return bool(_ONE_OFF.search(statement)) and not _STANDING.search(statement)
