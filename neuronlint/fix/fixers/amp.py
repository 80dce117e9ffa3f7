"""Mixed precision (NL107): `torch.cuda.amp.autocast` -> `torch.autocast(device_type=...)`,
`torch.cuda.amp.GradScaler` -> `torch.amp.GradScaler(<device type>, ...)`,
`@torch.cuda.amp.custom_fwd` / `custom_bwd` -> `@torch.amp.custom_fwd(device_type=...)`, and `'cuda'`
as the autocast device type."""

from __future__ import annotations

import libcst as cst

from neuronlint.findings import Finding
from neuronlint.fix.context import FixContext
from neuronlint.fix.fixers.common import called, last_name
from neuronlint.fix.fixers.device import _renamed
from neuronlint.fix.model import SAFE, UNSAFE, Edit, Plan
from neuronlint.fix.source import normalise

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
    if isinstance(node, cst.Attribute) and node.attr.value in ("custom_fwd", "custom_bwd"):
        return _custom_function(node, fx)
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


def _custom_function(node: cst.Attribute, fx: FixContext) -> Plan | None:
    """`@torch.cuda.amp.custom_fwd` / `@torch.cuda.amp.custom_fwd(cast_inputs=...)` (decorators of an
    autograd Function's forward/backward) -> `@torch.amp.custom_fwd(device_type=..., ...)`: on CUDA,
    the device type is "cuda", which is what the CUDA spelling passes."""
    if fx.flavour.name == "xla" or not normalise(fx.source.text(node.value)).endswith("cuda.amp"):
        return None
    parent = fx.source.parent(node)
    call = parent if isinstance(parent, cst.Call) and parent.func is node else None
    decorator = fx.source.parent(call if call is not None else node)
    if not isinstance(decorator, cst.Decorator):
        return None
    torch, imports = fx.torch()
    device_type, device_edits = _device_type(fx, node)
    parts = [f"device_type={device_type}"]
    for arg in call.args if call is not None else ():
        if arg.star or arg.keyword is None:
            return None
        parts.append(f"{arg.keyword.value}={fx.source.text(arg.value)}")
    text = f"{torch}.amp.{node.attr.value}({', '.join(parts)})"
    return Plan(
        (*imports, *device_edits, fx.source.replace(call if call is not None else node, text)),
        SAFE if fx.flavour.name == "portable" else UNSAFE,
        f"Use `torch.amp.{node.attr.value}(device_type=...)`",
    )
