"""Distributed setup: the `'nccl'` backend (NL201) and DistributedDataParallel's CUDA `device_ids`
(NL202)."""

from __future__ import annotations

import libcst as cst

from neuronlint.findings import Finding
from neuronlint.fix.context import FixContext
from neuronlint.fix.model import SAFE, UNSAFE, Edit, Plan


def nccl(finding: Finding, nodes: list[cst.CSTNode], fx: FixContext) -> Plan | None:
    node = nodes[0]
    if not (isinstance(node, cst.SimpleString) and node.evaluated_value == "nccl"):
        return None
    if fx.flavour.name == "xla":
        _, imports = fx.module("torch_xla.distributed.xla_backend")
        quote = fx.source.text(node)[-1]
        return Plan(
            (*imports, fx.source.replace(node, f"{quote}xla{quote}")),
            SAFE,
            "Use the `xla` process-group backend (registered by torch_xla.distributed.xla_backend)",
        )
    dist = fx.source.module_alias("torch.distributed")
    imports: tuple[Edit, ...] = ()
    if dist is None:
        torch, imports = fx.torch()
        dist = f"{torch}.distributed"
    if fx.flavour.name == "neuron":
        text = f'{dist}.get_default_backend_for_device("neuron")'
        return Plan(
            (*imports, fx.source.replace(node, text)),
            UNSAFE,
            "Ask PyTorch for the neuron device's backend (TorchNeuron's backend name is not documented)",
        )
    name, device_edits = fx.device(node)
    text = f"{dist}.get_default_backend_for_device({name})"
    return Plan(
        (*imports, *device_edits, fx.source.replace(node, text)),
        SAFE,
        "Use the device's default backend (nccl on CUDA, gloo on the CPU)",
    )


def ddp_device_ids(finding: Finding, nodes: list[cst.CSTNode], fx: FixContext) -> Plan | None:
    if fx.flavour.name == "xla":
        return None  # DDP itself is not supported on the XLA backend (NL205)
    for node in nodes:
        if (
            isinstance(node, cst.Arg)
            and node.keyword is not None
            and node.keyword.value in ("device_ids", "output_device")
        ):
            call = fx.source.parent(node)
            if not isinstance(call, cst.Call):
                return None
            gone = [
                a
                for a in call.args
                if a.keyword is not None and a.keyword.value in ("device_ids", "output_device")
            ]
            edits = remove_arguments(call, gone, fx)
            return Plan(
                tuple(edits),
                UNSAFE,
                "Remove `device_ids`/`output_device`: DDP then uses the module's device, but no longer moves inputs to it",
            )
    return None


def remove_argument(arg: cst.Arg, fx: FixContext) -> list[Edit] | None:
    """Delete one argument of a call together with its separating comma."""
    call = fx.source.parent(arg)
    if not isinstance(call, cst.Call):
        return None
    return remove_arguments(call, [arg], fx)


def remove_arguments(call: cst.Call, gone: list[cst.Arg], fx: FixContext) -> list[Edit]:
    """Delete some arguments of a call with their commas: one edit per run of adjacent ones."""
    args = list(call.args)
    edits: list[Edit] = []
    index = 0
    while index < len(args):
        if args[index] not in gone:
            index += 1
            continue
        first = index
        while index < len(args) and args[index] in gone:
            index += 1
        start, last = fx.source.span(args[first]), fx.source.span(args[index - 1])
        if index < len(args):
            following = fx.source.span(args[index])
            edits.append(Edit(start.line, start.column, following.line, following.column, ""))
        elif first > 0:
            previous = fx.source.span(args[first - 1].value)
            edits.append(Edit(previous.end_line, previous.end_column, last.end_line, last.end_column, ""))
        else:
            edits.append(Edit(start.line, start.column, last.end_line, last.end_column, ""))
    return edits
