"""Keeps the name table of each scope current while the walk goes: imports, aliases, constants, loops.

The model is flow-insensitive within a scope (the last binding seen wins) with three exceptions
for common idioms: `x = None` after a failed optional import keeps the import, loop and `with`
targets rebind their names, and names declared `global` bind in the module scope.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import libcst as cst

from neuronlint.neuron_packages import neuron_module
from neuronlint.static.calls import arg_value, is_true, kwarg, name_of
from neuronlint.static.context import (
    DRAWN,
    EMPTY_LIST,
    HOST_LIBRARIES,
    PREPARE_FUNCTION,
    PYTHON_REDUCTIONS,
    SITE_DEVICE_LAYER,
    SITE_HOST,
    SITE_STEP,
    SITE_TEST,
    SIZE,
    TENSOR_LIST,
    Binding,
    FileContext,
    Scope,
    host_by_name,
)
from neuronlint.static.extension_names import names_extension
from neuronlint.static.host_returns import IN_PLACE_CONVERSIONS
from neuronlint.static.module_names import names_module
from neuronlint.static.nodes import children_of
from neuronlint.static.registry import Checker, on
from neuronlint.static.tensor_returns import WHOLE


def dotted(node: cst.CSTNode | None) -> str:
    """'a.b.c' for a Name/Attribute chain as written in an import."""
    if type(node) is cst.Name:
        return node.value
    if type(node) is cst.Attribute:
        return f"{dotted(node.value)}.{node.attr.value}"
    return ""


def absolute_module(node: cst.ImportFrom, ctx: FileContext) -> str:
    """Resolve `from ..x import y` against this file's package; '' if it climbs above the scan root."""
    name = dotted(node.module) if node.module else ""
    level = len(node.relative)
    if not level:
        return name
    package = ctx.module_name.split(".")
    is_package = ctx.path.endswith("__init__.py")
    base = package if is_package else package[:-1]
    if level - 1 > len(base):
        return ""
    base = base[: len(base) - (level - 1)]
    return ".".join([*base, name] if name else base)


# Methods and builtins whose result is a host number read from a tensor value.
_READ_METHODS = frozenset({"item", "tolist"})
_NUMBER_BUILTINS = frozenset({"int", "float", "bool"})
# Reductions that `int(...)` turns into a host number: `int(lengths.max())`.
_REDUCTIONS = frozenset(
    {"item", "max", "min", "sum", "prod", "argmax", "argmin", "count_nonzero", "amax", "amin"}
)


def _host_read(value: cst.BaseExpression, ctx: FileContext | None = None) -> str | None:
    """'<tensor>.item()' for `t.item()`, 'int(<tensor>)' for `int(t.max())` and, given the context,
    for `int(self.ptr_queue)` of a known device tensor: one level deep, no subtree walk."""
    if type(value) is cst.Call:
        func = value.func
        if type(func) is cst.Attribute and func.attr.value in _READ_METHODS and not value.args:
            return f"<tensor>.{func.attr.value}()"
        if type(func) is cst.Name and func.value in _NUMBER_BUILTINS and len(value.args) == 1:
            argument = value.args[0].value
            if type(argument) is cst.Call and type(argument.func) is cst.Attribute:
                if argument.func.attr.value in _REDUCTIONS:
                    return f"{func.value}(<tensor>)"
            elif ctx is not None and type(argument) is cst.Call:
                return _reduced_read(argument, ctx)  # `int(max(0, length.item()))`
            elif ctx is not None and type(argument) is cst.BinaryOperation:
                # `int(batch_size - torch.sum(valid).item())`: arithmetic on a read is a read
                return _derived_read(argument, ctx)
            elif (
                ctx is not None
                and type(argument) in (cst.Name, cst.Attribute)
                and ctx.is_tensor(argument)
                and not ctx.is_host_value(argument)
            ):
                return f"{func.value}(<tensor>)"
    return None


def _reads_host_value(call: cst.BaseExpression, ctx: FileContext) -> bool:
    """`c.item()` where c is already on the host: a Python number, but not read from the device."""
    if type(call) is not cst.Call:
        return False
    func = call.func
    if type(func) is cst.Attribute:
        return ctx.is_host_value(func.value)
    if not call.args:
        return False
    argument = call.args[0].value
    if type(argument) is cst.Call and (ctx.qualname(argument.func) or "").startswith("math."):
        return True  # `int(math.prod(shape))`: the math module's functions work on Python numbers
    if (
        type(argument) is cst.Call
        and type(argument.func) is cst.Attribute
        and argument.func.attr.value in _REDUCTIONS
    ):
        # `int(self.ptr.item())`: the number `.item()` gives is on the host, but it was read from
        # the tensor it was called on, which decides
        return ctx.is_host_value(argument.func.value)
    return ctx.is_host_value(argument)


# Builtins that reduce a list of numbers to one of them (or their total): still a number read.
_REDUCING_BUILTINS = frozenset({"max", "min", "sum"})


def _reduced_read(call: cst.Call, ctx: FileContext) -> str | None:
    """`max(sizes)` / `max(n, m)` after `sizes = [x.item() for x in gathered]`, `max(0, t.item())`: a
    number read from a tensor value, as its operands are."""
    func = call.func
    if (
        type(func) is not cst.Name
        or func.value not in _REDUCING_BUILTINS
        or ctx.lookup(func.value) is not None
    ):
        return None
    for arg in call.args:
        if arg.keyword is not None:
            continue
        if type(arg.value) is cst.Name:
            binding = ctx.lookup(arg.value.value)
            if binding is not None and binding[0] == "read":
                return binding[1]
        elif (read := _host_read(arg.value)) is not None:
            return read  # `max(0, length.item())`
    return None


def _derived_read(value: cst.BaseExpression, ctx: FileContext) -> str | None:
    """`end = start + k.shape[2]` after `start = t.max().item()`, or `int(t.max()) + 1`: arithmetic on a
    host read is a host read too; not with a tensor operand (`main_loss / n` after `n =
    count.item()` is still a tensor)."""
    found = None
    while type(value) is cst.BinaryOperation:
        for side in (value.left, value.right):
            if type(side) is cst.Name:
                binding = ctx.lookup(side.value)
                if (binding is not None and binding[0] == "tensor") or (
                    _LOSS_NAME.match(side.value) and (binding is None or binding[0] != "read")
                ):
                    return None  # a tensor operand, or a loss not yet read (`main_loss / n`)
                if binding is not None and binding[0] == "read":
                    found = found or binding[1]
            elif type(side) is cst.Call and found is None:
                found = _host_read(side)
        value = value.left
    return found


# Methods and torch functions that return a boolean tensor.
_MASK_METHODS = frozenset(
    {
        "bool",
        "eq",
        "ne",
        "gt",
        "lt",
        "ge",
        "le",
        "logical_not",
        "logical_and",
        "logical_or",
        "logical_xor",
        "isnan",
        "isinf",
        "isfinite",
        "isin",
        "bernoulli",
    }
)
_ORDERING = (cst.Equal, cst.NotEqual, cst.LessThan, cst.GreaterThan, cst.LessThanEqual, cst.GreaterThanEqual)
_TEXT = (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString)


def is_mask(value: cst.BaseExpression, ctx: FileContext) -> bool:
    """Whether a value is a boolean mask: a comparison, `~m`, `a & b` of masks, `.bool()`, `x.eq(y)`."""
    if type(value) is cst.Comparison:
        operands = [value.left, *(c.comparator for c in value.comparisons)]
        return all(isinstance(c.operator, _ORDERING) for c in value.comparisons) and not any(
            isinstance(o, _TEXT) for o in operands
        )
    if type(value) is cst.UnaryOperation and type(value.operator) is cst.BitInvert:
        return True
    if type(value) is cst.Subscript:
        return _names_mask(value.value, ctx)  # `per_image = candidate_inds[i]`: a row of a mask is one
    if type(value) is cst.BinaryOperation and type(value.operator) in (cst.BitAnd, cst.BitOr):
        return is_mask(value.left, ctx) or is_mask(value.right, ctx) or _names_mask(value.left, ctx)
    if type(value) is cst.Call:
        func = value.func
        if _keeps_mask(value, ctx):
            return True
        if type(func) is cst.Attribute and func.attr.value in ("any", "all") and value.args:
            return is_mask(func.value, ctx)  # `(x[:, 5:6] == classes).any(1)`: a mask per row
        if type(func) is cst.Attribute and func.attr.value in _MASK_METHODS:
            qualname = ctx.qualname(func)
            if qualname is None:
                return not ctx.is_numpy(func.value)
            return qualname.startswith("torch.")
        for arg in value.args:  # torch.zeros(n, dtype=torch.bool), torch.ones_like(x, dtype=torch.bool)
            if arg.keyword is not None and arg.keyword.value == "dtype":
                return ctx.qualname(arg.value) == "torch.bool" and (ctx.qualname(func) or "").startswith(
                    "torch."
                )
    return False


# Methods and torch functions that move a mask's elements around but keep it a boolean mask.
_MASK_KEEPING = frozenset(
    {
        "roll",
        "flip",
        "scatter",
        "scatter_",
        "clone",
        "contiguous",
        "view",
        "reshape",
        "expand",
        "expand_as",
        "unsqueeze",
        "squeeze",
        "transpose",
        "permute",
        "detach",
        "flatten",
        "repeat",
        "narrow",
        "gather",
        "index_select",
        "tril",
        "triu",
    }
)


# Functions joining tensors: a mask when every joined tensor is one (`torch.stack((j, k, l))`).
_JOINS = frozenset({"torch.stack", "torch.cat", "torch.concat"})
# Factories shaped and typed like their argument: a mask's `ones_like` is a mask (all true).
_LIKE = frozenset({"torch.ones_like", "torch.zeros_like"})


def _keeps_mask(value: cst.Call, ctx: FileContext) -> bool:
    """`m.roll(1, -1)`, `torch.roll(m, 1, -1)`, `m.scatter(1, idx, m)`, `(x >= t).squeeze()`: still a
    mask when what they move is one;
    `torch.stack((torch.ones_like(j), j, k))` of masks is one too."""
    func = value.func
    qualname = ctx.qualname(func)
    if qualname in _JOINS and value.args and type(joined := value.args[0].value) in (cst.Tuple, cst.List):
        return bool(joined.elements) and all(_mask_operand(e.value, ctx) for e in joined.elements)
    if type(func) is not cst.Attribute or func.attr.value not in _MASK_KEEPING:
        return False
    qualname = ctx.qualname(func)
    if qualname is None:
        source = func.value
    elif qualname == f"torch.{func.attr.value}" and value.args:
        source = value.args[0].value
    else:
        return False
    # `(scores >= t).squeeze()`: a comparison (or any mask expression) reshaped is still a mask
    return _names_mask(source, ctx) or is_mask(source, ctx)


def _unpacks_mask(value: cst.BaseExpression, ctx: FileContext) -> bool:
    """A mask unpacked row by row: `m`, `m.T` or `(a & b).T`, not a comprehension or a call's tuple."""
    if type(value) is cst.Attribute and value.attr.value == "T":
        value = value.value
    return _mask_value(value, ctx)


def _mask_operand(node: cst.BaseExpression, ctx: FileContext) -> bool:
    """A mask name, a mask expression, or `torch.ones_like(m)` of one."""
    if type(node) is cst.Call and ctx.qualname(node.func) in _LIKE and len(node.args) == 1:
        return _names_mask(node.args[0].value, ctx)
    return _mask_value(node, ctx)


def _mask_value(node: cst.BaseExpression, ctx: FileContext) -> bool:
    """A name bound to a mask, or an expression that makes one (a name is known by its binding only)."""
    if type(node) is cst.Subscript:
        return _names_mask(node.value, ctx)  # `xc[xi]`: the rows of a mask are a mask
    return _names_mask(node, ctx) or (type(node) is not cst.Name and is_mask(node, ctx))


def _names_mask(node: cst.BaseExpression, ctx: FileContext) -> bool:
    if type(node) is not cst.Name:
        return False
    binding = ctx.lookup(node.value)
    return binding is not None and binding[0] == "mask"


def _bind_value(target: cst.BaseExpression, value: cst.BaseExpression | None, ctx: FileContext) -> None:
    """Record what an assignment gives a name. Unpacking binds element-wise when the value is a tuple."""
    if type(target) in (cst.Tuple, cst.List):
        elements = [e.value for e in target.elements]
        values = [e.value for e in value.elements] if type(value) in (cst.Tuple, cst.List) else None
        if (
            values is not None
            and len(values) == len(elements)
            and not any(type(e) is cst.StarredElement for e in (*target.elements, *value.elements))
        ):
            for element, item in zip(elements, values, strict=True):
                _bind_value(element, item, ctx)
            return
        if (
            type(value) is cst.Call
            and type(elements[0]) is cst.Name
            and (loaded := loaded_extension(value, ctx)) is not None
        ):
            # `awq_ext, msg = try_import("awq_ext")`: the module, and what the helper says about it
            ctx.extension_modules.add(loaded)
            ctx.bind(elements[0].value, ("module", loaded))
            for element in elements[1:]:
                _shadow(element, ctx)
            return
        kind = _host_kind(value, ctx) if value is not None else None
        if kind is None and value is not None and _unpacks_mask(value, ctx):
            kind = ("mask", "")  # `j, k = ((gxy % 1 < g) & (gxy > 1)).T`: each row of a mask is one
        unpacked = (
            type(value) is cst.Call
            and kind is None
            and not any(type(e) is cst.StarredElement for e in target.elements)
        )
        # `preds, refs = accelerator.gather_for_metrics((preds, refs))`: the tensors given, gathered
        gathered = _gathered(value, ctx) if unpacked else None
        if gathered is not None and len(gathered) != len(elements):
            gathered = None
        if unpacked and (qualname := ctx.qualname(value.func)) is not None and _suppresses(qualname, ctx):
            kind = ("tensor", qualname.rpartition(".")[2])  # `dets, keep = nms(...)` (MMCV): both kept boxes
        unique = _unpacked_unique(value, len(elements), ctx) if unpacked and kind is None else ()
        for position, element in enumerate(elements):
            if position in unique and type(element) is cst.Name:
                ctx.bind(element.value, ("tensor", "unique"))
            elif kind is not None and type(element) is cst.Name:
                ctx.bind(element.value, kind)
            elif gathered and gathered[position] and type(element) is cst.Name:
                ctx.bind(element.value, ("tensor", ""))
            elif unpacked and type(element) is cst.Name and _returns_nki_kernel(value, position, ctx):
                ctx.bind(element.value, ("kernel", "nki"))  # `fwd, bwd, nl = get_flash_attn_kernels()`
            elif unpacked and type(element) is cst.Name and (returned := ctx.returned(value, position)):
                ctx.bind(element.value, returned)  # `ppl, loss = evaluate(model)`: a helper's tensors
            elif unpacked and type(element) is cst.Name and _computed_loss(element.value, value, ctx):
                ctx.bind(element.value, ("tensor", ""))  # `logits, loss = model(x, y)`
            else:
                _shadow(element, ctx)
                _note_self_attribute(element, kind is not None, ctx)
        return
    if (
        type(target) is cst.Attribute
        and type(target.value) is cst.Name
        and target.value.value == "self"
        and value is not None
    ):
        kind = _kind_of(value, ctx)
        if kind is not None and kind[0] == "module":
            ctx.bind_instance(target.attr.value, kind)  # `self.xm = xm`: `self.xm.mark_step()` is xm's
        # A fill without a device (`self.lengths = torch.zeros(batch)`) is state its object is
        # placed with: a module's `.to(device)` moves its buffers, a cache is moved by its owner.
        host = kind is not None and kind[0] in _HOST_BINDINGS and not ctx.cpu_fill(value)
        ctx.note_instance_value(target.attr.value, host)
        return
    if type(target) is cst.Subscript and type(target.value) is cst.Name and value is not None:
        _fill_dict(target.value.value, value, ctx)
        return
    if type(target) is not cst.Name or value is None:
        return
    name = target.value
    if (
        type(value) is cst.IfExp
        and {ctx.qualname(value.body), ctx.qualname(value.orelse)} <= _EXTENSION_CLASSES
    ):
        # `ext = CUDAExtension if with_cuda else CppExtension`: a builder either way (torchsparse)
        ctx.bind(name, (EXTENSION_BUILDER, ctx.qualname(value.body)))
        return
    kind = _kind_of(value, ctx)
    if (
        kind is None
        and type(value) is cst.Call
        and ctx.mentions(("nki",))
        and _returns_nki_kernel(value, WHOLE, ctx)
    ):
        kind = ("kernel", "nki")  # `kernel = make_kernel()`, a getter returning its `@nki.jit` function
    if kind is None and type(value) is cst.Call:
        kind = ctx.returned(value, WHOLE)  # `loss = compute_loss(model, batch)`
    if kind is None and _computed_loss(name, value, ctx):
        kind = ("tensor", "")
    if kind is None and type(value) is cst.Call and type(value.func) is cst.Name:
        if (module := ctx.module_factories.get(value.func.value)) is not None:
            kind = ("module", module)  # `xm = _load_xla_model()`: the module the helper imports
    if kind is None and type(value) is cst.Call and _moved_tensor(name, value, ctx):
        kind = ("tensor", "")  # `x = x.to(device)`, `y = batch["labels"].cuda()`
    if kind is None and type(value) is cst.Call and _gathered(value, ctx) == [True]:
        kind = ("tensor", "")  # `loss = accelerator.gather(loss)`
    if kind is not None:
        if kind[0] in _HOST_BINDINGS and _device_branch_copy(name, value, ctx):
            return  # `if device == "mps": x = x.to("cpu")`: on the other devices x stays where it was
        if kind[0] == "module" and _rebinds_in_branch(name, kind, ctx):
            # `amp_autocast = suppress` / `if use_amp: amp_autocast = torch.cuda.amp.autocast`: after
            # the `if` the name holds either value; the API is reported where it is assigned. Between
            # `CppExtension` and `CUDAExtension` it holds a builder either way (EXTENSION_BUILDER:
            # the extension it builds is known by name, its calls are no API's finding).
            previous = ctx.scope.bindings.get(name)
            either = {kind[1], previous[1] if previous else None} <= _EXTENSION_CLASSES
            ctx.bind(name, (EXTENSION_BUILDER, kind[1]) if either else ("other", None))
            return
        if kind[0] == "tensor":
            _loop_carried(name, kind, ctx)
        if kind[0] == "str" and _in_other_branch(ctx):
            previous = ctx.scope.bindings.get(name)
            if previous is not None and previous[0] == "str":
                # `if use_cuda: device = "cuda"` / `else: device = "cpu"`: after the `if`, either
                kind = ("str", tuple(dict.fromkeys((*previous[1], *kind[1]))))
        ctx.bind(name, kind)
        return
    if type(value) is cst.List and not value.elements:
        ctx.bind(name, EMPTY_LIST)  # shadows like any other value; `.append` under an `if` may filter it
        return
    if (type(value) is cst.Dict and not value.elements) or (
        type(value) is cst.Call
        and type(value.func) is cst.Name
        and value.func.value == "dict"
        and not value.args
        and ctx.lookup("dict") is None
    ):
        ctx.bind(name, EMPTY_DICT)  # `out = {}`: filled entry by entry (`out[key] = value.cpu()`)
        return
    previous = ctx.lookup(name)
    if previous is None:
        return
    if previous[0] == "module" and type(value) is cst.Name and value.value == "None":
        return  # `except ImportError: np = None`: code that runs uses the import
    if previous[0] in _KEPT_KINDS and _transforms_in_branch(name, value, ctx):
        return  # `if classify: pred = apply_classifier(pred, ...)`: without it, pred is as it was
    # Any other assignment shadows whatever the name meant before.
    ctx.bind(name, ("other", None))


def loop_key(loop: cst.While, name: str, counted: bool) -> str:
    """The key of the finding a `while` test on `name` waits under (checkers/dynamic_shape.py):
    on its row count (`counted`), or on its value."""
    return f"loop:{id(loop)}:{name}:{'rows' if counted else 'value'}"


def _loop_carried(name: str, kind: Binding, ctx: FileContext) -> None:
    """An assignment inside a `while` loop whose test reads `name`: a device tensor decides the test
    by its value (`finished = unfinished.max() == 0` for `while not finished:`), a tensor the data
    sized decides it by its size (`order = order[ids + 1]` for `while order.numel() > 0:`)."""
    for ancestor in reversed(ctx.parents):
        if type(ancestor) is cst.While:
            ctx.release(
                loop_key(ancestor, name, counted=False), read=f"{name}, a tensor assigned in the loop"
            )
            if kind[1]:
                ctx.release(
                    loop_key(ancestor, name, counted=True), read=f"{name}, from {kind[1]} in the loop"
                )
        elif type(ancestor) in (cst.FunctionDef, cst.ClassDef, cst.Lambda):
            return


def _fill_dict(name: str, value: cst.BaseExpression, ctx: FileContext) -> None:
    """`out[key] = value`: a dict made empty (`out = {}`) and filled only with host values
    (`out[k] = v.cpu()`, the entries of a checkpoint loaded to the CPU) holds host data; one entry
    that is not a host value makes it untracked again."""
    previous = ctx.lookup(name)
    if previous is None or not (previous == EMPTY_DICT or previous == _FILLED_HOST_DICT):
        return  # a dict known as host data otherwise (`mask_data = self._generate_masks(image)`) stays so
    if ctx.is_host_value(value):
        ctx.bind(name, _FILLED_HOST_DICT)
    else:
        ctx.bind(name, ("other", None))


# Bindings of host values: an instance attribute assigned only these holds host data.
_HOST_BINDINGS = frozenset({"numpy", "host"})


def _note_self_attribute(target: cst.BaseExpression, host: bool, ctx: FileContext) -> None:
    """`self.x = ...` in an unpacking or an augmented assignment: record whether it is host data."""
    if type(target) is cst.Attribute and type(target.value) is cst.Name and target.value.value == "self":
        ctx.note_instance_value(target.attr.value, host)


EXTENSION_BUILDER = "extension-builder"
_EXTENSION_CLASSES = frozenset(
    {"torch.utils.cpp_extension.CppExtension", "torch.utils.cpp_extension.CUDAExtension"}
)


def _rebinds_in_branch(name: str, kind: Binding, ctx: FileContext) -> bool:
    """An API assigned under an `if` (or `try`) of the function to a name this scope already bound
    to something else: the name may hold either value after it, so its uses are no API's. Only
    torch's own APIs (reported where they are assigned); a name that may hold a CUDA-only library's
    class (`InternRMSNorm = FusedRMSNorm` under `try`) keeps its call sites, as the library's rule
    asks."""
    if not kind[1].startswith("torch."):
        return False
    previous = ctx.scope.bindings.get(name)
    if previous is None or previous == kind:
        return False
    for node in reversed(ctx.parents):
        if type(node) in (cst.FunctionDef, cst.ClassDef, cst.Lambda):
            return False
        if type(node) in (cst.If, cst.Else, cst.Try, cst.ExceptHandler):
            return True
    return False


def _old_torch_fallback(node: cst.ClassDef, ctx: FileContext) -> bool:
    """`try: autocast = torch.cuda.amp.autocast` / `except: class autocast: ...` (RAFT): a stand-in
    for a torch that lacks the API. Every torch that has it takes the `try` path, so the name keeps
    the API and its uses stay its uses."""
    binding = ctx.lookup(node.name.value)
    if binding is None or binding[0] != "module" or not binding[1].startswith("torch."):
        return False
    for parent in reversed(ctx.parents):
        if parent is node or type(parent) is cst.IndentedBlock:
            continue
        return type(parent) is cst.ExceptHandler
    return False


_DEVICE_NAMES = frozenset({"cpu", "cuda", "mps", "xla", "xpu", "npu", "hpu", "neuron", "meta"})


def _device_test(test: cst.BaseExpression) -> bool:
    """`device == "mps"`, `device.type != "cuda"`, `args.device in ("cpu", "mps")`: a test on the
    device type (or a name about the device) against a device-type literal."""
    if type(test) is cst.BooleanOperation:
        return _device_test(test.left) or _device_test(test.right)
    if type(test) is not cst.Comparison:
        return False
    operands = [test.left, *(c.comparator for c in test.comparisons)]
    literals = [
        n.value[1:-1]
        for o in operands
        for n in ([o] if type(o) is cst.SimpleString else [e.value for e in getattr(o, "elements", ())])
        if type(n) is cst.SimpleString
    ]
    return any(v.strip("'\"") in _DEVICE_NAMES for v in literals)


def _device_branch_copy(name: str, value: cst.BaseExpression, ctx: FileContext) -> bool:
    """A name rebound to a host copy of its own value in the body of an `if` on the device type
    (FastChat: `if device == "mps": last_token_logits = last_token_logits.float().to("cpu")`): the
    copy is made on that device only, and after the `if` the name may hold the device value."""
    mentions = False
    stack: list[cst.CSTNode] = [value]
    while stack and not mentions:
        node = stack.pop()
        if type(node) is cst.Name:
            mentions = node.value == name
        elif type(node) is cst.Attribute:
            stack.append(node.value)
        elif type(node) is cst.Call:
            stack.append(node.func)
    if not mentions:
        return False
    for node in reversed(ctx.parents):
        if type(node) in (cst.FunctionDef, cst.ClassDef, cst.Lambda, cst.Else):
            return False
        if type(node) is cst.If:
            return _device_test(node.test)
    return False


# Bindings an unknown transform of the name's own value under an `if` leaves possible: device
# values (their reads stay findings) and host data (`mask_data = self.postprocess(mask_data)` under
# `if`: its reads stay no host syncs). "per-image": PER_IMAGE below.
_KEPT_KINDS = frozenset({"tensor", "mask", "per-image", "host", "numpy"})


def _transforms_in_branch(name: str, value: cst.BaseExpression, ctx: FileContext) -> bool:
    """`pred = apply_classifier(pred, model, img)` in the body of an `if` of the function: an
    unknown call given the name's own value, under a condition. After the `if` the name holds the
    old value on the path that skipped it, so what the old value says of its reads stays true."""
    if type(value) is not cst.Call or not any(
        type(arg.value) is cst.Name and arg.value.value == name for arg in value.args
    ):
        return False
    for node in reversed(ctx.parents):
        if type(node) in (cst.FunctionDef, cst.ClassDef, cst.Lambda, cst.For, cst.While, cst.Else):
            return False
        if type(node) is cst.If:
            return True
    return False


def _in_other_branch(ctx: FileContext) -> bool:
    """In an `else:` or `elif` block (of the innermost function): the values assigned before the
    `if` or in its body may be the ones that hold after it."""
    for node in reversed(ctx.parents):
        if type(node) in (cst.FunctionDef, cst.ClassDef, cst.Lambda):
            return False
        if type(node) is cst.Else:
            return True
        if type(node) is cst.If:
            parent_if = _enclosing_if(ctx, node)
            if parent_if is not None and parent_if.orelse is node:
                return True
    return False


def _enclosing_if(ctx: FileContext, node: cst.If) -> cst.If | None:
    index = next((i for i in range(len(ctx.parents) - 1, -1, -1) if ctx.parents[i] is node), 0)
    parent = ctx.parents[index - 1] if index > 0 else None
    return parent if type(parent) is cst.If else None


_STRING_VALUES = (cst.SimpleString, cst.FormattedString, cst.ConcatenatedString, cst.IfExp)
_COPIED_KINDS = frozenset(
    {"module", "str", "numpy", "host", "read", "python", "mask", "tensor", "kernel", SIZE, DRAWN}
)


def _kind_of(value: cst.BaseExpression, ctx: FileContext) -> Binding | None:
    """What a value is, as a binding; None for anything we do not track. Dispatches on the node
    type first: this runs on every assignment."""
    tp = type(value)
    if tp is cst.Name:
        found = ctx.lookup(value.value)  # `x = y` copies what y is
        if found is not None and found[0] == "module" and _names_dtype(found[1], ctx):
            return ("other", None)
        if ctx.pending_read(value) is not None:
            return found  # `best = loss` of a helper's result not known yet
        return found if found is not None and found[0] in _COPIED_KINDS else None
    if tp is cst.Attribute:
        qualified = ctx.qualname(value)
        if qualified:
            # `dtype = torch.float64` chooses the dtype where it is written (reported there); the
            # name it is kept in is a variable, not an alias whose every use is a new choice
            return ("other", None) if _names_dtype(qualified, ctx) else ("module", qualified)
        if ctx.is_config_value(value):
            return ("python", "")  # `mask = self.config.token_type_mask`: configuration is Python data
        return _value_kind(value, ctx)
    if tp is cst.IfExp:
        chosen, other = _kind_of(value.body, ctx), _kind_of(value.orelse, ctx)
        if chosen is not None and chosen[0] == "kernel" and other == chosen:
            return chosen  # `fx = _gemma_forward if gemma else _forward`: a kernel either way (unsloth)
        for kind in (chosen, other):
            if kind is not None and kind[0] == "read":
                # `n = lengths.max().item() if not max_len else max_len`: read from a tensor on one
                # path, so what it sizes depends on the data there (audiocraft's length_to_mask)
                return kind
    if tp in _STRING_VALUES:
        strings = ctx.strings(value)
        return ("str", strings) if strings else None
    if (
        tp is cst.Call
        and not value.args
        and type(value.func) is cst.Attribute
        and value.func.attr.value == "load"
    ):
        if (loaded := loaded_extension(value, ctx)) is not None:
            ctx.extension_modules.add(loaded)  # `fused_adam_cuda = FusedAdamBuilder().load()`
            return ("module", loaded)
    if tp is cst.Call and value.args:
        forced = _cuda_amp_partial(value, ctx)
        if forced is None and (forced := _built_extension(value, ctx)) is not None:
            # recorded here, where the name is bound, so that every checker sees the module's
            # uses as an extension's (`ext_module.nms(...)` is also a dynamic shape)
            ctx.extension_modules.add(forced)
        if forced is not None:
            return ("module", forced)
        if _makes_nki_kernel(value, ctx):
            return ("kernel", "nki")
        if (kernel := _made_gpu_kernel(value, ctx)) is not None:
            return ("kernel", kernel)
    if tp is cst.Call or tp is cst.BinaryOperation or tp is cst.Subscript:
        if ctx.is_numpy(value):
            return ("numpy", "")
        if tp is not cst.BinaryOperation and ctx.draws_one_number(value):
            # `choice = torch.randint(0, 2, size=(1,))[0]`: a random number drawn on the CPU, the
            # idiom of `random.random()` (context.draws_one_number)
            return (DRAWN, "")
        if tp is not cst.BinaryOperation and (size := _size_of_data(value, ctx)) is not None:
            return size
        if tp is cst.Call and (reduced := _reduced_read(value, ctx)) is not None:
            return ("read", reduced)  # `max(sizes)`: one of the numbers read
        read = _derived_read(value, ctx) if tp is cst.BinaryOperation else _host_read(value, ctx)
        if read is not None:
            return ("host", "") if _reads_host_value(value, ctx) else ("read", read)
        return _value_kind(value, ctx, numpy_checked=True)
    if tp is cst.Comparison or tp is cst.UnaryOperation:
        if ctx.is_numpy(value):
            return ("numpy", "")  # `keep = series.str.lower() == name`, `m = arr > 0`: a host mask
        if tp is cst.Comparison and ctx.is_host_value(value):
            return ("host", "")  # `i = pred_cls == c` of an array the docstring names: a host mask
        if tp is cst.Comparison and _compares_reduction(value, ctx):
            return ("tensor", "")  # `needs_mask = lengths.min() < K`: one boolean, still on the device
        return _mask_kind(value, ctx) if is_mask(value, ctx) else _value_kind(value, ctx, numpy_checked=True)
    if tp in _DISPLAYS:
        if tp is cst.ListComp and (_makes_device_tensor(value.elt, ctx) or _reduces_items(value, ctx)):
            return TENSOR_LIST  # `gathered = [torch.zeros_like(t) for _ in range(world_size)]`
        if tp is cst.ListComp and (read := _host_read(value.elt)) is not None:
            # `sizes = [x.item() for x in gathered]`: numbers read from tensors (the comprehension's
            # own names are out of scope here: over host values, `for x in cpu_list`, they are host)
            return ("host", "") if ctx.is_host_value(value.for_in.iter) else ("read", read)
        if tp is cst.Tuple and (read := _read_element(value, ctx)) is not None:
            return ("read", read)  # `pad_size = (pad, *t.size()[1:])` with `pad` read from a tensor
        if ctx.is_host_value(value):
            return ("host", "")  # `out = {"boxes": boxes.cpu(), ...}`, `[p.cpu() for p in preds]`
        if (tp is cst.List or tp is cst.Tuple) and _literal_display(value):
            return ("python", "")  # `ids = [1, 2, 3]`: Python numbers (not a comprehension, which may
            # rebind a tensor's name in one branch only: `x = [str(x[i].item()) ...]`)
    return None


def _size_of_data(value: cst.Call | cst.Subscript, ctx: FileContext) -> Binding | None:
    """`n = len(keep)`, `num = boxes.shape[0]`, `k = dets.numel()` of a tensor whose size depends
    on its data: a SIZE binding. A branch on the name decides on the data; the finding sits where
    the size is read (the labels' line), so it is made here and kept until a branch releases it."""
    sized = counted_rows(value)
    if sized is None or (type(value) is cst.Call and type(value.func) is cst.Name and ctx.lookup("len")):
        return None
    op = data_dependent(sized, ctx)
    if op is None:
        return None
    key = f"size:{id(value)}"
    text = f"{ctx.code(value)}, from {op}"
    ctx.defer(key, "NL603", value, read=text)
    return (SIZE, (text, key))


def counted_rows(value: cst.BaseExpression) -> cst.BaseExpression | None:
    """The tensor whose rows `value` counts: `len(x)`, `x.numel()`, `x.nelement()`, `x.size(0)`,
    `x.shape[0]`, `x.size()[0]`; None for anything else, such as `x.size(1)` or `x.shape[-1]` (a dimension the
    data keeps) and `x.size()` (the whole shape)."""
    if type(value) is cst.Call:
        func, args = value.func, value.args
        if type(func) is cst.Name:
            return args[0].value if func.value == "len" and len(args) == 1 else None
        if type(func) is not cst.Attribute:
            return None
        method = func.attr.value
        if method in ("numel", "nelement") and not args:
            return func.value
        if method == "size" and len(args) == 1 and _is_zero(args[0].value):
            return func.value
        return None
    if type(value) is cst.Subscript and len(value.slice) == 1:
        shape, index = value.value, value.slice[0].slice
        first = type(index) is cst.Index and _is_zero(index.value)
        if type(shape) is cst.Attribute and shape.attr.value == "shape":
            return shape.value if first else None
        if type(shape) is cst.Call and type(shape.func) is cst.Attribute and shape.func.attr.value == "size":
            return shape.func.value if first and not shape.args else None  # `x.size()[0]`
    return None


def _is_zero(node: cst.BaseExpression) -> bool:
    return type(node) is cst.Integer and node.value == "0"


def _makes_device_tensor(elt: cst.BaseExpression, ctx: FileContext) -> bool:
    """`torch.zeros_like(t)`, `torch.empty(n, device=device)`: a torch function making a tensor
    that is not a host value; one moved to the GPU, `torch.ones_like(t["labels"]).cuda()`; or a
    copy of a device tensor bound to a name, `shape_tensor.clone()` (the buffers `dist.all_gather`
    fills in OpenMMLab's `collect_results_gpu`)."""
    if type(elt) is not cst.Call:
        return False
    func = elt.func
    if type(func) is cst.Attribute and func.attr.value == "clone" and type(func.value) is cst.Name:
        binding = ctx.lookup(func.value.value)
        return binding is not None and binding[0] == "tensor" and not ctx.is_host_value(func.value)
    moved = type(func) is cst.Attribute and func.attr.value == "cuda"
    return (
        (moved or (ctx.qualname(elt.func) or "").startswith("torch."))
        and ctx.is_tensor(elt)
        and not ctx.is_host_value(elt)
    )


def _reduces_items(value: cst.ListComp, ctx: FileContext) -> bool:
    """`[sum(k) for k in known]`, `[k.sum() for k in known]` over a list of device tensors: one
    reduced tensor per item, still on the device."""
    for_in = value.for_in
    if (
        for_in.inner_for_in is not None
        or type(for_in.target) is not cst.Name
        or type(for_in.iter) is not cst.Name
        or ctx.lookup(for_in.iter.value) != TENSOR_LIST
    ):
        return False
    elt, item = value.elt, for_in.target.value
    if type(elt) is not cst.Call:
        return False
    func = elt.func
    if type(func) is cst.Name:  # `sum(k)`
        return (
            len(elt.args) == 1
            and func.value in PYTHON_REDUCTIONS
            and ctx.lookup(func.value) is None
            and _names(elt.args[0].value, item)
        )
    # `k.sum()`
    return type(func) is cst.Attribute and func.attr.value in _FULL_REDUCTIONS and _names(func.value, item)


def _names(node: cst.BaseExpression, name: str) -> bool:
    return type(node) is cst.Name and node.value == name


# Whole-tensor reductions: `t.min()` without a dim is one number, still a tensor on the device.
_FULL_REDUCTIONS = frozenset({"max", "min", "sum", "mean", "amax", "amin", "all", "any", "count_nonzero"})


def _compares_reduction(value: cst.Comparison, ctx: FileContext) -> bool:
    """`lengths.min() < K`, `loss.sum() > 0`: an ordering of a whole device tensor's reduction."""
    if not all(isinstance(c.operator, _ORDERING) for c in value.comparisons):
        return False
    for side in (value.left, *(c.comparator for c in value.comparisons)):
        if (
            type(side) is cst.Call
            and not side.args
            and type(side.func) is cst.Attribute
            and side.func.attr.value in _FULL_REDUCTIONS
            and (ctx.is_tensor(side.func.value) or _names_mask(side.func.value, ctx))
            and not ctx.is_host_value(side.func.value)
        ):
            return True
    return False


def _read_element(value: cst.Tuple, ctx: FileContext) -> str | None:
    """A size tuple one of whose elements is a name holding a number read from a tensor."""
    for element in value.elements:
        if type(element) is cst.Element and type(element.value) is cst.Name:
            binding = ctx.lookup(element.value.value)
            if binding is not None and binding[0] == "read":
                return binding[1]
    return None


_DISPLAYS = (cst.Dict, cst.DictComp, cst.List, cst.ListComp, cst.Tuple)
_LITERALS = (cst.Integer, cst.Float, cst.SimpleString)


def _literal_display(node: cst.BaseExpression) -> bool:
    """A list or tuple display of number and string literals (nested ones too)."""
    if type(node) is cst.UnaryOperation:
        node = node.expression
    if isinstance(node, _LITERALS):
        return True
    if type(node) in (cst.List, cst.Tuple):
        elements = [e.value for e in node.elements if type(e) is cst.Element]
        return bool(elements) and len(elements) == len(node.elements) and all(map(_literal_display, elements))
    return False


def _names_dtype(qualified: str, ctx: FileContext) -> bool:
    """Whether a qualified name is a dtype object of the API table (`torch.float64`, `torch.long`)."""
    entry = ctx.data.api(qualified) if ctx.data is not None else None
    facts = entry.get("facts", {}) if entry is not None else {}
    return "dtype" in facts and "op" not in facts and entry.get("kind") == "name"


_AMP_DECORATORS = frozenset({"torch.amp.custom_fwd", "torch.amp.custom_bwd"})


# `torch.utils.cpp_extension.load(name, sources)` / `load_inline(name, ...)` return the compiled module.
EXTENSION_BUILDERS = frozenset({"torch.utils.cpp_extension.load", "torch.utils.cpp_extension.load_inline"})


def _builds_cuda(call: cst.Call, ctx: FileContext) -> bool:
    """A `.cu` source, `cuda_sources=` or `with_cuda=True`: the extension holds CUDA code."""
    for arg in call.args:
        keyword = arg.keyword.value if arg.keyword is not None else None
        if keyword == "cuda_sources" or (
            keyword == "with_cuda" and type(arg.value) is cst.Name and arg.value.value == "True"
        ):
            return True
    sources = arg_value(call, 1, "sources")
    return sources is not None and re.search(r"\.cuh?\b", ctx.code(sources)) is not None


# OpenMMLab's loader of compiled ops (mmcv/utils/ext_loader.py, copied by downstream projects).
EXTENSION_LOADER = "ext_loader.load_ext"


def loaded_extension(call: cst.Call, ctx: FileContext, qualname: str | None = None) -> str | None:
    """`ext_module = ext_loader.load_ext("_ext", ["nms", ...])`: OpenMMLab's loader of its compiled
    ops (`mmcv._ext`), imported by name; `FusedAdamBuilder().load()`: DeepSpeed's op builder, which
    compiles its op (or finds it prebuilt) and imports it; `importlib.import_module("fused_cuda")`
    of a name that reads as a compiled extension. The module's name, or None for any other
    call. `qualname` is the callee's, when the caller has it."""
    func = call.func
    if type(func) is cst.Attribute and func.attr.value == "load" and type(func.value) is cst.Call:
        builder = ctx.qualname(func.value.func) or ""
        if builder.startswith(_OP_BUILDER_PACKAGES) and builder.endswith("Builder"):
            return f"{builder.rpartition('.')[2]}().load()"
        return None
    if qualname is None:
        qualname = ctx.qualname(func)
    if _imports_by_name(qualname, func) and len(call.args) == 1:
        # `attn_core_inplace_cuda = importlib.import_module("attn_core_inplace_cuda")`, AutoAWQ's
        # `awq_ext, msg = try_import("awq_ext")`
        names = ctx.strings(call.args[0].value)
        module = names[0] if names and len(names) == 1 else ""
        return module if names_extension(module, ctx) and not module.startswith("torch.") else None
    if qualname is None or not qualname.endswith(EXTENSION_LOADER):
        return None
    names = ctx.strings(arg_value(call, 0, "name"))
    return names[0] if names and len(names) == 1 and names[0] else None


_IMPORT_HELPERS = frozenset({"try_import", "safe_import", "import_module", "optional_import"})


def _imports_by_name(qualname: str | None, func: cst.BaseExpression) -> bool:
    """`importlib.import_module`, or a project's helper that imports a module by name
    (`try_import`, `safe_import`, `optional_import`, `import_module`): whether a string argument
    names the module."""
    if qualname == "importlib.import_module":
        return True
    name = (qualname or name_of(func)).rpartition(".")[2]
    return name in _IMPORT_HELPERS


# DeepSpeed's op builders, as the package exports them and as DeepSpeed's own tree imports them.
_OP_BUILDER_PACKAGES = ("deepspeed.ops.op_builder.", "op_builder.")


def _built_extension(call: cst.Call, ctx: FileContext) -> str | None:
    """`fused = load("fused", sources=[...])`: the name holds the compiled extension module named
    "fused", whose every call or attribute use is a custom-kernel finding, as if it were imported;
    so does the module an extension loader returns (`loaded_extension`)."""
    qualname = ctx.qualname(call.func) or ""
    if qualname not in EXTENSION_BUILDERS:
        return loaded_extension(call, ctx, qualname)
    if not _builds_cuda(call, ctx):
        return None  # a host-only C++ extension (`load_inline(cpp_sources=...)`): its build is the finding
    names = ctx.strings(arg_value(call, 0, "name"))
    return names[0] if names and len(names) == 1 and names[0] else None


def _cuda_amp_partial(call: cst.Call, ctx: FileContext) -> str | None:
    """`custom_fwd = partial(torch.amp.custom_fwd, device_type="cuda")` makes the name mean the CUDA
    decorator (`torch.cuda.amp.custom_fwd`), so that each `@custom_fwd` is reported as its use."""
    func = call.func
    if not (type(func) in (cst.Name, cst.Attribute) and name_of(func) == "partial"):
        return None
    inner = ctx.qualname(call.args[0].value) if call.args[0].keyword is None else None
    if inner not in _AMP_DECORATORS:
        return None
    for arg in call.args[1:]:
        if arg.keyword is not None and arg.keyword.value == "device_type":
            values = ctx.strings(arg.value)
            if values and all(v == "cuda" for v in values):
                return "torch.cuda.amp." + inner.rsplit(".", 1)[1]
    return None


def _mask_kind(value: cst.BaseExpression, ctx: FileContext) -> Binding:
    """A mask, with the op that sized the tensor it compares, if the data did: `inds = boxes[:, -1] >
    t` after `boxes = merged[merged_labels == c]` has as many rows as the boxes kept (`len(inds)`)."""
    if type(value) is cst.Comparison:
        for operand in (value.left, *(c.comparator for c in value.comparisons)):
            if (op := data_dependent(operand, ctx)) is not None:
                return ("mask", op)
    return ("mask", "")


def _value_kind(value: cst.BaseExpression, ctx: FileContext, numpy_checked: bool = False) -> Binding | None:
    if not numpy_checked and ctx.is_numpy(value):
        return ("numpy", "")
    if ctx.is_host_value(value):
        return ("host", "")
    if is_mask(value, ctx):
        return _mask_kind(value, ctx)
    if _per_image(value, ctx):
        return PER_IMAGE
    op = data_dependent(value, ctx)
    if op is not None:
        return ("tensor", op)  # a tensor whose size depends on its data: `keep = nms(boxes, scores, t)`
    if ctx.is_tensor(value) or _scalar_reduction(value, ctx):
        return ("tensor", "")
    return None


# Whole-tensor reductions: with no argument, one number that stays on the device until read.
_SCALAR_REDUCTIONS = frozenset({"sum", "max", "min", "argmax", "argmin", "count_nonzero", "amax", "amin"})
# Receivers that are modules or configuration objects, never tensors (`np.max()`, `self.sum()`).
PLAIN_OBJECTS = frozenset(
    {"math", "np", "os", "sys", "re", "self", "args", "cfg", "config", "opt", "hparams"}
)


def _scalar_reduction(value: cst.BaseExpression, ctx: FileContext) -> bool:
    """`input_len = input_atts[i].sum()` in a torch module: a 0-d tensor, as `if atts.sum() > 0:`
    written in place is read from one. numpy and host values are told apart first (`_value_kind`)."""
    if type(value) is not cst.Call or value.args or type(value.func) is not cst.Attribute:
        return False
    if value.func.attr.value not in _SCALAR_REDUCTIONS or "torch" not in ctx.imports_seen():
        return False
    receiver = value.func.value
    while type(receiver) is cst.Subscript:
        receiver = receiver.value
    return type(receiver) is cst.Name and receiver.value not in PLAIN_OBJECTS


# Ops whose result's size depends on the data (NL601), as methods and as functions.
_SIZE_BY_DATA_METHODS = frozenset({"nonzero", "unique", "unique_consecutive", "masked_select", "argwhere"})
_SIZE_BY_DATA_FUNCTIONS = frozenset(f"torch.{name}" for name in _SIZE_BY_DATA_METHODS)
# The NMS family in rules/apis.toml (torchvision's, detectron2's, MMCV's): as many boxes as survive.
_NMS_FAMILY = frozenset(
    {"nms", "batched_nms", "nms_rotated", "batched_nms_rotated", "nms_quadri", "soft_nms", "nms_match"}
)


def _unpacked_unique(call: cst.Call, count: int, ctx: FileContext) -> tuple[int, ...]:
    """The positions of `values, inverse, counts = torch.unique(x, return_inverse=True,
    return_counts=True)` (or `x.unique(...)`) that the data sizes: the values, and the counts (last)
    when asked for; the inverse indices have the input's size."""
    func = call.func
    qualname = ctx.qualname(func)
    if qualname not in ("torch.unique", "torch.unique_consecutive") and not (
        qualname is None
        and type(func) is cst.Attribute
        and func.attr.value in ("unique", "unique_consecutive")
        and not ctx.is_host_value(func.value)
    ):
        return ()
    counts = kwarg(call, "return_counts")
    return (0, count - 1) if counts is not None and is_true(counts.value) else (0,)


def _suppresses(qualname: str, ctx: FileContext) -> bool:
    # The NMS rows are `kind = "name"` rows: one dict lookup, not the prefix and stem search of
    # `ctx.data.api`, since this runs for the callee of every assignment of a call.
    entry = ctx.data.api_exact.get(qualname)
    return entry is not None and entry["rule"] == "NL601" and entry.get("facts", {}).get("op") in _NMS_FAMILY


# Methods that keep the number of elements of what they are called on.
_SIZE_KEEPING = frozenset(
    {
        "squeeze",
        "unsqueeze",
        "view",
        "reshape",
        "flatten",
        "long",
        "int",
        "float",
        "to",
        "clone",
        "contiguous",
        "detach",
        "t",
        "tolist",
        "cpu",
    }
)


def _mask_selects(node: cst.Subscript, ctx: FileContext) -> bool:
    """One index of the subscript is a mask and the others are slices or integers: the mask's
    dimension keeps as many elements as it holds True (`x[m]`, `targets[targets[:, 0] == i, 1:]`)."""
    masks = 0
    for element in node.slice:
        index = element.slice
        if type(index) is cst.Slice:
            continue
        if _mask_value(index.value, ctx):
            masks += 1
        elif type(index.value) is not cst.Integer:
            return False  # `x[batch_index, mask]`: other index tensors make it a gather
    return masks == 1


def data_dependent(value: cst.BaseExpression, ctx: FileContext) -> str | None:
    """The op that makes a value's size depend on the data: `torch.nonzero(m)[:, 0]`, `x[mask]`,
    `nms(boxes, scores, 0.5)`, `t.unique().long()`, `boxes[keep]` with `keep` one of those,
    `torch.cat(parts)` of a list filled with them, or a name bound to one; None otherwise."""
    node = value
    while True:
        if type(node) is cst.Subscript:
            if ctx.is_host_value(node.value):
                return None
            if _mask_selects(node, ctx):
                # `x[x > 0]`, `x[keep]` with `keep` bound to a mask, `targets[targets[:, 0] == i, 1:]`
                return "boolean mask"
            if (op := _gathered_by_data(node, ctx)) is not None:
                return op  # `boxes[keep]`: as many rows as the index holds
            if _per_image(node.value, ctx) and all(type(e.slice) is cst.Index for e in node.slice):
                return _PER_IMAGE_OP  # `det = output[i]`: one image's kept boxes
            node = node.value
        elif type(node) is cst.BinaryOperation:
            # `ids + 1`, `boxes[keep] * scale`: an elementwise result keeps its operands' size (the
            # left operand is followed in the loop: long chains `a + b + c ...` nest to the left)
            op = data_dependent(node.right, ctx)
            if op is not None:
                return op
            node = node.left
        elif type(node) is cst.Call:
            func = node.func
            qualname = ctx.qualname(func)
            if qualname in _SIZE_BY_DATA_FUNCTIONS:
                return qualname.rpartition(".")[2]
            if qualname is not None and _suppresses(qualname, ctx):
                # `nms_match(np_dets, t)`: MMCV's ops take numpy arrays too, and run on the host
                host = bool(node.args) and ctx.is_host_value(node.args[0].value)
                return None if host else qualname.rpartition(".")[2]
            if qualname == "torch.where" and len(node.args) == 1:
                return "where"
            if qualname in _CONCATENATIONS and node.args and _joins_rows(node):
                parts = node.args[0].value
                if type(parts) is cst.Name:
                    binding = ctx.lookup(parts.value)  # `torch.cat(bboxes)`, filled with `d[keep]`
                    return binding[1][len(_PARTS) :] if _sized_parts(binding) else None
                if type(parts) in (cst.Tuple, cst.List):
                    # `torch.cat((x, v), 0)` with `x = x[keep]`: its rows and v's
                    ops = (data_dependent(e.value, ctx) for e in parts.elements if type(e) is cst.Element)
                    return next((op for op in ops if op is not None), None)
                return None
            if qualname is not None or type(func) is not cst.Attribute:
                return None
            method = func.attr.value
            if method in _SIZE_BY_DATA_METHODS:
                return None if ctx.is_host_value(func.value) else method
            if method not in _SIZE_KEEPING:
                return None
            node = func.value
        elif type(node) is cst.Name:
            binding = ctx.lookup(node.value)
            return binding[1] or None if binding is not None and binding[0] in ("tensor", "mask") else None
        else:
            return None


def _joins_rows(call: cst.Call) -> bool:
    """A concatenation along the rows: no `dim`, or `dim` 0."""
    dim = arg_value(call, 1, "dim")
    return dim is None or _is_zero(dim)


def _gathered_by_data(node: cst.Subscript, ctx: FileContext) -> str | None:
    """The op behind an index tensor whose size the data decides (`boxes[keep]` after `keep =
    nms(...)`, `order[ids + 1]` after `ids = ...nonzero()`): the gather has as many rows as it."""
    for element in node.slice:
        index = element.slice
        if type(index) is cst.Index and type(index.value) in (
            cst.Name,
            cst.Subscript,
            cst.BinaryOperation,
            cst.Call,
        ):
            op = data_dependent(index.value, ctx)
            if op is not None:
                return op
    return None


# Joins whose size is the sum of their parts' sizes.
_CONCATENATIONS = frozenset({"torch.cat", "torch.concat", "torch.concatenate"})
# A list filled with tensors whose size the data decides (`bboxes.append(d[keep])`): an ("other",
# ...) binding, so an untracked value for every other question; its concatenation is data-sized.
_PARTS = "parts:"


def _sized_parts(binding: Binding | None) -> bool:
    return binding is not None and binding[0] == "other" and str(binding[1]).startswith(_PARTS)


def _host_kind(value: cst.BaseExpression, ctx: FileContext) -> tuple[str, str] | None:
    """("numpy", "") for numpy/pandas values, ("host", "") for other host values, else None."""
    if ctx.is_numpy(value):
        return ("numpy", "")
    return ("host", "") if ctx.is_host_value(value) else None


# An element of a numpy array a loop runs over: a host value, and in an operation with a tensor a
# number that decides nothing (`device_ids == label` stays on the device).
NUMPY_ELEMENT: Binding = ("numpy", "element")
# An element of an index tensor a loop runs over (`for i in nms(boxes, scores, t)`): an integer.
INDEX: Binding = ("index", "")
_LIST_FILLS = frozenset({"append", "extend"})
# A name assigned `[]`, and one that a loop then fills under an `if` (its length depends on the data).
# Both are ("other", ...) bindings: for every other question they are untracked values (EMPTY_LIST
# is defined in context.py, which reads it too).
EMPTY_DICT: Binding = ("other", "{}")
_FILLED_HOST_DICT: Binding = ("host", "filled")  # `out = {}` filled so far only with host values
FILTERED_LIST: Binding = ("other", "filtered")


def _filters_in_loop(ctx: FileContext) -> bool:
    """Whether the call being visited runs under an `if` inside a loop of the same function."""
    seen_if = False
    for ancestor in reversed(ctx.parents):
        if type(ancestor) in (cst.If, cst.CompIf):
            seen_if = True
        elif type(ancestor) in (cst.For, cst.While):
            return seen_if
        elif type(ancestor) in (cst.FunctionDef, cst.ClassDef, cst.Lambda):
            return False
    return False


REGISTERS = frozenset({"register_buffer", "register_parameter"})


def _register_attribute(node: cst.Call, ctx: FileContext) -> None:
    """`self.register_buffer("name", tensor)`: `self.name` holds a tensor in this class."""
    func = node.func
    assert type(func) is cst.Attribute
    scope = ctx.class_scope()
    if scope is None or scope.tensor_attrs is None or len(node.args) < 2:
        return
    if not (type(func.value) is cst.Name and func.value.value == "self"):
        return
    names = ctx.strings(node.args[0].value)
    value = node.args[1].value
    if names and len(names) == 1 and not (type(value) is cst.Name and value.value == "None"):
        scope.tensor_attrs.add(names[0])


PARAMETERS = frozenset({"torch.nn.Parameter", "torch.nn.parameter.Parameter"})


def _tensor_attribute(target: cst.Attribute, value: cst.BaseExpression, ctx: FileContext) -> None:
    """`self.scale = torch.ones(1)` / `nn.Parameter(...)`: `self.scale` holds a tensor in this class."""
    if not (type(target.value) is cst.Name and target.value.value == "self"):
        return
    scope = ctx.class_scope()
    if scope is None or scope.tensor_attrs is None:
        return
    if type(value) is cst.Call and ctx.qualname(value.func) in PARAMETERS or ctx.is_tensor(value):
        if not ctx.is_host_value(value) or ctx.cpu_fill(value):  # a fill: see _bind_value
            scope.tensor_attrs.add(target.attr.value)


# Dtype names as attributes of any library (`tl.int64`, `np.float32`, `jnp.bfloat16`).
_DTYPE_NAMES = frozenset(
    {
        *(f"{kind}{bits}" for kind in ("int", "uint", "float") for bits in (8, 16, 32, 64)),
        "bfloat16",
        "float8e4nv",
        "float8e5",
        "bool",
        "bool_",
        "half",
        "double",
        "long",
        "complex64",
        "complex128",
    }
)
# A loss by its name: `loss`, `val_loss`, `total_loss` (not `loss_scale`, `aux_loss_coeff`, `loss_fn`).
_LOSS_NAME = re.compile(r"^(\w+_)?loss$")


def _computed_loss(name: str, value: cst.BaseExpression, ctx: FileContext) -> bool:
    """`loss = criterion(out, y)`, `loss = loss_fn(out, y)`, `loss = outputs.loss`: what a criterion
    or loss function computes, or a model output's loss, named a loss, is a tensor. (`F.cross_entropy`
    is one by its qualified name already; `loss = loss.item()` is bound as a number read.)"""
    if not _LOSS_NAME.match(name):
        return False
    if type(value) is cst.Attribute:
        # `loss = outputs.loss`: a model output's loss
        made = value.attr.value == "loss" or value.attr.value.endswith("_loss")
    elif type(value) is cst.Call and type(value.func) in (cst.Name, cst.Attribute):
        # `criterion(out, y)`, `loss_fn(...)`, `self.compute_loss(...)`, or a model's forward
        # (`loss = model(x, y)`, `_, loss = model(x, y)`); not a loss class made
        # (`SubsequenceLoss(...)`), nor `metric.summarize()` or `cfg.get(...)`
        callee = name_of(value.func)
        made = not callee[:1].isupper() and (
            "loss" in callee.lower() or "criterion" in callee.lower() or names_module(value.func)
        )
    else:
        return False
    return made and not ctx.is_host_value(value) and not ctx.is_numpy(value)


# Methods of distributed helpers (accelerate's Accelerator) that return what they are given,
# gathered or reduced across processes, still on the device.
_GATHERS = frozenset({"gather", "gather_for_metrics", "pad_across_processes"})


def _gathered(call: cst.Call, ctx: FileContext) -> list[bool] | None:
    """`accelerator.gather_for_metrics((preds, refs))`: per element of the value gathered (one for
    a single value), whether it is a device tensor; None for any other call. Not torch.distributed's
    `all_gather`, which fills a list and returns nothing."""
    func = call.func
    if (
        type(func) is not cst.Attribute
        or func.attr.value not in _GATHERS
        or ctx.qualname(func) is not None
        or len(call.args) < 1
        or call.args[0].keyword is not None
    ):
        return None
    given = call.args[0].value
    values = [e.value for e in given.elements] if type(given) in (cst.Tuple, cst.List) else [given]
    return [ctx.is_tensor(v) and not ctx.is_host_value(v) for v in values]


def _moved_tensor(name: str, call: cst.Call, ctx: FileContext) -> bool:
    """`x = x.to(device)`, `y = batch["labels"].cuda()`: a name or an entry (not a module by either
    name, nor an object a call made: `Model(...).cuda()`, `get_peft_model(m).eval().to(d)`) moved
    to a device holds a tensor there."""
    func = call.func
    if type(func) is not cst.Attribute or func.attr.value not in ("to", "cuda"):
        return False
    if func.attr.value == "to" and not call.args:
        return False
    receiver = func.value
    if type(receiver) not in (cst.Name, cst.Subscript):
        return False
    if names_module(receiver) or names_module(cst.Name(name)):
        return False
    if type(receiver) is cst.Name and receiver.value == "self":
        return False  # `self.to(device)` in a class: the object itself
    return func.attr.value == "cuda" or _moves_to_device(call, ctx)


# A name the code moves to a device as a statement (`clap.to(device)`, `m.cuda()`), discarding the
# result: a tensor's copy would be lost, so it is an nn.Module, which moves its weights in place.
MOVED_IN_PLACE: Binding = ("moved-in-place", "")


def _note_moved_in_place(call: cst.Call, ctx: FileContext) -> None:
    func = call.func
    if (
        type(ctx.parent()) is not cst.Expr
        or type(func) is not cst.Attribute
        or type(func.value) is not cst.Name
    ):
        return
    if func.attr.value == "cuda" or (func.attr.value == "to" and call.args):
        name = func.value.value
        binding = ctx.lookup(name)
        if binding is None or binding[0] == "other":
            ctx.bind(name, MOVED_IN_PLACE)


# torch.distributed collectives whose first argument is a tensor they work on in place.
_COLLECTIVES = frozenset({"all_reduce", "reduce", "broadcast"})


def _collective_operand(call: cst.Call, ctx: FileContext) -> None:
    """`val_loss = 0` ... `val_loss += model(x, y)` ... `dist.all_reduce(val_loss)`: a name a
    collective reduces in place holds a tensor (NCCL's lives on the device) from then on."""
    operand = call.args[0].value
    if type(operand) is not cst.Name or call.args[0].keyword is not None:
        return
    qualname = ctx.qualname(call.func)
    if qualname is None or not qualname.startswith("torch.distributed."):
        return
    previous = ctx.lookup(operand.value)
    if previous is None or previous[0] == "other":
        ctx.bind(operand.value, ("tensor", ""))


def _note_helper_call(node: cst.Call, ctx: FileContext) -> None:
    """For static/host_callers.py: a call of a module-level function of this file, with whether
    every argument is a host value or a literal; and a move to a device (`.to(device)`, `.cuda()`,
    a `device=` argument that is not "cpu") inside a module-level function."""
    func = node.func
    if type(func) is cst.Name:
        if ctx.lookup(func.value) is None and ctx.tensor_returns.resolve((None, func.value)) is not None:
            # host data given (a literal alone says nothing: `main(0.1)` may put its own on a device)
            literal = [type(arg.value) in _LITERALS for arg in node.args]
            host = not all(literal) and all(
                not arg.star and (is_literal or ctx.is_host_value(arg.value))
                for arg, is_literal in zip(node.args, literal, strict=True)
            )
            ctx.host_callers.note_call(func.value, host)
        return
    moves = (
        type(func) is cst.Attribute
        and func.attr.value in ("to", "cuda")
        and (func.attr.value == "cuda" or (node.args and _moves_to_device(node, ctx)))
    )
    if not moves:
        for arg in node.args:
            if arg.keyword is not None and arg.keyword.value == "device":
                values = ctx.strings(arg.value)
                moves = not (values and all(v == "cpu" for v in values))
                break
    if moves and (key := ctx.function_key()) is not None and key[0] is None:
        ctx.host_callers.note_move(key[1])


def _moves_to_device(node: cst.Call, ctx: FileContext) -> bool:
    """`x.to(device)`, `x.to("cuda")`, `x.cuda()`: not `x.to("cpu")`, nor `x.to(torch.float32)`."""
    func = node.func
    assert type(func) is cst.Attribute
    if func.attr.value == "cuda":
        return True
    value = node.args[0].value if node.args[0].keyword is None else None
    if value is None:
        device = next((a.value for a in node.args if a.keyword and a.keyword.value == "device"), None)
        if device is None:
            return False
        value = device
    if (ctx.qualname(value) or "").startswith("torch.") and type(value) is not cst.Call:
        return False  # a dtype
    if type(value) is cst.Attribute and value.attr.value in _DTYPE_NAMES:
        return False  # `pid_m.to(tl.int64)`, `x.to(np.float32)`: a dtype of another library
    values = ctx.strings(value)
    if values:
        return not all(v == "cpu" for v in values)
    last = value.attr.value if type(value) is cst.Attribute else getattr(value, "value", "")
    return not (isinstance(last, str) and "dtype" in last)  # `.to(self.dtype)` converts, `.to(rank)` moves


# A method only a tensor (or a numpy value, bound as one where the code shows it) has: calling it
# on a name nothing bound says what the name holds. (Not `.detach()`: parameters of CPU tests.)
_TENSOR_EVIDENCE = frozenset({"item"})


def _tensor_by_use(receiver: cst.BaseExpression, ctx: FileContext) -> None:
    """`curr_val_loss = validation(model, ...)` (a helper of another module) and then
    `curr_val_loss.item()`: the name holds a tensor, so what the code does with it next
    (`if curr_val_loss < best_val_loss:`, `f"{best_val_loss}"`) reads a tensor. Only for a name
    nothing in the file has bound to a known kind, in a file that uses torch; a value the code put on
    the host is bound as one already."""
    if type(receiver) is not cst.Name or "torch" not in ctx.imports_seen():
        return
    name = receiver.value
    if ctx.lookup(name) not in (None, ("other", None)) or ctx.is_host_value(receiver):
        return
    param = ctx.parameter(name)
    if param is not None and param.annotation is not None:
        return  # `acc: float`, `arr: np.ndarray`: the annotation says what it holds
    if _under_type_test(name, ctx):
        return  # `if torch.is_tensor(n): return int(n.item())` / `return int(n)`: a tensor only there
    ctx.bind(name, ("tensor", ""))


def _under_type_test(name: str, ctx: FileContext) -> bool:
    """Inside an `if` (or a conditional expression) that asks what `name` is: `torch.is_tensor(n)`,
    `isinstance(n, torch.Tensor)`, `hasattr(n, "item")`."""
    for node in reversed(ctx.parents):
        if type(node) in (cst.If, cst.IfExp):
            for call in _calls_in(node.test):
                callee = name_of(call.func)
                if callee in ("is_tensor", "isinstance", "hasattr") and any(
                    type(a.value) is cst.Name and a.value.value == name for a in call.args
                ):
                    return True
        elif type(node) in (cst.FunctionDef, cst.Lambda):
            return False
    return False


def _calls_in(test: cst.BaseExpression) -> Iterator[cst.Call]:
    """The calls of a branch test, through `not`, `and`/`or` (tests are small)."""
    stack = [test]
    while stack:
        node = stack.pop()
        if type(node) is cst.Call:
            yield node
        elif type(node) is cst.UnaryOperation:
            stack.append(node.expression)
        elif type(node) is cst.BooleanOperation:
            stack.extend((node.left, node.right))


def _shadow(target: cst.CSTNode, ctx: FileContext) -> None:
    """A name (or names in a tuple target) rebound to something we do not track."""
    if type(target) is cst.StarredElement:
        target = target.value
    if type(target) is cst.Name:
        if ctx.lookup(target.value) is not None:
            ctx.bind(target.value, ("other", None))
    elif type(target) in (cst.Tuple, cst.List):
        for element in target.elements:
            _shadow(element.value, ctx)


def _loop_target(target: cst.BaseExpression, iterable: cst.BaseExpression, ctx: FileContext) -> None:
    """`for row in np_array` makes row a numpy value and `for n in t.tolist()` a host number; any
    other loop target just rebinds its names."""
    if type(target) in (cst.Tuple, cst.List) and type(iterable) is cst.Call:
        # `for seq, n in zip(seqs, lengths.tolist())`, `for i, n in enumerate(counts.tolist())`
        name = iterable.func.value if type(iterable.func) is cst.Name else ""
        elements = [e.value for e in target.elements]
        sources = [a.value for a in iterable.args if a.keyword is None and not a.star]
        if name == "enumerate" and len(elements) == 2 and len(sources) == 1:
            if type(elements[0]) is cst.Name and ctx.lookup("enumerate") is None:
                ctx.bind(elements[0].value, ("python", ""))  # the index: a Python int
            else:
                _shadow(elements[0], ctx)
            _loop_target(elements[1], sources[0], ctx)
            return
        if name == "zip" and len(elements) == len(sources) and ctx.lookup(name) is None:
            for element, source in zip(elements, sources, strict=True):
                _loop_target(element, source, ctx)
            return
    if type(target) in (cst.Tuple, cst.List):
        # `for i, j in indices` over host values (scipy's matches, numpy rows): each part is host;
        # `for *xyxy, conf, cls in reversed(det)` over the rows of a device tensor: each part a tensor
        kind = _host_kind(iterable, ctx)
        if kind is None and _device_rows(iterable, ctx):
            kind = ("tensor", "")
        for element in target.elements:
            if kind is not None and type(element) is cst.Element and type(element.value) is cst.Name:
                ctx.bind(element.value.value, kind)
            else:
                _shadow(element.value, ctx)
    elif type(target) is not cst.Name:
        _shadow(target, ctx)
    elif _host_read(iterable) == "<tensor>.tolist()":
        ctx.bind(target.value, ("read", "<tensor>.tolist()"))
    elif (
        type(iterable) is cst.Name
        and (found := ctx.lookup(iterable.value)) is not None
        and found[0] == "read"
    ):
        # `for n in sizes` over numbers read from tensors (a list: it is iterated)
        ctx.bind(target.value, found)
    elif (
        type(iterable) is cst.Call
        and type(iterable.func) is cst.Name
        and iterable.func.value == "range"
        and ctx.lookup("range") is None
    ):
        ctx.bind(target.value, ("python", ""))  # `for j in range(n)`: a loop counter, a Python int
    else:
        kind = _host_kind(iterable, ctx)
        if kind == ("numpy", ""):
            kind = NUMPY_ELEMENT  # `for label in np.unique(ids)`: a number (or a row) of the array
        elif kind is None and data_dependent(iterable, ctx) in _INDEX_OPS:
            kind = INDEX  # `for i in keep_by_nms`: an integer index of a kept box, not a mask
        elif kind is None and _per_image(iterable, ctx):
            kind = ("tensor", _PER_IMAGE_OP)  # `for det in nms_out`: one image's kept boxes
        elif kind is None and type(iterable) is cst.Name and ctx.lookup(iterable.value) == TENSOR_LIST:
            kind = ("tensor", "")  # `for tensor in gathered_tensors`: one gathered tensor
        elif kind is None and _device_rows(iterable, ctx):
            # `for u, v in zip(context, seq_lens)`: an element (or row) of a device tensor, so
            # `u[:v]` slices by a device value
            kind = ("tensor", "")
        _bind_kind_or_shadow(target, kind, ctx)


def _device_rows(iterable: cst.BaseExpression, ctx: FileContext) -> bool:
    """A device tensor a loop runs over row by row (`det`, `context[0]`), also through
    `reversed(...)`."""
    if (
        type(iterable) is cst.Call
        and type(iterable.func) is cst.Name
        and iterable.func.value == "reversed"
        and ctx.lookup("reversed") is None
        and len(iterable.args) == 1
    ):
        iterable = iterable.args[0].value
    return type(iterable) in (cst.Name, cst.Subscript, cst.Attribute) and ctx.is_device_tensor(iterable)


def _target_names(target: cst.BaseExpression) -> set[str]:
    """The plain names a loop target binds (`batch`, `idx, (x, y)`)."""
    if type(target) is cst.Name:
        return {target.value}
    if type(target) in (cst.Tuple, cst.List):
        return set().union(*(_target_names(e.value) for e in target.elements))
    return set()


def _moved_loop_item(node: cst.Assign, ctx: FileContext) -> None:
    """`for batch in loader: x = batch.to(self.device)`: the code moves the loop's item to the device
    into another name, so the item itself came from the host and stays there (`batch.cpu()` later
    in the loop copies nothing). Not when the item is a known tensor or rebound by the move."""
    value = node.value
    if type(value) is not cst.Call or type(value.func) is not cst.Attribute:
        return
    method, receiver = value.func.attr.value, value.func.value
    if method not in ("to", "cuda") or (method == "to" and not value.args) or type(receiver) is not cst.Name:
        return
    name = receiver.value
    if any(type(t.target) is cst.Name and t.target.value == name for t in node.targets):
        return  # `batch = batch.to(device)`: the name holds the moved value
    binding = ctx.scope.bindings.get(name)
    if binding is not None and binding[0] != "other":
        return
    if _iterated_here(name, ctx) and _moves_to_device(value, ctx):
        ctx.bind(name, ("host", ""))


def _moved_loop_sibling(node: cst.Assign, ctx: FileContext) -> None:
    """`for image, image_id in loader: image = image.to(device)`: the loop's items come from the
    host (the code moves them), so the ones not moved yet (`image_id`) are host values until they
    are (`img_id.item()` copies nothing; BLIP's caption evaluation)."""
    value = node.value
    if type(value) is not cst.Call or type(value.func) is not cst.Attribute or len(node.targets) != 1:
        return
    target = node.targets[0].target
    receiver = value.func.value
    if type(target) is not cst.Name or type(receiver) is not cst.Name or target.value != receiver.value:
        return
    if value.func.attr.value not in ("to", "cuda") or not _moved_tensor(target.value, value, ctx):
        return
    loop = _loop_binding(target.value, ctx)
    if loop is None or type(loop.target) not in (cst.Tuple, cst.List):
        return
    for sibling in _target_names(loop.target) - {target.value}:
        binding = ctx.scope.bindings.get(sibling)
        if binding is None or binding == ("other", None):
            ctx.bind(sibling, ("host", ""))


def _loop_binding(name: str, ctx: FileContext) -> cst.For | None:
    """The innermost `for` loop around the node being visited (in the same function) whose target
    binds `name`."""
    for node in reversed(ctx.parents):
        if type(node) in (cst.FunctionDef, cst.ClassDef, cst.Lambda):
            return None
        if type(node) is cst.For and name in _target_names(node.target):
            return node
    return None


def _iterated_here(name: str, ctx: FileContext) -> bool:
    """Whether the node being visited is in the body of a `for` loop (of the same function) whose
    target binds `name`."""
    return _loop_binding(name, ctx) is not None


def _converted_in_place(node: cst.Call, ctx: FileContext) -> None:
    """`mask_data.to_numpy()` as a statement: a container that converts its own values to numpy
    in place holds host data from then on (not a tensor, whose `.cpu()`-style methods return a copy)."""
    receiver = node.func.value
    if type(ctx.parent()) is not cst.Expr or type(receiver) is not cst.Name:
        return
    binding = ctx.lookup(receiver.value)
    if binding is None or binding[0] != "tensor":
        ctx.bind(receiver.value, ("host", ""))


# Ops whose result holds integer indices (of the kept boxes, of the nonzero elements).
_INDEX_OPS = frozenset({"nms", "batched_nms", "nonzero", "argwhere", "where"})
# Detection post-processing that returns a list of one tensor of kept boxes per image (YOLO's
# `non_max_suppression(pred, conf_thres, iou_thres)`, whatever module defines it): the list has one
# entry per image, each entry as many rows as the data kept.
_PER_IMAGE_OP = "non_max_suppression"
_PER_IMAGE_OPS = frozenset({_PER_IMAGE_OP})
PER_IMAGE: Binding = ("per-image", "")


def _per_image(value: cst.BaseExpression, ctx: FileContext) -> bool:
    """A call of a YOLO-style NMS, or a name bound to its result."""
    if type(value) is cst.Name:
        return ctx.lookup(value.value) == PER_IMAGE
    if type(value) is not cst.Call:
        return False
    return name_of(value.func) in _PER_IMAGE_OPS


def _bind_kind_or_shadow(target: cst.Name, kind: tuple[str, str] | None, ctx: FileContext) -> None:
    if kind is not None:
        ctx.bind(target.value, kind)
    else:
        _shadow(target, ctx)


# `    import torch_xla.core.xla_model as xm` inside a function: only a file that has one can
# define a function returning a module it imports (the walk of its body is skipped otherwise).
_INDENTED_IMPORT_AS = re.compile(rb"\n[ \t]+import [\w.]+ as \w+")


def _returned_module(function: cst.FunctionDef) -> str | None:
    """The module a function imports and returns (`import torch_xla.core.xla_model as xm` ...
    `return xm`, every `return` giving that name), or None. Nested functions and classes are theirs."""
    imported: dict[str, str] = {}
    returned: set[str] = set()
    stack: list[cst.CSTNode] = [function.body]
    while stack:
        node = stack.pop()
        if type(node) in (cst.FunctionDef, cst.ClassDef, cst.Lambda):
            continue
        if type(node) is cst.Import:
            for alias in node.names:
                if alias.asname is not None and type(alias.asname.name) is cst.Name:
                    imported[alias.asname.name.value] = dotted(alias.name)
        elif type(node) is cst.Return:
            if type(node.value) is not cst.Name:
                return None
            returned.add(node.value.value)
        stack.extend(children_of(node))
    if len(returned) != 1:
        return None
    return imported.get(returned.pop())


def _decorator_names(node: cst.FunctionDef, ctx: FileContext) -> list[str]:
    out = []
    for dec in node.decorators:
        expr = dec.decorator.func if type(dec.decorator) is cst.Call else dec.decorator
        out.append(ctx.qualname(expr) or dotted(expr))
    return out


_KERNEL_DECORATORS = {
    "triton.jit": "triton",
    "triton.autotune": "triton",
    "triton.heuristics": "triton",
    "numba.cuda.jit": "numba-cuda",
    "cupyx.jit.rawkernel": "cupy",
    "cutlass.cute.kernel": "cute",
    "cutlass.cute.jit": "cute",
    "cuda.tile.kernel": "cutile",
    "tilelang.language.prim_func": "tilelang",
    "tilelang.jit": "tilelang",
}
# numba's CPU compilers (`numba.cuda.jit` makes a CUDA kernel instead): what they compile runs on
# numpy arrays on the host (mmdetection3d's `@numba.jit(nopython=True) def circle_nms(dets, ...)`).
_CPU_JIT = frozenset({"numba.jit", "numba.njit"})
_BUILD_EXTENSION = "cpp_extension.BuildExtension"
_NKI_PREFIXES = ("nki.", "neuronxcc.nki.", "nkilib.")
# torch-neuronx's wrappers that make an NKI kernel callable from PyTorch (`nki_jit()(kernel)`).
_NKI_WRAPPERS = frozenset({"torch_neuronx.xla_impl.ops.nki_jit", "torch_neuronx.nki_jit"})
# A function a torch-neuronx decorator makes a Neuron op (`@xla_hlo_call`): its calls are lock-in.
NEURON_OP: Binding = ("kernel", "torch-neuronx")


def _nki_kernel_name(node: cst.BaseExpression, ctx: FileContext) -> bool:
    """A name holding an NKI kernel: imported from NKI or the NKI Library (a function, not a module
    such as `nki.language`), or bound to one."""
    if type(node) is not cst.Name:
        return False
    binding = ctx.lookup(node.value)
    if binding is None:
        return False
    if binding == ("kernel", "nki"):
        return True
    return (
        binding[0] == "module"
        and isinstance(binding[1], str)
        and binding[1].startswith(_NKI_PREFIXES)
        and ".language" not in binding[1]
    )


def _returns_nki_kernel(call: cst.Call, position: int, ctx: FileContext) -> bool:
    """`flash_fwd, _, nl = get_flash_attn_kernels(use_sharded)`: position `position` of what the
    module's own kernel getter returns is an NKI kernel in every `return` of it (the getter is
    defined above the call)."""
    key = ctx.own_function(call.func)
    return key is not None and ctx.nki_returns.tensor_at(key, position)


# NKI's decorators that make a kernel runnable: compiled (`jit`), or run on a NeuronCore for its
# latency (`benchmark`) or a profile (`profile`), or without a framework (`baremetal`).
_NKI_KERNEL_DECORATORS = frozenset({"jit", "benchmark", "profile", "baremetal"})


def _makes_nki_kernel(call: cst.Call, ctx: FileContext) -> bool:
    """`nki_jit()(nki_cumsum)`, `nki.jit(kernel)`, `nki.benchmark(warmup=2, iters=10)(kernel)`: a call
    that wraps an NKI kernel, whose result is an NKI kernel the code launches by name
    (`nki_cumsum_func(x, out, axis=1)`, `bench(x)`)."""
    func = call.func
    wrapper = func.func if type(func) is cst.Call else func
    made = ctx.qualname(wrapper) or ""
    return made in _NKI_WRAPPERS or (
        made.startswith(_NKI_PREFIXES) and made.rpartition(".")[2] in _NKI_KERNEL_DECORATORS
    )


def _made_gpu_kernel(call: cst.Call, ctx: FileContext) -> str | None:
    """The kind of GPU kernel a call makes of a function: `triton.jit(fn)`,
    `triton.heuristics({...})(kernel)`, `triton.autotune(configs, key)(triton.jit(fn))`. A decorator
    called with its options only (`triton.autotune(configs, key)`) makes no kernel yet."""
    func = call.func
    if type(func) is cst.Call:
        return _KERNEL_DECORATORS.get(ctx.qualname(func.func) or "")
    if not any(arg.keyword is None and not arg.star for arg in call.args):
        return None
    made = ctx.qualname(func) or ""
    return _KERNEL_DECORATORS.get(made) if made.endswith(".jit") else None


_TENSOR_TYPES = frozenset({"torch.Tensor", "torch.FloatTensor", "torch.LongTensor", "torch.BoolTensor"})
# Functions that run once per step: forward passes and Lightning/trainer step hooks.
_STEP_FUNCTION = re.compile(r"^(_?forward(_\w+)?|\w*_step|step|_?compute_loss)$")
# Data-pipeline code runs on the CPU in loader workers (classes by their base or own name).
# Data-pipeline classes: datasets, collators (`DataCollatorSpeechSeq2SeqWithPadding`), tokenizers,
# and the processors and feature extractors that turn raw inputs into model inputs.
_HOST_CLASS = re.compile(r"Dataset|Collator")
# Tokenizers and processors turn raw inputs into model inputs, unless they are `nn.Module`s (a VQ
# image tokenizer, `PreProcessor(nn.Module)`).
_PROCESSOR_CLASS = re.compile(r"Tokenizer|(Processor|ProcessorMixin|FeatureExtractor)$")
# Processors that run on the device: logits processors (generation) and attention processors.
_DEVICE_PROCESSOR = re.compile(r"Logit|Attn|Attention")
# A sampler is data-pipeline code only as torch.utils.data's kind (by base): a diffusion or token
# sampler (`class EDMSampler(BaseDiffusionSampler)`) runs on the device.
_DATA_SAMPLERS = frozenset(
    {
        "Sampler",
        "BatchSampler",
        "DistributedSampler",
        "RandomSampler",
        "SequentialSampler",
        "SubsetRandomSampler",
        "WeightedRandomSampler",
        "DataLoader",  # `class ShaDowKHopSampler(torch.utils.data.DataLoader)`: its index setup and batches
    }
)
# Dataset transforms (`class Delaunay(BaseTransform)`, albumentations' `DualTransform`) are applied to
# examples in the input pipeline. A class named after a transform (`Transform3d`, device math) is not.
_TRANSFORM_BASE = re.compile(r"^(Base|Basic|Map|Dual|ImageOnly)?Transform$")
_HOST_FUNCTION = re.compile(r"^(__getitem__|__iter__|__next__|collate\w*|\w*_collate\w*|collater)$")
# Functions that prepare examples for a model (`datasets.map(preprocess_function)`,
# `tokenize_fn`): data-pipeline code, unless they are a module's methods (`Sam.preprocess` runs on
# the device). Functions that build a tokenizer or a preprocessor (`get_tokenizer`,
# `build_preprocessor`) are not.
_PREPARE_FUNCTION = PREPARE_FUNCTION


_OPTIONAL_TYPES = frozenset({"typing.Optional", "Optional"})


def _unwrap_optional(annotation: cst.BaseExpression, ctx: FileContext) -> cst.BaseExpression:
    """`Optional[torch.Tensor]` and `torch.Tensor | None` -> `torch.Tensor`."""
    if type(annotation) is cst.Subscript and len(annotation.slice) == 1:
        base = annotation.value
        if ctx.qualname(base) in _OPTIONAL_TYPES or (type(base) is cst.Name and base.value == "Optional"):
            element = annotation.slice[0].slice
            return element.value if type(element) is cst.Index else annotation
    if type(annotation) is cst.BinaryOperation and type(annotation.operator) is cst.BitOr:
        for side, other in ((annotation.left, annotation.right), (annotation.right, annotation.left)):
            if type(other) is cst.Name and other.value == "None":
                return side
    return annotation


def _annotated_kind(annotation: cst.BaseExpression, ctx: FileContext) -> Binding | None:
    """`x: torch.Tensor` is a tensor, `x: np.ndarray` (or any numpy/pandas type) a host value."""
    qualname = ctx.qualname(annotation)
    if qualname is None:
        return None
    if qualname in _TENSOR_TYPES:
        return ("tensor", "")
    return ("numpy", "") if qualname.split(".", 1)[0] in HOST_LIBRARIES else None


# A test function kept in a source module (`def test_chunked_interpolate():` beside the ops it checks):
# test code, reported in the `test` scope like a test file's. The name alone is not enough: training
# scripts call their test-split evaluation loop `test_epoch(model, loader)`, which runs on the device
# and is ported like the training loop; a test checks something (an `assert`, `assert_close(...)`).
_TEST_FUNCTION = re.compile(r"^test_\w+$")


def _checks_something(function: cst.FunctionDef) -> bool:
    """An `assert` statement or a call of an `assert*` function anywhere in the body (nested
    functions and classes included: a test's local helpers check for it)."""
    stack: list[cst.CSTNode] = [function.body]
    while stack:
        node = stack.pop()
        tp = type(node)
        if tp is cst.Assert:
            return True
        if tp is cst.Call:
            if name_of(node.func).startswith("assert"):
                return True
        stack.extend(children_of(node))
    return False


# A loss's own data preparation (`v8DetectionLoss.preprocess(targets, ...)`, copied by YOLOv9) runs on
# the targets its call moved to the device, not in the input pipeline.
_LOSS_CLASS = re.compile(r"Loss")


def _function_site(node: cst.FunctionDef, enclosing: Scope, ctx: FileContext) -> str:
    name = node.name.value
    if enclosing.site in (SITE_TEST, SITE_DEVICE_LAYER):
        return enclosing.site
    if enclosing.kind == "module" and _TEST_FUNCTION.match(name) and _checks_something(node):
        return SITE_TEST
    if enclosing.site == SITE_HOST or _HOST_FUNCTION.match(name):
        return SITE_HOST
    if _PREPARE_FUNCTION.match(name) and not enclosing.module_class and enclosing.site != SITE_STEP:
        cls = ctx.enclosing(cst.ClassDef) if enclosing.kind == "class" else None
        if cls is None or not _LOSS_CLASS.search(cls.name.value):
            return SITE_HOST
    if name == "compute_metrics" and enclosing.kind != "class":
        return SITE_HOST  # the Trainer hook: it is given numpy predictions and labels (EvalPrediction)
    if enclosing.site == SITE_STEP or _STEP_FUNCTION.match(name):
        return SITE_STEP
    return ""


# A device abstraction: a class named (or derived from one named) as an accelerator, platform or
# device interface, or one with methods for several accelerator types (`is_npu`, `is_xpu`, `cuda`...;
# `cpu()` beside `cuda()` is a data container's, not a device abstraction's).
_DEVICE_LAYER_CLASS = re.compile(r"(Accelerator|Platform|DeviceInterface|DeviceManager|DeviceBackend)$")
_DEVICE_TYPE_WORD = re.compile(
    r"(?:^|_)(cuda|gpu|rocm|hip|npu|xpu|hpu|mps|mlu|musa|tpu|xla|neuron)(?=_|$|\d)", re.IGNORECASE
)
# Words for one kind of device: `_cuda_id` beside `_gpu_idxs` (a CUDA cache manager) is one kind.
_DEVICE_FAMILY = {"gpu": "cuda", "rocm": "cuda", "hip": "cuda"}
# Its CUDA implementation stays CUDA code (`CUDA_Accelerator`, `GPUPlatform`).
_CUDA_CLASS = re.compile(r"cuda|gpu|nvidia", re.IGNORECASE)


def _device_layer(node: cst.ClassDef) -> bool:
    """Whether the class implements a device abstraction other than for CUDA: what it does for one
    vendor (`NpuAccelerator.pin_memory`) is not the code's own CUDA coupling."""
    name = node.name.value
    if _CUDA_CLASS.search(name):
        return False
    if _DEVICE_LAYER_CLASS.search(name) or any(
        _DEVICE_LAYER_CLASS.search(dotted(b.value) or "") for b in node.bases
    ):
        return True
    body = node.body.body if type(node.body) is cst.IndentedBlock else ()
    kinds = {
        _DEVICE_FAMILY.get(match.group(1).lower(), match.group(1).lower())
        for statement in body
        if type(statement) is cst.FunctionDef
        for match in _DEVICE_TYPE_WORD.finditer(statement.name.value)
    }
    return len(kinds) >= 2


def _module_class(node: cst.ClassDef) -> bool:
    return any(_MODULE_BASE.search(dotted(b.value) or "") for b in node.bases)


def _host_class(name: str, node: cst.ClassDef | None = None) -> bool:
    """A data-pipeline class by its name (or a base's name, without `node`)."""
    if _HOST_CLASS.search(name):
        return True
    if not _PROCESSOR_CLASS.search(name) or _DEVICE_PROCESSOR.search(name):
        return False
    if node is None:
        return True
    bases = [dotted(b.value) for b in node.bases]
    return not _module_class(node) and not any(_DEVICE_PROCESSOR.search(b) for b in bases)


def _processor_on_device(node: cst.ClassDef) -> bool:
    """A class named as a processor (or derived from one) that moves data or models to a device
    itself (`x.to(device=d)`, `model.to(device)`, `.cuda()`) runs a model, whatever its name:
    point-e's PointNet `FeatureExtractor` for P-FID, an Inception feature extractor for FID.
    Hugging Face's audio feature extractors work in numpy. Asked of processor-named classes only."""
    if _HOST_CLASS.search(node.name.value):
        return False
    stack: list[cst.CSTNode] = [node.body]
    while stack:
        item = stack.pop()
        if type(item) is cst.Call and type(item.func) is cst.Attribute:
            method = item.func.attr.value
            if method == "cuda":
                return True
            if method == "to" and any(
                (arg.keyword is not None and arg.keyword.value == "device")
                or name_of(arg.value).endswith("device")
                for arg in item.args
            ):
                return True
        stack.extend(children_of(item))
    return False


def _runs_model(base_name: str, node: cst.ClassDef) -> bool:
    """A subclass of a processor-named base that moves things to a device (_processor_on_device)."""
    return _PROCESSOR_CLASS.search(base_name) is not None and _processor_on_device(node)


def _class_site(node: cst.ClassDef, enclosing: Scope, ctx: FileContext) -> str:
    if enclosing.site == SITE_HOST and enclosing.by_path and _module_class(node):
        return ""  # an `nn.Module` kept in a data-path file (`PreProcessor(nn.Module)`) runs on the device
    if enclosing.site in (SITE_TEST, SITE_HOST, SITE_DEVICE_LAYER):
        return enclosing.site
    if _host_class(node.name.value, node):
        return "" if _processor_on_device(node) else SITE_HOST
    if _device_layer(node):
        return SITE_DEVICE_LAYER
    for base in node.bases:
        expr = base.value.value if type(base.value) is cst.Subscript else base.value  # Sampler[int]
        base_name = dotted(expr)
        if not base_name:
            continue
        if base_name in ctx.class_sites:  # a class of this file: `DeterministicSampler(Sampler)`
            if ctx.class_sites[base_name] == SITE_HOST and not _runs_model(base_name, node):
                return SITE_HOST
            continue
        if _host_class(base_name.rpartition(".")[2]) and not _runs_model(base_name, node):
            return SITE_HOST
        if _TRANSFORM_BASE.match(base_name.rpartition(".")[2]) and not _module_class(node):
            return SITE_HOST
        qualname = ctx.qualname(expr) or ""
        if base_name.rpartition(".")[2] in _DATA_SAMPLERS and (
            qualname.startswith("torch.utils.data") or "." not in base_name or not qualname
        ):
            return SITE_HOST  # torch.utils.data.Sampler, `Sampler` imported or defined elsewhere
    return ""


_COMPREHENSIONS = (cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp)


def _enter_loop(scope: Scope, per_epoch: bool) -> None:
    scope.loop_depth += 1
    scope.epoch_loops.append(per_epoch)


_EPOCH = re.compile(r"epoch", re.IGNORECASE)


def _names_epochs(node: cst.BaseExpression) -> bool:
    """Whether a loop's target, iterable or test names epochs: `epoch`, `range(args.num_epochs)`,
    `while epoch < max_epochs` (names and attributes, one call deep; no subtree walk)."""
    stack = [node]
    while stack:
        item = stack.pop()
        if type(item) is cst.Name:
            if _EPOCH.search(item.value):
                return True
        elif type(item) is cst.Attribute:
            if _EPOCH.search(item.attr.value):
                return True
        elif type(item) is cst.Call:
            stack.extend(a.value for a in item.args)
        elif type(item) in (cst.Tuple, cst.List):
            stack.extend(e.value for e in item.elements)
        elif type(item) in (cst.Comparison, cst.BinaryOperation):
            stack.append(item.left)
            if type(item) is cst.BinaryOperation:
                stack.append(item.right)
            else:
                stack.extend(c.comparator for c in item.comparisons)
    return False


def _module_level_imports(module: cst.Module) -> Iterator[tuple[cst.Import | cst.ImportFrom, bool]]:
    """The import statements that bind names in the module scope: at the top level and inside
    module-level `if`/`try`/`with`/loops, not inside functions or classes; each with whether it sits
    in the body of a `try` (an import the code may do without)."""
    stack: list[tuple[cst.CSTNode, bool]] = [(s, False) for s in reversed(module.body)]
    while stack:
        statement, in_try = stack.pop()
        tp = type(statement)
        if tp is cst.SimpleStatementLine:
            yield from ((s, in_try) for s in statement.body if type(s) in (cst.Import, cst.ImportFrom))
        elif tp in (cst.FunctionDef, cst.ClassDef):
            continue
        elif isinstance(statement, cst.BaseCompoundStatement):
            blocks = [(statement.body, in_try or tp is cst.Try)]
            for attr in ("handlers", "orelse", "finalbody"):
                extra = getattr(statement, attr, None)
                if isinstance(extra, (list, tuple)):
                    blocks.extend((h.body, in_try) for h in extra)
                elif extra is not None:
                    blocks.append((extra.body if type(extra) is not cst.If else extra, in_try))
            for block, inside in reversed(blocks):
                if type(block) is cst.If:
                    stack.append((block, inside))
                elif isinstance(block, cst.BaseSuite):
                    body = block.body
                    if type(block) is cst.SimpleStatementSuite:
                        yield from ((s, inside) for s in body if type(s) in (cst.Import, cst.ImportFrom))
                    else:
                        stack.extend((s, inside) for s in reversed(body))


def _late_bound(module: str, ctx: FileContext) -> bool:
    """Whether a module-level import is bound from the start of the module (Bindings.late_imports):
    a Neuron package, or a CUDA-only library (rules/libraries.toml)."""
    return neuron_module(module) is not None or ctx.data.library(module) is not None


def _optional_library(module: str, in_try: bool) -> bool:
    """A CUDA-only library imported in a `try` body: its uses have the optional import's severity
    (ctx.optional_imports, read by cuda_only_lib.py)."""
    return in_try and neuron_module(module) is None


def without_fallback(module: str, ctx: FileContext) -> bool:
    """An import of `module` in the body of a module-level `try` (outside `if`) whose handlers bind
    nothing (`except: logging.warning(...)`, `except ImportError: raise`): where it fails, the
    names stay unbound, so the code that uses them needs the module all the same. A handler that
    assigns, even only a flag (`HAVE_AMP_C = False`, which the code then tests), offers a path
    without it."""
    if ctx.scope.kind != "module" or ctx.enclosing(cst.If) is not None:
        return False
    attempt = ctx.enclosing(cst.Try)
    if attempt is None or attempt.body not in ctx.parents:
        return False
    names = set(module.split("."))
    stack: list[cst.CSTNode] = list(attempt.handlers)
    while stack:
        node = stack.pop()
        if type(node) in _BINDING_STATEMENTS or (type(node) is cst.Name and node.value in names):
            return False  # `ext = None`, `HAVE_EXT = False`, `import other as ext`: a fallback
        stack.extend(children_of(node))
    return True


_BINDING_STATEMENTS = (cst.Assign, cst.AnnAssign, cst.AugAssign, cst.FunctionDef, cst.ClassDef)


def _used_in_functions(module: cst.Module, ctx: FileContext) -> None:
    """ctx.imports_without_fallback: the imports of ctx.fallbackless_imports whose name a function
    (or a class's method) uses. tutel's `jit_compiler.py` runs `tutel_custom_kernel` in its
    functions; Transformer Engine's `__init__.py` imports its extension in a `try` only to
    allow-list one of its types there, and needs it nowhere else."""
    names = ctx.fallbackless_imports
    stack: list[cst.CSTNode] = [s for s in module.body if type(s) in (cst.FunctionDef, cst.ClassDef)]
    while stack:
        current = stack.pop()
        if type(current) is cst.Name and current.value in names:
            ctx.imports_without_fallback.update(names[current.value])
        stack.extend(children_of(current))


# Bases that make a class a module: `nn.Module`, `LightningModule`, `PreTrainedModel`, `ModelMixin`.
_MODULE_BASE = re.compile(r"(Module|Model|ModelMixin)$")


class Bindings(Checker):
    """Name resolution: imports, assignments, scopes and loop depth. Emits nothing; every checker reads it."""

    triggers = ()

    @on(cst.Import)
    def import_(self, node: cst.Import, ctx: FileContext) -> None:
        for alias in node.names:
            full = dotted(alias.name)
            ctx.imports.add(full)
            ctx.note_import(full)
            if without_fallback(full, ctx):
                local = (
                    alias.asname.name.value
                    if alias.asname is not None and type(alias.asname.name) is cst.Name
                    else full.split(".")[0]
                )
                ctx.fallbackless_imports.setdefault(local, set()).add(full)
            if alias.asname is not None and type(alias.asname.name) is cst.Name:
                ctx.bind(alias.asname.name.value, ("module", full))
            else:
                root = full.split(".")[0]
                ctx.bind(root, ("module", root))

    @on(cst.ImportFrom)
    def import_from(self, node: cst.ImportFrom, ctx: FileContext) -> None:
        module = absolute_module(node, ctx)
        if not module:
            return
        ctx.imports.add(module)
        ctx.note_import(module)
        if type(node.names) is cst.ImportStar:
            return  # a star import binds names we cannot list: they stay unresolved (never guessed)
        for alias in node.names:
            name = dotted(alias.name)
            local = alias.asname.name.value if alias.asname and type(alias.asname.name) is cst.Name else name
            ctx.bind(local, ("module", f"{module}.{name}"))
            ctx.imports.add(f"{module}.{name}")
            if without_fallback(f"{module}.{name}", ctx):
                ctx.fallbackless_imports.setdefault(local, set()).update((module, f"{module}.{name}"))

    @on(cst.Assign, leave=True)
    def assign(self, node: cst.Assign, ctx: FileContext) -> None:
        for target in node.targets:
            _bind_value(target.target, node.value, ctx)
            if type(target.target) is cst.Attribute:
                _tensor_attribute(target.target, node.value, ctx)
        _moved_loop_item(node, ctx)
        _moved_loop_sibling(node, ctx)

    @on(cst.AugAssign, leave=True)
    def aug_assign(self, node: cst.AugAssign, ctx: FileContext) -> None:
        """`total_loss += loss.detach().float()`: the accumulator is a tensor from then on."""
        target = node.target
        if type(target) is cst.Attribute:
            # `self.offset += 1` keeps a host attribute on the host; anything else may move it
            _note_self_attribute(
                target, ctx.is_host_attribute(target) and ctx.is_python_data(node.value), ctx
            )
            if ctx.is_tensor(node.value) and not ctx.is_host_value(node.value):
                # `self.tokens = 0` then `self.tokens += (y >= 0).sum()`: a device tensor from then on
                _tensor_attribute(target, node.value, ctx)
        if type(target) is cst.Name and ctx.is_tensor(node.value) and not ctx.is_host_value(node.value):
            previous = ctx.lookup(target.value)
            # `total = 0` then `total += mask.sum()`: a number plus a device tensor is a device tensor
            if previous is None or previous[0] in ("other", "host"):
                ctx.bind(target.value, ("tensor", ""))

    @on(cst.Call, leave=True)
    def call(self, node: cst.Call, ctx: FileContext) -> None:
        """What a method call tells about names: `preds.append(x.cpu())` fills a host list,
        `self.register_buffer("n", torch.zeros(1))` makes `self.n` a tensor, `x.to(device)` moves
        values to a device."""
        func = node.func
        _note_helper_call(node, ctx)
        _note_moved_in_place(node, ctx)
        if type(func) is not cst.Attribute or not node.args:
            if type(func) is cst.Attribute and func.attr.value == "cuda":
                ctx.moves_to_device = True
            elif type(func) is cst.Attribute and func.attr.value in IN_PLACE_CONVERSIONS:
                _converted_in_place(node, ctx)
            elif type(func) is cst.Attribute and func.attr.value in _TENSOR_EVIDENCE:
                _tensor_by_use(func.value, ctx)
            return
        method = func.attr.value
        if method in _COLLECTIVES:
            _collective_operand(node, ctx)
        if method in _LIST_FILLS:
            receiver = func.value
            if type(receiver) is not cst.Name:
                return
            previous = ctx.lookup(receiver.value)
            value = node.args[0].value
            if (
                method == "append"
                and (previous == EMPTY_LIST or _sized_parts(previous))
                and (op := data_dependent(value, ctx)) is not None
            ):
                ctx.bind(receiver.value, ("other", _PARTS + op))  # `bboxes.append(dets[keep])`
            elif (
                previous == EMPTY_LIST
                and method == "append"
                and _filters_in_loop(ctx)
                and ctx.is_python_int(value)
            ):
                ctx.bind(receiver.value, FILTERED_LIST)  # `rows.append(i)` under an `if`: rows the data chose
            elif ctx.is_host_value(value):
                if previous is None or previous[0] in ("other", "host"):
                    ctx.bind(receiver.value, ("host", ""))
            elif previous == EMPTY_LIST and method == "append" and _filters_in_loop(ctx):
                ctx.bind(receiver.value, FILTERED_LIST)
        elif method in REGISTERS:
            _register_attribute(node, ctx)
        elif method in ("to", "cuda") and not ctx.moves_to_device:
            ctx.moves_to_device = _moves_to_device(node, ctx)

    @on(cst.Module)
    def late_imports(self, node: cst.Module, ctx: FileContext) -> None:
        """Names imported at module level below the functions that use them: a function body
        resolves its globals when it runs. Neuron packages and CUDA-only libraries (`def train():
        xm.optimizer_step(opt)` above `if __name__ == "__main__": import torch_xla.core.xla_model
        as xm`; `amp.scale_loss(...)` above `if args.fp16: from apex import amp`) are bound in the
        module scope from the start; the import statement binds them again, and a library imported
        in a `try` body is optional at its uses too. Every other module-level import is seen from
        functions only (ctx.late_imports: AutoGPTQ's setup.py probes `torch.cuda` in a function
        above `if BUILD_CUDA_EXT: import torch`)."""
        for statement, in_try in _module_level_imports(node):
            if type(statement) is cst.Import:
                for alias in statement.names:
                    full = dotted(alias.name)
                    if alias.asname is not None and type(alias.asname.name) is cst.Name:
                        local, binding = alias.asname.name.value, ("module", full)
                    else:
                        local, binding = full.split(".")[0], ("module", full.split(".")[0])
                    if not _late_bound(full, ctx):
                        ctx.late_imports.setdefault(local, binding)
                        continue
                    if _optional_library(full, in_try):
                        ctx.optional_imports.add(full)
                    ctx.bind(local, binding)
            elif not statement.relative and type(statement.names) is not cst.ImportStar:
                module = dotted(statement.module)
                bound = _late_bound(module, ctx)
                if bound and _optional_library(module, in_try):
                    ctx.optional_imports.add(module)
                for alias in statement.names:
                    name = dotted(alias.name)
                    local = (
                        alias.asname.name.value
                        if alias.asname and type(alias.asname.name) is cst.Name
                        else name
                    )
                    if not bound:
                        ctx.late_imports.setdefault(local, ("module", f"{module}.{name}"))
                        continue
                    ctx.bind(local, ("module", f"{module}.{name}"))
                    if _optional_library(module, in_try):
                        ctx.optional_imports.add(f"{module}.{name}")

    @on(cst.Module, leave=True)
    def module(self, node: cst.Module, ctx: FileContext) -> None:
        if ctx.fallbackless_imports:
            _used_in_functions(node, ctx)
        ctx.finish()

    @on(cst.AnnAssign, leave=True)
    def ann_assign(self, node: cst.AnnAssign, ctx: FileContext) -> None:
        if ctx.scope.kind == "class" and type(node.target) is cst.Name:
            kind = _annotated_kind(_unwrap_optional(node.annotation.annotation, ctx), ctx)
            if kind is not None and kind[0] == "tensor":
                ctx.tensor_fields.add(node.target.value)
        if node.value is None:
            if type(node.target) is cst.Name:
                kind = _annotated_kind(node.annotation.annotation, ctx)
                if kind is not None:
                    ctx.bind(node.target.value, kind)
            return
        _bind_value(node.target, node.value, ctx)

    @on(cst.Global)
    def global_(self, node: cst.Global, ctx: FileContext) -> None:
        names = frozenset(item.name.value for item in node.names)
        ctx.scope.global_names = ctx.scope.global_names | names

    @on(cst.WithItem)
    def with_item(self, node: cst.WithItem, ctx: FileContext) -> None:
        if node.asname is not None:
            target = node.asname.name
            if type(target) is cst.Name:
                _bind_kind_or_shadow(target, _host_kind(node.item, ctx), ctx)
            else:
                _shadow(target, ctx)

    @on(cst.FunctionDef)
    def function(self, node: cst.FunctionDef, ctx: FileContext) -> None:
        name = node.name.value
        decorators = _decorator_names(node, ctx) if node.decorators else []
        kinds = {_KERNEL_DECORATORS[d] for d in decorators if d in _KERNEL_DECORATORS}
        kernel = bool(kinds)
        if kinds:
            kind = sorted(kinds)[0]
            ctx.bind(name, ("kernel", kind))
            ctx.defines_kernels.append(kind)
        elif any(d.startswith(_NKI_PREFIXES) or d in _NKI_WRAPPERS for d in decorators):
            ctx.bind(name, ("kernel", "nki"))  # a Neuron kernel: lock-in, never a CUDA kernel
            kernel = True
        elif any(d.startswith("torch_neuronx.") for d in decorators):
            # `@xla_hlo_call def rand_like(...)`: an op written in HLO for the Neuron compiler
            ctx.bind(name, NEURON_OP)
        elif ctx.lookup(name) is not None:
            ctx.bind(name, ("other", None))
        outer = ctx.scope
        if (
            outer.kind == "module"
            and ctx.mentions_pattern(_INDENTED_IMPORT_AS)
            and (module := _returned_module(node)) is not None
        ):
            ctx.module_factories[name] = module
        site = _function_site(node, outer, ctx)
        if site != SITE_TEST and any(d in _CPU_JIT for d in decorators):
            site = SITE_HOST  # numba's CPU JIT compiles the function for numpy arrays on the host
        scope = Scope(
            "function", site=site, by_path=outer.by_path and site == outer.site, kernel_body=bool(kinds)
        )
        params = node.params
        for param in (*params.posonly_params, *params.params, *params.kwonly_params):
            annotation = param.annotation
            # A kernel's body runs on the device, one thread or tile at a time: its `torch.Tensor`
            # parameters (a numba kernel's hints) are device memory read in place, with no graph to
            # sync or to recompile, so branching on an element is the kernel's own logic.
            hinted = annotation is not None and not kernel
            # `attention_mask: Optional[torch.Tensor] = None`: a tensor wherever the code reads it;
            # `accepted_counts_cpu: Optional[torch.Tensor]` is one on the host, as its name says
            hinted = hinted and not host_by_name(param.name.value)
            kind = _annotated_kind(_unwrap_optional(annotation.annotation, ctx), ctx) if hinted else None
            scope.bindings[param.name.value] = kind or ("other", None)
        for star in (params.star_arg, params.star_kwarg):
            if type(star) is cst.Param:
                scope.bindings[star.name.value] = ("other", None)
        ctx.push_scope(scope)

    @on(cst.Lambda)
    def lambda_(self, node: cst.Lambda, ctx: FileContext) -> None:
        outer = ctx.scope
        scope = Scope("lambda", loop_depth=outer.loop_depth, site=outer.site, by_path=outer.by_path)
        params = node.params
        for param in (*params.posonly_params, *params.params, *params.kwonly_params):
            scope.bindings[param.name.value] = ("other", None)
        for star in (params.star_arg, params.star_kwarg):
            if type(star) is cst.Param:
                scope.bindings[star.name.value] = ("other", None)
        ctx.push_scope(scope)

    @on(cst.ClassDef)
    def class_(self, node: cst.ClassDef, ctx: FileContext) -> None:
        outer = ctx.scope
        site = _class_site(node, outer, ctx)
        if outer.kind == "module":
            ctx.class_sites[node.name.value] = site  # its subclasses in this file inherit it
        builder = next(
            (q for b in node.bases if (q := ctx.qualname(b.value)) and q.endswith(_BUILD_EXTENSION)), None
        )
        if builder is not None:
            # `class Build(BuildExtension)`: the subclass is the builder under another name, so its
            # use in `cmdclass={"build_ext": Build}` is a use of BuildExtension.
            ctx.bind(node.name.value, ("module", builder))
        elif ctx.lookup(node.name.value) is not None and not _old_torch_fallback(node, ctx):
            ctx.bind(node.name.value, ("other", None))
        by_path = outer.by_path and site == outer.site
        module_class = _module_class(node)
        scope = Scope("class", site=site, by_path=by_path, tensor_attrs=set(), module_class=module_class)
        for base in node.bases:
            inherited = ctx.class_host_attrs.get(base.value.value) if type(base.value) is cst.Name else None
            if inherited:  # `class Dropout(DropoutModule)`: the base's `self.rng = torch.Generator()`
                scope.host_attrs = {**(scope.host_attrs or {}), **inherited}
        ctx.push_scope(scope)

    @on(*_COMPREHENSIONS)
    def comprehension(
        self, node: cst.ListComp | cst.SetComp | cst.DictComp | cst.GeneratorExp, ctx: FileContext
    ) -> None:
        # Comprehensions have their own scope, and the element is walked before the `for` clauses,
        # so every clause's target is bound now.
        outer = ctx.scope
        ctx.push_scope(
            Scope("comprehension", loop_depth=outer.loop_depth + 1, site=outer.site, by_path=outer.by_path)
        )
        clause: cst.CompFor | None = node.for_in
        ctx.evaluated_once.add(id(clause.iter))
        while clause is not None:
            _loop_target(clause.target, clause.iter, ctx)
            clause = clause.inner_for_in

    @on(cst.Return)
    def return_(self, node: cst.Return, ctx: FileContext) -> None:
        """What a module-level function or method returns, position by position: device tensors or
        not (static/tensor_returns.py), and NKI kernels or not (a kernel getter)."""
        value = node.value
        if value is None or (type(value) is cst.Name and value.value == "None"):
            return
        key = ctx.function_key()
        if key is None:
            return
        if type(value) is cst.Tuple and not any(type(e) is cst.StarredElement for e in value.elements):
            elements, arity = [e.value for e in value.elements], len(value.elements)
        else:
            elements, arity = [value], WHOLE
        ctx.tensor_returns.note_return(key, [ctx.is_device_tensor(e) for e in elements], arity)
        if ctx.mentions(("nki",)):  # cached per file: most files never name NKI
            ctx.nki_returns.note_return(key, [_nki_kernel_name(e, ctx) for e in elements], arity)

    @on(cst.Yield)
    def yield_(self, node: cst.Yield, ctx: FileContext) -> None:
        key = ctx.function_key()
        if key is not None:
            ctx.tensor_returns.exclude(key)  # a generator: its call gives no tensor

    @on(cst.FunctionDef, cst.Lambda, cst.ClassDef, *_COMPREHENSIONS, leave=True)
    def pop_scope(self, node: cst.CSTNode, ctx: FileContext) -> None:
        if type(node) is cst.ClassDef and ctx.scope.host_attrs and len(ctx.scopes) == 2:
            ctx.class_host_attrs[node.name.value] = ctx.scope.host_attrs  # for its subclasses in this file
        elif type(node) is cst.FunctionDef and (key := ctx.function_key(node)) is not None:
            if ctx.scope.site == SITE_HOST:
                ctx.tensor_returns.exclude(key)  # data-pipeline code builds its tensors on the host
            ctx.tensor_returns.finish(key)
        ctx.pop_scope()

    @on(cst.For)
    def enter_for(self, node: cst.For, ctx: FileContext) -> None:
        _enter_loop(ctx.scope, _names_epochs(node.target) or _names_epochs(node.iter))
        ctx.evaluated_once.add(id(node.iter))
        _loop_target(node.target, node.iter, ctx)

    @on(cst.While)
    def enter_while(self, node: cst.While, ctx: FileContext) -> None:
        _enter_loop(ctx.scope, _names_epochs(node.test))

    @on(cst.For, cst.While, leave=True)
    def leave_loop(self, node: cst.CSTNode, ctx: FileContext) -> None:
        scope = ctx.scope
        scope.loop_depth -= 1
        if scope.epoch_loops:
            scope.epoch_loops.pop()
