"""The child's progress file: which target and stage it is in, so that a parent that kills it knows."""

from __future__ import annotations

import json
import time
from pathlib import Path


class Progress:
    """Appends one JSON line per stage (target index, stage, wall-clock time), so a parent that
    kills us knows which target and stage it was, and times each target against its timeout."""

    def __init__(self, path: Path):
        self.path = path
        self.target: int | None = None
        self.timing: dict[str, float] = {}
        self._last = time.perf_counter()

    def start(self, target: int) -> None:
        self.target, self.timing = target, {}
        self.stage("start")

    def stage(self, name: str) -> None:
        with open(self.path, "a", encoding="utf-8") as handle:
            handle.write(json.dumps({"target": self.target, "stage": name, "time": time.time()}) + "\n")
        self._last = time.perf_counter()

    def done(self, name: str) -> None:
        now = time.perf_counter()
        self.timing[name] = round(now - self._last, 3)
        self._last = now
