"""cuda-api: CUDA device strings, integer device ordinals, pin_memory. (torch.cuda.* names are table-driven.)"""

from __future__ import annotations

import re

import libcst as cst

from neuronlint.static.calls import arg_value, kwarg, name_of, positional
from neuronlint.static.context import FileContext
from neuronlint.static.engine import on, triggers

triggers("cuda", "pin_memory", ".to(", "device=")

CUDA_DEVICE = re.compile(r"^cuda(:(\d+|\{\}|%d|%s|%i)?)?$")
_AUTOCAST = {"torch.autocast", "torch.amp.autocast", "torch.amp.GradScaler", "torch.cuda.amp.autocast",
             "torch.amp.custom_fwd", "torch.amp.custom_bwd", "torch.is_autocast_enabled", "torch.get_autocast_dtype"}  # fmt: skip
_ORDINAL_NAME = re.compile(r"(^|_)(local_?rank|rank|gpu|gpus|gpu_id|gpu_idx|device_id|dev_id|device_idx|local_device|cuda_device)$")


def _string_value(node: cst.CSTNode, ctx: FileContext) -> str | None:
    values = ctx.strings(node)
    return values[0] if values and len(values) == 1 else None


def _classify(node: cst.CSTNode, ctx: FileContext) -> tuple[str, dict]:
    """Which rule a 'cuda' literal belongs to, from where it stands."""
    parent = ctx.parent()
    if isinstance(parent, (cst.Comparison, cst.ComparisonTarget)):
        return "NL111", {"symbol": "comparison with 'cuda'"}
    if isinstance(parent, cst.Arg):
        call = ctx.parent(2)
        if isinstance(call, cst.Call):
            callee = ctx.qualname(call.func) or ""
            keyword = parent.keyword.value if parent.keyword else None
            if keyword == "device_type" or callee in _AUTOCAST:
                return "NL107", {"api": callee or "autocast", "symbol": "device_type 'cuda'"}
    ifexp = ctx.enclosing(cst.IfExp)
    fallback = False
    if isinstance(ifexp, cst.IfExp):
        test = ctx.module.code_for_node(ifexp.test)
        fallback = "is_available" in test or "cuda" in test
    return "NL101", {"fallback": fallback}


def _literal(node: cst.CSTNode, ctx: FileContext) -> None:
    if isinstance(ctx.parent(), cst.ConcatenatedString):
        return
    value = _string_value(node, ctx)
    if value is None or not CUDA_DEVICE.match(value):
        return
    rule, facts = _classify(node, ctx)
    facts.setdefault("symbol", repr(value))
    if rule == "NL101" and isinstance(node, cst.SimpleString):
        quote = node.value
        facts["native_alt"] = quote.replace("cuda", "neuron", 1)
        facts["xla_alt"] = quote.replace("cuda", "xla", 1) if ":" not in value else None
        if facts["xla_alt"] is None:
            facts.pop("xla_alt")
    ctx.report(rule, node, **facts)


on(cst.SimpleString)(_literal)
on(cst.FormattedString)(_literal)


def _is_ordinal(node: cst.BaseExpression | None, ctx: FileContext) -> bool:
    if isinstance(node, cst.Integer):
        return True
    if isinstance(node, (cst.Name, cst.Attribute)) and ctx.qualname(node) is None:
        return bool(_ORDINAL_NAME.search(name_of(node).lower()))
    return False


@on(cst.Call)
def _device_ordinals(node: cst.Call, ctx: FileContext) -> None:
    func = node.func
    callee = ctx.qualname(func)
    if isinstance(func, cst.Attribute) and func.attr.value == "to" and callee is None:
        args = positional(node)
        target = args[0].value if args else arg_value(node, None, "device")
        if _is_ordinal(target, ctx) and not ctx.is_numpy(func.value):
            ctx.report("NL112", target, symbol=ctx.module.code_for_node(target))
        return
    if callee == "torch.device":
        target = arg_value(node, 0, "type")
        if _is_ordinal(target, ctx):
            ctx.report("NL112", target, symbol=ctx.module.code_for_node(target))
        return
    device = kwarg(node, "device")
    if device is not None and _is_ordinal(device.value, ctx) and callee and callee.startswith("torch."):
        ctx.report("NL112", device.value, symbol=ctx.module.code_for_node(device.value))


@on(cst.Arg)
def _pin_memory(node: cst.Arg, ctx: FileContext) -> None:
    if node.keyword is not None and node.keyword.value == "pin_memory":
        value = node.value
        if isinstance(value, cst.Name) and value.value == "False":
            return
        ctx.report("NL110", node, symbol="pin_memory=" + ctx.module.code_for_node(value))
