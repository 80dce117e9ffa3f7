"""Device placement (NL101 `'cuda'` values, `.cuda()`, the legacy `torch.cuda.FloatTensor`-style
types), and the guarded device idioms (NL101 + NL106) that become one portable expression:
`torch.device("cuda" if torch.cuda.is_available() else "cpu")`, and its statement forms
`if torch.cuda.is_available(): device = "cuda" / else: device = "cpu"` and
`device = "cpu" / if torch.cuda.is_available(): device = "cuda"`."""

from __future__ import annotations

import re

import libcst as cst

from neuronlint.findings import Finding
from neuronlint.fix.context import FixContext
from neuronlint.fix.fixers.common import last_name
from neuronlint.fix.model import SAFE, UNSAFE, Edit, Plan
from neuronlint.fix.source import normalise

_CUDA_LITERAL = re.compile(r"^(?P<prefix>[rRuU]?)(?P<quote>'''|\"\"\"|'|\")cuda(?P<rest>.*)(?P=quote)$", re.S)
_CPU = {'"cpu"', "'cpu'"}


def cuda_device(finding: Finding, nodes: list[cst.CSTNode], fx: FixContext) -> Plan | None:
    node = nodes[0]
    if isinstance(node, (cst.SimpleString, cst.FormattedString)):
        idiom = guarded_idiom(node, fx) or statement_idiom(node, fx)
        if idiom is not None:
            return idiom
        return literal(node, fx)
    if isinstance(node, cst.Attribute) and node.attr.value in LEGACY_TYPES:
        return legacy_type(node, fx)
    for candidate in nodes:
        if isinstance(candidate, cst.Call) and last_name(candidate.func) == "cuda":
            if isinstance(candidate.func, cst.Attribute):
                return dot_cuda(candidate, fx)
    return None


# ---- "cuda" if torch.cuda.is_available() else "cpu" ----------------------------------------------
def guarded_idiom(node: cst.CSTNode, fx: FixContext) -> Plan | None:
    """The CUDA-or-CPU conditional around `node` (the literal or the is_available call)."""
    ifexp = None
    for ancestor in fx.source.ancestors(node):
        if isinstance(ancestor, cst.IfExp):
            ifexp = ancestor
            break
        if isinstance(ancestor, (cst.Arg, cst.Call, cst.Attribute, cst.Name)):
            continue
        break
    if ifexp is None or not fx.availability_check(ifexp.test) or "cuda" not in fx.source.text(ifexp.test):
        return None
    body, orelse = normalise(fx.source.text(ifexp.body)), normalise(fx.source.text(ifexp.orelse))
    torch_text = fx.source.module_alias("torch") or "torch"
    as_device = body.endswith('.device("cuda")') and orelse.endswith('.device("cpu")')
    as_string = body == '"cuda"' and orelse == '"cpu"'
    if not (as_device or as_string):
        return None
    target: cst.CSTNode = ifexp
    wrapper = fx.source.parent(ifexp)
    call = fx.source.parent(wrapper) if isinstance(wrapper, cst.Arg) else None
    if (
        as_string
        and isinstance(call, cst.Call)
        and len(call.args) == 1
        and call.args[0].keyword is None
        and normalise(fx.source.text(call.func)) == f"{torch_text}.device"
    ):
        target, as_device = call, True
    if fx.flavour.name == "portable":
        torch, imports = fx.torch()
        value = fx.device_expression(torch)
        text = value if as_device else f"({value}).type"
        if as_device and isinstance(fx.source.parent(target), (cst.Attribute, cst.BinaryOperation)):
            text = f"({value})"
        return Plan(
            (*imports, fx.source.replace(target, text)),
            SAFE,
            "Use the current accelerator, else the CPU (`torch.accelerator.current_accelerator`)",
        )
    device = "neuron" if fx.flavour.name == "neuron" else "xla"
    imports = fx.module("torch_xla")[1] if device == "xla" else ()
    text = f'{torch_text}.device("{device}")' if as_device else f'"{device}"'
    return Plan(
        (*imports, fx.source.replace(target, text)),
        UNSAFE,
        f"Use the {device} device unconditionally (drops the CPU fallback)",
    )


# ---- if torch.cuda.is_available(): device = "cuda" / else: device = "cpu" -------------------------
def statement_idiom(node: cst.CSTNode, fx: FixContext) -> Plan | None:
    """The statement form of the CUDA-or-CPU choice around `node` (a literal in it, or its test):
    one assignment of the portable device (or its type) instead."""
    statement = None
    for ancestor in fx.source.ancestors(node):
        if isinstance(ancestor, cst.If):
            statement = ancestor
            break
        if isinstance(ancestor, (cst.FunctionDef, cst.ClassDef, cst.Module)):
            return None
    if statement is None or not fx.availability_check(statement.test):
        return None
    if not isinstance(fx.source.parent(statement), (cst.IndentedBlock, cst.Module)):
        return None  # an `elif`: the branches above decide too
    if "cuda" not in fx.source.text(statement.test) or fx.flavour.name != "portable":
        return None
    torch_text = fx.source.module_alias("torch") or "torch"
    target, value = _single_assignment(statement.body)
    if target is None or value not in ('"cuda"', f'{torch_text}.device("cuda")'):
        return None
    edits: list[Edit] = []
    if isinstance(statement.orelse, cst.Else):
        other, other_value = _single_assignment(statement.orelse.body)
    elif statement.orelse is None:
        before = _previous(statement, fx)
        other, other_value = _single_assignment_line(before) if before is not None else (None, None)
        if other is not None:
            span = fx.source.span(before)
            edits.append(Edit(span.line, 1, span.end_line + 1, 1, ""))  # the `device = "cpu"` above
    else:
        return None
    as_device = value.endswith(")")
    if other != target or other_value != (f'{torch_text}.device("cpu")' if as_device else '"cpu"'):
        return None
    torch, imports = fx.torch()
    expression = fx.device_expression(torch)
    text = f"{target} = {expression if as_device else f'({expression}).type'}"
    return Plan(
        (*imports, *edits, fx.source.replace(statement, text)),
        SAFE,
        "Choose the current accelerator, else the CPU, in one statement (`torch.accelerator.current_accelerator`)",
    )


def _single_assignment(block: cst.BaseSuite) -> tuple[str | None, str | None]:
    body = getattr(block, "body", ())
    if isinstance(block, cst.IndentedBlock) and len(body) == 1:
        return _single_assignment_line(body[0])
    if isinstance(block, cst.SimpleStatementSuite) and len(body) == 1:
        return _assignment(body[0])
    return None, None


def _single_assignment_line(statement: cst.CSTNode) -> tuple[str | None, str | None]:
    if isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1:
        return _assignment(statement.body[0])
    return None, None


def _assignment(small: cst.CSTNode) -> tuple[str | None, str | None]:
    if not (isinstance(small, cst.Assign) and len(small.targets) == 1):
        return None, None
    target = small.targets[0].target
    if not isinstance(target, cst.Name):
        return None, None
    value = normalise(cst.Module([]).code_for_node(small.value))
    return target.value, value


def _previous(statement: cst.CSTNode, fx: FixContext) -> cst.CSTNode | None:
    block = fx.source.parent(statement)
    body = list(getattr(block, "body", ()))
    if statement not in body:
        return None
    index = body.index(statement)
    return body[index - 1] if index else None


# ---- legacy tensor types: torch.cuda.FloatTensor ... ------------------------------------------------
LEGACY_TYPES = {
    "FloatTensor": "float32",
    "DoubleTensor": "float64",
    "HalfTensor": "float16",
    "BFloat16Tensor": "bfloat16",
    "LongTensor": "int64",
    "IntTensor": "int32",
    "ShortTensor": "int16",
    "ByteTensor": "uint8",
    "CharTensor": "int8",
    "BoolTensor": "bool",
}


def legacy_type(node: cst.Attribute, fx: FixContext) -> Plan | None:
    """`x.type(torch.cuda.FloatTensor)` -> `x.to(DEVICE, torch.float32)` (unsafe: on an nn.Module,
    `.type()` cast integer buffers too);
    `torch.cuda.FloatTensor(2, 3)` -> `torch.empty(2, 3, dtype=torch.float32, device=DEVICE)`;
    `torch.cuda.FloatTensor([1.0, 2.0])` -> `torch.tensor([...], dtype=torch.float32, device=DEVICE)`.
    On CUDA the constructors give the tensor the legacy type gave (same dtype, the current CUDA
    device)."""
    if not normalise(fx.source.text(node.value)).endswith("cuda") or fx.flavour.name == "xla":
        return None
    torch, imports = fx.torch()
    dtype = f"{torch}.{LEGACY_TYPES[node.attr.value]}"
    if fx.flavour.name == "neuron":
        device, device_edits = '"neuron"', ()
    else:
        device, device_edits = fx.device(node)
    parent = fx.source.parent(node)
    call = fx.source.parent(parent) if isinstance(parent, cst.Arg) else None
    if (
        isinstance(call, cst.Call)
        and isinstance(call.func, cst.Attribute)
        and call.func.attr.value == "type"
        and len(call.args) == 1
        and call.args[0].keyword is None
    ):
        span, end = fx.source.span(call.func.attr), fx.source.span(call)
        edit = Edit(span.line, span.column, end.end_line, end.end_column, f"to({device}, {dtype})")
        return Plan(
            (*imports, *device_edits, edit),
            UNSAFE,
            f"Use `.to({device}, {dtype})`; on a module, `.type()` also cast integer buffers, `.to()` does not",
        )
    if isinstance(parent, cst.Call) and parent.func is node and parent.args:
        args = parent.args
        if any(a.star or a.keyword is not None for a in args):
            return None
        texts = [fx.source.text(a.value) for a in args]
        if len(args) == 1 and isinstance(args[0].value, (cst.List, cst.Tuple)):
            text = f"{torch}.tensor({texts[0]}, dtype={dtype}, device={device})"
        elif all(isinstance(a.value, cst.Integer) for a in args):
            text = f"{torch}.empty({', '.join(texts)}, dtype={dtype}, device={device})"
        else:
            return None  # a name may be a size, a shape or data: a reviewer decides
        return Plan(
            (*imports, *device_edits, fx.source.replace(parent, text)),
            SAFE,
            "Create the tensor with its dtype and the device (the legacy constructor's values)",
        )
    return None


# ---- 'cuda' values ---------------------------------------------------------------------------------
def literal(node: cst.CSTNode, fx: FixContext) -> Plan | None:
    flavour = fx.flavour.name
    if flavour in ("neuron", "xla"):
        new = _renamed(node, fx, flavour)
        if new is None:
            return None
        imports = fx.module("torch_xla")[1] if flavour == "xla" else ()
        return Plan((*imports, fx.source.replace(node, new)), SAFE, f"Use the {flavour} device")
    name, edits = fx.device(node)
    parent = fx.source.parent(node)
    grand = fx.source.parent(parent) if parent is not None else None
    value = fx.source.text(node)
    torch_text = fx.source.module_alias("torch") or "torch"
    plain = isinstance(node, cst.SimpleString) and node.evaluated_value == "cuda"
    if plain and isinstance(parent, cst.Arg) and isinstance(grand, cst.Call):
        first = grand.args and grand.args[0] is parent and parent.keyword is None
        if first and last_name(grand.func) == "to":
            return Plan((*edits, fx.source.replace(node, name)), SAFE, f"Use the module's device `{name}`")
        if first and len(grand.args) == 1 and normalise(fx.source.text(grand.func)) == f"{torch_text}.device":
            return Plan((*edits, fx.source.replace(grand, name)), SAFE, f"Use the module's device `{name}`")
    if plain:
        return Plan((*edits, fx.source.replace(node, f"{name}.type")), SAFE, f"Use the type of `{name}`")
    new = _formatted(node, value, f"{name}.type")
    if new is None:
        return None
    return Plan((*edits, fx.source.replace(node, new)), SAFE, f"Use the type of `{name}`")


def _renamed(node: cst.CSTNode, fx: FixContext, device: str) -> str | None:
    """The literal with `cuda` renamed (quotes and prefix kept)."""
    if isinstance(node, cst.SimpleString):
        match = _CUDA_LITERAL.match(fx.source.text(node))
        if match is None:
            return None
        return f"{match['prefix']}{match['quote']}{device}{match['rest']}{match['quote']}"
    text = fx.source.text(node)
    if (
        isinstance(node, cst.FormattedString)
        and node.parts
        and isinstance(node.parts[0], cst.FormattedStringText)
    ):
        if node.parts[0].value.startswith("cuda"):
            start = text.index(node.start) + len(node.start)
            return text[:start] + device + text[start + 4 :]
    return None


def _formatted(node: cst.CSTNode, text: str, expr: str) -> str | None:
    """`"cuda:0"` -> `f"{DEVICE.type}:0"`; `f"cuda:{rank}"` -> `f"{DEVICE.type}:{rank}"`."""
    if isinstance(node, cst.SimpleString):
        match = _CUDA_LITERAL.match(text)
        if match is None or "b" in match["prefix"].lower() or "\\" in match["rest"]:
            return None
        rest = match["rest"].replace("{", "{{").replace("}", "}}")
        prefix = "r" if match["prefix"].lower() == "r" else ""
        return f"{prefix}f{match['quote']}{{{expr}}}{rest}{match['quote']}"
    if (
        isinstance(node, cst.FormattedString)
        and node.parts
        and isinstance(node.parts[0], cst.FormattedStringText)
    ):
        if node.parts[0].value.startswith("cuda") and '"' not in expr:
            start = text.index(node.start) + len(node.start)
            return text[:start] + "{" + expr + "}" + text[start + 4 :]
    return None


# ---- .cuda() ---------------------------------------------------------------------------------------
_CARRIED = ("non_blocking", "memory_format")


def dot_cuda(call: cst.Call, fx: FixContext) -> Plan | None:
    assert isinstance(call.func, cst.Attribute)
    attr = fx.source.span(call.func.attr)
    end = fx.source.span(call)
    carried = []
    ordinal: cst.BaseExpression | None = None
    for arg in call.args:
        if arg.star:
            return None
        if arg.keyword is None and ordinal is None and not carried:
            ordinal = arg.value
        elif arg.keyword is not None and arg.keyword.value == "device" and ordinal is None:
            ordinal = arg.value
        elif arg.keyword is not None and arg.keyword.value in _CARRIED:
            carried.append(f"{arg.keyword.value}={fx.source.text(arg.value)}")
        else:
            return None
    safety = SAFE
    edits: tuple[Edit, ...] = ()
    flavour = fx.flavour.name
    if flavour == "neuron":
        target = '"neuron"'
    else:
        name, edits = fx.device(call)
        target = name
    if ordinal is not None:
        if isinstance(ordinal, cst.Integer):
            target = (
                f'"neuron:{ordinal.value}"'
                if flavour == "neuron"
                else f'f"{{{target}.type}}:{ordinal.value}"'
            )
        else:
            # `.cuda(rank)`: the ordinal may be an int or a device; a reviewer decides.
            torch, more = fx.torch()
            edits = (*edits, *more)
            base = '"neuron"' if flavour == "neuron" else f"{target}.type"
            target = f"{torch}.device({base}, {fx.source.text(ordinal)})"
            safety = UNSAFE
    text = "to(" + ", ".join([target, *carried]) + ")"
    edit = Edit(attr.line, attr.column, end.end_line, end.end_column, text)
    return Plan((*edits, edit), safety, f"Replace `.cuda()` with `.{text}`")
