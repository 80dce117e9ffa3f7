"""dynamic-shape: data-dependent output shapes, boolean-mask indexing, control flow on tensor values."""

from __future__ import annotations

import re

import libcst as cst

from neuronlint.static.context import FileContext
from neuronlint.static.engine import on, triggers

triggers("where", "mask", "if ", "while ", "assert ", ".item(", ".any(", ".all(", ":")

# Tensor reductions whose value (not shape) decides a branch: the graph must be cut to read it.
_VALUE_METHODS = frozenset({"item", "any", "all", "sum", "max", "min", "mean", "norm", "std", "var", "prod",
                            "count_nonzero", "isnan", "isinf", "isfinite", "equal", "allclose", "is_nonzero"})  # fmt: skip
_VALUE_FUNCTIONS = frozenset(f"torch.{n}" for n in _VALUE_METHODS | {"is_nonzero", "equal", "allclose"})
_MASK_NAME = re.compile(r"(^|_)(mask|keep|valid|selected|sel)(_|s?$)", re.IGNORECASE)


@on(cst.Call)
def _where_single(node: cst.Call, ctx: FileContext) -> None:
    if ctx.qualname(node.func) == "torch.where" and len(node.args) == 1 and not node.args[0].star:
        ctx.report("NL601", node.func, op="where(condition)", api="torch.where", end_node=node)


def _value_read(expr: cst.CSTNode, ctx: FileContext) -> str | None:
    """The tensor-value read inside a test expression, e.g. 'x.item()' or 'torch.any(...)'."""
    stack = [expr]
    while stack:
        node = stack.pop()
        if isinstance(node, cst.Call):
            func = node.func
            qualname = ctx.qualname(func)
            if qualname in _VALUE_FUNCTIONS:
                return qualname
            if (
                qualname is None
                and isinstance(func, cst.Attribute)
                and func.attr.value in _VALUE_METHODS
                and not ctx.is_numpy(func.value)
                and not isinstance(func.value, (cst.SimpleString, cst.List, cst.Dict))
                and not _is_plain_object(func.value, ctx)
            ):
                return f".{func.attr.value}()"
            stack.append(func)
            stack.extend(a.value for a in node.args)
        elif isinstance(node, (cst.Comparison, cst.BooleanOperation, cst.UnaryOperation, cst.BinaryOperation)):
            stack.extend(c for c in _operands(node))
        elif isinstance(node, cst.Attribute):
            stack.append(node.value)
    return None


def _is_plain_object(node: cst.BaseExpression, ctx: FileContext) -> bool:
    # Module-level helpers (math.isnan, os...) and config objects are not tensors.
    return isinstance(node, cst.Name) and node.value in ("math", "np", "os", "sys", "re", "self", "args", "cfg", "config")


def _operands(node: cst.CSTNode) -> list[cst.CSTNode]:
    if isinstance(node, cst.Comparison):
        return [node.left, *(c.comparator for c in node.comparisons)]
    if isinstance(node, cst.BooleanOperation) or isinstance(node, cst.BinaryOperation):
        return [node.left, node.right]
    if isinstance(node, cst.UnaryOperation):
        return [node.expression]
    return []


def _control_flow(node: cst.CSTNode, test: cst.BaseExpression, construct: str, ctx: FileContext) -> None:
    read = _value_read(test, ctx)
    if read is not None:
        ctx.report("NL603", test, construct=construct, read=read)


@on(cst.If)
def _if(node: cst.If, ctx: FileContext) -> None:
    _control_flow(node, node.test, "if", ctx)


@on(cst.While)
def _while(node: cst.While, ctx: FileContext) -> None:
    _control_flow(node, node.test, "while", ctx)


@on(cst.Assert)
def _assert(node: cst.Assert, ctx: FileContext) -> None:
    _control_flow(node, node.test, "assert", ctx)


def _mask_index(expr: cst.BaseExpression, ctx: FileContext) -> str | None:
    if isinstance(expr, cst.Comparison):
        return ctx.module.code_for_node(expr)
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.BitInvert):
        return ctx.module.code_for_node(expr)
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, (cst.BitAnd, cst.BitOr)):
        return ctx.module.code_for_node(expr)
    if isinstance(expr, cst.Name) and _MASK_NAME.search(expr.value):
        binding = ctx.lookup(expr.value)
        if binding is None or binding[0] == "other":
            return expr.value
    if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) and expr.func.attr.value == "bool":
        return ctx.module.code_for_node(expr)
    return None


@on(cst.Subscript)
def _boolean_mask(node: cst.Subscript, ctx: FileContext) -> None:
    if len(node.slice) != 1 or not isinstance(node.slice[0].slice, cst.Index):
        return
    if ctx.is_numpy(node.value) or isinstance(node.value, (cst.SimpleString, cst.Dict, cst.List)):
        return
    mask = _mask_index(node.slice[0].slice.value, ctx)
    if mask is None:
        return
    parent = ctx.parent()
    write = isinstance(parent, (cst.AssignTarget, cst.AugAssign)) and getattr(parent, "target", None) is node
    ctx.report("NL602", node.slice[0], mask=mask, write=write)


@on(cst.Slice)
def _slice_bounds(node: cst.Slice, ctx: FileContext) -> None:
    for bound in (node.lower, node.upper):
        if bound is None:
            continue
        read = _value_read(bound, ctx)
        if read is not None:
            ctx.report("NL604", bound, read=read)
            return
