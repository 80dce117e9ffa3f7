"""Structural comparison of two LibCST trees, whitespace and punctuation aside.

`neuronlint.static.ast_to_cst.convert` builds LibCST trees from ast trees without whitespace,
parentheses, commas or comments; `same_structure` checks such a tree against
`libcst.parse_module`'s: node types and every other field, text values included.
"""

from __future__ import annotations

import dataclasses

import libcst as cst

# Fields that hold only whitespace or punctuation (and the nodes inside them). Everything else is
# compared: operators' classes, `Arg.star`, `Param.star`, `asynchronous`, `ImportFrom.relative`
# (its Dots by count and type), `IndentedBlock.indent`, the Module's configuration, all text.
IGNORED_FIELDS = frozenset(
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
        "dot",
        "arrow",
        "lbracket",
        "rbracket",
        "lbrace",
        "rbrace",
        "first_line",
        "leading_whitespace",  # SimpleStatementSuite's
        "first_colon",  # Slice's
        "second_colon",
    }
)
WHITESPACE_NODES = (
    cst.SimpleWhitespace,
    cst.ParenthesizedWhitespace,
    cst.TrailingWhitespace,
    cst.EmptyLine,
    cst.Newline,
    cst.Comment,
)

_FIELDS: dict[type, tuple[str, ...]] = {}


def _fields(t: type) -> tuple[str, ...]:
    names = _FIELDS.get(t)
    if names is None:
        names = tuple(
            f.name
            for f in dataclasses.fields(t)
            if f.name not in IGNORED_FIELDS and not f.name.startswith("whitespace")
        )
        _FIELDS[t] = names
    return names


def same_structure(a: object, b: object, path: str = "Module") -> str | None:
    """None when `a` and `b` are the same tree but for whitespace and punctuation, else the path
    to the first difference and what differs."""
    if isinstance(a, cst.CSTNode) or isinstance(b, cst.CSTNode):
        if type(a) is not type(b):
            return f"{path}: {type(a).__name__} != {type(b).__name__}"
        if isinstance(a, WHITESPACE_NODES):
            return None
        for name in _fields(type(a)):
            diff = same_structure(getattr(a, name), getattr(b, name), f"{path}.{name}")
            if diff is not None:
                return diff
        return None
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        if len(a) != len(b):
            return f"{path}: {len(a)} items != {len(b)} items"
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            diff = same_structure(x, y, f"{path}[{i}]")
            if diff is not None:
                return diff
        return None
    if type(a) is not type(b) or a != b:
        return f"{path}: {a!r} != {b!r}"
    return None
