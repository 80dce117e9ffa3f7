"""Jupyter notebooks: code cells become one Python module, findings go back to cells and JSON lines.

The code cells are joined in order (a name imported in cell 1 is the same name in cell 3), with
IPython syntax blanked line for line so that every line keeps its number: `%magic` and `!shell`
lines, `x = !cmd` / `x = %magic` assignments, `obj?` help lines, automagic `pip install ...`
(each becomes `pass` at its indentation, so a `!wget` inside a `for` body leaves a valid body), and whole `%%bash`-style cell
magics (`%%time`, `%%timeit`, `%%capture` keep their Python body, blanked the same way). `!pip install ...` and `%pip`
lines are read by the shell scanner instead. A cell that still does not parse is blanked too (and
reported once, NL001), so one broken cell never hides the others.

Positions: `NotebookMap` knows, for each line of the joined module, its cell (1-based, counting
every cell as Jupyter shows them), the line within the cell, and the line of the notebook's JSON
text that holds it (nbformat writes one source line per JSON line; a cell whose source is a single
string maps all its lines to that string's line).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

_PYTHON_BODY_MAGICS = {"time", "timeit", "capture", "prun", "debug", "memit", "px"}
_LINE_MAGIC = re.compile(r"^\s*(?:[%!]|[\w.\[\], ]+=\s*[%!])")
_HELP = re.compile(r"^\s*[\w.]+\?\??\s*$|^\s*\?\??[\w.]+\s*$")
_SHELL_LINE = re.compile(
    r"^\s*(?:!|%(?:pip|conda|sx|sh|system|env|set_env)\b|(?:pip|conda|mamba)\s+install\b)"
)
# IPython's automagic: `pip install x` / `conda install x` without `%` run as magics.
_AUTOMAGIC = re.compile(r"^\s*(?:pip|conda|mamba)\s+(?:install|uninstall)\b")


class NotebookError(ValueError):
    def __init__(self, message: str, line: int = 1):
        super().__init__(message)
        self.line = line


@dataclass
class NotebookMap:
    cell: list[int] = field(default_factory=list)  # module line - 1 -> cell number (1-based)
    cell_line: list[int] = field(default_factory=list)  # module line - 1 -> line within the cell
    json_line: list[int] = field(default_factory=list)  # module line - 1 -> line in the JSON text
    json_column: list[int] = field(default_factory=list)  # column of the source string's first char
    shell_lines: list[tuple[int, str]] = field(default_factory=list)  # (module line, command text)
    bad_cells: list[tuple[int, int, str]] = field(default_factory=list)  # (error's module line, cell, error)

    def locate(self, line: int) -> tuple[int, int, int, int]:
        """(cell, line in cell, JSON line, JSON column offset) for a line of the joined module."""
        index = min(max(line, 1), len(self.cell)) - 1
        if index < 0:
            return 1, 1, 1, 0
        return self.cell[index], self.cell_line[index], self.json_line[index], self.json_column[index]


# ---- where each source string sits in the JSON text ----------------------------------------------
_TOKENS = re.compile(r'"(?:[^"\\]|\\.)*"|[{}\[\]:,]|[^\s{}\[\]:,"]+')


def _source_positions(text: str) -> dict[tuple[int, int], tuple[int, int]]:
    """(cell index, source item index) -> (JSON line, column of the string's first character).

    A small tokenizer over the raw text (strings, brackets, scalars): it tracks the path from the
    top object and records the position of each string under cells[i].source[j].
    """
    positions: dict[tuple[int, int], tuple[int, int]] = {}
    stack: list[list[Any]] = []  # each: [kind ('o'|'a'), current key or index]
    key_pending: str | None = None
    line, last = 1, 0
    for match in _TOKENS.finditer(text):
        start = match.start()
        line += text.count("\n", last, start)
        last = start
        token = match.group(0)
        if token in "{[" and len(token) == 1:
            stack.append(["o" if token == "{" else "a", None if token == "{" else 0])
            continue
        if token in "}]" and len(token) == 1:
            if stack:
                stack.pop()
            continue
        if token == ":":
            continue
        if token == ",":
            if stack and stack[-1][0] == "a":
                stack[-1][1] += 1
            elif stack:
                stack[-1][1] = None
            continue
        # a string or scalar
        if stack and stack[-1][0] == "o" and stack[-1][1] is None:
            stack[-1][1] = json.loads(token) if token.startswith('"') else token
            continue
        if (
            token.startswith('"')
            and len(stack) in (3, 4)
            and stack[0][1] == "cells"
            and stack[2][1] == "source"
        ):
            cell = stack[1][1]
            item = stack[3][1] if len(stack) == 4 else 0
            column = start - (text.rfind("\n", 0, start) + 1) + 2
            positions[(cell, item)] = (line, column)
    del key_pending
    return positions


# ---- building the module -------------------------------------------------------------------------
def _blank_ipython(lines: list[str]) -> tuple[list[str], list[int]]:
    """Lines with IPython syntax blanked, and the indexes of shell lines (`!cmd`, `%pip ...`)."""
    if lines and lines[0].lstrip().startswith("%%"):
        magic = lines[0].lstrip()[2:].split(None, 1)[0] if lines[0].strip() != "%%" else ""
        if magic in _PYTHON_BODY_MAGICS:
            # The body is a cell of its own (IPython runs it as one): its `!pip install` and
            # `%magic` lines are blanked like any cell's.
            body, shell = _blank_ipython(lines[1:])
            return ["", *body], [index + 1 for index in shell]
        shell = [0] if magic in ("bash", "sh", "script", "system") else []
        return [""] * len(lines), list(range(1, len(lines))) if shell else []
    out, shell = [], []
    continuing = False
    for index, line in enumerate(lines):
        if continuing or _LINE_MAGIC.match(line) or _HELP.match(line) or _AUTOMAGIC.match(line):
            if _SHELL_LINE.match(line) or continuing:
                shell.append(index)
            # `pass` at the line's indentation: a magic inside a `for` body leaves a valid body
            indent = line[: len(line) - len(line.lstrip())]
            out.append("" if continuing else f"{indent}pass")
            continuing = line.rstrip().endswith("\\")
            continue
        out.append(line)
    return out, shell


def parse_notebook(text: str) -> tuple[str, NotebookMap]:
    """The joined Python module of the notebook's code cells, and where each line came from."""
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise NotebookError(
            f"invalid notebook JSON: {exc.msg} (line {exc.lineno} column {exc.colno})", exc.lineno
        ) from None
    if not isinstance(doc, dict) or not isinstance(doc.get("cells", None), list):
        raise NotebookError("not a Jupyter notebook (no top-level `cells` list; nbformat 4 is supported)")
    language = (
        doc.get("metadata", {}).get("kernelspec", {}).get("language")
        or doc.get("metadata", {}).get("language_info", {}).get("name")
        or "python"
    )
    if isinstance(language, str) and language.lower() not in ("python", "python3", "ipython", "ipython3"):
        raise NotebookError(f"a {language} notebook, not Python")
    positions = _source_positions(text)
    mapping = NotebookMap()
    module: list[str] = []
    for cell_index, cell in enumerate(doc["cells"]):
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        source = cell.get("source", "")
        items = source if isinstance(source, list) else [source]
        if not all(isinstance(item, str) for item in items):
            raise NotebookError(f"cell {cell_index + 1}: `source` is not text")
        joined = "".join(items)
        lines = joined.split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        item_of_line = _item_per_line(items, len(lines), isinstance(source, list))
        python, shell = _blank_ipython(lines)
        first = len(module) + 1
        for number, (line, item) in enumerate(zip(python, item_of_line, strict=True), start=1):
            json_line, json_column = positions.get((cell_index, item), positions.get((cell_index, 0), (1, 1)))
            mapping.cell.append(cell_index + 1)
            mapping.cell_line.append(number)
            mapping.json_line.append(json_line)
            mapping.json_column.append(json_column)
            module.append(line)
        for index in shell:
            mapping.shell_lines.append((first + index, lines[index]))
        error = _syntax_error("\n".join(python) + "\n")
        if error is not None:
            message, error_line = error
            mapping.bad_cells.append(
                (first + min(max(error_line, 1), len(python)) - 1, cell_index + 1, message)
            )
            for index in range(len(python)):
                module[first - 1 + index] = ""
    return "\n".join(module) + ("\n" if module else ""), mapping


def _item_per_line(items: list[str], count: int, is_list: bool) -> list[int]:
    if not is_list:
        return [0] * count
    out = []
    for index, item in enumerate(items):
        out += [index] * max(1, item.count("\n") + (0 if item.endswith("\n") else 1))
    out = out[:count]
    return out + [len(items) - 1] * (count - len(out))


def _syntax_error(source: str) -> tuple[str, int] | None:
    import ast
    import warnings

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # a scanned cell's SyntaxWarnings are not ours to print
            compile(
                source,
                "<cell>",
                "exec",
                flags=ast.PyCF_ONLY_AST | ast.PyCF_ALLOW_TOP_LEVEL_AWAIT,
                dont_inherit=True,
            )
    except SyntaxError as exc:
        return f"{exc.msg} (cell line {exc.lineno})", exc.lineno or 1
    except (ValueError, RecursionError, MemoryError) as exc:
        return str(exc), 1
    return None
