"""Source positions for the few nodes that were flagged, without LibCST's PositionProvider.

PositionProvider records a range for every node and, measured on fairseq, costs about 2.4x the
parse itself; even plain code generation of a whole module costs about 0.3x. Findings need the
positions of a handful of nodes, so we generate code only for the innermost statement around each
one (with its blocks' indentation, so the text is exactly what the module generates there) and
find that text in the source. Where the same statement occurs twice, the standard library's `ast`
says where statements start (and which of them it is, by its place in document order); where
anything disagrees, the module-level statement or the whole module is generated instead, so
positions are exact either way."""

from __future__ import annotations

import ast
import re
import warnings
from bisect import bisect_right
from collections.abc import Iterable
from itertools import accumulate
from typing import Any

import libcst as cst
from libcst._nodes.internal import CodegenState

Span = tuple[int, int, int, int]  # line, column, end_line, end_column (1-based, end exclusive)


class _Stop(Exception):
    """Code generation reached the body of a compound statement whose header was all we needed."""


class _NoPosition:
    """A context manager that does nothing, cheaper than CodegenState's generator-based one."""

    __slots__ = ()

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None


_NO_POSITION = _NoPosition()
# Blank and comment lines (a statement's leading lines) at the start of a node's code.
_LEADING = re.compile(r"\A(?:[ \t\f]*(?:#[^\n]*)?\n)+")
_NEWLINE = cst.Newline


class _RecordingState(CodegenState):
    __slots__ = ("targets", "marks", "stop_at", "pending", "line_done", "partial")

    def __init__(
        self,
        default_indent: str,
        default_newline: str,
        targets: set[int],
        stop_at: cst.CSTNode | None = None,
        stop_after: set[int] | None = None,
    ):
        super().__init__(default_indent=default_indent, default_newline=default_newline)
        self.targets = targets
        self.marks: dict[int, list[int]] = {}
        self.stop_at = stop_at
        # With `stop_after`: stop at the end of the line on which the last of these nodes ends.
        self.pending = set(stop_after) if stop_after else None
        self.line_done = False
        self.partial = False  # the text is a prefix of the statement's (set by locate)

    def before_codegen(self, node: cst.CSTNode) -> None:
        if node is self.stop_at:
            raise _Stop
        if id(node) in self.targets:
            self.marks[id(node)] = [len(self.tokens), -1]

    def after_codegen(self, node: cst.CSTNode) -> None:
        if self.line_done and type(node) is _NEWLINE:
            raise _Stop
        mark = self.marks.get(id(node))
        if mark is not None:
            mark[1] = len(self.tokens)
            pending = self.pending
            if pending is not None:
                pending.discard(id(node))
                self.line_done = not pending

    def record_syntactic_position(self, node: cst.CSTNode, **_: object) -> _NoPosition:  # type: ignore[override]
        return _NO_POSITION  # only PositionProvider's state records positions here


def _texts(state: _RecordingState, anchors: set[int], texts: dict[int, str]) -> None:
    """The generated code of each anchor that was generated to its end."""
    tokens = state.tokens
    for node_id, (start_tok, end_tok) in state.marks.items():
        if end_tok != -1 and node_id in anchors:
            texts[node_id] = "".join(tokens[start_tok:end_tok])


def _spans(
    state: _RecordingState, first_line: int, ids: set[int] | None = None
) -> tuple[str, dict[int, Span]]:
    """Turn recorded token indices into spans; `first_line` is the line where the tokens start.
    `ids`: the nodes to give spans of (default: every marked node)."""
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
        return line + first_line - 1, offset - line_starts[line - 1] + 1

    spans: dict[int, Span] = {}
    for node_id, (start_tok, end_tok) in state.marks.items():
        if ids is not None and node_id not in ids:
            continue
        start, end = offsets[start_tok], offsets[end_tok]
        # Statements own their leading blank lines and comments; report from the first real token.
        chunk = text[start:end]
        start += len(chunk) - len(_LEADING.sub("", chunk).lstrip())
        while end > start and text[end - 1] in " \t\r\n":
            end -= 1
        line, col = to_line_col(start)
        end_line, end_col = to_line_col(end)
        spans[node_id] = (line, col, end_line, end_col)
    return text, spans


def _whole_module(
    module: cst.Module,
    targets: set[int],
    anchors: set[int] | None = None,
    texts: dict[int, str] | None = None,
) -> dict[int, Span]:
    state = _RecordingState(
        module.default_indent, module.default_newline, targets | anchors if anchors else targets
    )
    module._codegen(state)
    if anchors and texts is not None:
        _texts(state, anchors, texts)
    return _spans(state, 1, targets if anchors else None)[1]


def _first_line(node: ast.stmt) -> int:
    decorators = getattr(node, "decorator_list", None)
    return min(d.lineno for d in decorators) if decorators else node.lineno


def _parse_starts(
    source: bytes, module: cst.Module, tree: ast.Module | None = None
) -> tuple[dict[int, set[int]], list[int], list[ast.stmt]] | None:
    """From the stdlib parser: line -> columns where statements begin, the first line of each
    module-level statement of `module` (after its leading comments), and the stdlib statement each
    of them begins with. None if the two trees disagree.
    `tree`: `ast.parse(source)` when the caller has it already (the parse guard made it)."""
    if tree is None:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # a scanned file's SyntaxWarnings are not ours to print
                tree = ast.parse(source)
        except (SyntaxError, ValueError, MemoryError, RecursionError):
            return None

    first_line = _first_line
    starts: dict[int, set[int]] = {}
    # Statements only: walking every expression node as well (ast.walk) costs several times more.
    pending: list[ast.stmt] = list(tree.body)
    while pending:
        node = pending.pop()
        starts.setdefault(first_line(node), set()).add(node.col_offset)
        for name in ("body", "orelse", "finalbody"):
            block = getattr(node, name, None)
            if isinstance(block, list):
                pending.extend(block)
        for clause in (*getattr(node, "handlers", ()), *getattr(node, "cases", ())):
            pending.extend(clause.body)
    top_lines, top_nodes, index = [], [], 0
    for stmt in module.body:
        if index >= len(tree.body):
            return None
        top_lines.append(first_line(tree.body[index]))
        top_nodes.append(tree.body[index])
        index += len(stmt.body) if type(stmt) is cst.SimpleStatementLine else 1
    if index != len(tree.body):
        return None
    return starts, top_lines, top_nodes


def _cst_statements(stmt: cst.CSTNode) -> tuple[list[cst.CSTNode], dict[int, int]]:
    """The statements of `stmt` in the stdlib parser's order (each small statement of a line on its
    own, then each block in source order), and id(statement) -> its index there (of its first
    small statement for a statement line)."""
    out: list[cst.CSTNode] = []
    places: dict[int, int] = {}
    suites = (cst.IndentedBlock, cst.SimpleStatementSuite)
    stack: list[Any] = [stmt]  # statements, and tuples of the small statements of one line
    while stack:
        node = stack.pop()
        tp = type(node)
        if tp is tuple:
            out.extend(node)
            continue
        places[id(node)] = len(out)
        if tp is cst.SimpleStatementLine:
            out.extend(node.body)
            continue
        out.append(node)
        blocks: list[Any] = []  # suites and clauses, in source order
        body = getattr(node, "body", None)
        if body is not None:
            blocks.append(body)
        blocks.extend(getattr(node, "handlers", ()))
        blocks.extend(getattr(node, "cases", ()))
        orelse = getattr(node, "orelse", None)
        if orelse is not None:
            blocks.append(orelse)  # an Else clause, or an If (an elif: a statement of its own)
        finalbody = getattr(node, "finalbody", None)
        if finalbody is not None:
            blocks.append(finalbody)
        children: list[Any] = []
        for block in blocks:
            if type(block) is cst.If:
                children.append(block)
                continue
            suite = block if type(block) in suites else block.body  # a clause's suite
            if type(suite) is cst.SimpleStatementSuite:
                children.append(tuple(suite.body))
            else:
                children.extend(suite.body)
        stack.extend(reversed(children))
    return out, places


def _ast_statements(stmt: ast.stmt) -> list[ast.stmt]:
    """The statements of `stmt` in document order (itself first, then each block)."""
    out: list[ast.stmt] = []
    stack: list[ast.stmt] = [stmt]
    while stack:
        node = stack.pop()
        out.append(node)
        children: list[ast.stmt] = []
        for name in ("body", "handlers", "orelse", "finalbody", "cases"):
            for child in getattr(node, name, ()):
                if isinstance(child, ast.stmt):
                    children.append(child)
                elif isinstance(child, (ast.excepthandler, ast.match_case)):
                    children.extend(child.body)
        stack.extend(reversed(children))
    return out


def _same_statements(ours: list[cst.CSTNode], theirs: list[ast.stmt]) -> bool:
    """Whether two lists of statements are the same statements (class by class)."""
    if len(ours) != len(theirs):
        return False
    for mine, other in zip(ours, theirs, strict=True):
        name, their_name = type(mine).__name__, type(other).__name__
        if their_name != name and their_name != "Async" + name:
            return False
    return True


def _leading_line_count(stmt: cst.CSTNode) -> int:
    count = len(getattr(stmt, "leading_lines", ()))
    decorators = getattr(stmt, "decorators", ())
    if decorators:
        count += len(decorators[0].leading_lines)
    return count


Target = tuple[cst.CSTNode, "cst.CSTNode | None", "cst.CSTNode | None", tuple[str, ...]]
# (node, module-level statement, innermost statement, indents of the blocks around the innermost statement)


def locate(
    module: cst.Module,
    source: bytes,
    targets: Iterable[Target],
    tree: ast.Module | None = None,
    anchors: set[int] | None = None,
    texts: dict[int, str] | None = None,
) -> dict[int, Span]:
    """Map id(node) -> span for every target node (`tree`: `ast.parse(source)`, if already made).

    `anchors` (ids of nodes, each inside the innermost statement of a target) and `texts`: each
    anchor that the generation of its statement generated to its end gets its code in `texts`,
    the text `module.code_for_node` gives it apart from indentation (snippets; an anchor not
    generated to its end, e.g. a long statement of which the first line was all positions needed,
    gets none: generation does not go further for it).

    Each innermost statement is generated on its own, with the indentation its blocks give it, so
    its text is exactly what whole-module generation would produce there. If that text occurs once
    in the source at the start of a line, that is where it is. If it occurs more than once (the
    same statement twice), the stdlib parser's statement starts inside its module-level statement
    decide; if several of them fit, the statement's place among its module-level statement's
    statements (in document order, which both parsers share: checked class by class) names the
    stdlib parser's statement, and so its line; failing that, the module-level statement is
    generated; failing that, the whole module.
    """
    targets = list(targets)
    ids = {id(node) for node, _, _, _ in targets}
    if not anchors or texts is None:
        anchors, texts = set(), {}
    marked = ids | anchors
    if any(top is None or stmt is None for _, top, stmt, _ in targets):
        return _whole_module(module, ids, anchors, texts)
    try:
        text_source = source.decode(module.encoding)
    except (UnicodeDecodeError, LookupError):
        return _whole_module(module, ids, anchors, texts)
    if text_source.startswith("\ufeff"):
        text_source = text_source[1:]
    line_offsets: list[int] = []  # of every line of the source, made only when a statement occurs twice

    def generate(
        stmt: cst.CSTNode, indents: tuple[str, ...], wanted: set[int] | None = None
    ) -> tuple[_RecordingState, str]:
        """The statement's code and the marks of the targets in it. With `wanted` (the targets in
        this statement) and a compound statement that is not a target itself, only its header
        (decorators, `def`/`class`/`if`/`for`/`with` line) is generated when every wanted target
        lies there: the text is then a prefix of the statement's, found at the start of its line
        just the same, and a large block is not generated for a finding on its first line."""
        body = getattr(stmt, "body", None)
        if (
            wanted
            and isinstance(stmt, cst.BaseCompoundStatement)
            and id(stmt) not in wanted
            and body is not None
        ):
            state = _RecordingState(module.default_indent, module.default_newline, marked, stop_at=body)
            state.indent_tokens = list(indents)
            try:
                stmt._codegen(state)
            except _Stop:
                if all(state.marks.get(i, (0, -1))[1] != -1 for i in wanted):
                    state.partial = True
                    return state, "".join(state.tokens)
        if wanted:
            # Once the last wanted target has ended, the rest of its line is all the text needed:
            # a prefix of the statement's, found at the start of its line just the same, so the rest
            # of a long statement is not generated. Every node marked in it must have ended, so its
            # spans are the ones the whole statement would give.
            state = _RecordingState(module.default_indent, module.default_newline, marked, stop_after=wanted)
            state.indent_tokens = list(indents)
            try:
                stmt._codegen(state)
            except _Stop:
                if all(mark[1] != -1 for i, mark in state.marks.items() if i in ids):
                    state.partial = True
                    return state, "".join(state.tokens)
            else:
                return state, "".join(state.tokens).rstrip("\r\n")
        state = _RecordingState(module.default_indent, module.default_newline, marked)
        state.indent_tokens = list(indents)
        stmt._codegen(state)
        return state, "".join(state.tokens).rstrip("\r\n")

    def unique_line_start(text: str) -> int | None:
        """Line number of the only occurrence of `text` that starts a line; None if 0 or 2+."""
        found, pos = None, text_source.find(text)
        while pos != -1:
            if pos == 0 or text_source[pos - 1] == "\n":
                if found is not None:
                    return None
                found = pos
            pos = text_source.find(text, pos + 1)
        return None if found is None else text_source.count("\n", 0, found) + 1

    parsed: tuple[dict[int, set[int]], list[int], list[ast.stmt]] | None = None
    top_index = {id(stmt): i for i, stmt in enumerate(module.body)}
    groups: dict[int, tuple[cst.CSTNode, cst.CSTNode, tuple[str, ...]]] = {}
    in_statement: dict[int, set[int]] = {}
    for node, top, stmt, indents in targets:
        groups.setdefault(id(stmt), (top, stmt, indents))
        in_statement.setdefault(id(stmt), set()).add(id(node))
    spans: dict[int, Span] = {}
    fallback_tops: dict[int, cst.CSTNode] = {}
    # id(module-level statement) -> (id(statement) -> index, the stdlib's statements), when they agree
    in_top: dict[int, tuple[dict[int, int], list[ast.stmt]]] = {}
    for top, stmt, indents in groups.values():
        state, text = generate(stmt, indents, in_statement[id(stmt)])
        line = unique_line_start(text)
        if line is None and state.partial:  # its header or first lines occur twice: the whole statement
            state, text = generate(stmt, indents)
            line = unique_line_start(text)
        if line is None:  # the same statement text twice: ask the stdlib parser where statements start
            if parsed is None:
                parsed = _parse_starts(source, module, tree)
                if parsed is None:
                    return _whole_module(module, ids, anchors, texts)
                pos = text_source.find("\n")
                line_offsets.append(0)
                while pos != -1:
                    line_offsets.append(pos + 1)
                    pos = text_source.find("\n", pos + 1)
            starts, top_lines, top_nodes = parsed
            index = top_index.get(id(top))
            if index is None:
                return _whole_module(module, ids, anchors, texts)
            end = top_lines[index + 1] if index + 1 < len(top_lines) else len(line_offsets) + 1
            leading, column = _leading_line_count(stmt), len("".join(indents))
            matches = [
                first - leading
                for first in range(top_lines[index], end)
                if column in starts.get(first, ())
                and first - leading >= 1
                and text_source.startswith(text, line_offsets[first - leading - 1])
            ]
            line = matches[0] if len(matches) == 1 else None
            if line is None:
                # Which of the occurrences: the statement's place among the statements of its
                # module-level statement is its place in the stdlib parser's tree as well.
                if id(top) not in in_top:
                    ours, places = _cst_statements(top)
                    theirs = _ast_statements(top_nodes[index])
                    in_top[id(top)] = (places, theirs) if _same_statements(ours, theirs) else ({}, [])
                places, theirs = in_top[id(top)]
                place = places.get(id(stmt))
                if place is not None:
                    first = _first_line(theirs[place]) - leading
                    if (
                        first >= 1
                        and theirs[place].col_offset == column
                        and text_source.startswith(text, line_offsets[first - 1])
                    ):
                        line = first
        if line is None:
            fallback_tops[id(top)] = top
        else:
            spans.update(_spans(state, line, ids)[1])
            _texts(state, anchors, texts)
    for top in fallback_tops.values():
        state, text = generate(top, ())
        line = unique_line_start(text)
        if line is None:
            return _whole_module(module, ids, anchors, texts)
        spans.update(_spans(state, line, ids)[1])
        _texts(state, anchors, texts)
    return spans
