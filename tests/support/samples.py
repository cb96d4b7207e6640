"""The real public transcripts committed under tests/data/samples/."""

from __future__ import annotations

from pathlib import Path

SAMPLES = Path(__file__).resolve().parents[1] / "data" / "samples"
