"""Mixed precision (NL107): `torch.cuda.amp.autocast` -> `torch.autocast(device_type=...)`,
`torch.cuda.amp.GradScaler` -> `torch.amp.GradScaler(<device type>, ...)`, and `'cuda'` as the
autocast device type."""

from __future__ import annotations

import libcst as cst

from neuronlint.findings import Finding
from neuronlint.fix.context import FixContext
from neuronlint.fix.fixers.common import called, last_name
from neuronlint.fix.fixers.device import _renamed
from neuronlint.fix.model import SAFE, UNSAFE, Edit, Plan

# torch.cuda.amp.autocast(enabled=True, dtype=torch.float16, cache_enabled=True): positional order.
_AUTOCAST_POSITIONS = ("enabled", "dtype", "cache_enabled")


def _device_type(fx: FixContext, node: cst.CSTNode) -> tuple[str, tuple[Edit, ...]]:
    if fx.flavour.name == "neuron":
        return '"neuron"', ()
    name, edits = fx.device(node)
    return f"{name}.type", edits


def amp(finding: Finding, nodes: list[cst.CSTNode], fx: FixContext) -> Plan | None:
    node = nodes[0]
    if isinstance(node, cst.SimpleString):
        return _device_type_literal(node, fx)
    call = called(finding, nodes, fx)
    if call is None or fx.flavour.name == "xla":
        return None
    qualified = fx.source.text(call.func)
    if (
        "cuda" not in qualified
        and "amp" not in qualified
        and last_name(call.func) not in ("autocast", "GradScaler")
    ):
        return None
    api = last_name(call.func)
    torch, imports = fx.torch()
    device_type, device_edits = _device_type(fx, call)
    safety = SAFE if fx.flavour.name == "portable" else UNSAFE
    if api == "autocast":
        parts = [f"device_type={device_type}"]
        for index, arg in enumerate(call.args):
            if arg.star:
                return None
            if arg.keyword is None:
                if index >= len(_AUTOCAST_POSITIONS):
                    return None
                parts.append(f"{_AUTOCAST_POSITIONS[index]}={fx.source.text(arg.value)}")
            else:
                parts.append(f"{arg.keyword.value}={fx.source.text(arg.value)}")
        text = f"{torch}.autocast({', '.join(parts)})"
        return Plan(
            (*imports, *device_edits, fx.source.replace(call, text)),
            safety,
            "Use `torch.autocast(device_type=...)` (same float16 default on CUDA)",
        )
    if api == "GradScaler":
        if any(arg.keyword is not None and arg.keyword.value == "device" for arg in call.args):
            return None
        rest = [fx.source.text(arg).rstrip(", ").strip() for arg in call.args]
        text = f"{torch}.amp.GradScaler({', '.join([device_type, *rest])})"
        return Plan(
            (*imports, *device_edits, fx.source.replace(call, text)),
            safety,
            "Use `torch.amp.GradScaler` with the device type",
        )
    return None


def _device_type_literal(node: cst.SimpleString, fx: FixContext) -> Plan | None:
    if node.evaluated_value != "cuda":
        return None
    if fx.flavour.name == "portable":
        name, edits = fx.device(node)
        return Plan((*edits, fx.source.replace(node, f"{name}.type")), SAFE, f"Use the type of `{name}`")
    new = _renamed(node, fx, fx.flavour.name)
    if new is None:
        return None
    if fx.flavour.name == "xla":
        return Plan(
            (fx.source.replace(node, new),),
            UNSAFE,
            "Autocast on XLA: use bfloat16 and compile with --auto-cast=none",
        )
    return Plan((fx.source.replace(node, new),), SAFE, "Autocast on the neuron device")
