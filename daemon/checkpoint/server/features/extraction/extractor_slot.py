"""The extractor the current settings choose, kept between runs, with the run options built from the
same settings. Shared by the watcher (its scans form chunks fitted to the extractor's window) and
the extraction feature (its runs); not a feature itself."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

from checkpoint import config, runner
from checkpoint.extract.choose import ExtractorChoice, choose_extractor


@dataclass
class ExtractorSlot:
    """The extractor for the current settings, chosen on the extract thread and kept between runs
    (the Claude extractor holds an HTTP client), with the sentence saying which and why, and the
    run options built from the same settings (chunk size fitted to the extractor's window)."""

    key: Any = None
    choice: ExtractorChoice | None = None
    options: runner.RunOptions | None = None
    lock: threading.Lock = field(default_factory=threading.Lock)

    def get(self, engine: config.Settings) -> tuple[ExtractorChoice, runner.RunOptions]:
        key = repr(engine)
        with self.lock:
            if self.choice is None or self.options is None or key != self.key:
                self.choice = choose_extractor(engine)
                self.options = runner.RunOptions.from_settings(engine, self.choice.extractor)
                self.key = key
            return self.choice, self.options

    def scan_settings(self, engine: config.Settings) -> config.Settings:
        """The settings scans form chunks with: fitted to the extractor's window once it is known."""
        with self.lock:
            options = self.options if self.key == repr(engine) else None
        return options.scan_settings(engine) if options is not None else engine
