"""LibCST nodes read from their fields: every node class, the fields of a class that may hold
nodes, a node's children, and whether a name is defined under its parent rather than used.
LibCST's own `children` runs a visitor over the node, which measured about ten times slower than
reading the fields (host_returns' generator test spent most of its time there)."""

from __future__ import annotations

import dataclasses
import typing

import libcst as cst

# Parents under which a name is a definition or part of an import, not a use of what it names.
_NOT_A_USE = frozenset(
    {cst.ImportAlias, cst.AsName, cst.FunctionDef, cst.ClassDef, cst.ImportFrom, cst.Import}
)


def defines_name(parent: cst.CSTNode | None, node: cst.CSTNode) -> bool:
    """Whether `node` (a name or an attribute chain) is what `parent` defines or imports, not a use
    of what it names: a function's or class's name, an import's. Under a Param only the parameter's
    own name is a definition; its default value is a use. (Concrete classes without subclasses:
    `type(x) in` is exact, and a failing isinstance() on LibCST's classes is slow.)"""
    tp = type(parent)
    return tp in _NOT_A_USE or (tp is cst.Param and parent.name is node)


def node_types() -> frozenset[type]:
    """Every LibCST node class (the engine dispatches on them; enclosing() matches by them)."""
    seen: set[type] = set()
    stack = [cst.CSTNode]
    while stack:
        for sub in stack.pop().__subclasses__():
            if sub not in seen:
                seen.add(sub)
                stack.append(sub)
    return frozenset(seen)


# Fields that hold only whitespace, punctuation or comments: never walked.
_SKIP_FIELDS = frozenset(
    {
        "lpar",
        "rpar",
        "comma",
        "semicolon",
        "header",
        "footer",
        "leading_lines",
        "lines_after_decorators",
        "newline",
        "trailing_whitespace",
        "equal",
        "colon",
        "star",
        "dot",
        "default_indent",
        "default_newline",
        "encoding",
        "has_trailing_newline",
        "indent",
        "lbracket",
        "rbracket",
        "lbrace",
        "rbrace",
        "operator",
        "asynchronous",
        "arrow",
        "whitespace_before",
        "whitespace_after",
        "first_line",
    }
)
_FIELDS: dict[type, tuple[str, ...]] = {}


def _text_only(annotation: object) -> bool:
    """Whether a field declared so holds only text (`str`, `Optional[str]`, a `Literal` of
    strings: `Name.value`, `SimpleString.value`, `FormattedString.start`), never a node."""
    if annotation is str:
        return True
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is typing.Literal:
        return all(type(arg) is str for arg in args)
    if origin is typing.Union:
        return all(arg is type(None) or _text_only(arg) for arg in args)
    return False


def node_fields(tp: type) -> tuple[str, ...]:
    """The fields of a node type that may hold nodes (the walk's and children_of's). A leaf such
    as `Name` or `Integer` has none: its only field that is not punctuation holds its text."""
    names = _FIELDS.get(tp)
    if names is None:
        hints = typing.get_type_hints(tp)
        names = tuple(
            f.name
            for f in dataclasses.fields(tp)
            if f.name not in _SKIP_FIELDS
            and not f.name.startswith("whitespace")
            and not _text_only(hints.get(f.name, f.type))
        )
        _FIELDS[tp] = names
    return names


_ALL_NODE_TYPES: frozenset[type] = frozenset()


def children_of(node: cst.CSTNode, fields: tuple[str, ...] | None = None) -> list[cst.CSTNode]:
    """A node's child nodes, read from its fields (LibCST's `children` runs a visitor: slow);
    `fields`: only those of its fields (default: all that may hold nodes, `node_fields`)."""
    global _ALL_NODE_TYPES
    types = _ALL_NODE_TYPES or node_types()
    _ALL_NODE_TYPES = types
    out: list[cst.CSTNode] = []
    for name in node_fields(type(node)) if fields is None else fields:
        value = getattr(node, name)
        if type(value) in types:
            out.append(value)
        elif type(value) is tuple or type(value) is list:
            out.extend(item for item in value if type(item) in types)
    return out
