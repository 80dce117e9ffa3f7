"""neuron-lockin: code that ties a project to Neuron (the cost of leaving later). Never a blocker."""

from __future__ import annotations

import re

import libcst as cst

from neuronlint.static.bindings import absolute_module, dotted
from neuronlint.static.calls import name_of, positional
from neuronlint.static.context import FileContext
from neuronlint.static.literal_roles import ROLE_ATTRIBUTE, ROLE_KEY, ROLE_OPTION, literal_role
from neuronlint.static.registry import Checker, on

# Import prefix -> (rule, what it is). Longest prefix first.
_NEURON_MODULES: tuple[tuple[str, str, str], ...] = (
    ("neuronxcc.nki", "NL905", "NKI (legacy neuronxcc.nki namespace)"),
    ("torch_neuronx", "NL903", "torch-neuronx"),
    ("neuronx_distributed_inference", "NL904", "NxD Inference"),
    ("neuronx_distributed_training", "NL904", "NxD Training"),
    ("neuronx_distributed", "NL904", "NeuronX Distributed"),
    ("optimum.neuron", "NL906", "Optimum Neuron"),
    ("libneuronxla", "NL901", "libneuronxla"),
    ("torch_xla", "NL901", "PyTorch/XLA"),
    ("neuronxcc", "NL903", "Neuron compiler (neuronxcc)"),
    ("nkilib", "NL905", "NKI Library"),
    ("nki", "NL905", "NKI"),
    ("transformers_neuronx", "NL904", "transformers-neuronx (end of support)"),
)
_XLA_DEVICE = re.compile(r"^(xla|neuron)(:(\d+|\{\}|%d|%s))?$")
_ENV = re.compile(
    r"^(NEURON_[A-Z0-9_]+|XLA_USE_BF16|XLA_DOWNCAST_BF16|XLA_IR_DEBUG|XLA_HLO_DEBUG|PT_XLA_DEBUG(_LEVEL)?|NEURON_CC_FLAGS)$"
)


def _neuron_module(module: str) -> tuple[str, str] | None:
    for prefix, rule, what in _NEURON_MODULES:
        if module == prefix or module.startswith(prefix + "."):
            return rule, what
    return None


_PROCESS_GROUP_CALLS = frozenset(
    {"init_process_group", "new_group", "new_subgroups", "new_subgroups_by_enumeration"}
)


def _device_use(node: cst.CSTNode, ctx: FileContext) -> str | None:
    """What an 'xla'/'neuron' literal names where it stands, or None where it names nothing in use."""
    role = literal_role(node, ctx)
    if role in (ROLE_KEY, ROLE_OPTION, ROLE_ATTRIBUTE):
        return None  # a per-device dispatch table, an allowed choice, `hasattr(torch, "neuron")`
    parent, call = ctx.parent(), ctx.parent(2)
    if isinstance(parent, cst.Arg) and isinstance(call, cst.Call):
        keyword = parent.keyword.value if parent.keyword is not None else None
        callee = name_of(call.func)
        if callee == "compile" and keyword == "backend":
            return None  # torch.compile(backend="neuron") is NL909 (compile_backend)
        first = positional(call)[:1]
        if callee in _PROCESS_GROUP_CALLS and (keyword == "backend" or (first and first[0] is parent)):
            return "process-group backend"
        if keyword == "backend":
            return "backend"
    return "device"


class NeuronLockin(Checker):
    """Imports of Neuron packages, 'xla'/'neuron' device strings and Neuron/XLA environment variables."""

    emits = {
        **{
            rule: ("module", "what", "legacy_namespace")
            for rule in ("NL901", "NL903", "NL904", "NL905", "NL906")
        },
        "NL902": ("symbol", "what"),
        "NL907": ("symbol",),
    }
    triggers = ("torch_xla", "torch_neuronx", "neuronx", "nki", "optimum", "xla", "NEURON_", "XLA_")

    @on(cst.Import)
    def import_(self, node: cst.Import, ctx: FileContext) -> None:
        for alias in node.names:
            module = dotted(alias.name)
            found = _neuron_module(module)
            if found:
                ctx.report(
                    found[0],
                    alias,
                    module=module,
                    what=found[1],
                    legacy_namespace=module.startswith("neuronxcc.nki"),
                )

    @on(cst.ImportFrom)
    def import_from(self, node: cst.ImportFrom, ctx: FileContext) -> None:
        if node.relative or node.module is None:
            return
        module = absolute_module(node, ctx)
        found = _neuron_module(module)
        if module == "neuronxcc" and not isinstance(node.names, cst.ImportStar):
            for (
                alias
            ) in node.names:  # `from neuronxcc import nki`: the legacy NKI namespace, not the compiler
                if dotted(alias.name) == "nki":
                    module, found = "neuronxcc.nki", _neuron_module("neuronxcc.nki")
                    break
        if found:
            ctx.report(
                found[0],
                node.module,
                module=module,
                what=found[1],
                legacy_namespace=module.startswith("neuronxcc.nki"),
            )

    @on(cst.SimpleString, cst.FormattedString)
    def literal(self, node: cst.CSTNode, ctx: FileContext) -> None:
        value = ctx.literal_value(node)
        if value is None:
            return
        if _XLA_DEVICE.match(value) and "torch" in ctx.imports_seen():
            what = _device_use(node, ctx)
            if what is not None:
                ctx.report("NL902", node, symbol=repr(value), what=what)
        elif _ENV.match(value) and literal_role(node, ctx) not in (ROLE_OPTION, ROLE_ATTRIBUTE):
            ctx.report("NL907", node, symbol=value)
