"""Where an import, or a use of what it imported, is optional: in a `try:` whose handler catches
ImportError, or under an `if` (or in the taken branch of `... if ... else ...`) that tests whether
the module is there or enabled (`if HAVE_TE:`, `if is_xformers_available():`, `if
args.use_flash_attn:`, `if bnb is not None:`). CUDA-only libraries and compiled extensions are a
warning there (a path without them exists) and a blocker elsewhere."""

from __future__ import annotations

import re
from collections.abc import Sequence

import libcst as cst

from neuronlint.static.bindings import dotted
from neuronlint.static.context import FileContext

_IMPORT_ERRORS = {"ImportError", "ModuleNotFoundError", "Exception", "BaseException"}
# An `if` test that asks whether an optional library is there (or enabled): HAVE_TE, is_xformers_available(),
# importlib.util.find_spec("flash_attn"), is_te_min_version(...), args.use_flash_attn.
_AVAILABILITY_TEST = re.compile(
    r"(?i)\bhas_|have_|_available|available_|_installed|_imported|imported_|find_spec|_min_version|\buse_|enable_"
)


def optional_guard(ctx: FileContext, modules: Sequence[str], node: cst.CSTNode | None = None) -> str | None:
    """How one of `modules` is optional here: "try" inside a `try:` whose handlers catch ImportError,
    "if" under an `if` (or `... if ... else`) testing the module's availability, a flag that enables
    it or its local alias; None where it is not. `node` is the flagged node (not yet among the
    parents)."""
    parents = list(ctx.parents)
    if node is not None and (not parents or parents[-1] is not node):
        parents.append(node)
    for i in range(len(parents) - 1, 0, -1):
        node = parents[i - 1]
        if type(node) is cst.Try and parents[i] is node.body:
            for handler in node.handlers:
                if handler.type is None:
                    return "try"
                names = (
                    {dotted(e.value) for e in handler.type.elements}
                    if type(handler.type) is cst.Tuple
                    else {dotted(handler.type)}
                )
                if names & _IMPORT_ERRORS:
                    return "try"
        elif type(node) in (cst.If, cst.IfExp) and parents[i] is not node.test:
            test = ctx.code(node.test)
            if _AVAILABILITY_TEST.search(test) or any(m.split(".")[0] in test for m in modules):
                return "if"
            if _tests_module_name(node.test, modules, ctx):  # `if bnb is not None:`
                return "if"
    return None


def _tests_module_name(test: cst.BaseExpression, modules: Sequence[str], ctx: FileContext) -> bool:
    """The test names a local alias of the module (`bnb` for `import bitsandbytes as bnb`)."""
    tops = {m.split(".")[0] for m in modules}
    stack: list[cst.CSTNode] = [test]
    while stack:
        node = stack.pop()
        if type(node) is cst.Name:
            qualname = ctx.qualname(node) or ""
            if qualname.split(".")[0] in tops:
                return True
        elif type(node) in (cst.Comparison, cst.BooleanOperation, cst.UnaryOperation):
            stack.extend(node.children)
        elif type(node) in (cst.ComparisonTarget,):
            stack.append(node.comparator)
    return False
