"""Table-driven detection: any reference to an API listed in rules/apis.toml, resolved through imports.

`import torch.cuda as tc; tc.synchronize()`, `from torch.cuda import synchronize as sync; sync()` and
`torch.cuda.synchronize()` all resolve to `torch.cuda.synchronize`; the api table says which rule it is.
Method entries (`x.item()`) apply to calls on values that are not numpy/pandas objects.
Dtype names are not uses where they are only compared (`x.dtype == torch.float64`), dictionary keys,
entries of a dtype table or the argument of `torch.finfo`/`torch.iinfo`: no tensor of that type is
made there.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import libcst as cst

from neuronlint.static.bindings import PARAMETERS, REGISTERS, dotted
from neuronlint.static.calls import name_of
from neuronlint.static.checkers.host_sync import (
    HOST_COPY_METHODS,
    in_step_closure,
    periodic_facts,
    reads_device_value,
)
from neuronlint.static.context import FileContext
from neuronlint.static.nodes import defines_name
from neuronlint.static.registry import Checker, on


def _entry_facts(entry: dict, qualname: str) -> dict:
    facts = {"api": qualname, **entry.get("facts", {})}
    for backend in ("xla", "native"):
        if backend in entry:
            facts[f"{backend}_alt"] = entry[backend]
    if entry.get("note"):
        facts["api_note"] = entry["note"]
    return facts


_CUDA_CHECK = re.compile(r"is_available|cuda")


def _under_cuda_check(node: cst.CSTNode, ctx: FileContext) -> bool:
    """In the body of an `if` (or `... if ... else`) whose test checks for CUDA, or right of an `and`
    whose left side does, in the same function: `if torch.cuda.is_available():
    torch.cuda.empty_cache()` runs only where CUDA exists."""
    chain = [*ctx.parents, node]
    for index in range(len(chain) - 2, -1, -1):
        ancestor = chain[index]
        if type(ancestor) in (cst.FunctionDef, cst.ClassDef, cst.Lambda):
            return False
        if type(ancestor) in (cst.If, cst.IfExp) and chain[index + 1] is ancestor.body:
            if _CUDA_CHECK.search(ctx.code(ancestor.test)):
                return True
        if (
            type(ancestor) is cst.BooleanOperation
            and type(ancestor.operator) is cst.And
            and chain[index + 1] is ancestor.right
            and _CUDA_CHECK.search(ctx.code(ancestor.left))
        ):
            return True  # `device.type == "cuda" and torch.cuda.get_device_capability() ...`
    return False


# APIs that a CUDA check can guard (`use_cuda and dist.is_nccl_available()`): the `cuda_guarded` fact.
_CUDA_NAMESPACES = ("torch.cuda", "torch._C._cuda", "torch._C._Cuda", "torch.distributed.is_nccl_available")


def _api_facts(entry: dict, qualname: str, node: cst.CSTNode, ctx: FileContext) -> dict:
    facts = _entry_facts(entry, qualname)
    if qualname.startswith(_CUDA_NAMESPACES) and _under_cuda_check(node, ctx):
        facts["cuda_guarded"] = True
    return facts


_REFLECTION = frozenset({"hasattr", "getattr", "setattr", "delattr"})


def _not_a_call_site(node: cst.Attribute, qualname: str, ctx: FileContext) -> bool:
    """References that use no CUDA API: the bare `torch.cuda` module handed to `hasattr`/`setattr`/
    `monkeypatch.setattr`/`patch.object` (tests and feature probes), and type annotations."""
    if ctx.enclosing(cst.Annotation) is not None:
        return True
    if qualname != "torch.cuda":
        return False
    parent, call = ctx.parent(), ctx.parent(2)
    if not (type(parent) is cst.Arg and type(call) is cst.Call and call.args and call.args[0] is parent):
        return False
    name = name_of(call.func)
    return name in _REFLECTION or name == "object"


def _stubbed(node: cst.CSTNode, ctx: FileContext) -> bool:
    """`torch.cuda.memory.max_memory_allocated = lambda *a, **k: 0`: a test replaces the API with a
    stub (a CUDA spoof); nothing queries CUDA there."""
    parent, assign = ctx.parent(), ctx.parent(2)
    return (
        type(parent) is cst.AssignTarget
        and parent.target is node
        and type(assign) is cst.Assign
        and type(assign.value) is cst.Lambda
    )


def _type_checked(entry: dict, node: cst.CSTNode, qualname: str, ctx: FileContext) -> bool:
    """A distributed wrapper class named as the type of an `isinstance`/`issubclass` check
    (`assert not isinstance(model, DataParallel)`): the check constructs and runs nothing. Only
    dist-backend rows: CUDA's own tensor types (`isinstance(t, torch.cuda.FloatTensor)`) test for a
    CUDA tensor, and `isinstance(fn, triton.JITFunction)` handles a kernel."""
    if not entry["rule"].startswith("NL2") or not qualname.rpartition(".")[2][:1].isupper():
        return False
    depth = 1
    parent = ctx.parent(depth)
    if type(parent) is cst.Element:
        depth += 2  # Element -> Tuple -> Arg
        parent = ctx.parent(depth)
    call = ctx.parent(depth + 1)
    if not (type(parent) is cst.Arg and type(call) is cst.Call and len(call.args) == 2):
        return False
    return (
        call.args[1] is parent
        and type(call.func) is cst.Name
        and call.func.value in ("isinstance", "issubclass")
        and ctx.lookup(call.func.value) is None
    )


_DTYPE_INFO = frozenset({"torch.finfo", "torch.iinfo"})
# torch dtype objects, by qualified name: what the entries of a dtype table are.
_TORCH_DTYPE = re.compile(
    r"torch\.(float\d*|double|half|bfloat16|u?int\d*|long|short|bool|complex\d*|cfloat|cdouble|chalf|"
    r"float8_\w+|float4_\w+|q?u?int\w+|bits\w+)"
)
_COLLECTIONS = (cst.Tuple, cst.List, cst.Set)


_LOW_PRECISION = re.compile(r"torch\.float[48]_")


def _dtype_name(node: cst.BaseExpression, ctx: FileContext) -> str | None:
    """A torch dtype named directly, or looked up with a fallback: `getattr(torch, "float8_e5m2", d)`."""
    if type(node) is cst.Call and _torch_getattr(node, ctx):
        names = ctx.strings(node.args[1].value)
        name = f"torch.{names[0]}" if names and len(names) == 1 else None
    else:
        name = ctx.qualname(node)
    return name if name is not None and _TORCH_DTYPE.fullmatch(name) else None


def _torch_getattr(call: cst.Call, ctx: FileContext) -> bool:
    """`getattr(torch, "name", ...)`: a torch attribute that may not exist in this torch version."""
    return (
        type(call.func) is cst.Name
        and call.func.value == "getattr"
        and ctx.lookup("getattr") is None
        and len(call.args) >= 2
        and ctx.qualname(call.args[0].value) == "torch"
    )


def _enum_of_dtypes(assign: cst.CSTNode, ctx: FileContext) -> bool:
    """`class QuantDType(Enum): int8 = torch.int8; float8_e4m3fn = torch.float8_e4m3fn`: the
    assignment is a member of an enum whose members are dtypes, a table of the choices a
    configuration offers (held to the same test as a dict or set of dtypes)."""
    if type(assign) is not cst.Assign:
        return False
    body, owner = ctx.parent(2), ctx.parent(3)
    classdef = ctx.parent(4)
    if not (
        type(body) is cst.SimpleStatementLine
        and type(owner) is cst.IndentedBlock
        and type(classdef) is cst.ClassDef
        and ctx.is_enum(classdef)
    ):
        return False
    dtypes = [
        name
        for line in classdef.body.body
        if type(line) is cst.SimpleStatementLine
        for statement in line.body
        if type(statement) is cst.Assign and (name := _dtype_name(statement.value, ctx))
    ]
    return len(dtypes) >= 2 and not all(_LOW_PRECISION.match(name) for name in dtypes)


def _keeps_dtype(ifexp: cst.IfExp, node: cst.CSTNode, ctx: FileContext) -> bool:
    """`torch.float64 if dtype == torch.float64 else torch.float32`: the branch keeps the dtype the
    caller already has (tested in the condition); it chooses no new precision."""
    if ifexp.body is not node or type(ifexp.test) is not cst.Comparison:
        return False
    name = ctx.qualname(node)
    test = ifexp.test
    return any(
        type(c.operator) in (cst.Equal, cst.Is)
        and name in (ctx.qualname(test.left), ctx.qualname(c.comparator))
        for c in test.comparisons
    )


def _dtype_in(node: cst.BaseExpression, ctx: FileContext) -> str | None:
    """The dtype an entry is, or pairs with something else: `(torch.float64, "float64")`."""
    if type(node) is cst.Tuple:
        for element in node.elements:
            if type(element) is cst.Element and (name := _dtype_name(element.value, ctx)):
                return name
        return None
    return _dtype_name(node, ctx)


def _dtype_table(collection: cst.CSTNode, ctx: FileContext, depth: int) -> bool:
    """Whether a dict, list, tuple or set display (the ancestor `depth` levels up) is a table of
    dtypes: two or more of its values are dtypes (or pairs holding one), and it is not the argument
    of a call or the iterable of a loop, where each entry is used (`parametrize("dtype", [...])`,
    `for dtype in (...)`)."""
    if type(collection) is cst.Dict:
        values = [e.value for e in collection.elements if type(e) is cst.DictElement]
    elif isinstance(collection, _COLLECTIONS):
        values = [e.value for e in collection.elements if type(e) is cst.Element]
    else:
        return False
    dtypes = [name for v in values if (name := _dtype_in(v, ctx))]
    if len(dtypes) < 2 or all(_LOW_PRECISION.match(name) for name in dtypes):
        return False  # {"e4m3": torch.float8_e4m3fn, ...}: the formats a quantiser offers, each a choice
    holder = ctx.parent(depth + 1)
    if type(holder) is cst.Arg:
        return False
    if type(holder) in (cst.For, cst.CompFor) and holder.iter is collection:
        return False
    return True


def _inspects_dtype(node: cst.CSTNode, ctx: FileContext) -> bool:
    """Whether the dtype name being visited is only compared, a dict key, asked about (finfo), or an
    entry of a dtype table (`{"fp64": torch.float64, "fp32": torch.float32}`, `VALID = [torch.float32,
    torch.float64]`, `((torch.float64, "float64"), ...)`, the members of an enum of dtypes), or kept
    where the caller has it already (`torch.float64 if dtype == torch.float64 else torch.float32`):
    no tensor of that type is made there. A
    table is looked up where a dtype is chosen, and that choice (a configuration value) is not in
    the code."""
    parent = ctx.parent()
    if type(parent) in (cst.Comparison, cst.ComparisonTarget):
        return True
    if type(parent) is cst.DictElement:
        if parent.key is node:
            return True
        # {np.float64: torch.float64}: a numpy-to-torch conversion table lists every dtype
        return (ctx.qualname(parent.key) or "").startswith("numpy.") or _dtype_table(ctx.parent(2), ctx, 2)
    if type(parent) is cst.Element and isinstance(ctx.parent(2), _COLLECTIONS):
        if type(ctx.parent(3)) is cst.ComparisonTarget:
            return True  # `dtype in (torch.float32, torch.float64)`
        if _dtype_table(ctx.parent(2), ctx, 2):
            return True
        # `(torch.float64, "float64")` as one entry of a table of pairs
        return type(ctx.parent(3)) is cst.Element and _dtype_table(ctx.parent(4), ctx, 4)
    if type(parent) is cst.Arg:
        call = ctx.parent(2)
        if type(call) is cst.Call and _torch_getattr(call, ctx) and type(ctx.parent(3)) is cst.Element:
            # `{torch.float8_e4m3fn, getattr(torch, "float8_e5m2", torch.float8_e4m3fn)}`: the
            # fallback of a table entry
            return isinstance(ctx.parent(4), _COLLECTIONS) and _dtype_table(ctx.parent(4), ctx, 4)
        return type(call) is cst.Call and ctx.qualname(call.func) in _DTYPE_INFO
    if type(parent) is cst.IfExp:
        return _keeps_dtype(parent, node, ctx)
    if type(parent) is cst.Assign and parent.value is node:
        return _enum_of_dtypes(parent, ctx)
    return False


def _moved_to_device(ctx: FileContext) -> bool:
    """Whether the call being visited is the receiver of `.to(<not "cpu">)` or `.cuda()`."""
    attribute, call = ctx.parent(), ctx.parent(2)
    if not (type(attribute) is cst.Attribute and type(call) is cst.Call and call.func is attribute):
        return False
    if attribute.attr.value == "cuda":
        return True
    if attribute.attr.value != "to" or not call.args:
        return False
    target = call.args[0].value if call.args[0].keyword is None else None
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == "device":
            target = arg.value
    if (
        target is None
        or ctx.qualname(target) is not None
        and ctx.qualname(target).startswith("torch.")
        and (ctx.qualname(target) != "torch.device")
    ):
        return False  # `.to(torch.float32)`: another cast, no move
    return not ctx.names_cpu(target)


# Calls that make a tensor state of a module, which `.to(device)` moves with it: a cast inside
# one (`self.add_state("sum", torch.zeros(n).double())`, torchmetrics' FID) makes device state.
_STATE_REGISTRATIONS = REGISTERS | {"add_state"}


def _module_state(ctx: FileContext) -> bool:
    """Whether the call being visited is an argument of `self.register_buffer(...)`,
    `self.add_state(...)` or `nn.Parameter(...)`."""
    arg, call = ctx.parent(), ctx.parent(2)
    if type(arg) is not cst.Arg or type(call) is not cst.Call:
        return False
    func = call.func
    if type(func) is cst.Attribute and func.attr.value in _STATE_REGISTRATIONS:
        return True
    return ctx.qualname(func) in PARAMETERS


def _called_on_host_data(entry: dict, node: cst.CSTNode, ctx: FileContext) -> bool:
    """For a `receiver = "device"` name row: the function is called on host data
    (`torch.unique(torch.Tensor(np_labels))`, `torch.nonzero(mask_np)`), which is CPU work."""
    if entry.get("receiver") != "device":
        return False
    call = ctx.parent()
    if type(call) is not cst.Call or call.func is not node or not call.args:
        return False
    first = call.args[0]
    return first.keyword is None and not first.star and ctx.is_host_value(first.value)


# `torch.backends.cuda.SDPBackend` is `torch.nn.attention.SDPBackend` (the old import path): its
# members are the device-generic enum's, not CUDA backend flags. Choosing a kernel with them
# (`sdpa_kernel(SDPBackend.FLASH_ATTENTION)`) is no finding (finding-conventions: SDPA backend enums
# alone); `torch.backends.cuda.sdp_kernel(...)` and `enable_flash_sdp(...)` are (NL109).
_SDP_BACKEND_ALIAS = "torch.backends.cuda.SDPBackend"
_SDP_BACKEND = "torch.nn.attention.SDPBackend"


_DESTRUCTURING = (cst.Element, cst.StarredElement, cst.Tuple, cst.List)


def _assigned_to(ctx: FileContext) -> bool:
    """A name that is an assignment's target, alone or one of an unpacking (`unpad_input, pad_input
    = None, None` in an `except ImportError:`): it is assigned, not used."""
    depth = 1
    while type(ctx.parent(depth)) in _DESTRUCTURING:
        depth += 1
    return type(ctx.parent(depth)) is cst.AssignTarget


_CPP_EXTENSION = "torch.utils.cpp_extension.CppExtension"


def _cpu_build(ctx: FileContext) -> bool:
    """A `CppExtension` in a build file that also builds with `CUDAExtension`: the host-only build,
    chosen where CUDA is absent (`extension = CppExtension` in detectron2, pytorch3d, xformers), a
    CPU stub beside the CUDA build (openfold's `attn_core_inplace_cuda`), a CPU-only extension
    (AutoGPTQ's qigen) or the "cpu" entry of a table of builds (MinkowskiEngine). The CUDA build is
    reported where `CUDAExtension` is used; the cpp_extension import is reported on its own."""
    return ctx.mentions(("CUDAExtension",))


def _canonical_api(qualname: str) -> str:
    if qualname.startswith(_SDP_BACKEND_ALIAS):
        return _SDP_BACKEND + qualname[len(_SDP_BACKEND_ALIAS) :]
    return qualname


class ApiNames(Checker):
    """Every reference to an API listed in rules/apis.toml ([[api]] rows), resolved through imports.

    Its rules and their facts come from the table (`declared`): a table-driven rule is one row.
    """

    # A kernel module's entry points (NL308 in other files) are the functions holding its
    # extension builds (`cpp_extension.load`), jiterator kernels and other GPU-kernel APIs.
    feeds = ("NL308",)

    triggers = (
        "torch.",
        "cuda",
        "torch_xla",
        "torch_neuronx",
        "neuronx",
        "nki",
        "triton",
        "cupy",
        "numba",
        "pycuda",
        "cutlass",
        "tilelang",
        ".item(",
        ".tolist(",
        ".cpu(",
        ".numpy(",
        ".double(",
        ".pin_memory(",
        ".nonzero(",
        ".unique(",
        ".masked_select(",
        # `from torch import nn; nn.DataParallel(m)` names no `torch.`
        "DataParallel",
        "fully_shard",
        "nccl_allocator",  # apex's NCCL allocator (NL207), which a file may use without torch
    )

    @classmethod
    def declared(cls, tables: Mapping[str, Any] | None = None) -> dict[str, tuple[str, ...]]:
        """The rules of the [[api]] rows and the facts each row gives its detections."""
        facts: dict[str, dict[str, None]] = {}
        for entry in (tables or {}).get("api", ()):
            names = facts.setdefault(entry["rule"], {})
            names.update(dict.fromkeys(_entry_facts(entry, entry["name"])))
            if entry["kind"] == "method" and entry["name"] == "cuda":
                names["ordinal"] = None  # `.cuda(rank)`
            if entry["name"].startswith(_CUDA_NAMESPACES):
                names["cuda_guarded"] = None  # behind `if torch.cuda.is_available():`
            if entry["kind"] == "method" and entry["name"] in HOST_COPY_METHODS:
                names["periodic"] = None  # under `if step % N == 0:`
                names["per_pass"] = None  # after an inner loop: once per epoch
        return {rule: tuple(names) for rule, names in facts.items()}

    @on(cst.Import)
    def import_line(self, node: cst.Import, ctx: FileContext) -> None:
        """`import torch.backends.cudnn as cudnn`, `import torch._inductor.config`: rows marked
        `import_line` are findings on the import itself, besides every use of the name."""
        for alias in node.names:
            module = dotted(alias.name)
            entry = ctx.data.imported_api(module)
            if entry is not None:
                ctx.report(entry["rule"], alias, **_api_facts(entry, module, alias, ctx))

    @on(cst.ImportFrom)
    def import_from_line(self, node: cst.ImportFrom, ctx: FileContext) -> None:
        """`from torch.cuda.amp import GradScaler`, `from torch.backends import cudnn`: the import
        line (its first line, where the module is named) is a finding of the row's rule."""
        if node.relative or node.module is None:
            return
        module = dotted(node.module)
        entry = ctx.data.imported_api(module)
        if entry is None and type(node.names) is not cst.ImportStar:
            for alias in node.names:
                entry = ctx.data.imported_api(f"{module}.{dotted(alias.name)}")
                if entry is not None:
                    module = f"{module}.{dotted(alias.name)}"
                    break
        if entry is not None:
            ctx.report(entry["rule"], node.module, **_api_facts(entry, module, node, ctx))

    @on(cst.Attribute)
    def attribute(self, node: cst.Attribute, ctx: FileContext) -> None:
        parent = ctx.parent()
        tp = type(parent)  # `type() is`/`in`: a failing isinstance() on LibCST's classes is slow
        if tp is cst.Attribute and parent.value is node:
            return  # only the outermost attribute of a chain is looked up
        if defines_name(parent, node):
            return
        qualname = ctx.qualname(node)
        if qualname is None:
            if tp is cst.AssignTarget:
                return  # `self.is_cuda = ...` defines an attribute of the object; it tests nothing
            entry = ctx.data.attributes.get(node.attr.value)
            if entry is not None and not ctx.is_numpy(node.value) and not ctx.assigned_on_self(node):
                ctx.report(entry["rule"], node.attr, **_entry_facts(entry, entry["name"]))
            return
        qualname = _canonical_api(qualname)
        if qualname == _CPP_EXTENSION and _cpu_build(ctx):
            return
        entry = ctx.data.api(qualname)
        if entry is not None and not ("dtype" in entry.get("facts", ()) and _inspects_dtype(node, ctx)):
            if (
                not _not_a_call_site(node, qualname, ctx)
                and not _called_on_host_data(entry, node, ctx)
                and not _type_checked(entry, node, qualname, ctx)
                and not _stubbed(node, ctx)
            ):
                ctx.report(entry["rule"], node, **_api_facts(entry, qualname, node, ctx))

    @on(cst.Name)
    def name(self, node: cst.Name, ctx: FileContext) -> None:
        binding = ctx.lookup(node.value)  # cheapest test first: most names are not imported API aliases
        if binding is None or binding[0] != "module" or "." not in binding[1]:
            return
        parent = ctx.parent()
        if type(parent) is cst.Attribute:
            return  # roots and attribute names are handled with the whole chain
        if defines_name(parent, node):
            return
        if type(parent) is cst.Arg and parent.keyword is node:
            return
        if _assigned_to(ctx):
            return
        if ctx.enclosing(cst.Annotation) is not None:
            return  # `-> Tuple[DDP, Optimizer]`: a type annotation uses nothing
        qualname = _canonical_api(binding[1])
        if qualname == _CPP_EXTENSION and _cpu_build(ctx):
            return
        entry = ctx.data.api(qualname)
        if entry is not None and not ("dtype" in entry.get("facts", ()) and _inspects_dtype(node, ctx)):
            if not _called_on_host_data(entry, node, ctx) and not _type_checked(entry, node, qualname, ctx):
                ctx.report(entry["rule"], node, **_api_facts(entry, qualname, node, ctx))

    @on(cst.Call)
    def method_call(self, node: cst.Call, ctx: FileContext) -> None:
        func = node.func
        if type(func) is not cst.Attribute:
            return
        entry = ctx.data.methods.get(func.attr.value)
        if entry is None:
            return
        if ctx.qualname(func) is not None:
            return  # `torch.cuda(...)`, `np.unique(...)`: a module function, not a tensor method
        method = func.attr.value
        if method in HOST_COPY_METHODS:
            if not reads_device_value(node, ctx):
                return
        elif ctx.is_host_value(func.value) if entry.get("receiver") == "device" else ctx.is_numpy(func.value):
            # `receiver = "device"` rows (dtype, dynamic shapes): a host tensor's `.unique()` is CPU
            # work. Other rows (`.cuda()`) apply to any receiver that is not a numpy/pandas object.
            # A cast whose result goes to a device (`torch.tensor(ids).long().to(device)`) makes a
            # device tensor of that dtype.
            if not ("dtype" in entry.get("facts", ()) and (_moved_to_device(ctx) or _module_state(ctx))):
                return
        if method in HOST_COPY_METHODS and in_step_closure(ctx):
            return  # the recommended XLA pattern: the read runs after the step, off the device's path
        facts = _entry_facts(entry, entry["name"])
        if method in HOST_COPY_METHODS:
            facts.update(periodic_facts(node, ctx))
        if method == "cuda" and node.args:
            facts.pop("xla_alt", None)  # `.cuda(rank)`: the ordinal needs a decision, no mechanical fix
            facts.pop("native_alt", None)
            facts["ordinal"] = True
        ctx.report(entry["rule"], func.attr, end_node=node, **facts)
