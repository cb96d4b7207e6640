"""What `checkpoint check` prints: text for a person, JSON, SARIF 2.1.0 (code scanning) and GitHub
workflow commands (annotations on a pull request's lines). Every text from a check, an item or a file
passes `plain_text`: a record or a line of code never writes a terminal escape or a workflow command."""

from __future__ import annotations

import hashlib
import json
from typing import Any

import checkpoint
from checkpoint.checks.engine import ActiveCheck, Hit
from checkpoint.checks.run import CheckRun
from checkpoint.model import plain_text, plural

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"


def level(check: ActiveCheck) -> str:
    """A constraint broken is an error; a decision gone against, a warning."""
    return "error" if check.kind == "constraint" else "warning"


def _by_id(run: CheckRun) -> dict[str, ActiveCheck]:
    return {c.id: c for c in run.checks}


def message(check: ActiveCheck) -> str:
    said = f" ({check.check.message})" if check.check.message else ""
    where = f", shared in {check.source}" if check.source != "local" else ""
    return plain_text(f"breaks the {check.kind} {check.item_id[:8]}{where}: {check.statement}{said}")


def summary(run: CheckRun) -> str:
    files = {h.path for h in run.hits}
    if run.hits:
        return (f"{plural(len(run.hits), 'line')} in {plural(len(files), 'file')} against "
                f"{plural(len({h.check_id for h in run.hits}), 'check')}")
    return f"clean: {plural(len(run.checks), 'check')} over {plural(run.files, 'file')}"


def text(run: CheckRun) -> str:
    checks = _by_id(run)
    lines = []
    for hit in run.hits:
        lines.append(plain_text(f"{hit.path}:{hit.line}:{hit.column}: {message(checks[hit.check_id])}"))
        lines.append(plain_text(f"    {hit.text}"))
    return "\n".join(lines)


def as_json(run: CheckRun) -> dict[str, Any]:
    checks = _by_id(run)
    return {
        "hits": [{**h.as_json(), "kind": checks[h.check_id].kind, "statement": checks[h.check_id].statement,
                  "level": level(checks[h.check_id]), "source": checks[h.check_id].source} for h in run.hits],
        "issues": [i.as_json() for i in run.issues],
        "checks": [{"id": c.id, "item": c.item_id, "check": c.check.as_json(), "source": c.source,
                    "statement": c.statement} for c in run.checks],
        "files": run.files, "skipped": run.skipped,
    }


def _fingerprint(hit: Hit) -> str:
    return hashlib.blake2b(f"{hit.check_id}|{hit.path}|{hit.text}".encode(), digest_size=12).hexdigest()


def sarif(run: CheckRun) -> dict[str, Any]:
    """A SARIF 2.1.0 log: one rule per active check, one result per line that breaks one."""
    index = {c.id: n for n, c in enumerate(run.checks)}
    checks = _by_id(run)
    rules = [{
        "id": c.id,
        "name": f"checkpoint-{c.kind}-{c.item_id[:8]}",
        "shortDescription": {"text": plain_text(c.statement)[:1000]},
        "fullDescription": {"text": plain_text(f"{c.kind} {c.item_id}: {c.statement}; broken by "
                                               f"{c.check.describe()}")[:2000]},
        "defaultConfiguration": {"level": level(c)},
        "properties": {"item": c.item_id, "source": c.source, "check": c.check.as_json()},
    } for c in run.checks]
    results = [{
        "ruleId": h.check_id,
        "ruleIndex": index[h.check_id],
        "level": level(checks[h.check_id]),
        "message": {"text": message(checks[h.check_id])},
        "locations": [{"physicalLocation": {
            "artifactLocation": {"uri": h.path, "uriBaseId": "%SRCROOT%"},
            "region": {"startLine": h.line, "startColumn": h.column, "endLine": h.end_line,
                       "endColumn": h.end_column, "snippet": {"text": plain_text(h.text)}},
        }}],
        "partialFingerprints": {"checkpointLine/v1": _fingerprint(h)},
    } for h in run.hits]
    notifications = [{"level": "warning", "message": {"text": plain_text(f"check {i.check_id} of item {i.item_id}"
                                                                         f" cannot act: {i.message}")}}
                     for i in run.issues]
    return {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {"name": "checkpoint", "semanticVersion": checkpoint.__version__,
                                "informationUri": "https://pypi.org/project/checkpoint-decisions/", "rules": rules}},
            "results": results,
            "invocations": [{"executionSuccessful": True, "toolExecutionNotifications": notifications}],
            "columnKind": "unicodeCodePoints",
        }],
    }


def _escape_data(value: str) -> str:
    return value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(value: str) -> str:
    return _escape_data(value).replace(":", "%3A").replace(",", "%2C")


def github(run: CheckRun) -> str:
    """GitHub Actions workflow commands: an annotation on each line that breaks a check."""
    checks = _by_id(run)
    out = []
    for h in run.hits:
        c = checks[h.check_id]
        title = _escape_property(plain_text(f"Checkpoint: {c.kind} {c.item_id[:8]}"))
        props = (f"file={_escape_property(h.path)},line={h.line},endLine={h.end_line},col={h.column},"
                 f"endColumn={h.end_column},title={title}")
        out.append(f"::{level(c)} {props}::{_escape_data(message(c))}")
    for i in run.issues:
        out.append(f"::warning title=Checkpoint check cannot act::{_escape_data(plain_text(i.message))}")
    return "\n".join(out)


def render(run: CheckRun, fmt: str) -> str:
    if fmt == "json":
        return json.dumps(as_json(run), ensure_ascii=False)
    if fmt == "sarif":
        return json.dumps(sarif(run), ensure_ascii=False, indent=1)
    if fmt == "github":
        return github(run)
    return text(run)
