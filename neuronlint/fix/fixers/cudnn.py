"""cuDNN flags (NL109): `torch.backends.cudnn.<flag> = value` statements are removed (unsafe: on
CUDA the flag changes speed or determinism)."""

from __future__ import annotations

import libcst as cst

from neuronlint.findings import Finding
from neuronlint.fix.context import FixContext
from neuronlint.fix.fixers.common import remove_statement
from neuronlint.fix.model import UNSAFE, Plan


def cudnn_flag(finding: Finding, nodes: list[cst.CSTNode], fx: FixContext) -> Plan | None:
    node = nodes[0]
    target = fx.source.parent(node)
    assign = fx.source.parent(target) if isinstance(target, cst.AssignTarget) else None
    if isinstance(assign, cst.Assign) and "cudnn" in fx.source.text(node):
        if len(assign.targets) != 1:
            return None
        if True:
            edits = remove_statement(assign, fx)
            if edits is None:
                return None
            return Plan(
                tuple(edits),
                UNSAFE,
                "Remove the cuDNN flag: it has no effect off CUDA, but on CUDA it changes speed or determinism",
            )
    return None
