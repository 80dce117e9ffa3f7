"""One parsed file as fixers see it: nodes by position, parents, imports and the device variable.

Fixers never rewrite the tree: they read nodes here and return text edits on the original source,
so everything they do not touch (formatting, comments) stays byte for byte.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterator
from dataclasses import dataclass, field
from itertools import accumulate

import libcst as cst
from libcst._nodes.internal import CodegenState

from neuronlint.fix.model import Edit

# Insertions at the import point: imports first, then the device variable that uses them.
ORDER_IMPORT, ORDER_DEVICE = 0, 1

_DEVICE_NAMES = ("DEVICE", "ACCELERATOR_DEVICE", "NEURONLINT_DEVICE")
_SPACE = re.compile(r"\s+")


def normalise(code: str) -> str:
    """Code without whitespace and with one kind of quote: for comparing expressions."""
    return _SPACE.sub("", code).replace("'", '"')


@dataclass
class Span:
    """A node's position: 1-based lines and columns, the end exclusive."""

    line: int
    column: int
    end_line: int
    end_column: int

    def contains(self, other: Span) -> bool:
        return (self.line, self.column) <= (other.line, other.column) and (
            other.end_line,
            other.end_column,
        ) <= (
            self.end_line,
            self.end_column,
        )

    def as_tuple(self) -> tuple[int, int, int, int]:
        return (self.line, self.column, self.end_line, self.end_column)


@dataclass
class SourceFile:
    """A parsed module with the lookups fixers need."""

    code: str
    module: cst.Module
    spans: dict[cst.CSTNode, Span]
    parents: dict[cst.CSTNode, cst.CSTNode]
    by_span: dict[tuple[int, int, int, int], list[cst.CSTNode]] = field(default_factory=dict)
    by_start: dict[tuple[int, int], list[cst.CSTNode]] = field(default_factory=dict)
    _bound: dict[str, int] | None = None

    @classmethod
    def parse(cls, code: str) -> SourceFile:
        """Parse `code`, or take the tree the scan (or a rescan) of this very text parsed in this
        process: the same tree, without a second parse."""
        from neuronlint.static.engine import parsed_tree

        module = parsed_tree(code.encode("utf-8", "surrogatepass")) or cst.parse_module(code)
        return cls.of_tree(code, module)

    @classmethod
    def of_tree(cls, code: str, module: cst.Module) -> SourceFile:
        """The file whose text is `code` and whose tree (the one `libcst.parse_module(code)` gives)
        is already parsed."""
        spans, parents = _positions(module)
        source = cls(code=code, module=module, spans=spans, parents=parents)
        for node, span in spans.items():
            source.by_span.setdefault(span.as_tuple(), []).append(node)
            source.by_start.setdefault((span.line, span.column), []).append(node)
        return source

    @property
    def bound_names(self) -> dict[str, int]:
        """How often each name is bound anywhere in the file (assignments, parameters, imports...)."""
        if self._bound is None:
            self._bound = _bound_names(self.code)
        return self._bound

    # ---- reading ---------------------------------------------------------------------------------
    def text(self, node: cst.CSTNode) -> str:
        return self.module.code_for_node(node)

    def span(self, node: cst.CSTNode) -> Span:
        return self.spans[node]

    def parent(self, node: cst.CSTNode) -> cst.CSTNode | None:
        return self.parents.get(node)

    def ancestors(self, node: cst.CSTNode) -> Iterator[cst.CSTNode]:
        current = self.parents.get(node)
        while current is not None:
            yield current
            current = self.parents.get(current)

    def at(self, line: int, column: int, end_line: int, end_column: int) -> list[cst.CSTNode]:
        """Nodes exactly at a finding's span (outermost first), else the innermost nodes around it."""
        exact = self.by_span.get((line, column, end_line, end_column))
        if exact:  # innermost first: the literal before the Arg that wraps it
            return sorted(exact, key=lambda n: -sum(1 for _ in self.ancestors(n)))
        want = Span(line, column, end_line, end_column)
        # The scanner's span of an argument includes its comma: take the nodes starting there,
        # then the nodes around the span (their ancestors), innermost first.
        starting = [n for n in self.by_start.get((line, column), ()) if want.contains(self.spans[n])]
        starting.sort(key=lambda n: ((s := self.spans[n]).end_line, s.end_column), reverse=True)
        around: list[cst.CSTNode] = []
        seen: set[int] = set()
        for node in starting or self.by_start.get((line, column), ()):
            for ancestor in self.ancestors(node):
                if id(ancestor) not in seen and self.spans[ancestor].contains(want):
                    seen.add(id(ancestor))
                    around.append(ancestor)
        if not starting and not around:  # nothing starts at the span: search every node
            around = [n for n, s in self.spans.items() if s.contains(want)]
        around.sort(key=lambda n: -sum(1 for _ in self.ancestors(n)))
        return starting + around

    def replace(self, node: cst.CSTNode, content: str) -> Edit:
        span = self.spans[node]
        return Edit(span.line, span.column, span.end_line, span.end_column, content)

    def in_function(self, node: cst.CSTNode) -> bool:
        return any(isinstance(a, (cst.FunctionDef, cst.Lambda)) for a in self.ancestors(node))

    def statement_line(self, node: cst.CSTNode) -> cst.SimpleStatementLine | None:
        """The statement line whose only statement is this expression (`torch.cuda.synchronize()`)."""
        expr = self.parent(node)
        line = self.parent(expr) if isinstance(expr, cst.Expr) else None
        if isinstance(line, cst.SimpleStatementLine) and len(line.body) == 1:
            block = self.parent(line)
            if isinstance(block, (cst.IndentedBlock, cst.Module)):
                return line
        return None

    def indent_of(self, line: cst.CSTNode) -> str:
        start = self.spans[line]
        text = self.code.splitlines()[start.line - 1]
        return text[: start.column - 1]

    # ---- imports -----------------------------------------------------------------------------------
    def module_alias(self, module: str) -> str | None:
        """The expression that reaches `module` through a module-level import, if the file has one.

        `import torch` or `import torch.nn` give `torch`; `import torch as th` gives `th`;
        `import torch_xla.core.xla_model as xm` gives `xm`.
        """
        for statement in self.module.body:
            if not isinstance(statement, cst.SimpleStatementLine):
                continue
            for small in statement.body:
                if not isinstance(small, cst.Import):
                    continue
                for alias in small.names:
                    name = self.text(alias.name)
                    if alias.asname is not None:
                        if name == module:
                            return self.text(alias.asname.name)
                    elif name == module or name.startswith(module + "."):
                        return module
        return None

    def import_point(self) -> tuple[int, int]:
        """Where new imports and the device variable go: after the leading docstring and imports."""
        body = self.module.body
        last = None
        for index, statement in enumerate(body):
            if _is_import_line(statement) or (index == 0 and _is_docstring(statement)):
                last = statement
                continue
            break
        if last is None:
            if not body:
                return (len(self.code.splitlines()) + 1, 1)
            first = self.spans[body[0]]
            return (first.line, 1)
        return (self.spans[last].end_line + 1, 1)

    def after_statement(self, statement: cst.CSTNode) -> tuple[int, int]:
        return (self.spans[statement].end_line + 1, 1)

    def module_statement_binding(self, alias: str) -> cst.CSTNode | None:
        """The module-level import statement that binds `alias`."""
        for statement in self.module.body:
            if isinstance(statement, cst.SimpleStatementLine):
                for small in statement.body:
                    if isinstance(small, cst.Import):
                        for name in small.names:
                            bound = name.asname.name if name.asname else name.name
                            if self.text(bound).split(".")[0] == alias:
                                return statement
        return None

    def free_name(self, candidates: tuple[str, ...] = _DEVICE_NAMES) -> str:
        for name in candidates:
            if name not in self.bound_names and not re.search(rf"\b{name}\b", self.code):
                return name
        return candidates[-1]


class _Recorder(CodegenState):
    """Code generation that notes where every node's tokens start and end, and its parent.

    One generation pass of the module: LibCST's PositionProvider and ParentNodeProvider cost
    tens of times more on large files (measured: 50 s against 1 s on a 3,000-line module).
    """

    def __init__(self, indent: str, newline: str) -> None:
        super().__init__(default_indent=indent, default_newline=newline)
        self.marks: dict[cst.CSTNode, list[int]] = {}
        self.stack: list[cst.CSTNode] = []
        self.parents: dict[cst.CSTNode, cst.CSTNode] = {}

    def before_codegen(self, node: cst.CSTNode) -> None:
        if self.stack:
            self.parents[node] = self.stack[-1]
        self.stack.append(node)
        self.marks[node] = [len(self.tokens), -1]

    def after_codegen(self, node: cst.CSTNode) -> None:
        self.stack.pop()
        self.marks[node][1] = len(self.tokens)


def _positions(module: cst.Module) -> tuple[dict[cst.CSTNode, Span], dict[cst.CSTNode, cst.CSTNode]]:
    state = _Recorder(module.default_indent, module.default_newline)
    module._codegen(state)
    offsets = [0, *accumulate(map(len, state.tokens))]
    text = "".join(state.tokens)
    starts = [0]
    position = text.find("\n")
    while position != -1:
        starts.append(position + 1)
        position = text.find("\n", position + 1)

    def line_column(offset: int) -> tuple[int, int]:
        line = bisect_right(starts, offset)
        return line, offset - starts[line - 1] + 1

    spans: dict[cst.CSTNode, Span] = {}
    # A module without a trailing newline pops that token after its children were marked, so a
    # mark can point one past the final token list.
    top = len(offsets) - 1
    for node, (first, last) in state.marks.items():
        start, end = offsets[min(first, top)], offsets[min(last, top)]
        # Statements own their leading blank lines and comments: start at the first real token.
        while start < end:
            if text[start] in " \t\r\n\f\\":
                start += 1
            elif text[start] == "#":
                newline = text.find("\n", start, end)
                start = end if newline == -1 else newline + 1
            else:
                break
        while end > start and text[end - 1] in " \t\r\n":
            end -= 1
        spans[node] = Span(*line_column(start), *line_column(end))
    return spans, state.parents


def _is_import_line(statement: cst.CSTNode) -> bool:
    if isinstance(statement, cst.SimpleStatementLine):
        return all(isinstance(s, (cst.Import, cst.ImportFrom)) for s in statement.body)
    if isinstance(statement, cst.Try):  # try: import x / except ImportError: ...
        return all(_is_import_line(s) for s in statement.body.body)
    return False


def _is_docstring(statement: cst.CSTNode) -> bool:
    return (
        isinstance(statement, cst.SimpleStatementLine)
        and len(statement.body) == 1
        and isinstance(statement.body[0], cst.Expr)
        and isinstance(statement.body[0].value, (cst.SimpleString, cst.ConcatenatedString))
    )


def _bound_names(code: str) -> dict[str, int]:
    """How often each name is bound in the module, from the standard library's parser (fast)."""
    import ast

    names: dict[str, int] = {}

    def add(name: str) -> None:
        names[name] = names.get(name, 0) + 1

    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError):
        return {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            add(node.id)
        elif isinstance(node, ast.arg):
            add(node.arg)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            add(node.name)
        elif isinstance(node, ast.alias):
            add(node.asname or node.name.split(".")[0])
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            for name in node.names:
                add(name)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            add(node.name)
    return names
