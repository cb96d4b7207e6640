"""The frame reader skips a malformed LSP frame and reads the ones after it."""

from __future__ import annotations

import json

import pytest

from checkpoint.server.framing import MAX_BODY, Frame, FrameReader, Malformed


def frame(body: bytes, header: bytes | None = None) -> bytes:
    return (header if header is not None else b"Content-Length: %d" % len(body)) + b"\r\n\r\n" + body


def good(n: int) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": n, "method": "m", "params": {}}).encode()


def read_all(data: bytes, chunk: int) -> list[Frame | Malformed]:
    pieces = [data[i : i + chunk] for i in range(0, len(data), chunk)]
    reader = FrameReader(lambda: pieces.pop(0) if pieces else b"")
    out: list[Frame | Malformed] = []
    while (item := reader.next()) is not None:
        out.append(item)
    return out


BAD_FRAMES = {
    "non-numeric": frame(good(0), b"Content-Length: abc"),
    "negative": frame(good(0), b"Content-Length: -5"),
    "too small": frame(good(0), b"Content-Length: 7"),
    "too large": frame(good(0), b"Content-Length: %d" % (len(good(0)) + 500)),
    "over the limit": frame(good(0), b"Content-Length: %d" % (MAX_BODY + 1)),
    "zero": frame(good(0), b"Content-Length: 0"),
    "no length": frame(good(0), b"Content-Type: application/vscode-jsonrpc"),
    "garbage": b"GET / HTTP/1.1\r\nHost: x\r\n\r\n",
}


@pytest.mark.parametrize("chunk", [1, 7, 65536])
@pytest.mark.parametrize("name", sorted(BAD_FRAMES))
def test_a_bad_frame_is_reported_once_and_the_next_frames_are_read(name: str, chunk: int) -> None:
    data = BAD_FRAMES[name] + b"".join(frame(good(i)) for i in range(1, 51))
    items = read_all(data, chunk)
    bodies = [json.loads(i.body)["id"] for i in items if isinstance(i, Frame)]
    problems = [i for i in items if isinstance(i, Malformed)]
    assert bodies[-50:] == list(range(1, 51))
    assert len(problems) == 1, problems
    assert len(bodies) == 50  # the bad frame is not delivered as if it were whole


def test_header_names_are_case_insensitive_and_content_type_is_allowed() -> None:
    data = frame(good(1), b"content-length: %d" % len(good(1))) + frame(
        good(2), b"Content-Type: application/vscode-jsonrpc; charset=utf-8\r\nCONTENT-LENGTH: %d" % len(good(2)))
    items = read_all(data, 5)
    assert [json.loads(i.body)["id"] for i in items if isinstance(i, Frame)] == [1, 2]
    assert not [i for i in items if isinstance(i, Malformed)]


def test_a_body_that_mentions_content_length_is_read_whole() -> None:
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "m",
                       "params": {"text": "x\r\n\r\nContent-Length: 3\r\n\r\n{}"}}).encode()
    items = read_all(frame(body) + frame(good(2)), 3)
    assert [i.body for i in items if isinstance(i, Frame)] == [body, good(2)]


def test_a_too_deeply_nested_message_is_one_malformed_frame() -> None:
    deep = b"[" * 2000 + b"]" * 2000
    for chunk in (7, 4096, 1 << 20):
        items = read_all(frame(deep) + frame(good(1)), chunk)
        assert items == [Malformed(f"a message of Content-Length {len(deep)} nested too deeply"), Frame(good(1))]


def test_a_too_deeply_nested_message_claiming_a_too_large_length_is_one_malformed_frame() -> None:
    deep = b"[" * 2000 + b"]" * 2000
    items = read_all(frame(deep, b"Content-Length: %d" % (len(deep) + 100)) + frame(good(1)), 1 << 20)
    assert len(items) == 2 and isinstance(items[0], Malformed) and items[1] == Frame(good(1))
