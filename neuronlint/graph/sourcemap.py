"""Map graph nodes and exceptions back to the user's source line.

torch.fx keeps the Python stack of each node as text (`node.meta["stack_trace"]`); exceptions
carry a traceback. Both list library frames (torch, site-packages) around the user's frames: the
innermost frame inside the project root that is not library code is the line a finding points at.
Pure Python: used by the child (capture) and by tests.
"""

from __future__ import annotations

import os
import re
import sysconfig
import traceback
from dataclasses import asdict, dataclass
from pathlib import Path
from types import TracebackType
from typing import Any

_FRAME = re.compile(r'^\s*File "(?P<file>[^"]+)", line (?P<line>\d+), in (?P<func>[^\n]+)$')


@dataclass(frozen=True)
class Frame:
    path: str  # absolute
    line: int
    function: str
    code: str = ""
    column: int = 0  # 1-based; 0 when unknown
    end_column: int = 0

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def parse_stack_trace(text: str) -> list[Frame]:
    """Frames of a formatted stack (outermost first), as torch.fx stores it."""
    frames: list[Frame] = []
    lines = text.splitlines()
    for index, line in enumerate(lines):
        match = _FRAME.match(line)
        if not match:
            continue
        code = ""
        if index + 1 < len(lines) and not _FRAME.match(lines[index + 1]):
            code = lines[index + 1].strip()
        frames.append(Frame(match["file"], int(match["line"]), match["func"].strip(), code))
    return frames


def traceback_frames(tb: TracebackType | None) -> list[Frame]:
    """Frames of an exception's traceback (outermost first), with columns where Python has them."""
    frames = []
    for summary in traceback.extract_tb(tb):
        column = (summary.colno or -1) + 1 if getattr(summary, "colno", None) is not None else 0
        end = (summary.end_colno or -1) + 1 if getattr(summary, "end_colno", None) is not None else 0
        same_line = getattr(summary, "end_lineno", summary.lineno) == summary.lineno
        frames.append(
            Frame(
                summary.filename,
                summary.lineno or 0,
                summary.name,
                (summary.line or "").strip(),
                column,
                end if same_line else 0,
            )
        )
    return frames


class UserCode:
    """Decides which files are the user's: under the root, outside libraries and neuronlint itself."""

    def __init__(self, root: Path):
        self.root = os.path.realpath(root)
        libraries = {sysconfig.get_paths()[k] for k in ("stdlib", "platstdlib", "purelib", "platlib")}
        self.excluded = tuple(os.path.realpath(p) + os.sep for p in libraries if p)
        self.own = os.path.realpath(Path(__file__).resolve().parent.parent) + os.sep
        self._cache: dict[str, bool] = {}

    def __contains__(self, path: str) -> bool:
        found = self._cache.get(path)
        if found is None:
            real = os.path.realpath(path) if not path.startswith("<") else path
            found = (
                real.startswith(self.root + os.sep)
                and not real.startswith(self.excluded)
                and not real.startswith(self.own)
                and f"{os.sep}site-packages{os.sep}" not in real
                and f"{os.sep}dist-packages{os.sep}" not in real
            )
            self._cache[path] = found
        return found

    def innermost(self, frames: list[Frame]) -> Frame | None:
        """The user frame closest to where the op ran (or the error was raised)."""
        for frame in reversed(frames):
            if frame.path in self:
                return frame
        return None
