"""The torch.cuda runtime: synchronize (NL102), streams and events (NL103), memory statistics
(NL105), device queries (NL106) and seeds (NL108), mapped to torch.accelerator, torch.Stream /
torch.Event and torch.manual_seed (all present in PyTorch 2.13)."""

from __future__ import annotations

import libcst as cst

from neuronlint.findings import Finding
from neuronlint.fix.context import FixContext
from neuronlint.fix.fixers.common import accelerator_call, args_text, called, last_name, remove_statement
from neuronlint.fix.fixers.device import guarded_idiom, statement_idiom
from neuronlint.fix.model import SAFE, UNSAFE, Plan
from neuronlint.fix.source import normalise


def synchronize(finding: Finding, nodes: list[cst.CSTNode], fx: FixContext) -> Plan | None:
    call = called(finding, nodes, fx)
    if call is None or last_name(call.func) != "synchronize":
        return None
    if fx.flavour.name == "xla":
        base, imports = fx.module(*fx.flavour.xla_module())
        text = fx.flavour.xla_sync(base)
        return Plan(
            (*imports, fx.source.replace(call, text)),
            UNSAFE,
            f"Replace with `{text}`: it cuts and runs the lazy graph (a step boundary), not only a wait",
        )
    args = args_text(call, fx, ("device",))
    if args is None:
        return None
    torch, imports = fx.torch()
    edits = accelerator_call(call, fx, f"{torch}.accelerator.synchronize({args})", "None", torch)
    return Plan(
        (*imports, *edits), SAFE, "Wait for the current accelerator (`torch.accelerator.synchronize`)"
    )


# torch.cuda name -> (torch.accelerator name, value without an accelerator, safe)
_MEMORY = {
    "memory_allocated": ("memory_allocated", "0", True),
    "max_memory_allocated": ("max_memory_allocated", "0", True),
    "memory_reserved": ("memory_reserved", "0", True),
    "max_memory_reserved": ("max_memory_reserved", "0", True),
    "memory_stats": ("memory_stats", "{}", True),
    "reset_peak_memory_stats": ("reset_peak_memory_stats", "None", True),
    "empty_cache": ("empty_cache", "None", True),
    # (free, total) -> (0, 0) without an accelerator: code that divides by `total` must be reviewed.
    "mem_get_info": ("get_memory_info", "(0, 0)", False),
}


def memory(finding: Finding, nodes: list[cst.CSTNode], fx: FixContext) -> Plan | None:
    call = called(finding, nodes, fx)
    if call is None or fx.flavour.name == "xla":
        return None
    entry = _MEMORY.get(last_name(call.func))
    if entry is None:
        return None
    name, default, safe = entry
    args = args_text(call, fx, ("device",))
    if args is None or (name == "empty_cache" and args):
        return None
    torch, imports = fx.torch()
    edits = accelerator_call(call, fx, f"{torch}.accelerator.{name}({args})", default, torch)
    note = "" if safe else f"; without an accelerator it gives {default}"
    return Plan((*imports, *edits), SAFE if safe else UNSAFE, f"Use `torch.accelerator.{name}`{note}")


def device_query(finding: Finding, nodes: list[cst.CSTNode], fx: FixContext) -> Plan | None:
    call = called(finding, nodes, fx)
    if call is None:
        return None
    api = last_name(call.func)
    if api == "is_available":
        idiom = guarded_idiom(call.func, fx) or statement_idiom(call, fx)
        if idiom is not None:
            return idiom
    if fx.flavour.name == "xla":
        return None
    torch, imports = fx.torch()
    args = args_text(call, fx, ("device",))
    if args is None:
        return None
    if api == "is_available" and not args:
        text = f"{torch}.accelerator.is_available()"
        body = _guarded_body(call, fx, torch)
        if body is not None:
            return Plan(
                (*imports, fx.source.replace(call, text), *body),
                SAFE,
                "Guard on any accelerator: every call under the check is device-generic now",
            )
        return Plan(
            (*imports, fx.source.replace(call, text)),
            UNSAFE,
            "Ask for any accelerator (`torch.accelerator.is_available`); the code it guards must then be device-generic",
        )
    if api == "device_count" and not args:
        text = f"{torch}.accelerator.device_count()"
        return Plan((*imports, fx.source.replace(call, text)), SAFE, "Count accelerator devices")
    if api == "current_device" and not args:
        edits = accelerator_call(call, fx, f"{torch}.accelerator.current_device_index()", "0", torch)
        return Plan((*imports, *edits), SAFE, "Use `torch.accelerator.current_device_index`")
    if api == "set_device" and args:
        edits = accelerator_call(call, fx, f"{torch}.accelerator.set_device_index({args})", "None", torch)
        return Plan((*imports, *edits), SAFE, "Use `torch.accelerator.set_device_index`")
    return None


def streams(finding: Finding, nodes: list[cst.CSTNode], fx: FixContext) -> Plan | None:
    call = called(finding, nodes, fx)
    if call is None or fx.flavour.name == "xla":
        return None
    api = last_name(call.func)
    torch, imports = fx.torch()
    if api in ("Stream", "Event"):
        text = f"{torch}.{api}"
        return Plan(
            (*imports, fx.source.replace(call.func, text)),
            UNSAFE,
            f"Use the device-generic `torch.{api}`; check the stream/event methods the code calls",
        )
    if api == "stream" and len(call.args) == 1 and not call.args[0].star and call.args[0].keyword is None:
        item = fx.source.parent(call)
        value = call.args[0].value
        if (
            isinstance(item, cst.WithItem)
            and item.item is call
            and isinstance(value, (cst.Name, cst.Attribute))
        ):
            return Plan(
                (fx.source.replace(call, fx.source.text(value)),),
                UNSAFE,
                "Enter the stream itself (`with s:`, a torch.Stream is a context manager); "
                "`torch.cuda.stream(None)` did nothing, `with None:` fails",
            )
        return None
    if api == "current_stream":
        args = args_text(call, fx, ("device",))
        if args is None:
            return None
        text = f"{torch}.accelerator.current_stream({args})"
        return Plan(
            (*imports, fx.source.replace(call, text)),
            UNSAFE,
            "Use `torch.accelerator.current_stream` (a torch.Stream, not a torch.cuda.Stream)",
        )
    return None


def seeds(finding: Finding, nodes: list[cst.CSTNode], fx: FixContext) -> Plan | None:
    call = called(finding, nodes, fx)
    if call is None or last_name(call.func) not in ("manual_seed", "manual_seed_all"):
        return None
    if len(call.args) != 1 or call.args[0].star:
        return None
    seed = normalise(fx.source.text(call.args[0].value))
    torch_text = fx.source.module_alias("torch") or "torch"
    previous = _previous_statement(call, fx)
    if previous is not None and normalise(fx.source.text(previous)) == f"{torch_text}.manual_seed({seed})":
        removal = remove_statement(call, fx)
        if removal:
            return Plan(tuple(removal), SAFE, "Remove: the `torch.manual_seed` just above seeds every device")
    torch, imports = fx.torch()
    return Plan(
        (*imports, fx.source.replace(call.func, f"{torch}.manual_seed")),
        UNSAFE,
        "Use `torch.manual_seed`, which seeds every device; it also reseeds the CPU generator",
    )


def _previous_statement(call: cst.Call, fx: FixContext) -> cst.CSTNode | None:
    """The expression of the statement right before the one that is this call, in the same block."""
    line = fx.source.statement_line(call)
    block = fx.source.parent(line) if line is not None else None
    if line is None or block is None:
        return None
    body = list(block.body)
    index = body.index(line)
    if index == 0:
        return None
    before = body[index - 1]
    if (
        isinstance(before, cst.SimpleStatementLine)
        and len(before.body) == 1
        and isinstance(before.body[0], cst.Expr)
    ):
        return before.body[0].value
    return None


# torch.cuda calls whose device-generic form needs no further review under an availability check.
_GUARDED_CALLS = {
    "synchronize": "synchronize",
    "empty_cache": "empty_cache",
    "reset_peak_memory_stats": "reset_peak_memory_stats",
    "set_device": "set_device_index",
}


def _guarded_body(call: cst.Call, fx: FixContext, torch: str) -> list | None:
    """`if torch.cuda.is_available():` around nothing but torch.cuda calls with a device-generic
    form (synchronize, empty_cache, ...): the edits that make the body that form, so the check can
    become `torch.accelerator.is_available()` in the same fix. None for any other shape."""
    statement = fx.source.parent(call)
    if not isinstance(statement, cst.If) or statement.test is not call or statement.orelse is not None:
        return None
    if not isinstance(statement.body, cst.IndentedBlock) or fx.flavour.name != "portable":
        return None
    torch_text = fx.source.module_alias("torch") or "torch"
    edits = []
    for line in statement.body.body:
        if not (isinstance(line, cst.SimpleStatementLine) and len(line.body) == 1):
            return None
        expr = line.body[0]
        inner = expr.value if isinstance(expr, cst.Expr) else None
        if not isinstance(inner, cst.Call):
            return None
        callee = normalise(fx.source.text(inner.func))
        if callee.startswith(f"{torch_text}.accelerator."):
            continue
        name = _GUARDED_CALLS.get(last_name(inner.func))
        args = args_text(inner, fx, ("device",))
        if name is None or callee != f"{torch_text}.cuda.{last_name(inner.func)}" or args is None:
            return None
        edits.append(fx.source.replace(inner, f"{torch}.accelerator.{name}({args})"))
    return edits
