"""Small questions about call expressions that several checkers ask."""

from __future__ import annotations

import libcst as cst


def method(node: cst.Call) -> str | None:
    """'cuda' for `x.cuda()`; None for calls of plain names."""
    return node.func.attr.value if type(node.func) is cst.Attribute else None


def receiver(node: cst.Call) -> cst.BaseExpression | None:
    return node.func.value if type(node.func) is cst.Attribute else None


def kwarg(node: cst.Call, name: str) -> cst.Arg | None:
    for arg in node.args:
        if arg.keyword is not None and arg.keyword.value == name:
            return arg
    return None


def positional(node: cst.Call) -> list[cst.Arg]:
    return [a for a in node.args if a.keyword is None and not a.star]


def arg_value(node: cst.Call, index: int, name: str) -> cst.BaseExpression | None:
    """The expression passed as parameter `name`, by keyword or at position `index`."""
    found = kwarg(node, name)
    if found is not None:
        return found.value
    args = positional(node)
    return args[index].value if index is not None and index < len(args) else None


def is_true(node: cst.BaseExpression | None) -> bool:
    return type(node) is cst.Name and node.value == "True"


# Variables named for the CPU device, as a device argument: `x.to(self.cpu_device)` copies to the host.
CPU_DEVICE_NAMES = frozenset({"cpu_device", "device_cpu", "cpu_dev"})


def name_of(node: cst.CSTNode | None) -> str:
    """Last identifier of a Name/Attribute chain ('rank' for `args.local_rank`... -> 'local_rank')."""
    if type(node) is cst.Name:
        return node.value
    if type(node) is cst.Attribute:
        return node.attr.value
    return ""
