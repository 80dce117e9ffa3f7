"""torch.compile CUDA-graph and Inductor modes (NL802): removed for the neuron flavour, where
TorchNeuron supports only mode='default' (other modes warn and have no effect)."""

from __future__ import annotations

import libcst as cst

from neuronlint.findings import Finding
from neuronlint.fix.context import FixContext
from neuronlint.fix.fixers.distributed import remove_argument
from neuronlint.fix.model import SAFE, Plan


def compile_mode(finding: Finding, nodes: list[cst.CSTNode], fx: FixContext) -> Plan | None:
    if fx.flavour.name != "neuron":
        return None  # on CUDA the mode matters; on XLA torch.compile is not supported at all
    for node in nodes:
        if isinstance(node, cst.Arg) and node.keyword is not None and node.keyword.value == "mode":
            edits = remove_argument(node, fx)
            if edits:
                return Plan(
                    tuple(edits), SAFE, "Remove the mode: TorchNeuron compiles with mode='default' only"
                )
    return None
