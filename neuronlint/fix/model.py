"""What a fix is: text edits on the original source, with a safety class (ruff's model)."""

from __future__ import annotations

from dataclasses import dataclass

from neuronlint.findings import Edit

SAFE = "safe"  # applied by `neuronlint fix` / `scan --fix`
UNSAFE = "unsafe"  # applied only with `--unsafe-fixes`: needs a reviewer's judgement
APPLICABILITIES = (SAFE, UNSAFE)

__all__ = ["SAFE", "UNSAFE", "APPLICABILITIES", "Edit", "Plan", "LineIndex", "overlaps", "apply_edits"]


@dataclass(frozen=True, slots=True)
class Plan:
    """A fixer's answer for one finding: the edits, whether they are safe, and what they do."""

    edits: tuple[Edit, ...]
    applicability: str
    description: str


class LineIndex:
    """Offsets of (line, column) positions in one text; columns count characters."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.starts = [0]
        for index, char in enumerate(text):
            if char == "\n":
                self.starts.append(index + 1)

    def offset(self, line: int, column: int) -> int:
        if line > len(self.starts):
            return len(self.text)
        return min(self.starts[line - 1] + column - 1, len(self.text))


def overlaps(a: Edit, b: Edit) -> bool:
    """Two edits conflict when their spans intersect; insertions conflict only strictly inside a span."""
    a_point, b_point = a.start == a.end, b.start == b.end
    if a_point and b_point:
        return False
    if a_point:
        return b.start < a.start < b.end
    if b_point:
        return a.start < b.start < a.end
    return a.start < b.end and b.start < a.end


def apply_edits(text: str, edits: list[Edit]) -> str:
    """Apply non-overlapping edits (duplicates counted once) to text."""
    index = LineIndex(text)
    unique = sorted(set(edits), key=lambda e: (e.start, e.end, e.order))
    out: list[str] = []
    cursor = 0
    for edit in unique:
        start = index.offset(edit.line, edit.column)
        end = index.offset(edit.end_line, edit.end_column)
        if start < cursor:
            raise ValueError(f"overlapping edits at line {edit.line}")
        out.append(text[cursor:start])
        content = edit.content
        if start == len(text) and text and not text.endswith("\n") and start == end:
            content = "\n" + content  # inserting after a last line that has no newline
        out.append(content)
        cursor = end
    out.append(text[cursor:])
    return "".join(out)
