"""Source positions for the few nodes that were flagged, without LibCST's PositionProvider.

PositionProvider records a range for every node and, measured on fairseq, costs about 2.4x the
parse itself. Findings need positions for a handful of nodes, so we run plain code generation once
and note where each flagged node's tokens start and end.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable
from itertools import accumulate

import libcst as cst
from libcst._nodes.internal import CodegenState


class _RecordingState(CodegenState):
    __slots__ = ("targets", "marks")

    def __init__(self, default_indent: str, default_newline: str, targets: set[int]):
        super().__init__(default_indent=default_indent, default_newline=default_newline)
        self.targets = targets
        self.marks: dict[int, list[int]] = {}

    def before_codegen(self, node: cst.CSTNode) -> None:
        if id(node) in self.targets:
            self.marks[id(node)] = [len(self.tokens), -1]

    def after_codegen(self, node: cst.CSTNode) -> None:
        mark = self.marks.get(id(node))
        if mark is not None:
            mark[1] = len(self.tokens)


Span = tuple[int, int, int, int]  # line, column, end_line, end_column (1-based, end exclusive)


def locate(module: cst.Module, nodes: Iterable[cst.CSTNode]) -> dict[int, Span]:
    """Map id(node) -> span for each node, in one code-generation pass over the module."""
    targets = {id(n) for n in nodes}
    state = _RecordingState(module.default_indent, module.default_newline, targets)
    module._codegen(state)
    tokens = state.tokens
    offsets = [0, *accumulate(map(len, tokens))]
    text = "".join(tokens)
    line_starts = [0]
    pos = text.find("\n")
    while pos != -1:
        line_starts.append(pos + 1)
        pos = text.find("\n", pos + 1)

    def to_line_col(offset: int) -> tuple[int, int]:
        line = bisect_right(line_starts, offset)
        return line, offset - line_starts[line - 1] + 1

    spans: dict[int, Span] = {}
    for node_id, (start_tok, end_tok) in state.marks.items():
        start, end = offsets[start_tok], offsets[end_tok]
        # Skip leading whitespace/newlines/comments that belong to the node (statements own them).
        chunk = text[start:end]
        stripped = len(chunk) - len(chunk.lstrip())
        start += stripped
        while end > start and text[end - 1] in " \t\r\n":
            end -= 1
        line, col = to_line_col(start)
        end_line, end_col = to_line_col(end)
        spans[node_id] = (line, col, end_line, end_col)
    return spans
