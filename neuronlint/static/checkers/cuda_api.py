"""cuda-api: CUDA device strings, integer device ordinals, pin_memory. (torch.cuda.* names are table-driven.)

A `'cuda'` literal is judged by where it stands (neuronlint.static.literal_roles): used as a value it
places tensors on CUDA (NL101) or selects CUDA autocast (NL107); compared, it is a CUDA check (NL111);
as a dispatch-table key, an allowed choice, a `Literal[...]` member, an attribute name, the text of a
message (`print("cuda")`) or the name of an implementation (`impl="cuda"`) it is neither.
"""

from __future__ import annotations

import re

import libcst as cst

from neuronlint.static.calls import arg_value, kwarg, name_of, positional
from neuronlint.static.checkers.custom_kernel import cuda_registration_arg, registers_cuda_kernel
from neuronlint.static.context import FileContext
from neuronlint.static.literal_roles import ROLE_TEST, ROLE_VALUE, literal_role
from neuronlint.static.nodes import children_of
from neuronlint.static.registry import Checker, on

CUDA_DEVICE = re.compile(r"^cuda(:(\d+|\{\}|%d|%s|%i)?)?$")
CUDA_TENSOR_TYPE = re.compile(r"^torch\.cuda\.[A-Za-z0-9]*Tensor$")  # `x.type() == "torch.cuda.HalfTensor"`
_AUTOCAST = {
    "torch.autocast",
    "torch.amp.autocast",
    "torch.amp.GradScaler",
    "torch.cuda.amp.autocast",
    "torch.amp.custom_fwd",
    "torch.amp.custom_bwd",
    "torch.is_autocast_enabled",
    "torch.get_autocast_dtype",
    "torch.amp.grad_scaler.GradScaler",
    "torch.amp.autocast_mode.autocast",
}
_PARTIAL = {"functools.partial", "partial"}
_ORDINAL_NAME = re.compile(
    r"(^|_)(local_?rank|rank|gpu|gpus|gpu_id|gpu_idx|device_id|dev_id|device_idx|local_device|cuda_device)$"
)
_FALLBACK_TEST = re.compile(r"is_available|cuda")
# Loop indices and ordinals handed to `torch.device(i)`: a bare integer device is `cuda:i`.
_INDEX_NAME = re.compile(
    r"^(i|j|k|idx|index|ordinal|device_index|dev_index|device_ordinal|gpu_index|gpu_idx)$"
)
# Autocast queries that, called without a device type, ask about CUDA autocast only.
_CUDA_AUTOCAST_QUERIES = frozenset({"torch.is_autocast_enabled", "torch.set_autocast_enabled"})


def _autocast_api(call: cst.Call, ctx: FileContext) -> str | None:
    """The autocast/GradScaler API a call configures, if it is one."""
    callee = ctx.qualname(call.func) or ""
    if callee in _AUTOCAST or name_of(call.func) in ("autocast", "GradScaler"):
        return callee or name_of(call.func)
    if (
        callee in _PARTIAL or name_of(call.func) == "partial"
    ):  # partial(torch.amp.custom_fwd, device_type="cuda")
        args = positional(call)
        inner = (ctx.qualname(args[0].value) or "") if args else ""
        return inner if inner in _AUTOCAST else None
    return None


def _falls_back(ctx: FileContext) -> bool:
    """Inside a conditional keyed on CUDA (`"cuda" if torch.cuda.is_available() else "cpu"`)."""
    for ancestor in reversed(ctx.parents):
        if type(ancestor) in (cst.IfExp, cst.If) and _FALLBACK_TEST.search(ctx.code(ancestor.test)):
            return True
        if type(ancestor) in (cst.FunctionDef, cst.ClassDef):
            return False
    return False


# Names that hold which implementation of an operation runs (`impl="cuda"` against `impl="ref"`):
# a "cuda" there names a kernel (reported where it is built or loaded), not a device.
_IMPL_NAME = re.compile(r"(^|_)(impl|implementation)$", re.IGNORECASE)


def _names_implementation(node: cst.CSTNode, ctx: FileContext) -> bool:
    """`def op(x, impl="cuda")`, `op(x, impl="cuda")`, `impl = "cuda"`, `impl == "cuda"`,
    `assert impl in ["ref", "cuda"]`: the literal selects an implementation by name."""
    child: cst.CSTNode = node
    for parent in reversed(ctx.parents):
        if type(parent) in (cst.Element, cst.List, cst.Tuple, cst.Set):
            child = parent
            continue
        if type(parent) is cst.Param:
            return parent.default is child and bool(_IMPL_NAME.search(parent.name.value))
        if type(parent) is cst.Arg:
            return parent.keyword is not None and bool(_IMPL_NAME.search(parent.keyword.value))
        if type(parent) is cst.Assign:
            return len(parent.targets) == 1 and _impl_named(parent.targets[0].target)
        if type(parent) is cst.ComparisonTarget:
            continue
        if type(parent) is cst.Comparison:
            sides = [parent.left, *(c.comparator for c in parent.comparisons)]
            return any(_impl_named(side) for side in sides if side is not child)
        return False
    return False


def _impl_named(node: cst.BaseExpression) -> bool:
    if type(node) is cst.Attribute:
        node = node.attr
    return type(node) is cst.Name and bool(_IMPL_NAME.search(node.value))


# Words listed beside "cuda" that name no device: the sources of a saved RNG state
# (`key.endswith(("cuda", "torch", "python", "numpy"))`), where "cuda" names the CUDA generator's entry.
_RNG_SOURCES = frozenset({"torch", "python", "numpy", "np", "random", "cpu_rng", "torch_rng"})
# A container that holds keys, not a device: `"cuda" in rng_state_dict`, `"cuda" in state.keys()`.
_KEY_HOLDER = re.compile(r"(state|states|state_dict|dict|keys)$", re.IGNORECASE)


def _names_table_entry(node: cst.CSTNode, ctx: FileContext) -> bool:
    """A compared `"cuda"` that names an entry of a table, not a device: the literal tested for
    membership in a dict or its keys (`"cuda" in rng_state_dict`, `"cuda" in state.keys()`), or one
    of a set of RNG-source names (`key.endswith(("cuda", "torch", "python", "numpy"))`)."""
    parent = ctx.parent()
    if type(parent) is cst.Element:
        collection = ctx.parent(2)
        if isinstance(collection, (cst.Tuple, cst.List, cst.Set)):
            # ctx.strings, not `evaluated_value`: its ast.literal_eval leaves a reference cycle per call
            words = {
                word
                for e in collection.elements
                if type(e) is cst.Element and type(e.value) is cst.SimpleString
                for word in ctx.strings(e.value) or ()
            }
            return bool(words & _RNG_SOURCES)
        return False
    if type(parent) is not cst.Comparison or parent.left is not node or len(parent.comparisons) != 1:
        return False
    test = parent.comparisons[0]
    if type(test.operator) not in (cst.In, cst.NotIn):
        return False
    holder = test.comparator
    if type(holder) is cst.Call and type(holder.func) is cst.Attribute and holder.func.attr.value == "keys":
        return True
    name = name_of(holder)
    return bool(_KEY_HOLDER.search(name)) and "device" not in name.lower()


_ROW_PARTS = (cst.Element, cst.Tuple, cst.List)


def _enum_member_value(ctx: FileContext) -> bool:
    """The literal is (part of) the value of an enum member: a row of a table of devices, named
    for CUDA, which a place that picks the member uses. The row's other columns (its backend)
    are judged by their own checkers."""
    for node in reversed(ctx.parents):
        if type(node) in _ROW_PARTS:
            continue
        if type(node) is not cst.Assign or ctx.scope.kind != "class":
            return False
        cls = ctx.enclosing(cst.ClassDef)
        return cls is not None and ctx.is_enum(cls)
    return False


def _device_literal(node: cst.CSTNode, value: str, ctx: FileContext) -> None:
    if _names_implementation(node, ctx):
        return  # `impl="cuda"`: the name of a kernel implementation; the kernel is the finding
    if ctx.path.rpartition("/")[2] == "setup.py":
        # A build script places no tensors: its `"cuda"` names a build variant (`suffices = ["cpu",
        # "cuda"]`, `if suffix == "cuda":`); the CUDA build itself is the finding (NL302, and the
        # `torch.cuda` probes that gate it)
        return
    role = literal_role(node, ctx)
    if role == ROLE_TEST:
        if _names_table_entry(node, ctx):
            return  # `"cuda" in rng_state_dict`: the key of a saved CUDA RNG state, not a device
        ctx.report("NL111", node, symbol=f"comparison with {value!r}")
        return
    if role != ROLE_VALUE:
        return  # a dispatch-table key, an allowed choice, a Literal[...] member or an attribute name
    if _enum_member_value(ctx):
        return  # `class DeviceSupport(Enum): CUDA = ("cuda", "GPU", "nccl")`: the CUDA row of a table
    parent = ctx.parent()
    if type(parent) is cst.Arg:
        call = ctx.parent(2)
        if type(call) is cst.Call and registers_cuda_kernel(call, ctx):
            return  # a kernel registered for CUDA: the registration is the finding (NL116)
        api = _autocast_api(call, ctx) if type(call) is cst.Call else None
        if api:
            ctx.report("NL107", node, api=api, symbol=f"device_type {value!r}", **_alternatives(node, value))
            return
    ctx.report("NL101", node, symbol=repr(value), fallback=_falls_back(ctx), **_alternatives(node, value))


def _alternatives(node: cst.CSTNode, value: str) -> dict:
    """The same literal naming the Neuron device on each backend (a plain string only, not an f-string)."""
    if type(node) is not cst.SimpleString:
        return {}
    alternatives = {"native_alt": node.value.replace("cuda", "neuron", 1)}
    if ":" not in value:  # the XLA device takes no CUDA ordinal
        alternatives["xla_alt"] = node.value.replace("cuda", "xla", 1)
    return alternatives


def _tensor_type_literal(node: cst.CSTNode, value: str, ctx: FileContext) -> None:
    if literal_role(node, ctx) == ROLE_TEST:
        ctx.report("NL111", node, symbol=f"comparison with {value!r}")
        return
    parent, call = ctx.parent(), ctx.parent(2)
    if type(parent) is not cst.Arg or type(call) is not cst.Call:
        return
    name = name_of(call.func)
    if name == "type":
        ctx.report("NL101", node, symbol=f".type({value!r})")  # `x.type("torch.cuda.FloatTensor")` moves x
    elif name == "set_default_tensor_type":
        # `torch.set_default_tensor_type("torch.cuda.FloatTensor")`: every new tensor is a CUDA tensor
        ctx.report("NL101", node, symbol=f"set_default_tensor_type({value!r})")


# Names that hold a device as often as an ordinal (`device_id = init_distributed_device(args)`,
# DeepSpeed's `local_device = get_accelerator().device_name(rank)`): an ordinal only where the file
# shows an integer for them.
_DEVICE_OR_ORDINAL = re.compile(r"(^|_)(device_id|dev_id|local_device)$")


def _unshown_parameter(name: str, ctx: FileContext) -> bool:
    """`name` is a parameter of the enclosing function with no integer default or `int` annotation:
    the caller decides what it holds (`def train_one_epoch(..., device_id, ...)`)."""
    param = ctx.parameter(name)
    if param is None:
        return False
    annotation = param.annotation.annotation if param.annotation is not None else None
    shown = type(param.default) is cst.Integer or (type(annotation) is cst.Name and annotation.value == "int")
    return not shown


# Calls that give a device, not an ordinal: `torch.device(...)`, DeepSpeed's
# `get_accelerator().device_name(rank)` ("cuda:0", "cpu", ...).
_DEVICE_MAKERS = frozenset({"device", "device_name"})


def _assigned_a_device(name: str, ctx: FileContext) -> bool:
    """`local_device = get_accelerator().device_name(rank)` in the enclosing function: the name
    holds a device (every assignment to it there is such a call)."""
    function = next((p for p in reversed(ctx.parents) if type(p) is cst.FunctionDef), None)
    if function is None:
        return False
    values = []
    stack: list[cst.CSTNode] = [function.body]
    while stack:
        node = stack.pop()
        if type(node) is cst.Assign:
            if any(type(t.target) is cst.Name and t.target.value == name for t in node.targets):
                values.append(node.value)
        elif type(node) not in (cst.FunctionDef, cst.ClassDef, cst.Lambda) and not isinstance(
            node, cst.BaseExpression
        ):
            stack.extend(children_of(node))
    return bool(values) and all(type(v) is cst.Call and name_of(v.func) in _DEVICE_MAKERS for v in values)


# A count of GPUs or devices: `num_gpus`, `n_gpu`, `torch.cuda.device_count()`, `num_devices`.
_DEVICE_COUNT = re.compile(r"gpu|device_count|num_devices|n_devices")


def _is_ordinal(node: cst.BaseExpression | None, ctx: FileContext) -> bool:
    if type(node) is cst.Integer:
        return True
    if type(node) is cst.BinaryOperation and type(node.operator) is cst.Modulo:
        # `torch.device(i % num_gpus)`: round-robin over the GPUs (Real-ESRGAN's video workers)
        return bool(_DEVICE_COUNT.search(ctx.code(node.right).lower()))
    if type(node) in (cst.Name, cst.Attribute) and ctx.qualname(node) is None:
        name = name_of(node).lower()
        if not _ORDINAL_NAME.search(name):
            return False
        if type(node) is cst.Name and (binding := ctx.lookup(node.value)) is not None and binding[0] == "str":
            return False  # `cuda_device = "cuda" if ... else "cpu"`: a device string, not an ordinal
        if type(node) is cst.Name and _DEVICE_OR_ORDINAL.search(name):
            if _unshown_parameter(node.value, ctx) or _assigned_a_device(node.value, ctx):
                return False
        return True
    if type(node) is cst.Subscript and len(node.slice) == 1 and type(node.slice[0].slice) is cst.Index:
        # `torch.device(kwargs["local_rank"])` (CenterPoint's trainer): an ordinal kept under a key
        # named for it; an environment variable (`os.environ["LOCAL_RANK"]`) is a string. The key's
        # text by ctx.strings, not `evaluated_value` (its ast.literal_eval leaves a reference cycle)
        key = node.slice[0].slice.value
        if type(key) is cst.SimpleString and "environ" not in ctx.code(node.value):
            return any(_ORDINAL_NAME.search(text.lower()) for text in ctx.strings(key))
    return False


_FSDP = "torch.distributed.fsdp.FullyShardedDataParallel"


def _wraps_with_fsdp(func: cst.BaseExpression, callee: str | None) -> bool:
    """`FullyShardedDataParallel(...)`, `FSDP(...)`, or a subclass of the project's named after it
    (audiocraft's `_FSDPFixStateDict(...)`): FSDP takes its device as `device_id=`."""
    if callee is not None:
        return callee == _FSDP
    name = name_of(func).lstrip("_")
    return name == "FullyShardedDataParallel" or name.startswith("FSDP")


def _names_device_or_index(node: cst.BaseExpression) -> bool:
    """`device_id`, `local_device`: names that hold a device or its index as often as a rank."""
    return type(node) is cst.Name and bool(_DEVICE_OR_ORDINAL.search(node.value.lower()))


def _reads_rank(node: cst.BaseExpression) -> bool:
    """`get_local_rank()`, `dist_utils.get_rank()`: a call that returns a process's rank."""
    return type(node) is cst.Call and bool(_ORDINAL_NAME.search(name_of(node.func).lower()))


def _is_index(node: cst.BaseExpression | None, ctx: FileContext) -> bool:
    """`torch.device(i)`, `torch.device(int(rank))`: an integer that can only be a device index."""
    if type(node) is cst.Call and type(node.func) is cst.Name and node.func.value == "int":
        return True
    if type(node) is cst.Name and _INDEX_NAME.match(node.value):
        binding = ctx.lookup(node.value)
        return binding is None or binding[0] in ("other", "python")  # `for i in range(n)`: an int
    return False


def _names_process_index(node: cst.BaseExpression) -> bool:
    """`accelerator.local_process_index`, `PartialState().process_index`: a process's device index."""
    return type(node) is cst.Attribute and node.attr.value in ("process_index", "local_process_index")


# Names of the pin_memory setting: DataLoader's keyword, and the spelling of MAE-style scripts.
_PIN_MEMORY = frozenset({"pin_memory", "pin_mem"})


def _pins(value: cst.BaseExpression) -> bool:
    """A value that may pin: not `False`, and not a name handing on a value set elsewhere
    (`pin_memory=args.pin_memory`, `pin_memory=pin_memory`), whose finding is where it is set."""
    return type(value) not in (cst.Name, cst.Attribute) or (type(value) is cst.Name and value.value == "True")


def _pin_memory_key(node: cst.CSTNode, ctx: FileContext) -> cst.BaseExpression | None:
    """The value given to a `"pin_memory"` key: `{"pin_memory": True}`, `kwargs["pin_memory"] = True`."""
    parent = ctx.parent()
    if type(parent) is cst.DictElement and parent.key is node:
        return parent.value
    if type(parent) is cst.Index and type(ctx.parent(4)) is cst.AssignTarget:
        assign = ctx.parent(5)
        return assign.value if type(assign) is cst.Assign else None
    return None


class CudaApi(Checker):
    """'cuda' device strings and tensor types by where they stand, integer device ordinals, pin_memory."""

    emits = {
        "NL101": ("symbol", "fallback", "native_alt", "xla_alt"),
        "NL107": ("api", "symbol", "native_alt", "xla_alt"),
        "NL110": ("symbol",),
        "NL111": ("symbol",),
        "NL112": ("symbol",),
        "NL116": ("symbol", "op"),
    }
    triggers = (
        "cuda",
        "CUDA",
        "pin_memory",
        ".to(",
        "device=",
        "torch.device",
        "autocast_enabled",
        "device_map",
    )

    @on(cst.Call)
    def device_ordinals(self, node: cst.Call, ctx: FileContext) -> None:
        func = node.func
        callee = ctx.qualname(func)
        if type(func) is cst.Attribute and func.attr.value == "to" and callee is None:
            args = positional(node)
            target = args[0].value if args else arg_value(node, None, "device")
            if _is_ordinal(target, ctx) and not ctx.is_numpy(func.value):
                ctx.report("NL112", target, symbol=ctx.code(target))
            return
        if callee == "torch.device":
            target = arg_value(node, 0, "type")
            if _is_ordinal(target, ctx) or _is_index(target, ctx):
                ctx.report("NL112", target, symbol=ctx.code(target))
            return
        if _wraps_with_fsdp(func, callee):
            device = kwarg(node, "device_id")
            if device is None or _names_device_or_index(device.value):
                return  # `device_id=device_id` after `device_id = root_device.index`: the strategy's device
            if _is_ordinal(device.value, ctx) or _reads_rank(device.value):
                ctx.report("NL112", device.value, symbol=ctx.code(device.value))
            return
        if not callee or not callee.startswith("torch.") or callee.startswith("torch.cuda."):
            return  # torch.cuda.* calls are reported as such (NL105/NL106); their ordinal is part of that
        device = kwarg(node, "device")
        if device is not None and _is_ordinal(device.value, ctx):
            ctx.report("NL112", device.value, symbol=ctx.code(device.value))

    @on(cst.DictElement)
    def device_map_ordinal(self, node: cst.DictElement, ctx: FileContext) -> None:
        """`device_map={"": local_rank}`: Hugging Face's device map placing the whole model on one
        device; an integer there is a CUDA device ordinal, as in `.to(local_rank)`. So it is in a
        map that places modules one by one (ChatGLM's `{'transformer.word_embeddings': 0, ...}`)."""
        key = node.key
        if type(key) not in (cst.SimpleString, cst.FormattedString, cst.ConcatenatedString):
            return
        value = node.value
        if not (_is_ordinal(value, ctx) or _is_index(value, ctx) or _names_process_index(value)):
            return
        holder = ctx.parent(2)  # DictElement -> Dict -> Arg / Assign
        if type(holder) is cst.Arg:
            named = holder.keyword is not None and holder.keyword.value == "device_map"
        elif type(holder) is cst.Assign:
            named = any(
                type(t.target) in (cst.Name, cst.Attribute) and name_of(t.target).endswith("device_map")
                for t in holder.targets
            )
        else:
            named = False
        if named:
            ctx.report("NL112", value, symbol=ctx.code(value))

    @on(cst.Call)
    def autocast_query(self, node: cst.Call, ctx: FileContext) -> None:
        """`torch.is_autocast_enabled()` with no device type is the deprecated CUDA-only form."""
        if not node.args and ctx.qualname(node.func) in _CUDA_AUTOCAST_QUERIES:
            api = ctx.qualname(node.func)
            ctx.report("NL107", node.func, api=f"{api}()", symbol=f"{api}() without a device type")

    @on(cst.Call)
    def cuda_registration(self, node: cst.Call, ctx: FileContext) -> None:
        """`torch.library.impl(lib, "op", "CUDA")`, `custom_op(..., device_types="cuda")`,
        `op.register_kernel("cuda")`: the operator gets a kernel for the CUDA dispatch key only."""
        where = cuda_registration_arg(node, ctx)
        if where is None:
            return
        names = [
            v
            for a in node.args
            for v in (ctx.strings(a.value) or ())
            if "::" in v or v.lower() not in ("cuda", "autogradcuda")
        ]
        receiver = node.func.value if type(node.func) is cst.Attribute else None
        op = names[0] if names else (ctx.code(receiver) if receiver is not None else "")
        # On the argument that names CUDA: `device_types="cuda",` may sit on its own line of a
        # multi-line decorator.
        ctx.report("NL116", where, symbol=name_of(node.func), op=op or "the operator")

    @on(cst.Arg)
    def pin_memory(self, node: cst.Arg, ctx: FileContext) -> None:
        if node.keyword is not None and node.keyword.value in _PIN_MEMORY and _pins(node.value):
            ctx.report("NL110", node, symbol=f"{node.keyword.value}=" + ctx.code(node.value))

    @on(cst.Assign)
    def pin_memory_flag(self, node: cst.Assign, ctx: FileContext) -> None:
        """`pin_memory = True` (qserve's CPU KV cache), `self.pin_memory = True`: where the flag a
        later `pin_memory=pin_memory` hands on is decided. Only the literal: a value computed from
        arguments (`pin_memory = kwargs.get("pin_memory", False)`) decides nothing here."""
        value = node.value
        if type(value) is not cst.Name or value.value != "True" or len(node.targets) != 1:
            return
        target = node.targets[0].target
        if name_of(target) in _PIN_MEMORY:
            ctx.report("NL110", node, symbol=f"{ctx.code(target)} = True")

    @on(cst.FunctionDef)
    def pin_memory_default(self, node: cst.FunctionDef, ctx: FileContext) -> None:
        """`def offload_states(model, pin_memory=True)`: the default is where the value is decided.
        (On the function, not on each `Param`: one handler call per function, not per parameter.)"""
        params = node.params
        for param in (*params.posonly_params, *params.params, *params.kwonly_params):
            if param.name.value in _PIN_MEMORY and param.default is not None and _pins(param.default):
                ctx.report("NL110", param, symbol=f"{param.name.value}=" + ctx.code(param.default))

    @on(cst.SimpleString, cst.FormattedString)
    def literal(self, node: cst.CSTNode, ctx: FileContext) -> None:
        value = ctx.literal_value(node)
        if value is None:
            return
        if value == "pin_memory":
            given = _pin_memory_key(node, ctx)
            if given is not None and not (type(given) is cst.Name and given.value == "False"):
                ctx.report("NL110", node, symbol='"pin_memory": ' + ctx.code(given))
            return
        if CUDA_DEVICE.match(value):
            _device_literal(node, value, ctx)
        elif CUDA_TENSOR_TYPE.match(value):
            _tensor_type_literal(node, value, ctx)
