"""The in-process extractors scripts/bench.py runs chunks through: one that records what a model
extractor would be sent, one that only takes a model's time."""

from __future__ import annotations

import threading
import time

from checkpoint.answer import Extraction
from checkpoint.extract.heuristic import HeuristicExtractor
from checkpoint.extract.prompt import render_chunk, render_request
from checkpoint.model import ChunkInput
from checkpoint.store import Store


class Recorder:
    """The heuristic extractor, recording what a model extractor would be sent for each chunk."""

    name = "recorder"
    description = "records the bytes of every request"

    def __init__(self) -> None:
        self.inner = HeuristicExtractor()
        self.chunk_bytes = 0  # render_chunk: the transcript block
        self.request_bytes = 0  # render_request: the whole user message
        self.text_bytes = 0  # the turns' own text in those chunks
        self.calls = 0
        self.turns = 0
        self.seen: set[tuple[str, int]] = set()
        self.lock = threading.Lock()

    def extract(self, chunk: ChunkInput) -> Extraction:
        rendered = len(render_chunk(chunk).encode())
        request = sum(len(part.encode()) for part in render_request(chunk))
        with self.lock:
            self.chunk_bytes += rendered
            self.request_bytes += request
            self.text_bytes += sum(len(t.text.encode()) for t in chunk.turns)
            self.calls += 1
            self.turns += len(chunk.turns)
            self.seen.update((t.turn_id, t.part) for t in chunk.turns)
        extraction = self.inner.extract(chunk)
        return extraction.model_copy(update={"extractor": self.name})


class Sleeper:
    name = "sleeper"
    description = "sleeps, as a model answering would"

    def __init__(self, latency: float) -> None:
        self.latency = latency

    def extract(self, chunk: ChunkInput) -> Extraction:
        time.sleep(self.latency)
        return Extraction(chunk_id=chunk.chunk_id, items=[], extractor=self.name)


def text_bytes(store: Store, session_id: str) -> int:
    counts = {s.id: s.turns for s in store.session_counts()}
    return sum(len(store.turn_text(session_id, seq).encode()) for seq in range(1, counts[session_id] + 1))
