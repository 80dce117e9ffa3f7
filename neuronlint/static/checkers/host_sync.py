"""host-sync: copies to the host that force the device graph to execute.

`.item()`, `.tolist()`, `.cpu()` and `.numpy()` are table-driven (rules/apis.toml, method entries);
`reads_device_value` below decides for those calls whether the receiver can be a device tensor.
This module adds `.to("cpu")` and `print(tensor)`.
"""

from __future__ import annotations

import libcst as cst

from neuronlint.static.calls import arg_value
from neuronlint.static.context import FileContext
from neuronlint.static.registry import Checker, on

# Tensor methods that copy to the host. Torch's versions take no positional arguments, which
# separates them from numpy's `arr.item(0)` / `arr.tolist()` and from `Module.cpu()` look-alikes.
HOST_COPY_METHODS = frozenset({"item", "tolist", "numpy", "cpu"})
# Receivers that are never tensors: literals and containers.
_LITERALS = (
    cst.SimpleString,
    cst.ConcatenatedString,
    cst.FormattedString,
    cst.Integer,
    cst.Float,
    cst.List,
    cst.Tuple,
    cst.Dict,
    cst.Set,
    cst.ListComp,
    cst.DictComp,
    cst.SetComp,
)
# Tensor reductions and views whose printed value needs a host copy.
_PRINTED_METHODS = frozenset(
    {
        "mean",
        "sum",
        "max",
        "min",
        "norm",
        "std",
        "var",
        "abs",
        "detach",
        "float",
        "argmax",
        "argmin",
        "softmax",
        "exp",
        "sigmoid",
        "round",
    }
)


def is_cpu_device(node: cst.BaseExpression | None, ctx: FileContext) -> bool:
    """`"cpu"`, a name bound to it (on every path), or `torch.device("cpu")`."""
    if node is None:
        return False
    if isinstance(node, cst.Call) and ctx.qualname(node.func) == "torch.device":
        node = arg_value(node, 0, "type")
    values = ctx.strings(node)
    return bool(values) and all(value == "cpu" for value in values)


def copies_to_host(call: cst.Call, ctx: FileContext) -> bool:
    """`x.cpu()`, `x.numpy()`, `x.tolist()`, `x.item()` or `x.to("cpu")` (receiver not checked)."""
    func = call.func
    if not isinstance(func, cst.Attribute):
        return False
    method = func.attr.value
    if method in HOST_COPY_METHODS:
        return True
    return method == "to" and is_cpu_device(arg_value(call, 0, "device"), ctx)


def _copied_before(receiver: cst.BaseExpression, ctx: FileContext) -> bool:
    """Whether a method chain already copied to the host: `x.cpu().numpy()`, `x.to("cpu").tolist()`."""
    node = receiver
    while True:
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
            if copies_to_host(node, ctx):
                return True
            node = node.func.value
        elif isinstance(node, (cst.Subscript, cst.Attribute)):
            node = node.value
        else:
            return False


def reads_device_value(call: cst.Call, ctx: FileContext) -> bool:
    """For a `.item()`/`.tolist()`/`.numpy()`/`.cpu()` call: can this copy a device tensor to the host?

    No when the receiver is a host value (numpy, pandas, a number already read), a literal, or a
    chain that already copied (`x.cpu().numpy()` syncs once, at `.cpu()`), no when the call has
    positional arguments, which torch's tensor methods do not take, and no inside a `raise` or an
    assert's message, which run only on the error path.
    """
    func = call.func
    assert isinstance(func, cst.Attribute)
    if any(arg.keyword is None for arg in call.args):
        return False
    receiver = func.value
    if isinstance(receiver, _LITERALS) or ctx.is_host_value(receiver):
        return False
    return not _copied_before(receiver, ctx) and not ctx.in_error_path()


def _every_n_steps(node: cst.CSTNode, ctx: FileContext) -> bool:
    """In the body of `if step % N == 0:` (the logging the rule recommends), in the same function."""
    chain = [*ctx.parents, node]
    for index in range(len(chain) - 2, -1, -1):
        ancestor = chain[index]
        if isinstance(ancestor, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            return False
        if (
            isinstance(ancestor, cst.If)
            and chain[index + 1] is ancestor.body
            and _tests_modulo(ancestor.test)
        ):
            return True
    return False


def _tests_modulo(test: cst.BaseExpression) -> bool:
    """`step % 100 == 0`, possibly joined with other conditions by `and`."""
    if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And):
        return _tests_modulo(test.left) or _tests_modulo(test.right)
    if not isinstance(test, cst.Comparison) or len(test.comparisons) != 1:
        return False
    comparison = test.comparisons[0]
    if not isinstance(comparison.operator, cst.Equal):
        return False
    sides = (test.left, comparison.comparator)
    return any(isinstance(s, cst.BinaryOperation) and isinstance(s.operator, cst.Modulo) for s in sides)


def _printed_tensor(value: cst.BaseExpression, ctx: FileContext) -> str | None:
    """What makes a printed value a device tensor: a tensor reduction call or a known tensor."""
    if isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute):
        method = value.func.attr.value
        if (
            method in _PRINTED_METHODS
            and ctx.qualname(value.func) is None
            and not ctx.is_host_value(value.func.value)
        ):
            return f"print(... .{method}())"
    if ctx.is_tensor(value):
        return "print(<tensor>)"
    return None


class HostSync(Checker):
    """`.to("cpu")` copies (NL703) and printed device tensors (NL704); .item()/.cpu()... are [[api]] rows."""

    emits = {
        "NL703": ("symbol",),
        "NL704": ("symbol",),
    }
    triggers = ("cpu", "print(")

    @on(cst.Call)
    def to_cpu(self, node: cst.Call, ctx: FileContext) -> None:
        func = node.func
        if not isinstance(func, cst.Attribute) or func.attr.value != "to" or not node.args:
            return
        if not is_cpu_device(arg_value(node, 0, "device"), ctx) or ctx.qualname(func) is not None:
            return
        receiver = func.value
        if ctx.is_host_value(receiver) or _copied_before(receiver, ctx) or ctx.in_error_path():
            return
        ctx.report("NL703", func.attr, end_node=node, symbol='.to("cpu")')

    @on(cst.Call)
    def print_tensor(self, node: cst.Call, ctx: FileContext) -> None:
        func = node.func
        if not (
            isinstance(func, cst.Name) and func.value == "print" and node.args and ctx.lookup("print") is None
        ):
            return
        for arg in node.args:
            if arg.keyword is not None:
                continue
            values: list[cst.BaseExpression] = [arg.value]
            if isinstance(arg.value, cst.FormattedString):
                values = [
                    p.expression for p in arg.value.parts if isinstance(p, cst.FormattedStringExpression)
                ]
            for value in values:
                symbol = _printed_tensor(value, ctx)
                if symbol is not None:
                    if not _every_n_steps(node, ctx):
                        ctx.report("NL704", arg, symbol=symbol)
                    return
