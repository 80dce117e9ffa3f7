"""host-sync: copies to the host that force the device graph to execute. (.item() etc. are table-driven.)"""

from __future__ import annotations

import libcst as cst

from neuronlint.static.calls import arg_value
from neuronlint.static.context import FileContext
from neuronlint.static.engine import on, triggers

triggers("cpu", "print(")

_TENSOR_METHODS = frozenset({"mean", "sum", "max", "min", "norm", "std", "var", "abs", "detach", "float", "argmax", "softmax"})


@on(cst.Call)
def _to_cpu(node: cst.Call, ctx: FileContext) -> None:
    func = node.func
    if not isinstance(func, cst.Attribute) or func.attr.value != "to" or ctx.qualname(func) is not None:
        return
    target = arg_value(node, 0, "device")
    values = ctx.strings(target) if target is not None else None
    is_cpu = values == ("cpu",)
    if isinstance(target, cst.Call) and ctx.qualname(target.func) == "torch.device":
        inner = ctx.strings(arg_value(target, 0, "type"))
        is_cpu = inner == ("cpu",)
    if is_cpu and not ctx.is_numpy(func.value):
        ctx.report("NL703", func.attr, end_node=node, symbol='.to("cpu")')


@on(cst.Call)
def _print_tensor(node: cst.Call, ctx: FileContext) -> None:
    if not (isinstance(node.func, cst.Name) and node.func.value == "print" and ctx.lookup("print") is None):
        return
    for arg in node.args:
        value = arg.value
        if isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute):
            method = value.func.attr.value
            if method in _TENSOR_METHODS and ctx.qualname(value.func) is None and not ctx.is_numpy(value.func.value):
                ctx.report("NL704", arg, symbol=f"print(... .{method}())")
                return
