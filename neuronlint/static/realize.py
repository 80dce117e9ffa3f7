"""Real LibCST statements behind a tree built from the stdlib parser: exact positions and code.

The scan's fast path (ast_to_cst) builds the tree the checkers walk from the stdlib parser's tree:
LibCST's node classes and structure, but none of the source's whitespace, comments or
parentheses, so it cannot say where a node is nor print it as the source has it. Findings need
both (positions, snippets, symbols), and a few checkers read a node's code as text. They concern
few statements: on pytorch/ao, the statement lines that hold a finding are under 4% of the files'
bytes, plus about 500 compound statements whose header holds one.

For each such statement, `Realizer` parses the statement's own lines with LibCST (only its header,
`def ...:`/`if ...:` and decorators, when the nodes wanted lie there), pairs its nodes with the
built tree's by walking both in the same field order (every pair must be of the same class, and
names and literals of the same text), and
then works as positions.py does on a whole parse: it generates the real statement, with the
indentation it has, and reads spans off the generated tokens. The generated text must be the
source's text at the line where the stdlib parser says the statement starts; anything that does
not line up raises `Unrealizable`, and the engine analyses the file with LibCST's own parse
instead, so positions and code are LibCST's in every case.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any, NamedTuple

import libcst as cst

from neuronlint.static.cstparse import parse_module
from neuronlint.static.nodes import children_of, node_fields, node_types
from neuronlint.static.positions import Span, _first_line, _RecordingState, _spans, _Stop, _texts

_NODE_TYPES = node_types()
# Leaves whose text pairing checks as well as their class (a name or literal out of place).
_LEAVES = (cst.Name, cst.Integer, cst.Float, cst.Imaginary, cst.SimpleString)
_LINE = re.compile(r"[^\n]*\n|[^\n]+")
# Fields of a compound statement that hold its blocks (the rest is its header).
_BLOCK_FIELDS = frozenset({"body", "orelse", "handlers", "finalbody", "cases"})
# Compound statements that can be parsed with their header only (a `try:` header holds nothing,
# and `try` alone is not a statement).
_HEADER_ONLY = (cst.FunctionDef, cst.ClassDef, cst.If, cst.For, cst.While, cst.With)


class Unrealizable(Exception):
    """A statement of the built tree has no real counterpart that lines up with the source."""


def _is_statement(node: Any, parent: Any) -> bool:
    """A statement of a statement list (a module's or an indented block's)."""
    return type(parent) in (cst.Module, cst.IndentedBlock) and isinstance(
        node, (cst.SimpleStatementLine, cst.BaseCompoundStatement)
    )


def _fields(node: Any, header: bool) -> tuple[str, ...]:
    names = node_fields(type(node))
    return tuple(n for n in names if n not in _BLOCK_FIELDS) if header else names


def _children(node: Any, header: bool = False) -> list[Any]:
    return children_of(node, _fields(node, header) if header else None)


def _contains(root: Any, wanted: set[int], header: bool) -> set[int]:
    """The ids of `wanted` found under `root` (its header only, with `header`)."""
    found: set[int] = set()
    stack = _children(root, header) if header else [root]
    if header and id(root) in wanted:
        found.add(id(root))
    while stack and len(found) < len(wanted):
        node = stack.pop()
        if id(node) in wanted:
            found.add(id(node))
        stack.extend(_children(node))
    return found


def _pair(built: Any, real: Any, wanted: set[int], header: bool) -> dict[int, Any]:
    """id(node of `built`) -> the node of `real` in its place, for every wanted node; the two trees
    must agree class by class along the way."""
    out: dict[int, Any] = {}
    stack = [(built, real, header)]
    while stack:
        mine, theirs, head = stack.pop()
        if type(mine) is not type(theirs):
            raise Unrealizable(f"{type(mine).__name__} against {type(theirs).__name__}")
        if type(mine) in _LEAVES and mine.value != theirs.value:
            raise Unrealizable(f"{type(mine).__name__} {mine.value!r} against {theirs.value!r}")
        if id(mine) in wanted:
            out[id(mine)] = theirs
            if len(out) == len(wanted):
                return out
        for name in _fields(mine, head):
            a, b = getattr(mine, name), getattr(theirs, name)
            if type(a) is tuple or type(a) is list:
                if len(a) != len(b):
                    raise Unrealizable(f"{type(mine).__name__}.{name}: {len(a)} against {len(b)} items")
                stack.extend((x, y, False) for x, y in zip(a, b, strict=True) if type(x) in _NODE_TYPES)
            elif type(a) in _NODE_TYPES:
                stack.append((a, b, False))
            elif a is not None or b is not None:
                if type(a) is not type(b):
                    raise Unrealizable(f"{type(mine).__name__}.{name} differs")
    return out


class _Real(NamedTuple):
    """One statement parsed on its own: the real statement, its module, its first line and its
    indentation."""

    statement: Any
    module: cst.Module
    line: int
    indent: str


class Realizer:
    """Real LibCST statements for the statements of one built tree (see the module docstring).

    `statements`: id(statement of the built tree) -> the stdlib statement it begins with (a
    statement line holds several when `;` separates them: its lines are taken to end where the
    first ends, and one that goes on does not pair up: Unrealizable)."""

    def __init__(self, module: cst.Module, text: str, statements: dict[int, Any]):
        self.module = module
        self.text = text
        # lines as the tokenizer ends them (the fast path has no "\r"): str.splitlines would also
        # end one at a form feed or U+2028, and the stdlib parser's line numbers would not fit
        self.lines = _LINE.findall(text)
        self.statements = statements
        self._real: dict[tuple[int, bool], _Real] = {}
        self._offsets: list[int] | None = None
        self._parents: dict[int, Any] | None = None  # id(node) -> its parent, made on first need

    # ---- parsing one statement -------------------------------------------------------------
    def real(self, stmt: Any, header: bool) -> _Real:
        """The statement parsed alone (its header and a `pass` body, with `header`)."""
        key = (id(stmt), header)
        found = self._real.get(key)
        if found is not None:
            return found
        first = self.statements.get(id(stmt))
        if first is None:
            raise Unrealizable("a statement the converter did not record")
        start = _first_line(first)
        if type(stmt) is cst.SimpleStatementLine:
            end = first.end_lineno or start
        elif header:
            end = _first_line(first.body[0]) - 1  # type: ignore[attr-defined]
        else:
            end = first.end_lineno or start
        lines = self.lines[start - 1 : end]
        if not lines or end < start:
            raise Unrealizable("no lines")
        head = lines[0]
        indent = head[: len(head) - len(head.lstrip(" \t"))]
        code = "".join(lines)
        if not code.endswith("\n"):
            code += "\n"
        if header:
            code += indent + " pass\n"
        if indent:
            code = "if 1:\n" + code  # an indented statement parses inside a block
        try:
            module = parse_module(code.encode("utf-8"))
        except Exception as exc:  # noqa: BLE001 - whatever LibCST makes of it, the file goes the slow way
            raise Unrealizable(f"the statement does not parse alone: {exc}") from None
        body = module.body
        if indent:
            if len(body) != 1 or type(body[0]) is not cst.If or type(body[0].body) is not cst.IndentedBlock:
                raise Unrealizable("not one statement")
            body = body[0].body.body
        if len(body) != 1:
            raise Unrealizable("not one statement")
        found = self._real[key] = _Real(body[0], module, start, indent)
        return found

    def _start_offset(self, line: int) -> int:
        if self._offsets is None:
            offsets, total = [], 0
            for text in self.lines:
                offsets.append(total)
                total += len(text)
            offsets.append(total)
            self._offsets = offsets
        return self._offsets[line - 1]

    def _mode(self, stmt: Any, wanted: set[int]) -> bool:
        """Whether the statement's header holds every wanted node (then only it is parsed)."""
        if type(stmt) not in _HEADER_ONLY or type(getattr(stmt, "body", None)) is not cst.IndentedBlock:
            return False
        return len(_contains(stmt, wanted, header=True)) == len(wanted)

    # ---- positions and snippets --------------------------------------------------------------
    def locate(self, targets: Iterable[tuple[Any, Any, Any]], texts: dict[int, str]) -> dict[int, Span]:
        """Map id(node) -> span for each (node, innermost statement, anchor or None) of
        `targets`, as positions.locate gives them on LibCST's own tree; the code of each anchor (a
        node of the same statement) that the generation reached goes into `texts`, keyed by the
        built node's id. Raises Unrealizable."""
        groups: dict[int, tuple[Any, set[int], set[int]]] = {}
        for node, stmt, anchor in targets:
            if stmt is None:  # reported after the walk (no ancestor chain then): search the tree
                stmt = self._statement_around(node, [])
            group = groups.setdefault(id(stmt), (stmt, set(), set()))
            group[1].add(id(node))
            if anchor is not None:
                group[2].add(id(anchor))
        spans: dict[int, Span] = {}
        for stmt, ids, wanted_anchors in groups.values():
            header = self._mode(stmt, ids | wanted_anchors)
            real = self.real(stmt, header)
            pairs = _pair(stmt, real.statement, ids | wanted_anchors, header)
            if len(pairs) != len(ids | wanted_anchors):
                raise Unrealizable("a node not found in its statement")
            back = {id(theirs): mine for mine, theirs in pairs.items()}
            real_ids = {id(pairs[i]) for i in ids}
            marked = real_ids | {id(pairs[i]) for i in wanted_anchors}
            module = real.module
            state = _RecordingState(
                module.default_indent, module.default_newline, marked, stop_after=real_ids
            )
            state.indent_tokens = [real.indent] if real.indent else []
            try:
                real.statement._codegen(state)
            except _Stop:
                pass
            if any(state.marks.get(i, (0, -1))[1] == -1 for i in real_ids):
                raise Unrealizable("a target was not generated")
            code = "".join(state.tokens)
            start = self._start_offset(real.line)
            if not self.text.startswith(code.rstrip("\r\n"), start):
                raise Unrealizable("the generated statement is not the source's text")
            for real_id, span in _spans(state, real.line, real_ids)[1].items():
                spans[back[real_id]] = span
            generated: dict[int, str] = {}
            _texts(state, {id(pairs[i]) for i in wanted_anchors}, generated)
            for anchor in wanted_anchors:
                # an anchor the generation did not reach to its end: its code alone, as
                # FileContext.snippet gives it on LibCST's own tree
                text = generated.get(id(pairs[anchor]))
                texts[anchor] = text if text is not None else module.code_for_node(pairs[anchor])
        return spans

    def code(self, node: Any, parents: list[Any]) -> str:
        """`module.code_for_node(node)` as LibCST's own tree would give it. `parents`: the walk's
        ancestor chain at the time (the node is searched in its statements first, innermost out)."""
        return self._code(self._statement_around(node, parents), node)

    def code_in(self, node: Any, stmt: Any) -> str:
        """`code`, for a node of a known statement (its innermost, or one around it)."""
        return self._code(self._innermost(stmt, node, stmt), node)

    def _code(self, stmt: Any, node: Any) -> str:
        header = self._mode(stmt, {id(node)})
        real = self.real(stmt, header)
        pairs = _pair(stmt, real.statement, {id(node)}, header)
        if id(node) not in pairs:
            raise Unrealizable("a node not found in its statement")
        return real.module.code_for_node(pairs[id(node)])

    def _statement_around(self, node: Any, parents: list[Any]) -> Any:
        """The innermost statement of a statement list that holds `node`: searched under the
        statements of the walk's ancestor chain, innermost first (a handler asks about the node it
        is at, a node under it, or the test of a statement around it), then in the whole tree."""
        for i in range(len(parents) - 1, 0, -1):
            if _is_statement(parents[i], parents[i - 1]):
                try:
                    return self._innermost(parents[i], node, parents[i])
                except Unrealizable:
                    break
        # a child of an ancestor (`ancestor.test`): the innermost statement from that ancestor up;
        # or in the header of a statement beside one of the chain's (`if not ok: return` earlier
        # in the same block)
        for j in range(len(parents) - 1, -1, -1):
            around = parents[j]
            for child in _children(around):
                if child is node:
                    if _is_statement(node, around):
                        return node
                    for i in range(j, 0, -1):
                        if _is_statement(parents[i], parents[i - 1]):
                            return parents[i]
                    return self._innermost(self.module, node, None)
                if (
                    type(child) is not cst.SimpleStatementLine
                    and _is_statement(child, around)
                    and any(part is node for part in _children(child, header=True))
                ):
                    return child
        # anywhere else (a module-level statement a checker reads by name: an alias, a gate): up
        # the tree's parent links, made once per file
        if self._parents is None:
            self._parents = links = {}
            stack = [self.module]
            while stack:
                current = stack.pop()
                for child in _children(current):
                    links[id(child)] = current
                    stack.append(child)
        current = node
        while True:
            parent = self._parents.get(id(current))
            if parent is None:
                raise Unrealizable("a node not in the tree")
            if _is_statement(current, parent):
                return current
            current = parent

    def _innermost(self, root: Any, node: Any, stmt: Any) -> Any:
        """The innermost statement of a statement list under `root` holding `node` (`stmt`: the
        one `root` is, if it is one)."""
        target = id(node)
        stack: list[tuple[Any, Any, Any]] = [(root, None, stmt)]
        # (node, parent, innermost statement so far)
        while stack:
            current, parent, stmt = stack.pop()
            if parent is not None and _is_statement(current, parent):
                stmt = current
            if id(current) == target:
                if stmt is None:
                    raise Unrealizable("a node outside any statement")
                return stmt
            # in document order: a statement's header before its body
            stack.extend((child, current, stmt) for child in reversed(_children(current)))
        raise Unrealizable("a node not in the tree")
