"""JSON for the pre-edit hook's narrow path (agent.pre_edit_narrow, agent.hook_settings,
agent.reminder_ledger) through CPython's own C codec, `_json`, without the json package: importing
json imports `re` and `enum` (a fifth of the hook's 30 ms), and the narrow path needs neither.

`loads` reads as json.loads reads (the same C scanner, the same whitespace and "extra data" rules) a
UTF-8 text; another encoding json.loads would detect (UTF-16, UTF-32, a BOM) is a ValueError here: the
caller sends that input down the full hook. `dumps` writes what json.dumps writes with its default
separators for the values the hook writes: strings, integers, booleans, None, and lists and dicts of
them (a float or any other value: TypeError). Where `_json` is missing, json itself does both."""

from __future__ import annotations

TYPE_CHECKING = False  # typing itself is not loaded on the narrow path (mypy reads this name as typing's)
if TYPE_CHECKING:
    from typing import Any

_SPACE = " \t\n\r"  # json.decoder.WHITESPACE

try:
    from _json import encode_basestring, encode_basestring_ascii, make_scanner
except ImportError:  # an interpreter without the C codec
    import json as _json_package

    def loads(data: str | bytes) -> Any:
        return _json_package.loads(data)

    def dumps(value: Any, ensure_ascii: bool = True) -> str:
        return _json_package.dumps(value, ensure_ascii=ensure_ascii)
else:
    class _Context:
        """What json.decoder.JSONDecoder hands the C scanner (json.loads' defaults)."""

        strict = True
        object_hook = None
        object_pairs_hook = None
        parse_float = float
        parse_int = int
        parse_constant = {"-Infinity": float("-inf"), "Infinity": float("inf"), "NaN": float("nan")}.__getitem__

    _scan = make_scanner(_Context())  # type: ignore[arg-type]  # typeshed's stub takes a scanner

    def loads(data: str | bytes) -> Any:
        """json.loads(data), for UTF-8 text; ValueError for what it would refuse, and for another encoding."""
        if isinstance(data, bytes):
            if data.startswith(b"\xef\xbb\xbf") or b"\x00" in data[:4]:
                raise ValueError("not UTF-8 JSON")  # json.loads detects UTF-16 and -32: the full hook reads it
            data = data.decode("utf-8", "surrogatepass")
        if data.startswith("\ufeff"):
            raise ValueError("Unexpected UTF-8 BOM")
        start = len(data) - len(data.lstrip(_SPACE))
        try:
            value, end = _scan(data, start)
        except StopIteration:
            raise ValueError("Expecting value") from None
        if data[end:].strip(_SPACE):
            raise ValueError("Extra data")
        return value

    def dumps(value: Any, ensure_ascii: bool = True) -> str:
        """json.dumps(value, ensure_ascii=ensure_ascii) for strings, integers, booleans, None, lists and
        dicts (string keys) of them."""
        if isinstance(value, str):
            return encode_basestring_ascii(value) if ensure_ascii else encode_basestring(value)
        if value is None:
            return "null"
        if value is True:
            return "true"
        if value is False:
            return "false"
        if isinstance(value, int):
            return int.__repr__(value)
        if isinstance(value, list | tuple):
            return "[" + ", ".join(dumps(v, ensure_ascii) for v in value) + "]"
        if isinstance(value, dict) and all(isinstance(k, str) for k in value):
            pairs = (f"{dumps(k, ensure_ascii)}: {dumps(v, ensure_ascii)}" for k, v in value.items())
            return "{" + ", ".join(pairs) + "}"
        raise TypeError(f"not written by this module: {type(value).__name__}")
