"""Fixing a Jupyter notebook: edits of the joined code cells go back into the cells' JSON strings.

The fixers see the notebook as the scan does (neuronlint.filetypes.notebook: the code cells joined
in order, IPython syntax blanked line for line). An edit is mapped to the cell and line it came
from and applied to that cell's own text, so magics and shell escapes stay as they were; an edit
that would cross two cells or touch a blanked line is not applied. Only the `source` value of a
changed cell is rewritten in the JSON text: lines that did not change keep their JSON string as it
was written, new lines are encoded like the rest of the file (nbformat's layout: one string per
line, the file's own indentation), and every other byte (outputs, metadata, key order, indentation,
the trailing newline) stays as it was. The result is checked: the new notebook must read back as
exactly the joined module the fixers produced, else nothing is written.
"""

from __future__ import annotations

import difflib
import json
import re
from dataclasses import dataclass, replace

from neuronlint.filetypes.notebook import NotebookError, NotebookMap, parse_notebook
from neuronlint.findings import Finding
from neuronlint.fix.model import Edit, Plan, apply_edits

_TOKENS = re.compile(r'"(?:[^"\\]|\\.)*"|[{}\[\]:,]|[^\s{}\[\]:,"]+')
_LINES = re.compile(r"[^\n]*\n|[^\n]+$")
_NON_ASCII_ESCAPE = re.compile(r"\\u(?!00[0-7])[0-9a-fA-F]{4}")


@dataclass
class _Source:
    """Where one cell's `source` value sits in the JSON text."""

    start: int  # offset of `[` or of the string
    end: int  # offset after `]` or after the string
    is_list: bool
    tokens: list[tuple[int, int]]  # (start, end) of each string item


def _sources(text: str) -> dict[int, _Source]:
    """cell index -> its source value's position, from a small tokenizer over the raw text.

    The stack holds [kind, current key (objects) or index (arrays)] from the top object down:
    top object (key "cells") > cells array (cell index) > cell object (key "source") > source."""
    found: dict[int, _Source] = {}
    stack: list[list] = []

    def in_cell() -> bool:
        return (
            len(stack) >= 3
            and stack[0] == ["o", "cells"]
            and stack[1][0] == "a"
            and stack[2][0] == "o"
            and stack[2][1] == "source"
        )

    def add(cell: int, source: _Source) -> None:
        if cell in found:
            raise ValueError(f"cell {cell + 1} has two `source` keys")
        found[cell] = source

    for match in _TOKENS.finditer(text):
        token, start = match.group(0), match.start()
        if token in ("{", "["):
            if len(stack) == 3 and in_cell() and token == "[":
                add(stack[1][1], _Source(start, -1, True, []))
            stack.append(["o", None] if token == "{" else ["a", 0])
        elif token in ("}", "]"):
            closed = stack.pop() if stack else None
            if closed is not None and closed[0] == "a" and len(stack) == 3 and in_cell():
                found[stack[1][1]].end = match.end()
        elif token == ",":
            if stack and stack[-1][0] == "a":
                stack[-1][1] += 1
            elif stack:
                stack[-1][1] = None
        elif token != ":":
            if stack and stack[-1][0] == "o" and stack[-1][1] is None:
                stack[-1][1] = json.loads(token) if token.startswith('"') else token
            elif len(stack) == 3 and in_cell() and token.startswith('"'):  # "source": "one string"
                add(stack[1][1], _Source(start, match.end(), False, [(start, match.end())]))
            elif len(stack) == 4 and in_cell() and stack[3][0] == "a" and token.startswith('"'):
                found[stack[1][1]].tokens.append((start, match.end()))
    return found


class NotebookDocument:
    """A notebook being fixed: its JSON text, and the joined module of its code cells."""

    def __init__(
        self, text: str, module: str, mapping: NotebookMap, cells: list, sources: dict[int, _Source]
    ):
        self.text = text
        self.module = module
        self.mapping = mapping
        self.cells = cells
        self.sources = sources
        self.module_lines = module.split("\n")[:-1] if module else []
        self.ascii = bool(_NON_ASCII_ESCAPE.search(text))

    @classmethod
    def parse(cls, text: str) -> NotebookDocument:
        try:
            module, mapping = parse_notebook(text)
        except NotebookError as exc:
            raise ValueError(str(exc)) from None
        cells = json.loads(text)["cells"]
        sources = _index_sources(text, len(cells))
        return cls(text, module, mapping, cells, sources)

    # ---- where a module position is in the cells ---------------------------------------------------
    def _cell_lines(self, cell: int) -> list[str]:
        source = self.cells[cell].get("source", "")
        lines = ("".join(source) if isinstance(source, list) else source).split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        return lines

    def _code_cells(self) -> list[int]:
        return sorted({c - 1 for c in self.mapping.cell})

    def _point(self, line: int, column: int, insertion: bool) -> tuple[int, int, int] | None:
        """(cell index, line in cell, column) of a module position; None when it has no place."""
        count = len(self.module_lines)
        if line > count:  # the end of the module: after the last code cell's last line
            cells = self._code_cells()
            if not cells:
                return None
            return cells[-1], len(self._cell_lines(cells[-1])) + 1, 1
        cell, cell_line = self.mapping.cell[line - 1] - 1, self.mapping.cell_line[line - 1]
        if insertion and column == 1 and cell_line == 1 and line > 1:
            # before a cell's first line: at the end of the cell above (where the imports are),
            # unless that cell is a cell magic (`%%bash`...): then at the start of this one
            above = self.mapping.cell[line - 2] - 1
            if not self._cell_lines(above)[0].lstrip().startswith("%%"):
                return above, len(self._cell_lines(above)) + 1, 1
        return cell, cell_line, column

    def _blanked(self, line: int) -> bool:
        cell, cell_line = self.mapping.cell[line - 1] - 1, self.mapping.cell_line[line - 1]
        original = self._cell_lines(cell)
        return cell_line > len(original) or original[cell_line - 1] != self.module_lines[line - 1]

    def _cell_edit(self, edit: Edit) -> tuple[int, Edit] | None:
        point = edit.start == edit.end
        start = self._point(edit.line, edit.column, point)
        if start is None:
            return None
        if point:
            cell, line, column = start
            if (
                line <= len(self._cell_lines(cell))
                and line == 1
                and self._cell_lines(cell)[0].lstrip().startswith("%%")
            ):
                return None  # nothing goes above a cell magic
            return cell, replace(edit, line=line, column=column, end_line=line, end_column=column)
        last = edit.end_line - 1 if edit.end_column == 1 and edit.end_line > edit.line else edit.end_line
        if any(self._blanked(n) for n in range(edit.line, min(last, len(self.module_lines)) + 1)):
            return None
        if edit.end_column == 1 and edit.end_line > edit.line:  # through the end of line `last`
            end = self._point(last, 1, False)
            if end is None:
                return None
            end = (end[0], end[1] + 1, 1)
        else:
            end = self._point(edit.end_line, edit.end_column, False)
        if end is None or end[0] != start[0]:
            return None
        return start[0], replace(edit, line=start[1], column=start[2], end_line=end[1], end_column=end[2])

    # ---- the Document protocol (neuronlint.fix.run) -------------------------------------------------
    def allows(self, plan: Plan) -> bool:
        """Whether every edit of a plan lands inside one code cell, off its magics."""
        for edit in plan.edits:
            mapped = self._cell_edit(edit)
            if mapped is None or not self._editable(mapped[0]):
                return False
        return True

    def _editable(self, cell: int) -> bool:
        source = self.sources.get(cell)
        return source is not None and bool(source.tokens)

    def apply(self, edits: list[Edit], new_module: str) -> NotebookDocument:
        per_cell: dict[int, list[Edit]] = {}
        for edit in edits:
            mapped = self._cell_edit(edit)
            if mapped is None or not self._editable(mapped[0]):
                raise ValueError(f"an edit at line {edit.line} has no place in one code cell")
            per_cell.setdefault(mapped[0], []).append(mapped[1])
        pieces: list[str] = []
        cursor = 0
        for cell in sorted(per_cell, key=lambda c: self.sources[c].start):
            source = self.sources[cell]
            old = self.cells[cell].get("source", "")
            old_text = "".join(old) if isinstance(old, list) else old
            new_text = apply_edits(old_text, per_cell[cell])
            if not old_text.endswith("\n") and new_text.endswith("\n"):
                new_text = new_text[:-1]  # an insertion after a last line without a newline
            pieces.append(self.text[cursor : source.start])
            pieces.append(self._encode(source, new_text))
            cursor = source.end
        pieces.append(self.text[cursor:])
        text = "".join(pieces)
        document = NotebookDocument.parse(text)
        if document.module != new_module:
            raise ValueError("the fixed cells do not read back as the fixed code")
        return document

    def _encode(self, source: _Source, text: str) -> str:
        raw = self.text
        if not source.is_list:
            return json.dumps(text, ensure_ascii=self.ascii)
        known = {json.loads(raw[a:b]): raw[a:b] for a, b in source.tokens}
        items = [
            known.get(line) or json.dumps(line, ensure_ascii=self.ascii) for line in _LINES.findall(text)
        ]
        first, last = source.tokens[0], source.tokens[-1]
        lead = raw[source.start + 1 : first[0]]
        tail = raw[last[1] : source.end - 1]
        sep = raw[first[1] : source.tokens[1][0]] if len(source.tokens) > 1 else "," + lead
        return "[" + lead + sep.join(items) + tail + "]" if items else "[]"

    # ---- positions between the scan's findings and the module --------------------------------------
    def module_finding(self, finding: Finding) -> Finding | None:
        """A scan finding of this notebook (JSON lines, `cell` in extra) in the joined module's lines."""
        cell = finding.extra.get("cell") if isinstance(finding.extra, dict) else None
        if not cell:
            return None
        for index, (c, n) in enumerate(zip(self.mapping.cell, self.mapping.cell_line, strict=True)):
            if c == cell["cell"] and n == cell["line"]:
                line = index + 1
                break
        else:
            return None
        shift = self.mapping.json_column[line - 1] - 1
        end_line = line + (finding.end_line - finding.line)
        if end_line > len(self.module_lines):
            return None
        end_shift = self.mapping.json_column[end_line - 1] - 1
        return (
            replace(
                finding,
                line=line,
                column=cell["column"],
                end_line=end_line,
                end_column=finding.end_column - end_shift,
            )
            if finding.column - shift == cell["column"]
            else None
        )

    def json_edits(self, other: NotebookDocument) -> tuple[Edit, ...]:
        """The edits of this notebook's JSON text that give `other`'s, line by line."""
        old, new = self.text.splitlines(keepends=True), other.text.splitlines(keepends=True)
        edits = []
        matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
        for tag, i1, i2, j1, j2 in matcher.get_opcodes():
            if tag != "equal":
                edits.append(Edit(i1 + 1, 1, i2 + 1, 1, "".join(new[j1:j2])))
        return tuple(edits)


def _index_sources(text: str, count: int) -> dict[int, _Source]:
    sources = _sources(text)
    if any(cell >= count or source.end < 0 for cell, source in sources.items()):
        raise ValueError("cannot locate the cells' sources in the JSON text")
    return sources
