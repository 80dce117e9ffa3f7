"""dynamic-shape: data-dependent output shapes, boolean-mask indexing, control flow on tensor values.

`nonzero`, `masked_select`, `unique` and friends are table-driven (rules/apis.toml); this module
adds what needs the call's arguments or the surrounding syntax.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import NamedTuple

import libcst as cst

from neuronlint.static.bindings import (
    FILTERED_LIST,
    PLAIN_OBJECTS,
    counted_rows,
    data_dependent,
    is_mask,
    loop_key,
)
from neuronlint.static.calls import arg_value, kwarg, positional
from neuronlint.static.context import (
    DRAWN,
    LEGACY_TENSOR_KINDS,
    SITE_STEP,
    SIZE,
    TENSOR_LIBRARIES,
    TENSOR_LIST,
    FileContext,
    filters_own_columns,
)
from neuronlint.static.extension_names import extension_module
from neuronlint.static.registry import Checker, on
from neuronlint.static.tensor_returns import WHOLE

# Tensor reductions whose value (not shape) decides a branch: the graph must be cut to read it.
_VALUE_METHODS = frozenset(
    {
        "item",
        "any",
        "all",
        "sum",
        "max",
        "min",
        "amax",
        "amin",
        "mean",
        "norm",
        "std",
        "var",
        "prod",
        "count_nonzero",
        "isnan",
        "isinf",
        "isfinite",
        "equal",
        "is_nonzero",
    }
)
# `torch.allclose` is not here: it compares inside the library and hands Python a bool, a tolerance
# check rather than model logic (labelling notes K, Z, AK); `torch.equal` stays, as exact equality
# often routes code (`if torch.equal(grad, one):`).
_VALUE_FUNCTIONS = frozenset(f"torch.{n}" for n in _VALUE_METHODS | {"is_nonzero", "equal"})
# A name that says it holds a boolean mask (`mask`, `padding_mask`, `valid_masks`, `valid`,
# `visibility_filter` in Gaussian-splatting trainers).
_MASK_NAME = re.compile(r"(^|_)(mask|masks|msk|valid|filter)\d*$", re.IGNORECASE)
_NOT_LITERAL_INDEXED = (
    cst.SimpleString,
    cst.ConcatenatedString,
    cst.FormattedString,
    cst.Dict,
    cst.List,
    cst.Tuple,
)
_IDENTITY = (cst.Is, cst.IsNot)  # `x is None` reads no value
_EQUALITY = (cst.Equal, cst.NotEqual)


def _identity_only(node: cst.Comparison) -> bool:
    """`x is None`, and `x != None` too: a tensor compared with None answers a Python bool without
    reading its values (AnimateDiff's `if controlnet_images != None:`)."""
    left = node.left
    for c in node.comparisons:
        if isinstance(c.operator, _IDENTITY):
            left = c.comparator
            continue
        if not isinstance(c.operator, _EQUALITY) or not (_none(left) or _none(c.comparator)):
            return False
        left = c.comparator
    return True


def _none(node: cst.BaseExpression) -> bool:
    return type(node) is cst.Name and node.value == "None"


_TENSOR_VIEWS = frozenset(
    {"T", "mT", "data", "grad", "real", "imag"}
)  # attributes that are the tensor's values


def _repeat_interleave(node: cst.Call, func: cst.BaseExpression, ctx: FileContext) -> None:
    """Data-dependent only when the repeats are a tensor and no `output_size` fixes the length."""
    if kwarg(node, "output_size") is not None:
        return
    qualname = ctx.qualname(func)
    if qualname == "torch.repeat_interleave":
        args = positional(node)
        if len(args) == 1 and kwarg(node, "repeats") is None:
            repeats: cst.BaseExpression | None = args[0].value  # torch.repeat_interleave(counts)
        else:
            repeats = arg_value(node, 1, "repeats")
    elif qualname is None:
        if ctx.is_host_value(func.value):
            return
        repeats = arg_value(node, 0, "repeats")
    else:
        return
    if repeats is not None and _tensor_valued(repeats, ctx):
        ctx.report(
            "NL601", func, op="repeat_interleave(tensor repeats)", api="repeat_interleave", end_node=node
        )


# Tensor factories and how many leading positional arguments are the size (None: all of them);
# `torch.full(size, value)` and `x.new_full(size, value)` are sized by their first argument only.
_FACTORIES = {
    "zeros": None,
    "ones": None,
    "empty": None,
    "rand": None,
    "randn": None,
    "arange": None,
    "full": 1,
    "new_zeros": None,
    "new_ones": None,
    "new_empty": None,
    "new_full": 1,
}


def _factory_size(node: cst.Call, func: cst.Attribute, name: str, ctx: FileContext) -> None:
    """`torch.zeros(max_bs)`, `torch.arange(n)`, `x.new_zeros(n, d)` with `n` a number read from a
    tensor (`n = lengths.max().item()`): the new tensor's shape depends on the data."""
    if name.startswith("new_"):
        if _maybe_tensor(func.value, ctx) is False:
            return
    elif ctx.qualname(func) != f"torch.{name}":
        return
    sizes = [a.value for a in node.args if a.keyword is None and not a.star][: _FACTORIES[name]]
    _report_sizes(sizes or _size_keyword(node), ctx, values_only=True)


def _size_keyword(node: cst.Call) -> list[cst.BaseExpression]:
    """`torch.empty(size=(n, d))`, `torch.ByteTensor(size=(max_size,))`: the sizes given by keyword."""
    return [a.value for a in node.args if a.keyword is not None and a.keyword.value == "size"]


def _report_sizes(
    sizes: list[cst.BaseExpression], ctx: FileContext, values_only: bool = False, bound: str = "tensor size"
) -> None:
    """NL604 on the first size (or element of a size tuple) that reads a tensor value. With
    `values_only`, the size of a tensor the data already sized (`x[mask].shape[0]`) does not count:
    reshaping by it adds no new shape beyond the one reported where that tensor is made."""
    if len(sizes) == 1 and type(sizes[0]) in (cst.Tuple, cst.List):
        sizes = [e.value for e in sizes[0].elements]
    for size in sizes:
        if type(size) is cst.Integer:
            continue
        read = _value_read(size, ctx, host_reads=True)
        if read is not None and not (values_only and _reads_size(read.node)):
            ctx.report("NL604", size, read=read.text, bound=bound)
            return


# `torch.ByteTensor(size=(n,))`: sized by keyword (positional arguments may be data or sizes).
_LEGACY_CONSTRUCTORS = frozenset(f"{kind}Tensor" for kind in LEGACY_TENSOR_KINDS)
# Tensor methods whose positional arguments are the sizes of the result.
_RESHAPES = frozenset({"view", "reshape", "expand"})


def _reshape_size(node: cst.Call, func: cst.Attribute, ctx: FileContext) -> None:
    """`v.reshape(b, c, H_, W_)` with `H_, W_` the rows of a device tensor (`for H_, W_ in
    spatial_shapes`) or numbers read from one: the result's shape depends on the data."""
    if ctx.qualname(func) is not None or not _maybe_tensor(func.value, ctx) or ctx.is_numpy(func.value):
        return
    _report_sizes([a.value for a in node.args if a.keyword is None and not a.star], ctx, values_only=True)


def _split_sizes(node: cst.Call, func: cst.Attribute, ctx: FileContext) -> None:
    """`value.split([H_ * W_ for H_, W_ in spatial_shapes], dim=1)`: split sizes computed from the
    rows of a device tensor, or listed from numbers read from one."""
    qualname = ctx.qualname(func)
    if qualname == "torch.split":
        sizes = arg_value(node, 1, "split_size_or_sections")
    elif qualname is None and _maybe_tensor(func.value, ctx) and not ctx.is_numpy(func.value):
        sizes = arg_value(node, 0, "split_size")
    else:
        return
    if type(sizes) is cst.ListComp:
        # The comprehension's targets are bound only when the walk enters it, after this call.
        source = sizes.for_in.iter
        if type(source) is cst.Call and type(source.func) is cst.Name and source.func.value == "enumerate":
            source = source.args[0].value if source.args else source
        if type(source) in (cst.Name, cst.Attribute, cst.Subscript) and ctx.is_device_tensor(source):
            ctx.report("NL604", sizes, read=ctx.code(source), bound="split size")
    elif sizes is not None:
        _report_sizes([sizes], ctx, values_only=True)


def _linspace_steps(node: cst.Call, ctx: FileContext) -> None:
    """`torch.linspace(0, H_ - 1, H_)` with `H_` a device tensor's value: that many points."""
    steps = arg_value(node, 2, "steps")
    if steps is not None:
        _report_sizes([steps], ctx, values_only=True)


# Methods whose result is a tensor's shape, not its values: static once the input shape is.
_SHAPE_QUERIES = frozenset({"size", "numel", "dim", "nelement"})
_COUNT_NAME = re.compile(r"(^|_)(lengths|lens|counts|sizes|repeats|durations|dur)$")


def _topk_count(node: cst.Call, func: cst.Attribute, ctx: FileContext) -> None:
    """`torch.topk(cost, k=dynamic_ks[i].item())`, `cost.topk(k)` with `k` read from a tensor (the
    SimOTA matchers' dynamic k): as many results as the data says."""
    qualname = ctx.qualname(func)
    if qualname == "torch.topk":
        k = arg_value(node, 1, "k")
    elif qualname is None and _maybe_tensor(func.value, ctx):
        k = arg_value(node, 0, "k")
    else:
        return
    if k is not None:
        _report_sizes([k], ctx, values_only=True, bound="top-k count")


def _tensor_valued(expr: cst.BaseExpression, ctx: FileContext) -> bool:
    """Repeats that are a tensor: a known tensor, an indexed or computed value, or a name such as `lengths`."""
    if type(expr) in (cst.Integer, cst.Attribute):
        return False  # literals and config attributes (`self.cfg.clone_batch`) are Python ints
    if ctx.is_tensor(expr):
        return True
    if type(expr) is cst.Name:  # `lengths`, `seq_lens`; not `num_repeats`, `n_rep` (Python ints)
        if not _COUNT_NAME.search(expr.value) or expr.value.startswith(("num_", "n_")):
            return False
        param = ctx.parameter(expr.value)  # `repeats: int` says it is a Python number
        return param is None or param.annotation is None or ctx.code(param.annotation.annotation) != "int"
    if type(expr) is cst.BinaryOperation:
        return _tensor_valued(expr.left, ctx) or _tensor_valued(expr.right, ctx)
    if type(expr) is cst.Call:
        if type(expr.func) is cst.Attribute and expr.func.attr.value in _SHAPE_QUERIES:
            return False  # x.size(0), x.numel(): a shape, fixed for a given input shape
        return type(expr.func) is not cst.Name  # int(...), len(...), min(...) are Python numbers
    if type(expr) is cst.Subscript:
        value = expr.value  # x.shape[0] is a shape; counts[i] is a tensor's value
        return not (type(value) is cst.Attribute and value.attr.value == "shape")
    return False


# Builtins whose argument's value (not its shape) becomes a Python number: `int(t)` reads t.
_NUMBER_BUILTINS = frozenset({"int", "float", "bool", "round", "abs", "min", "max", "all", "any"})
# Size queries that read a shape, which is data itself after `nonzero`/`unique`/`x[mask]`/NMS.
_SIZE_METHODS = frozenset({"numel", "size", "nelement", "__len__"})


def _sized_by_data(node: cst.BaseExpression, ctx: FileContext, detections: bool = False) -> str | None:
    """'keep (from nms)' when `node` names a tensor whose size depends on its data. With
    `detections`, also a parameter named for detection results (`boxes`, `dets`), which the
    caller's filtering sized (`if dets.shape[0] == 0: return dets`)."""
    if type(node) is cst.Name:
        op = data_dependent(node, ctx)
        if op is not None:
            return f"{node.value}, from {op}"
        if (
            detections
            and ctx.lookup(node.value) in (None, ("other", None), ("tensor", ""))
            and _DETECTIONS.match(node.value)
        ):
            if ctx.parameter(node.value) is not None:
                return f"{node.value}, detections passed in"
    return None


# Parameters that hold detection results: boxes and detections kept by a score threshold or NMS.
_DETECTIONS = re.compile(r"^(\w+_)?(boxes|bboxes|dets|detections|proposals)$")


def _reads_size(node: cst.CSTNode) -> bool:
    """A read of a size (`.shape`, `len(x)`, `x.numel()`), not of values: a loop over the rows of a
    tensor whose size the data decides (`range(cur_classes.shape[0])` after `cur_classes[keep]`)
    has that tensor reported where it is made."""
    if type(node) is cst.Attribute:
        return node.attr.value == "shape"
    if type(node) is cst.Call:
        func = node.func
        return (type(func) is cst.Name and func.value == "len") or (
            type(func) is cst.Attribute and func.attr.value in _SIZE_METHODS
        )
    return False


class _Read(NamedTuple):
    """A tensor-value read found in an expression: what it reads, and the node that reads it.
    `kept`: the key of the finding made where a data-dependent size was bound to a name, which a
    branch on the name reports (bindings._size_of_data)."""

    text: str
    node: cst.CSTNode
    kept: str | None = None


def _value_read(
    expr: cst.BaseExpression,
    ctx: FileContext,
    host_reads: bool,
    sizes: bool = False,
    detections: bool = False,
) -> _Read | None:
    """The tensor-value read inside an expression, e.g. '.item()', 'torch.any' or a tensor's name.

    The walk is bounded by the expression (tests and slice bounds are small). A name counts only
    in a value position: the whole expression, an operand, or the argument of `int()`/`min()`...,
    never a call argument such as `len(x)` or `isinstance(x, ...)`, nor under `.shape`. With
    `host_reads`, a name holding a number already read from a tensor (`n = t.max().item()`) counts;
    with `sizes`, a name holding the size of a tensor the data sized (`n = len(keep)`); with
    `detections`, the count of a parameter named for detection results (`if boxes.numel() == 0:`).
    The read's node is where a finding about it sits (the line of `.all()` in a multi-line test).
    """
    stack: list[tuple[cst.BaseExpression, bool]] = [(expr, True)]
    while stack:
        node, value_position = stack.pop()
        if type(node) is cst.Call:
            func = node.func
            if value_position and ctx.returned(node, WHOLE) == ("tensor", ""):
                # `if self.ready():`, a method returning torch.all(...)
                return _Read(f"{_short(func, ctx)}()", node)
            qualname = ctx.qualname(func)
            if qualname in _VALUE_FUNCTIONS:
                tensors = [a.value for a in node.args if a.keyword is None]
                if not tensors or not all(ctx.is_host_value(t) for t in tensors):
                    return _Read(qualname, node)
                continue  # torch.equal(ids_cpu, other_cpu): both on the host already
            if qualname is None and type(func) is cst.Attribute:
                receiver = func.value
                if func.attr.value in _VALUE_METHODS and _maybe_tensor(receiver, ctx):
                    return _Read(f".{func.attr.value}()", node)
                if func.attr.value in _SIZE_METHODS:
                    rows = counted_rows(node)
                    # `x.size(1)`, `x.size(-1) == 5`: a dimension the data does not size (a 2-D `x`)
                    sized = (
                        _sized_by_data(receiver, ctx, detections and rows is not None)
                        if rows is not None or not node.args
                        else None
                    )
                    if sized is not None:
                        return _Read(f"{sized}: .{func.attr.value}()", node)
                stack.append((receiver, False))
            if type(func) is cst.Name and func.value == "len" and len(node.args) == 1:
                sized = _sized_by_data(node.args[0].value, ctx, detections)
                if sized is not None:
                    return _Read(f"len({sized})", node)
            numeric = type(func) is cst.Name and func.value in _NUMBER_BUILTINS
            stack.extend((a.value, numeric) for a in node.args)
        elif type(node) is cst.Comparison:
            if not _identity_only(node):
                stack.append((node.left, value_position))
                stack.extend((c.comparator, value_position) for c in node.comparisons)
        elif type(node) in (cst.BooleanOperation, cst.BinaryOperation):
            stack.append((node.left, value_position))
            stack.append((node.right, value_position))
        elif type(node) is cst.UnaryOperation:
            stack.append((node.expression, value_position))
        elif type(node) is cst.Subscript:
            value = node.value
            if detections and (rows := counted_rows(node)) is not None:
                sized = _sized_by_data(rows, ctx, detections=True)  # `dets.shape[0]`
                if sized is not None:
                    rows_read = ".shape[0]" if type(value) is cst.Attribute else ".size()[0]"
                    return _Read(f"{sized}: {rows_read}", node)
            stack.append((value, value_position))
            # `if not is_thing[label.item()]:` looks up by a value read from a tensor
            stack.extend((e.slice.value, False) for e in node.slice if type(e.slice) is cst.Index)
        elif type(node) is cst.NamedExpr:
            stack.append((node.value, value_position))  # `if n := len(keep):`
        elif type(node) is cst.Attribute:
            if node.attr.value == "shape":
                sized = _sized_by_data(node.value, ctx)
                if sized is not None:
                    return _Read(f"{sized}: .shape", node)
            if value_position and ctx.is_tensor_attribute(node):
                return _Read(ctx.code(node), node)  # `self.num_updates`, a registered buffer
            if value_position and node.attr.value in ctx.tensor_fields:
                # `params.seqlens`, declared `seqlens: Optional[torch.Tensor]` here
                return _Read(ctx.code(node), node)
            stack.append((node.value, value_position and node.attr.value in _TENSOR_VIEWS))
        elif type(node) is cst.Name and value_position:
            binding = ctx.lookup(node.value)
            if binding is not None:
                if binding[0] == "tensor" or binding[0] == DRAWN:
                    return _Read(node.value, node)
                if host_reads and binding[0] == "read":
                    return _Read(f"{node.value} = {binding[1]}", node)
                if sizes and binding[0] == SIZE:
                    text, kept = binding[1]
                    return _Read(f"{node.value} = {text}", node, kept)
    return None


def _maybe_tensor(receiver: cst.BaseExpression, ctx: FileContext) -> bool:
    if isinstance(receiver, _NOT_LITERAL_INDEXED) or ctx.is_host_value(receiver):
        return False
    return not (type(receiver) is cst.Name and receiver.value in PLAIN_OBJECTS)


def _periodic(test: cst.BaseExpression) -> bool:
    """`if not (steps % every):`, `if step % N == 0:`: a schedule on a counter (saving, logging),
    not a decision of the model."""
    if type(test) is cst.UnaryOperation and type(test.operator) is cst.Not:
        test = test.expression
    if type(test) is cst.Comparison and len(test.comparisons) == 1:
        test = test.left
    return type(test) is cst.BinaryOperation and type(test.operator) is cst.Modulo


def _drawn(node: cst.CSTNode, ctx: FileContext) -> bool:
    """A read of one random number drawn on the CPU: the number (`choice`) or its `.item()`."""
    if type(node) is cst.Call and type(node.func) is cst.Attribute:
        node = node.func.value
    return isinstance(node, cst.BaseExpression) and ctx.draws_one_number(node)


def _control_flow(test: cst.BaseExpression, construct: str, ctx: FileContext) -> bool:
    # A number read earlier (`n = t.sum().item()`) decides a branch of the traced graph only inside
    # forward()/step functions; in a training loop such branches are ordinary host logic, and so is
    # a periodic test of a step counter read from a buffer (`steps = int(self.steps.item())`).
    read = _value_read(
        test,
        ctx,
        host_reads=ctx.site == SITE_STEP and not _periodic(test),
        sizes=True,
        detections=construct != "assert",  # a shape check of boxes passed in decides nothing
    )
    if read is not None and _drawn(read.node, ctx):
        return False  # `if choice == 0:` of `choice = torch.randint(0, 2, (1,))[0]`: a CPU number
    if read is not None and read.kept is not None:
        ctx.release(read.kept, construct=construct)  # on the line that reads the size
    elif read is not None:
        ctx.report("NL603", read.node, construct=construct, read=read.text)
    elif (pending := _pending_operand(test, ctx)) is not None:
        key, name = pending  # `if eval_loss < best:`, eval_loss from a helper defined further down
        ctx.defer(key, "NL603", test, construct=construct, read=name)
    else:
        return False
    return True


def _test_operands(test: cst.BaseExpression, arithmetic: bool = False) -> Iterator[cst.BaseExpression]:
    """The operands a test compares or combines, through `not`, `and`/`or` and comparisons (not an
    identity test, `x is None`, which reads no value); with `arithmetic`, through `+`, `-`... too."""
    stack = [test]
    while stack:
        node = stack.pop()
        if type(node) is cst.Comparison:
            if not _identity_only(node):
                stack.append(node.left)
                stack.extend(c.comparator for c in node.comparisons)
        elif type(node) is cst.BooleanOperation or (arithmetic and type(node) is cst.BinaryOperation):
            stack.extend((node.left, node.right))
        elif type(node) is cst.UnaryOperation:
            stack.append(node.expression)
        else:
            yield node


# Names no assignment can rebind (`while True:`): a loop's body never decides them.
_CONSTANTS = frozenset({"True", "False", "None"})


def _loop_names(test: cst.BaseExpression) -> Iterator[tuple[str, bool, cst.BaseExpression]]:
    """The names a loop test reads: those whose row count it reads (`order.shape[0]`, `len(order)`,
    `order.numel()`; True) and those it reads as values (`not finished`, `loss > tol`; False), each
    with the node that reads it."""
    for node in _test_operands(test, arithmetic=True):
        if type(node) in (cst.Call, cst.Subscript) and type(rows := counted_rows(node)) is cst.Name:
            yield rows.value, True, node
        elif type(node) is cst.Name and node.value not in _CONSTANTS:
            yield node.value, False, node


def _pending_operand(test: cst.BaseExpression, ctx: FileContext) -> tuple[str, str] | None:
    """A name the test compares or combines (not `is None`) that holds a result of the module's own
    function the walk has not judged yet: its defer key and the name (static/tensor_returns.py)."""
    for node in _test_operands(test):
        if type(node) is cst.Call:
            # `if self.ready():` with `ready` defined further down
            returned = ctx.returned(node, WHOLE)
            if returned is not None and returned[0] == "other":
                return returned[1], f"{_short(node.func, ctx)}()"
        elif (key := ctx.pending_read(node)) is not None:
            return key, node.value
    return None


def _mask_index(expr: cst.BaseExpression, ctx: FileContext, by_name: bool = True) -> str | None:
    """The boolean mask an index expression is, as short text for the message; None if not a mask.
    `by_name`: a name that only reads as a mask (`valid`, `keep_mask`) counts too."""
    if type(expr) is cst.Comparison:
        if any(type(c.operator) in (cst.Is, cst.IsNot, cst.In, cst.NotIn) for c in expr.comparisons):
            return None
        return _short(expr, ctx)
    if type(expr) is cst.UnaryOperation and type(expr.operator) is cst.BitInvert:
        return _short(expr, ctx)
    if type(expr) is cst.BinaryOperation and type(expr.operator) in (cst.BitAnd, cst.BitOr):
        if _looks_like_type(expr.left) or _looks_like_type(expr.right):
            return None  # `list[int | None]`: a type union, not a mask
        return _short(expr, ctx)
    if type(expr) is cst.Name:
        binding = ctx.lookup(expr.value)
        if binding is not None and binding[0] == "mask":
            return expr.value
        if (
            by_name
            and _MASK_NAME.search(expr.value)
            and (binding is None or binding[0] in ("other", "tensor"))
        ):
            return expr.value
        return None
    if type(expr) is cst.Call and is_mask(expr, ctx):
        return _short(expr, ctx)  # `x[m.bool()]`, `grads[grads.isnan()]`, `x[torch.isin(ids, vocab)]`
    if (
        type(expr) is cst.Attribute
        and by_name
        and _MASK_NAME.search(expr.attr.value)
        and (expr.attr.value in ctx.tensor_fields or ctx.is_tensor_attribute(expr))
    ):
        return _short(expr, ctx)  # `xk[self.metadata.to_cache_mask]`, declared `to_cache_mask: torch.Tensor`
    if type(expr) is cst.Subscript and type(expr.value) is cst.Name:
        return _short(expr, ctx) if _mask_index(expr.value, ctx) else None  # `x[mask[:, 1:]]`
    return None


_TYPE_NAMES = frozenset(
    {"None", "str", "int", "float", "bool", "bytes", "list", "dict", "tuple", "set", "type", "object"}
)


def _looks_like_type(expr: cst.BaseExpression) -> bool:
    """`None`, `str`, `Tensor`, `nn.Module`, `list[str]`, `A | B`: operands of a type union."""
    if type(expr) is cst.Subscript:
        return _looks_like_type(expr.value)
    if type(expr) is cst.BinaryOperation and type(expr.operator) is cst.BitOr:
        return _looks_like_type(expr.left) or _looks_like_type(expr.right)
    if type(expr) is cst.Name:
        return expr.value in _TYPE_NAMES or expr.value[:1].isupper()
    if type(expr) is cst.Attribute:
        return expr.attr.value[:1].isupper()
    return type(expr) in (cst.SimpleString, cst.ConcatenatedString)  # forward references


def _short(node: cst.CSTNode, ctx: FileContext) -> str:
    text = " ".join(ctx.code(node).split())
    return text if len(text) <= 60 else text[:57] + "..."


_SEQUENCE_BUILTINS = frozenset({"sorted", "list", "tuple", "range", "reversed", "str", "bytes"})


def _slices_python_object(ctx: FileContext) -> bool:
    """`self.config.layer_list[: n]`: slicing a configuration list or a literal, not a tensor."""
    subscript = ctx.parent(2)  # Slice -> SubscriptElement -> Subscript
    if type(subscript) is not cst.Subscript:
        return False
    value = subscript.value
    if isinstance(value, _NOT_LITERAL_INDEXED) or ctx.is_host_value(value):
        return True
    if type(value) is cst.Call and type(value.func) is cst.Name:
        return value.func.value in _SEQUENCE_BUILTINS and ctx.lookup(value.func.value) is None
    while type(value) is cst.Attribute:
        value = value.value
        if type(value) is cst.Attribute and value.attr.value in PLAIN_OBJECTS:
            return True
    return type(value) is cst.Name and value.value in PLAIN_OBJECTS and value.value != "self"


# Builtins whose result depends on tensor values compared or tested in Python.
_DECIDING_BUILTINS = frozenset({"all", "any", "bool", "min", "max"})


def _bracket_line(node: cst.Subscript, ctx: FileContext) -> cst.CSTNode:
    """A node whose first line holds the subscript's opening bracket (the conventions' line of a
    multi-line subscript): the subscript itself when its value fits on one line (`x[` with the mask
    on the next), else its first index (`torch.arange(n)` then `.to(d)[mask]` on the next line).
    The bracket token has no position of its own: asking for one regenerates the whole module."""
    return node.slice[0] if "\n" in ctx.code(node.value) else node


def _filtered_rows(node: cst.Subscript, ctx: FileContext) -> None:
    """`logits[rows, :] = v` with `rows` a list a loop filled under an `if`: as many rows as the data
    selected, like a boolean mask."""
    first = node.slice[0].slice
    if type(first) is not cst.Index or type(first.value) is not cst.Name:
        return
    if ctx.lookup(first.value.value) != FILTERED_LIST:
        return
    if isinstance(node.value, _NOT_LITERAL_INDEXED) or ctx.is_host_value(node.value):
        return
    parent = ctx.parent()
    write = type(parent) in (cst.AssignTarget, cst.AugAssign) and parent.target is node
    ctx.report(
        "NL602",
        _bracket_line(node, ctx),
        end_node=node.slice[0],
        mask=first.value.value,
        write=write,
        index="the filtered list",
    )


def _numpy_only(ctx: FileContext) -> bool:
    """A module that imports numpy and nothing that makes tensors (speechbrain's PLDA statistics):
    its masks index arrays on the host."""
    seen = ctx.imports_seen()
    return "numpy" in seen and not seen & TENSOR_LIBRARIES


def _compares_numbers(test: cst.Comparison, ctx: FileContext) -> bool:
    """A comparison of Python numbers only (loop counters, literals, their arithmetic)."""
    return all(
        ctx.is_python_data(side) and not ctx.is_tensor(side)
        for side in (test.left, *(c.comparator for c in test.comparisons))
    )


def _where_on_device(node: cst.Call, ctx: FileContext) -> bool:
    """`torch.where(cond)` (one argument) of a condition that is not host data: a host tensor's
    compaction (`torch.where(cpu_tokens.ge(k))`) is CPU work."""
    if len(node.args) != 1 or node.args[0].star:
        return False
    return not ctx.is_host_value(node.args[0].value)


# Non-maximum suppression keeps as many boxes as the scores decide, whichever library computes it.
_NMS_OPS = frozenset({"nms", "nms_rotated", "nms_quadri", "batched_nms", "batched_nms_rotated"})


def _compiled_nms(node: cst.Call, func: cst.Attribute, ctx: FileContext) -> None:
    """`ext_module.nms(boxes, scores, ...)`, `torch.ops.detectron2.nms_rotated(...)`,
    `iou3d_nms_cuda.nms_gpu(boxes, keep, thresh)` (which returns the count kept): NMS in a compiled
    extension or a custom operator (the table holds torchvision's Python API)."""
    qualname = ctx.qualname(func)
    if qualname is None or ctx.data.api(qualname) is not None:
        return
    if node.args and ctx.is_host_value(node.args[0].value):
        return  # MMCV's `ext_module.nms_match(*[dets.detach().cpu()], ...)`: a CPU op on host boxes
    if qualname.startswith("torch.ops.") or extension_module(qualname, ctx) is not None:
        ctx.report("NL601", func, op=func.attr.value, api=qualname, end_node=node)


class DynamicShape(Checker):
    """Data-dependent output shapes, boolean-mask indexing, control flow and slices on tensor values."""

    emits = {
        "NL601": ("op", "api"),
        "NL602": ("mask", "write", "index"),
        "NL603": ("construct", "read"),
        "NL604": ("read", "bound"),
    }
    triggers = (
        "where",
        "nms",
        "mask",
        "if ",
        "while ",
        "assert ",
        ".item(",
        ".any(",
        ".all(",
        ":",
        "repeat_interleave",
        "all(",
        "any(",
        "bool(",
        "min(",
        "max(",
        "pad(",
        "numel(",
        "shape",
    )

    @on(cst.Call)
    def data_dependent_call(self, node: cst.Call, ctx: FileContext) -> None:
        func = node.func
        if type(func) is cst.Attribute:
            name = func.attr.value
            if name == "where":
                if ctx.qualname(func) == "torch.where" and _where_on_device(node, ctx):
                    ctx.report("NL601", func, op="where(condition)", api="torch.where", end_node=node)
            elif name == "repeat_interleave":
                _repeat_interleave(node, func, ctx)
            elif name in _FACTORIES:
                _factory_size(node, func, name, ctx)
            elif name in _RESHAPES:
                _reshape_size(node, func, ctx)
            elif name == "split":
                _split_sizes(node, func, ctx)
            elif name == "linspace" and ctx.qualname(func) == "torch.linspace":
                _linspace_steps(node, ctx)
            elif name == "topk":
                _topk_count(node, func, ctx)
            elif name in _LEGACY_CONSTRUCTORS and ctx.qualname(func) == f"torch.{name}":
                _report_sizes(_size_keyword(node), ctx, values_only=True)  # given data, no size keyword
            elif name in _NMS_OPS or "nms" in name.split("_"):  # OpenPCDet's `nms_gpu`, `nms_normal_gpu`
                _compiled_nms(node, func, ctx)
        elif type(func) is cst.Name and func.value in ("where", "repeat_interleave"):
            qualname = ctx.qualname(func)
            if qualname == "torch.where" and _where_on_device(node, ctx):
                ctx.report("NL601", func, op="where(condition)", api="torch.where", end_node=node)
            elif qualname == "torch.repeat_interleave":
                _repeat_interleave(node, func, ctx)

    @on(cst.Call)
    def builtin_over_tensors(self, node: cst.Call, ctx: FileContext) -> None:
        """`all(t)`, `any(t)`, `bool(t.any())`, `min(self.decay, t)`: Python decides on tensor values."""
        func = node.func
        if type(func) is not cst.Name or func.value not in _DECIDING_BUILTINS or not node.args:
            return
        if ctx.lookup(func.value) is not None or ctx.in_error_path():
            return
        for arg in node.args:
            if arg.keyword is not None or arg.star:
                continue
            if type(arg.value) in (cst.GeneratorExp, cst.ListComp):
                # `max(p.grad.abs().max() for p in parameters)`: Python compares the tensors
                element = arg.value.elt
                if ctx.is_tensor(element) and not ctx.is_host_value(element):
                    ctx.report("NL603", node, construct=f"{func.value}()", read=ctx.code(element)[:60])
                    return
                continue
            if type(arg.value) is cst.Name and ctx.lookup(arg.value.value) == TENSOR_LIST:
                # `max(known_num)`, `known_num = [sum(k) for k in device_tensors]`
                ctx.report("NL603", node, construct=f"{func.value}()", read=arg.value.value)
                return
            read = _value_read(arg.value, ctx, host_reads=False)
            if read is not None and read.text != ".item()" and not ctx.is_host_value(arg.value):
                ctx.report("NL603", node, construct=f"{func.value}()", read=read.text)
                return

    @on(cst.Call)
    def range_bounds(self, node: cst.Call, ctx: FileContext) -> None:
        """`for i in range(num_images + 1)` with `num_images = (ids == IMAGE).sum()`, and
        `torch.tensor(range(num))` over the items of a list of device tensors: how many times the
        loop runs, or how long the new tensor is, depends on the data. A number read earlier counts
        only inside forward()/step functions, as for branches (`_control_flow`)."""
        func = node.func
        if type(func) is not cst.Name or func.value != "range" or ctx.lookup("range") is not None:
            return
        for arg in node.args:
            if arg.keyword is not None or arg.star or type(arg.value) is cst.Integer:
                continue
            read = _value_read(arg.value, ctx, host_reads=ctx.site == SITE_STEP)
            if read is not None and not ctx.is_host_value(arg.value) and not _reads_size(read.node):
                ctx.report("NL604", arg.value, read=read.text, bound="range bound")
                return

    @on(cst.Call)
    def pad_widths(self, node: cst.Call, ctx: FileContext) -> None:
        """`F.pad(x, (0, n))` with `n` read from a tensor: the padded size depends on the data."""
        if ctx.qualname(node.func) != "torch.nn.functional.pad":
            return
        widths = arg_value(node, 1, "pad")
        if type(widths) not in (cst.Tuple, cst.List):
            return
        for element in widths.elements:
            if type(element.value) is cst.Integer:
                continue
            read = _value_read(element.value, ctx, host_reads=True)
            if read is not None:
                ctx.report("NL604", element.value, read=read.text, bound="pad width")
                return

    @on(cst.If)
    def if_(self, node: cst.If, ctx: FileContext) -> None:
        _control_flow(node.test, "if", ctx)

    @on(cst.While)
    def while_(self, node: cst.While, ctx: FileContext) -> None:
        if _control_flow(node.test, "while", ctx):
            return
        # What the body assigns decides the test from the second pass on: `while order.shape[0]:`
        # with `order = order[ids + 1]` runs until the data empties the tensor, `while not
        # finished:` with `finished = unfinished.max() == 0` reads a device value. Reported when the
        # body is seen to assign such a value (bindings._loop_carried).
        for name, counted, read in _loop_names(node.test):
            ctx.defer(loop_key(node, name, counted), "NL603", read, construct="while", read=name)

    @on(cst.Assert)
    def assert_(self, node: cst.Assert, ctx: FileContext) -> None:
        _control_flow(node.test, "assert", ctx)

    @on(cst.IfExp)
    def if_expression(self, node: cst.IfExp, ctx: FileContext) -> None:
        _control_flow(node.test, "if-else expression", ctx)  # `mask if mask.any() else None`

    @on(cst.CompIf)
    def comprehension_filter(self, node: cst.CompIf, ctx: FileContext) -> None:
        _control_flow(node.test, "comprehension filter", ctx)  # `[t for t in ts if t.any()]`

    @on(cst.Subscript)
    def boolean_mask(self, node: cst.Subscript, ctx: FileContext) -> None:
        if isinstance(node.value, _NOT_LITERAL_INDEXED):
            return
        # The first index that is a mask, in one dimension or several (`targets[targets[:, 0] == i,
        # 1:]`, `W[:, dead] = 0`); an integer or slice beside it keeps the shape data-dependent.
        # Beside other indices a name must be bound to a mask: `x[batch_index, last_valid]` gathers
        # with integer index tensors, whatever their names say.
        element = index = mask = None
        by_name = len(node.slice) == 1
        for element in node.slice:
            index = element.slice
            if type(index) is cst.Index and (mask := _mask_index(index.value, ctx, by_name)) is not None:
                break
        if mask is None:
            _filtered_rows(node, ctx)
            return
        if type(index.value) is cst.Comparison and _compares_numbers(index.value, ctx):
            return  # `roles[j % 2 == 1]`: a Python bool of loop counters picks one item
        if ctx.is_host_value(node.value) or ctx.is_numpy(index.value) or _numpy_only(ctx):
            return  # numpy arrays and their masks: host work
        if filters_own_columns(node, ctx.code):
            return  # `df[df["task"] == name]`: a DataFrame filtered by its own column
        parent = ctx.parent()
        write = type(parent) in (cst.AssignTarget, cst.AugAssign) and parent.target is node
        ctx.report(
            "NL602", _bracket_line(node, ctx), end_node=element, mask=mask, write=write, index="the mask"
        )

    @on(cst.Slice)
    def slice_bounds(self, node: cst.Slice, ctx: FileContext) -> None:
        for bound in (node.lower, node.upper):
            if bound is None or type(bound) is cst.Integer:
                continue
            read = _value_read(bound, ctx, host_reads=True)
            if read is not None:
                if _slices_python_object(ctx):
                    return
                subscript = ctx.parent(2)
                if type(subscript) is cst.Subscript and "\n" in ctx.code(subscript):
                    # `self.page_table[` with the bounds on a later line: the bracket's line
                    at = _bracket_line(subscript, ctx)
                    ctx.report("NL604", at, end_node=bound, read=read.text, bound="slice bound")
                else:
                    ctx.report("NL604", bound, read=read.text, bound="slice bound")
                return
