"""neuron-lockin: code that ties a project to Neuron (the cost of leaving later). Never a blocker."""

from __future__ import annotations

import re

import libcst as cst

from neuronlint.static.bindings import absolute_module, dotted
from neuronlint.static.context import FileContext
from neuronlint.static.engine import on, triggers

triggers("torch_xla", "torch_neuronx", "neuronx", "nki", "optimum", "xla", "NEURON_", "XLA_")

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
_ENV = re.compile(r"^(NEURON_[A-Z0-9_]+|XLA_USE_BF16|XLA_DOWNCAST_BF16|XLA_IR_DEBUG|XLA_HLO_DEBUG|PT_XLA_DEBUG(_LEVEL)?|NEURON_CC_FLAGS)$")


def _neuron_module(module: str) -> tuple[str, str] | None:
    for prefix, rule, what in _NEURON_MODULES:
        if module == prefix or module.startswith(prefix + "."):
            return rule, what
    return None


@on(cst.Import)
def _import(node: cst.Import, ctx: FileContext) -> None:
    for alias in node.names:
        module = dotted(alias.name)
        found = _neuron_module(module)
        if found:
            ctx.report(found[0], alias, module=module, what=found[1], legacy_namespace=module.startswith("neuronxcc.nki"))


@on(cst.ImportFrom)
def _import_from(node: cst.ImportFrom, ctx: FileContext) -> None:
    if node.relative or node.module is None:
        return
    module = absolute_module(node, ctx)
    found = _neuron_module(module)
    if found is None and not isinstance(node.names, cst.ImportStar):
        for alias in node.names:  # `from neuronxcc import nki`
            full = f"{module}.{dotted(alias.name)}"
            found = _neuron_module(full) if full.startswith("neuronxcc.nki") else None
            if found:
                module = full
                break
    if found:
        ctx.report(found[0], node.module, module=module, what=found[1], legacy_namespace=module.startswith("neuronxcc.nki"))


def _literal(node: cst.CSTNode, ctx: FileContext) -> None:
    values = ctx.strings(node)
    if not values or len(values) != 1:
        return
    value = values[0]
    if _XLA_DEVICE.match(value) and "torch" in ctx.imports_seen():
        ctx.report("NL902", node, symbol=repr(value))
    elif _ENV.match(value):
        ctx.report("NL907", node, symbol=value)


on(cst.SimpleString)(_literal)
on(cst.FormattedString)(_literal)
