"""Reading LSP frames off a byte stream so that one bad frame costs that frame and no more.

pygls' reader matches `Content-Length: N` exactly and reads N bytes: after a non-numeric, a too
small or a too large length (or a lowercase header name) its idea of where frames begin is off for
good, and every later request is lost while the process stays alive. Here the header names are
case-insensitive (as in HTTP, which the LSP base protocol copies), the length is checked, and after
a frame that cannot be right the reader skips to the next `Content-Length:` in the stream: the bad
frame is reported once and the ones after it are read as usual.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass

MAX_BODY = 64 * 1024 * 1024  # no editor sends a 64 MiB request; a larger length is a broken frame
MAX_HEADER = 8 * 1024  # the header block is two short lines; more is garbage, not a header
_HEADER_START = re.compile(rb"content-length:", re.IGNORECASE)
_HEADER_NAME = re.compile(rb"(?i)(content-length|content-type):")
_DIGITS = re.compile(rb"[0-9]{1,20}")
_JSON = json.JSONDecoder()


@dataclass(frozen=True)
class Frame:
    body: bytes


@dataclass(frozen=True)
class Malformed:
    """A frame that was skipped, and why (said once on stderr)."""

    reason: str


class FrameReader:
    """`read` returns what the stream has (at least one byte), or b"" at its end."""

    def __init__(self, read: Callable[[], bytes]) -> None:
        self._read = read
        self._buffer = bytearray()
        self._eof = False

    def _fill(self) -> bool:
        if self._eof:
            return False
        chunk = self._read()
        if not chunk:
            self._eof = True
            return False
        self._buffer += chunk
        return True

    def _skip_to_next_header(self, start: int) -> None:
        """Drop everything before the next `Content-Length:` at or after `start`, reading on until
        one comes (or the stream ends): what lies between is one problem, said once."""
        keep = len(b"content-length:") - 1
        while True:
            match = _HEADER_START.search(self._buffer, start)
            if match:
                del self._buffer[: match.start()]
                return
            del self._buffer[: max(start, len(self._buffer) - keep)]
            start = 0
            if not self._fill():
                self._buffer.clear()
                return

    def next(self) -> Frame | Malformed | None:
        """The next frame or the next problem; None at the end of the stream."""
        while True:
            # Blank lines between frames are harmless; anything else before a header is the rest
            # of a frame whose length was too small.
            while self._buffer[:2] == b"\r\n" or self._buffer[:1] == b"\n":
                del self._buffer[: 2 if self._buffer[:2] == b"\r\n" else 1]
            if self._buffer and not _HEADER_NAME.match(self._buffer[:15]) and len(self._buffer) >= 15:
                self._skip_to_next_header(0)
                return Malformed("bytes outside any frame (a Content-Length too small?)")
            end = self._buffer.find(b"\r\n\r\n")
            if end < 0:
                if len(self._buffer) > MAX_HEADER:
                    self._skip_to_next_header(1)
                    return Malformed("a header block longer than 8 KiB")
                if not self._fill():
                    return Malformed("the stream ended inside a header") if self._buffer.strip() else None
                continue
            header, body_start = bytes(self._buffer[:end]), end + 4
            length, problem = _content_length(header)
            if problem:
                self._skip_to_next_header(1)
                return Malformed(problem)
            return self._body(body_start, length)

    def _body(self, start: int, length: int) -> Frame | Malformed | None:
        while True:
            if _overlong(self._buffer, start, start + length):
                self._skip_to_next_header(start)
                return Malformed(f"Content-Length {length} is larger than the message")
            if len(self._buffer) >= start + length:
                break
            if not self._fill():
                self._buffer.clear()
                return Malformed("the stream ended inside a message")
        body = bytes(self._buffer[start : start + length])
        try:
            json.loads(body)
        except RecursionError:
            # A few KB of nested brackets: json.loads recurses once per level. Whatever parses this
            # frame later would fail the same way, so it ends here, as one bad frame.
            self._skip_to_next_header(start)
            return Malformed(f"a message of Content-Length {length} nested too deeply")
        except ValueError:
            # Cut short (the length was too small) or not JSON at all: what follows up to the next
            # header belongs to the same broken frame.
            self._skip_to_next_header(start)
            return Malformed(f"a message of Content-Length {length} that is not JSON")
        del self._buffer[: start + length]
        return Frame(body)


def _content_length(header: bytes) -> tuple[int, str]:
    length: int | None = None
    for line in header.split(b"\r\n"):
        name, sep, value = line.partition(b":")
        if not sep:
            return 0, f"a header line without a colon: {line[:40]!r}"
        if name.strip().lower() == b"content-length":
            value = value.strip()
            if not _DIGITS.fullmatch(value):
                return 0, f"a Content-Length that is not a number: {value[:20]!r}"
            length = int(value)
    if length is None:
        return 0, "a header without Content-Length"
    if length == 0:
        return 0, "Content-Length 0"
    if length > MAX_BODY:
        return 0, f"Content-Length {length} is over the {MAX_BODY} byte limit"
    return length, ""


def _overlong(buffer: bytearray, start: int, end: int) -> bool:
    """A complete JSON message followed by the next frame's header inside what the length claims:
    the length was too large (waiting for it would swallow the frames after it)."""
    match = _HEADER_START.search(buffer, start, end)
    if match is None:
        return False
    text = buffer[start : match.start()].decode("utf-8", "replace")
    try:
        _, stop = _JSON.raw_decode(text)
    except RecursionError:
        return True  # a message nested too deeply is a bad frame whatever its length: skip to the next
    except ValueError:
        return False
    return not text[stop:].strip()
