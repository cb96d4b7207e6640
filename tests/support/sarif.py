"""The parts of the SARIF 2.1.0 schema (OASIS, sarif-schema-2.1.0.json) that a code-scanning upload
reads, written out here as a JSON schema: the log, a run, its tool and rules, a result, its location
and region, with their required properties, types and enumerations as the standard gives them."""

from __future__ import annotations

from typing import Any

_MESSAGE = {"type": "object", "properties": {"text": {"type": "string"}}, "anyOf": [{"required": ["text"]},
                                                                                   {"required": ["id"]}]}
_LEVEL = {"enum": ["none", "note", "warning", "error"]}
_REGION = {
    "type": "object",
    "properties": {
        "startLine": {"type": "integer", "minimum": 1}, "startColumn": {"type": "integer", "minimum": 1},
        "endLine": {"type": "integer", "minimum": 1}, "endColumn": {"type": "integer", "minimum": 1},
        "snippet": {"type": "object", "properties": {"text": {"type": "string"}}},
    },
}
_LOCATION = {
    "type": "object",
    "properties": {"physicalLocation": {
        "type": "object",
        "properties": {
            "artifactLocation": {"type": "object", "properties": {"uri": {"type": "string", "format": "uri-reference"},
                                                                  "uriBaseId": {"type": "string"}}},
            "region": _REGION,
        },
        "anyOf": [{"required": ["address"]}, {"required": ["artifactLocation"]}],
    }},
}
_RULE = {
    "type": "object",
    "required": ["id"],
    "properties": {
        "id": {"type": "string"}, "name": {"type": "string"},
        "shortDescription": _MESSAGE, "fullDescription": _MESSAGE,
        "defaultConfiguration": {"type": "object", "properties": {"level": _LEVEL}},
        "properties": {"type": "object"},
    },
}
SARIF_2_1_0: dict[str, Any] = {
    "$schema": "http://json-schema.org/draft-07/schema#",
    "type": "object",
    "required": ["version", "runs"],
    "properties": {
        "$schema": {"type": "string", "format": "uri"},
        "version": {"enum": ["2.1.0"]},
        "runs": {"type": ["array", "null"], "items": {
            "type": "object",
            "required": ["tool"],
            "properties": {
                "tool": {"type": "object", "required": ["driver"], "properties": {"driver": {
                    "type": "object", "required": ["name"],
                    "properties": {"name": {"type": "string"}, "semanticVersion": {"type": "string"},
                                   "informationUri": {"type": "string", "format": "uri"},
                                   "rules": {"type": "array", "uniqueItems": True, "items": _RULE}},
                }}},
                "results": {"type": ["array", "null"], "items": {
                    "type": "object",
                    "required": ["message"],
                    "properties": {
                        "ruleId": {"type": "string"}, "ruleIndex": {"type": "integer", "minimum": -1},
                        "level": _LEVEL, "message": _MESSAGE,
                        "locations": {"type": "array", "items": _LOCATION},
                        "partialFingerprints": {"type": "object", "additionalProperties": {"type": "string"}},
                    },
                }},
                "invocations": {"type": "array", "items": {
                    "type": "object", "required": ["executionSuccessful"],
                    "properties": {"executionSuccessful": {"type": "boolean"},
                                   "toolExecutionNotifications": {"type": "array", "items": {
                                       "type": "object", "required": ["message"],
                                       "properties": {"message": _MESSAGE, "level": _LEVEL}}}},
                }},
                "columnKind": {"enum": ["utf16CodeUnits", "unicodeCodePoints"]},
            },
        }},
    },
}


def sarif_problems(log: Any) -> list[str]:
    """Every way the log breaks the schema, and the references inside a run (ruleId/ruleIndex) that the
    schema alone cannot check."""
    import jsonschema  # type: ignore[import-untyped]  # installed with the MCP SDK; no stubs

    problems = [f"{'/'.join(map(str, e.absolute_path))}: {e.message}"
                for e in jsonschema.Draft7Validator(SARIF_2_1_0).iter_errors(log)]
    for run in log.get("runs") or [] if isinstance(log, dict) else []:
        rules = run.get("tool", {}).get("driver", {}).get("rules", [])
        for result in run.get("results") or []:
            index = result.get("ruleIndex")
            if index is not None and (index >= len(rules) or rules[index].get("id") != result.get("ruleId")):
                problems.append(f"result {result.get('ruleId')}: ruleIndex {index} names another rule")
    return problems
