"""host-sync: copies to the host that force the device graph to execute.

`.item()`, `.tolist()`, `.cpu()` and `.numpy()` are table-driven (rules/apis.toml, method entries);
`reads_device_value` below decides for those calls whether the receiver can be a device tensor.
This module adds `.to("cpu")`, printed and formatted tensors (`print(t)`, `f"{t}"`) and
tensors turned into Python numbers (`float(t)`, `int(t)`).
"""

from __future__ import annotations

import re
from typing import Any

import libcst as cst

from neuronlint.static.bindings import MOVED_IN_PLACE
from neuronlint.static.calls import arg_value, name_of
from neuronlint.static.context import FileContext
from neuronlint.static.module_names import names_module
from neuronlint.static.registry import Checker, on

# Tensor methods that copy to the host. Torch's versions take no positional arguments, which
# separates them from numpy's `arr.item(0)` / `arr.tolist()` and from `Module.cpu()` look-alikes.
HOST_COPY_METHODS = frozenset({"item", "tolist", "numpy", "cpu"})
# Receivers that are never tensors: literals and containers.
_LITERALS = (
    cst.SimpleString,
    cst.ConcatenatedString,
    cst.FormattedString,
    cst.Integer,
    cst.Float,
    cst.List,
    cst.Tuple,
    cst.Dict,
    cst.Set,
    cst.ListComp,
    cst.DictComp,
    cst.SetComp,
)
# Tensor reductions and views whose printed value needs a host copy.
_PRINTED_METHODS = frozenset(
    {
        "mean",
        "sum",
        "max",
        "min",
        "norm",
        "std",
        "var",
        "abs",
        "detach",
        "float",
        "argmax",
        "argmin",
        "softmax",
        "exp",
        "sigmoid",
        "round",
    }
)


def copies_to_host(call: cst.Call, ctx: FileContext) -> bool:
    """`x.cpu()`, `x.numpy()`, `x.tolist()`, `x.item()` or `x.to("cpu")` (receiver not checked)."""
    func = call.func
    if type(func) is not cst.Attribute:
        return False
    method = func.attr.value
    if method in HOST_COPY_METHODS:
        return True
    return method == "to" and ctx.names_cpu(arg_value(call, 0, "device"))


def _copied_before(receiver: cst.BaseExpression, ctx: FileContext) -> bool:
    """Whether a method chain already copied to the host: `x.cpu().numpy()`, `x.to("cpu").tolist()`."""
    node = receiver
    while True:
        if type(node) is cst.Call and type(node.func) is cst.Attribute:
            if copies_to_host(node, ctx):
                return True
            node = node.func.value
        elif type(node) in (cst.Subscript, cst.Attribute):
            node = node.value
        else:
            return False


def _self_is_module(receiver: cst.BaseExpression, ctx: FileContext) -> bool:
    """`self` in a method of an `nn.Module` subclass (`self.to("cpu")` moves the module)."""
    if not (type(receiver) is cst.Name and receiver.value == "self"):
        return False
    scope = ctx.class_scope()
    return scope is not None and scope.module_class


def _checked_module(receiver: cst.BaseExpression, ctx: FileContext) -> bool:
    """`if isinstance(value, torch.nn.Module): data[key] = value.cpu()`: the `if` the call sits in
    (its body, in the same function) has checked that the receiver is a module, whose `.cpu()` moves
    weights (edm's snapshot of every module in a dict before pickling it)."""
    if type(receiver) is not cst.Name:
        return False
    parents = ctx.parents
    for i in range(len(parents) - 1, 0, -1):
        node = parents[i - 1]
        tp = type(node)
        if tp in (cst.FunctionDef, cst.Lambda, cst.ClassDef):
            return False
        if tp is cst.If and parents[i] is node.body and _isinstance_module(node.test, receiver.value):
            return True
    return False


def _isinstance_module(test: cst.BaseExpression, name: str) -> bool:
    """`isinstance(name, torch.nn.Module)` (also `nn.Module`, a `*Module` class, one of a tuple), alone
    or as an operand of `and`."""
    while type(test) is cst.BooleanOperation and type(test.operator) is cst.And:
        if _isinstance_module(test.right, name):
            return True
        test = test.left
    if type(test) is not cst.Call or type(test.func) is not cst.Name or test.func.value != "isinstance":
        return False
    if len(test.args) != 2 or type(test.args[0].value) is not cst.Name or test.args[0].value.value != name:
        return False
    types = test.args[1].value
    options = [e.value for e in types.elements] if type(types) is cst.Tuple else [types]
    return all(
        (o.attr.value if type(o) is cst.Attribute else getattr(o, "value", "")).endswith("Module")
        for o in options
    )


# Methods only an nn.Module has: `x.cpu().eval()` moved a module.
_MODULE_ONLY_METHODS = frozenset(
    {"eval", "train", "requires_grad_", "parameters", "named_parameters", "state_dict", "modules", "apply"}
)


def _moves_a_module(receiver: cst.BaseExpression, ctx: FileContext) -> bool:
    """For the `.cpu()` / `.to("cpu")` call being visited: the receiver is an object the code moved
    in place before (`clap.to(device)` as a statement, which only a module does: bindings.
    MOVED_IN_PLACE), or a module-only method is called on the result
    (`copy.deepcopy(ema_net).cpu().eval()`)."""
    if type(receiver) is cst.Name and ctx.lookup(receiver.value) == MOVED_IN_PLACE:
        return True
    parent = ctx.parent()
    return type(parent) is cst.Attribute and parent.attr.value in _MODULE_ONLY_METHODS


def _moves_weights(receiver: cst.BaseExpression, ctx: FileContext) -> bool:
    """For a `.cpu()` / `.to("cpu")` of `receiver`: no value is read. It moves a module's weights
    (`model.to("cpu")`, by its name, as `self` of a module class, after an isinstance check, or
    known from how the code moved it), or it is a class's own `cpu` method, whose callers' `.cpu()`
    is the copy."""
    return (
        names_module(receiver)
        or _self_is_module(receiver, ctx)
        or _checked_module(receiver, ctx)
        or _moves_a_module(receiver, ctx)
        or implements_cpu_move(ctx)
    )


def implements_cpu_move(ctx: FileContext) -> bool:
    """Inside a method named `cpu` (`def cpu(self): return self.to("cpu")`): a class's own
    implementation of the move its callers ask for; the copy happens, and is reported, where a
    caller calls `.cpu()` on a device value."""
    function = ctx.enclosing(cst.FunctionDef)
    return function is not None and function.name.value == "cpu"


def reads_device_value(call: cst.Call, ctx: FileContext) -> bool:
    """For a `.item()`/`.tolist()`/`.numpy()`/`.cpu()` call: can this copy a device tensor to the host?

    No for a bare `.numpy()` (it raises on a device tensor, so code that runs it holds a CPU tensor;
    `.numpy(force=True)` copies), no when the receiver is a host value (numpy, pandas, a number
    already read), a literal, or a chain that already copied (`x.cpu().numpy()` syncs once, at `.cpu()`), no when the call has
    positional arguments, which torch's tensor methods do not take, and no inside a `raise` or an
    assert's message, which run only on the error path.
    """
    func = call.func
    assert type(func) is cst.Attribute
    if any(arg.keyword is None for arg in call.args):
        return False
    if func.attr.value == "numpy" and not _forced(call):
        return False  # `t.numpy()` raises on a device tensor: where it runs, `t` is on the CPU already
    receiver = func.value
    if isinstance(receiver, _LITERALS) or ctx.is_host_value(receiver):
        return False
    if ctx.draws_one_number(receiver):
        return False  # `torch.rand(1).item()`: a random number drawn on the CPU
    if func.attr.value == "cpu" and _moves_weights(receiver, ctx):
        return False
    return not _copied_before(receiver, ctx) and not ctx.in_error_path()


def _forced(call: cst.Call) -> bool:
    """`t.numpy(force=True)`: the one spelling of `.numpy()` that copies a device tensor itself."""
    return any(
        arg.keyword is not None and arg.keyword.value == "force" and not _false(arg.value)
        for arg in call.args
    )


def _false(value: cst.BaseExpression) -> bool:
    return type(value) is cst.Name and value.value == "False"


def every_n_steps(node: cst.CSTNode, ctx: FileContext) -> bool:
    """In the body of `if step % N == 0:` (the logging the rules recommend), in the same function."""
    chain = [*ctx.parents, node]
    for index in range(len(chain) - 2, -1, -1):
        ancestor = chain[index]
        if type(ancestor) in (cst.FunctionDef, cst.ClassDef, cst.Lambda):
            return False
        if type(ancestor) is cst.If and chain[index + 1] is ancestor.body and _tests_modulo(ancestor.test):
            return True
    return False


def _tests_modulo(test: cst.BaseExpression) -> bool:
    """`step % 100 == 0` or `not step % 100`, possibly joined with other conditions by `and`."""
    if type(test) is cst.BooleanOperation and type(test.operator) is cst.And:
        return _tests_modulo(test.left) or _tests_modulo(test.right)
    if type(test) is cst.UnaryOperation and type(test.operator) is cst.Not:
        inner = test.expression
        return type(inner) is cst.BinaryOperation and type(inner.operator) is cst.Modulo
    if type(test) is not cst.Comparison or len(test.comparisons) != 1:
        return False
    comparison = test.comparisons[0]
    if type(comparison.operator) is not cst.Equal:
        return False
    sides = (test.left, comparison.comparator)
    return any(type(s) is cst.BinaryOperation and type(s.operator) is cst.Modulo for s in sides)


def periodic_facts(node: cst.CSTNode, ctx: FileContext) -> dict[str, bool]:
    """How often a host read in a loop runs, when it is not every iteration of a hot loop:
    `{"periodic": True}` under `if step % N == 0:` (every N iterations), `{"per_pass": True}` when
    the innermost loop is an epoch loop (`for epoch in range(n_epochs): ... float(epoch_loss)`:
    once per epoch); else {}."""
    if not ctx.in_loop:
        return {}
    if every_n_steps(node, ctx):
        return {"periodic": True}
    loops = ctx.scope.epoch_loops
    return {"per_pass": True} if loops and loops[-1] else {}


def _device_tensor(value: cst.BaseExpression, ctx: FileContext) -> str | None:
    """What makes a value a device tensor, as text: a tensor reduction call or a known tensor."""
    if type(value) is cst.Call and type(value.func) is cst.Attribute:
        method = value.func.attr.value
        receiver = value.func.value
        if (
            method in _PRINTED_METHODS
            and ctx.qualname(value.func) is None
            and not ctx.is_host_value(receiver)
            and not names_module(receiver)
            and not _keyed_by_name(receiver)
        ):
            return f"... .{method}()"
    if ctx.is_device_tensor(value):
        return "<tensor>"
    if type(value) is cst.Name and _TENSOR_NAME.match(value.value) and _unbound_or_parameter(value, ctx):
        return "<tensor>"  # `def print_nans(tensor, name): ... print(name, tensor)`
    return None


# Names that say they hold a tensor: `tensor`, `input_tensor`, `loss_tensor`.
_TENSOR_NAME = re.compile(r"^(\w+_)?tensor$")


def _unbound_or_parameter(name: cst.Name, ctx: FileContext) -> bool:
    """A name nothing in the file has bound to a known kind: an untracked value, or a parameter
    without an annotation (`name_tensor: str` says what it holds)."""
    binding = ctx.lookup(name.value)
    if binding is not None and binding != ("other", None):
        return False
    param = ctx.parameter(name.value)
    return param is None or param.annotation is None


def _read_of(value: cst.BaseExpression, ctx: FileContext) -> tuple[str, str | None] | None:
    """For a value printed, formatted or converted: what makes it a device tensor (`_device_tensor`)
    and None, or, for a helper's result the walk has not judged yet (static/tensor_returns.py),
    "<tensor>" and the key its read waits under until the end of the module; None otherwise."""
    what = _device_tensor(value, ctx)
    if what is not None:
        return what, None
    key = ctx.pending_read(value)
    return None if key is None else ("<tensor>", key)


def _known_tensor(value: cst.BaseExpression, ctx: FileContext) -> tuple[str, str | None] | None:
    """`_read_of` for a value known to be a tensor: not a reduction of an unknown receiver, which a
    log line or a `%`-format often takes of numpy arrays (`"%.3f" % ap[:, 0].mean()`)."""
    read = _read_of(value, ctx)
    return read if read is not None and read[0] == "<tensor>" else None


def _report_read(ctx: FileContext, rule: str, node: cst.CSTNode, key: str | None, **facts: Any) -> None:
    """Report a read now, or keep it under `key` (`_read_of`) until the end of the module."""
    if key is None:
        ctx.report(rule, node, **facts)
    else:
        ctx.defer(key, rule, node, **facts)


def in_step_closure(ctx: FileContext) -> bool:
    """Inside a lambda passed to `xm.add_step_closure(...)`, which defers it until the step has run."""
    for index in range(len(ctx.parents) - 1, 1, -1):
        if type(ctx.parents[index]) is cst.Lambda:
            arg, call = ctx.parents[index - 1], ctx.parents[index - 2]
            if type(arg) is cst.Arg and type(call) is cst.Call:
                name = ctx.qualname(call.func) or (
                    call.func.attr.value if type(call.func) is cst.Attribute else ""
                )
                return name.endswith("add_step_closure")
    return False


def _keyed_by_name(receiver: cst.BaseExpression) -> bool:
    """`df["loss"]`, `stats["acc"]`: a column or a dict entry, not a tensor (tensors take no string keys)."""
    if type(receiver) is not cst.Subscript or len(receiver.slice) != 1:
        return False
    index = receiver.slice[0].slice
    return type(index) is cst.Index and type(index.value) in (cst.SimpleString, cst.ConcatenatedString)


_NUMBER_CONVERSIONS = frozenset({"float", "int"})
# Logging calls that format their arguments into the message (`logger.info("%s", x)`); the receiver
# must be named for a logger (`logger`, `log`, `self._logger`, the `logging` module).
_LOG_LEVELS = frozenset({"debug", "info", "warning", "warn", "error", "critical"})
_LOGGER = re.compile(r"(^|[._])_?(logger|logging|log)$", re.IGNORECASE)


def _parses_text(ctx: FileContext) -> bool:
    """`try: pred = int(pred)` / `except ValueError:`: a conversion that expects to fail on bad text
    parses a string (a model's generated answer), whatever the name held on another path; a
    tensor's `int()` raises no ValueError."""
    for ancestor in reversed(ctx.parents):
        if type(ancestor) is cst.Try:
            return any(
                handler.type is not None and "ValueError" in ctx.code(handler.type)
                for handler in ancestor.handlers
            )
        if isinstance(ancestor, (cst.BaseCompoundStatement, cst.ExceptHandler, cst.Else, cst.Finally)):
            return False  # the conversion runs in another block: a handler, `else:` or a nested one
    return False


def _working_device(value: cst.BaseExpression | None) -> bool:
    """`x.to(device)` with `device = "cpu"`: the program's working device is the CPU (a CPU run of
    a script whose Neuron line is commented out), so the move places data where it is computed;
    nothing is on an accelerator to copy back. A name for the host itself (`cpu_device`) or the
    literal `"cpu"` is a copy off the working device."""
    return type(value) in (cst.Name, cst.Attribute) and name_of(value) == "device"


def _text(node: cst.BaseExpression) -> bool:
    """A string expression: a literal, or literals joined and repeated (`"%10s" + "%10.4g" * n`)."""
    if type(node) in (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString):
        return True
    if type(node) is cst.BinaryOperation and type(node.operator) in (cst.Add, cst.Multiply):
        return _text(node.left) or (type(node.operator) is cst.Add and _text(node.right))
    return False


class HostSync(Checker):
    """`.to("cpu")` copies (NL703) and printed device tensors (NL704); .item()/.cpu()... are [[api]] rows."""

    emits = {
        "NL703": ("symbol", "periodic", "per_pass"),
        "NL704": ("symbol", "periodic", "per_pass"),
        "NL705": ("symbol", "periodic", "per_pass"),
    }
    triggers = ("cpu", "print(", "torch")

    @on(cst.Call)
    def to_cpu(self, node: cst.Call, ctx: FileContext) -> None:
        func = node.func
        if type(func) is not cst.Attribute or func.attr.value != "to" or not node.args:
            return
        target = arg_value(node, 0, "device")
        if not ctx.names_cpu(target) or ctx.qualname(func) is not None or _working_device(target):
            return
        receiver = func.value
        if ctx.is_host_value(receiver) or _copied_before(receiver, ctx) or ctx.in_error_path():
            return
        if _moves_weights(receiver, ctx):
            return
        ctx.report("NL703", func.attr, end_node=node, symbol='.to("cpu")', **periodic_facts(node, ctx))

    @on(cst.Call)
    def print_or_convert(self, node: cst.Call, ctx: FileContext) -> None:
        func = node.func
        if type(func) is not cst.Name or not node.args:
            return
        name = func.value
        if name == "print" and ctx.lookup("print") is None:
            if ctx.in_error_path() or in_step_closure(ctx):
                return
            for arg in node.args:
                if arg.keyword is not None or type(arg.value) is cst.FormattedString:
                    continue  # f-string fields are reported where they are formatted
                read = _read_of(arg.value, ctx)
                if read is not None:
                    what, key = read
                    _report_read(ctx, "NL704", arg, key, symbol=f"print({what})", **periodic_facts(node, ctx))
                    return
        elif name in _NUMBER_CONVERSIONS and len(node.args) == 1 and ctx.lookup(name) is None:
            arg = node.args[0]
            if arg.keyword is not None or arg.star or ctx.in_error_path() or in_step_closure(ctx):
                return
            read = _read_of(arg.value, ctx)
            if read is not None and not _parses_text(ctx):
                what, key = read
                _report_read(ctx, "NL705", node, key, symbol=f"{name}({what})", **periodic_facts(node, ctx))

    @on(cst.Call)
    def logged_tensor(self, node: cst.Call, ctx: FileContext) -> None:
        """`logger.info("steps: %s", steps)`: the logging call formats its arguments into the
        message, which reads a tensor's value like `print` does (where the argument is)."""
        func = node.func
        if (
            type(func) is not cst.Attribute
            or func.attr.value not in _LOG_LEVELS
            or not _LOGGER.search(name_of(func.value))
            or len(node.args) < 2
            or type(node.args[0].value) not in (cst.SimpleString, cst.ConcatenatedString)
        ):
            return
        if ctx.in_error_path() or in_step_closure(ctx):
            return
        for arg in node.args[1:]:
            if arg.keyword is not None or arg.star:
                continue
            read = _known_tensor(arg.value, ctx)
            if read is not None:
                what, key = read
                symbol = f"{ctx.code(func)}(..., {what})"
                _report_read(ctx, "NL704", arg, key, symbol=symbol, **periodic_facts(node, ctx))

    @on(cst.BinaryOperation)
    def percent_formatted_tensor(self, node: cst.BinaryOperation, ctx: FileContext) -> None:
        """`"%10.4g" % (loss, lr)`, `("%10s" + "%10.4g" * n) % (*mean_loss,)`: %-formatting a tensor
        as text reads its value."""
        if type(node.operator) is not cst.Modulo or not _text(node.left):
            return
        if ctx.in_error_path() or in_step_closure(ctx):
            return
        right = node.right
        values = [e.value for e in right.elements] if type(right) is cst.Tuple else [right]
        for value in values:
            read = _known_tensor(value, ctx)
            if read is not None:
                what, key = read
                _report_read(ctx, "NL704", value, key, symbol=f'"%" % {what}', **periodic_facts(node, ctx))

    @on(cst.FormattedStringExpression)
    def formatted_tensor(self, node: cst.FormattedStringExpression, ctx: FileContext) -> None:
        """`f"loss {loss}"`, `f"{ppl:.4f}"`: formatting a tensor as text reads its value (where the
        field is, which for a multi-line string is the line of the field)."""
        read = _read_of(node.expression, ctx)
        if read is None or ctx.in_error_path() or in_step_closure(ctx):
            return
        what, key = read
        text = ctx.code(node.expression)
        symbol = f'f"{{{text if len(text) <= 40 else what}}}"'
        _report_read(ctx, "NL704", node.expression, key, symbol=symbol, **periodic_facts(node, ctx))
