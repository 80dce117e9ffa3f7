"""LibCST's `parse_module` without re-validating every node the parser builds.

Each LibCST node checks its own fields when it is constructed (`CSTNode.__post_init__` calls
`_validate`): whether a name is empty, whether parentheses balance, whether whitespace holds only
whitespace. That guards trees that code builds by hand; the parser builds trees that satisfy these
rules by construction, and the checks cost about a tenth of `parse_module` (measured on pytorch/ao).
LibCST's own source says as much ("It might make more sense to move validation work into the
visitor, which would allow us to avoid validating the tree when parsing a file").

`parse_module` here skips them for the nodes built by the calling thread while it parses; nodes
built anywhere else (another thread, the fixes' codemods before and after) are validated as usual.
The trees are the same objects with the same fields; on the Python files of pytorch/ao, peft and
gpt-neox every tree was equal (`deep_equals`) to LibCST's own and every file that LibCST rejects was
rejected the same way.
"""

from __future__ import annotations

import threading
from typing import Any

import libcst as cst
from libcst._nodes.base import CSTNode

# Idents of the threads inside parse_module now. Checked only while it is not empty, so a node
# built while nothing is being parsed costs one extra call and a truth test.
_PARSING: set[int] = set()
_INSTALL = threading.Lock()
_installed = False
_get_ident = threading.get_ident


def _install() -> None:
    global _installed
    with _INSTALL:
        if _installed:
            return
        validating = CSTNode.__post_init__

        def __post_init__(self: Any) -> None:
            if _PARSING and _get_ident() in _PARSING:
                return  # built by the parser for this thread: valid by construction
            validating(self)

        CSTNode.__post_init__ = __post_init__  # type: ignore[method-assign]
        _installed = True


def parse_module(data: bytes) -> cst.Module:
    """`libcst.parse_module(data)`, without the per-node validation of the parser's own output."""
    if not _installed:
        _install()
    ident = _get_ident()
    if ident in _PARSING:  # re-entered on this thread (not done today): keep the outer call's state
        return cst.parse_module(data)
    _PARSING.add(ident)
    try:
        return cst.parse_module(data)
    finally:
        _PARSING.discard(ident)
