"""neuron-lockin: code that ties a project to Neuron (the cost of leaving later). Never a blocker."""

from __future__ import annotations

import re

import libcst as cst

from neuronlint.neuron_packages import NEURON_ROOTS, NKI_DEVICE_LANGUAGE, neuron_module
from neuronlint.static.bindings import NEURON_OP, absolute_module, dotted
from neuronlint.static.calls import name_of, positional
from neuronlint.static.checkers.custom_kernel import called_chain, neuron_op_namespace
from neuronlint.static.context import FileContext
from neuronlint.static.literal_roles import (
    ROLE_ATTRIBUTE,
    ROLE_KEY,
    ROLE_MESSAGE,
    ROLE_OPTION,
    ROLE_PATH,
    literal_role,
)
from neuronlint.static.nodes import children_of, defines_name
from neuronlint.static.registry import Checker, on

# `import torch.neuron`: the namespace the Inf1 package torch-neuron adds to torch
# (`torch.neuron.trace`, `torch.neuron.DataParallel`), and also the device module TorchNeuron
# registers for the `neuron` device (NL903 sources).
# Either way the import ties the file to Neuron: the import line is the finding (NL903). Each use
# (`torch.neuron.manual_seed_all(seed)`, which needs no import: TorchNeuron registers the module) is
# the device module's counterpart of a `torch.cuda.*` call, reported as one Neuron-specific name
# (NL902, as the 'neuron' device string); the Inf1 trace call `torch.neuron.trace` is an [[api]] row
# of rules/apis.toml, where an artifact is made.
_TORCH_NEURON = ("NL903", "torch-neuron (Inf1, archived) or TorchNeuron's torch.neuron device module")


_DEVICE_MODULE = "device-module API (TorchNeuron's `torch.neuron`; on Inf1, the torch-neuron package)"


def _torch_neuron_import(module: str) -> tuple[str, str] | None:
    return _TORCH_NEURON if module == "torch.neuron" or module.startswith("torch.neuron.") else None


# Packages whose trace produces the TorchScript artifacts `torch.jit.load` reads back: torch-neuronx
# (Inf2/Trn) and the archived torch-neuron (Inf1).
_TRACING_ROOTS = frozenset({"torch_neuronx", "torch_neuron"})

_XLA_DEVICE = re.compile(r"^(xla|neuron)(:(\d+|\{\}|%d|%s))?$")
_XLA_INIT_METHOD = "xla://"  # init_process_group("xla", init_method="xla://"): the XLA rendezvous
_ENV = re.compile(
    r"^(NEURON_[A-Z0-9_]+|XLA_USE_BF16|XLA_DOWNCAST_BF16|XLA_IR_DEBUG|XLA_HLO_DEBUG|PT_XLA_DEBUG(_LEVEL)?|NEURON_CC_FLAGS)$"
)


_PROCESS_GROUP_CALLS = frozenset(
    {"init_process_group", "new_group", "new_subgroups", "new_subgroups_by_enumeration"}
)


def _device_use(node: cst.CSTNode, value: str, ctx: FileContext) -> str | None:
    """What an 'xla'/'neuron' literal names where it stands, or None where it names nothing in use."""
    role = literal_role(node, ctx)
    if role in (ROLE_KEY, ROLE_OPTION, ROLE_ATTRIBUTE, ROLE_MESSAGE, ROLE_PATH):
        # a per-device dispatch table, an allowed choice, `hasattr(torch, "neuron")`, text, a folder
        # (`Path.home() / ".cache" / "neuron"`)
        return None
    parent, call = ctx.parent(), ctx.parent(2)
    if type(parent) is cst.Param and parent.name.value.endswith("backend") and value == "neuron":
        return None  # `def compile_model(m, backend="neuron")`: a compile backend's default (NL909)
    if type(parent) is cst.Arg and type(call) is cst.Call:
        keyword = parent.keyword.value if parent.keyword is not None else None
        callee = name_of(call.func)
        if callee == "compile" and keyword == "backend":
            return None  # torch.compile(backend="neuron") is NL909 (compile_backend)
        first = positional(call)[:1]
        if callee in _PROCESS_GROUP_CALLS and (keyword == "backend" or (first and first[0] is parent)):
            return "process-group backend"
        if keyword == "backend":
            return "backend"
    return "device"


def _names_neuron(node: cst.BaseExpression) -> bool:
    """A chain with a `.neuron` link (`torch.neuron`, `torch.neuron.amp`): a cheap test before the
    qualname lookup."""
    while type(node) is cst.Attribute:
        if node.attr.value == "neuron":
            return True
        node = node.value
    return False


def _device_module(node: cst.Attribute, ctx: FileContext) -> bool:
    """`torch.neuron.get_rng_state()`: a name of the `torch.neuron` module (the outermost attribute
    of the chain), not in an import, an annotation or `hasattr(torch, "neuron")`. True when `node`
    is under `torch.neuron` (reported here or not), False for any other `<x>.neuron.<y>`."""
    qualname = ctx.qualname(node)
    if qualname is None or not qualname.startswith("torch.neuron."):
        return False
    parent = ctx.parent()
    if type(parent) is cst.Attribute and parent.value is node:
        return True
    if ctx.data.api(qualname) or ctx.enclosing(cst.Import, cst.ImportFrom, cst.Annotation) is not None:
        return True
    ctx.report("NL902", node, symbol=f"`{qualname}`", what=_DEVICE_MODULE)
    return True


# A package's metadata: reading it uses nothing of the package (a kernel's `__name__` names it).
_PACKAGE_METADATA = frozenset({"__version__", "__file__", "__path__"})


def _hands_module_over(ctx: FileContext) -> bool:
    """Whether the function being visited imports a module and returns it (bindings' module_factories)."""
    function = ctx.enclosing(cst.FunctionDef)
    return function is not None and function.name.value in ctx.module_factories


def _neuron_use(node: cst.Name | cst.Attribute, ctx: FileContext) -> tuple[str, str, str] | None:
    """(qualname, rule, what) when `node` is the whole of a reference to a name imported from a
    Neuron package (`xm.mark_step`, `xr.world_size()`, `pl.MpDeviceLoader`, a bare `ColumnParallelLinear`,
    `xm.optimizer_step` handed over as a function), else None."""
    parent = ctx.parent()
    if type(parent) is cst.Attribute:  # `type() is`: a failing isinstance() on LibCST's classes is slow
        if parent.value is node:
            return None  # only the outermost attribute of a chain is a use
        if type(node) is cst.Name:
            return None  # the attribute's own name
    qualname = ctx.qualname(node)  # cheapest test first: most names and attributes are not imports
    if not qualname:
        return None
    if defines_name(parent, node) or ctx.enclosing(cst.Import, cst.ImportFrom) is not None:
        return None
    if type(node) is cst.Name:
        if type(parent) is cst.Return and _hands_module_over(ctx):
            return None  # `return xm` in a lazy-import helper: its callers' uses are the findings
        if type(parent) is cst.Arg and parent.keyword is node:
            return None
    if ctx.enclosing(cst.Annotation) is not None:
        return None
    if qualname.rpartition(".")[2] in _PACKAGE_METADATA:
        return None  # `torch_neuronx.__version__`: the package's metadata, nothing of Neuron is used
    found = neuron_module(qualname)
    if found is None or ctx.data.api(qualname) is not None:
        return None  # rows of the api table (deprecated XLA APIs, NL908) are reported by it
    if found[0] == "NL905" and _in_nki_kernel(ctx):
        return None  # `nl.load` inside an NKI kernel: the kernel is the finding (on its decorator)
    return (qualname, *found)


def _kernel_site(node: cst.CSTNode, ctx: FileContext) -> bool:
    """An NKI kernel itself: its `@nki.jit` decorator, or a launch of an imported kernel
    (`flash_fwd[grid](...)`, `nki_call(kernel, ...)` is the call of a name from NKI)."""
    if ctx.enclosing(cst.Decorator) is not None:
        return True
    parent = ctx.parent()
    return type(parent) is cst.Subscript and parent.value is node and type(ctx.parent(2)) is cst.Call


# Calls of NKI's device language, except the grid helpers a host launch uses
# (`flash_fwd[bs, nl.nc(2) * heads](...)`).
_NKI_DEVICE_CALLS = tuple(f"{module}." for module in NKI_DEVICE_LANGUAGE)
_NKI_GRID_HELPERS = frozenset({"nc", "spmd_dim"})


def _in_nki_kernel(ctx: FileContext) -> bool:
    """Inside an NKI kernel: a function decorated by NKI, or one that calls NKI's device language
    (`nl.ndarray(...)`, `nisa.dma_copy(...)`), such as the undecorated helpers a `@nki.jit` kernel
    composes. Their NKI uses are the kernel's own code; the kernel is reported on its decorator or
    launch."""
    innermost = None
    for ancestor in reversed(ctx.parents):
        if type(ancestor) is cst.FunctionDef:
            innermost = innermost or ancestor
            for dec in ancestor.decorators:
                expr = dec.decorator.func if type(dec.decorator) is cst.Call else dec.decorator
                found = neuron_module(ctx.qualname(expr) or "")
                if found is not None and found[0] == "NL905":
                    return True
    return innermost is not None and _writes_nki(innermost, ctx)


def _writes_nki(function: cst.FunctionDef, ctx: FileContext) -> bool:
    """Whether the function's body calls NKI's device language, memoised per function."""
    memo = ctx.nki_functions
    if id(function) not in memo:
        found = False
        stack: list[cst.CSTNode] = [function.body]
        while stack and not found:
            node = stack.pop()
            if type(node) is cst.Call and type(node.func) in (cst.Attribute, cst.Name):
                qualname = ctx.qualname(node.func) or ""
                found = qualname.startswith(_NKI_DEVICE_CALLS) and (
                    qualname.rpartition(".")[2] not in _NKI_GRID_HELPERS
                )
            if not found and type(node) is not cst.FunctionDef:  # a nested function is judged alone
                stack.extend(children_of(node))
        memo[id(function)] = found
    return memo[id(function)]


# Names this file made callable only on Neuron, by their binding: (rule, what, extra facts).
_NEURON_CALLABLES = {
    ("kernel", "nki"): ("NL905", "NKI kernel launch", {"kernel": True}),
    NEURON_OP: ("NL903", "torch-neuronx custom HLO op", {}),
}


class NeuronLockin(Checker):
    """Imports of Neuron packages, 'xla'/'neuron' device strings and Neuron/XLA environment variables."""

    emits = {
        **{rule: ("module", "what", "legacy_namespace") for rule in ("NL901", "NL904", "NL906")},
        "NL903": ("module", "what", "legacy_namespace", "custom_op"),
        "NL905": ("module", "what", "legacy_namespace", "kernel"),
        "NL902": ("symbol", "what"),
        "NL907": ("symbol",),
    }
    triggers = (
        "torch_xla",
        "torch_neuronx",
        "torch_neuron",
        "torch.neuron",
        "neuronx",
        "nki",
        "optimum",
        "xla",
        "NEURON_",
        "XLA_",
    )

    @on(cst.Import)
    def import_(self, node: cst.Import, ctx: FileContext) -> None:
        for alias in node.names:
            module = dotted(alias.name)
            found = neuron_module(module) or _torch_neuron_import(module)
            if found:
                ctx.report(
                    found[0],
                    alias,
                    module=module,
                    what=found[1],
                    legacy_namespace=module.startswith("neuronxcc.nki"),
                )

    @on(cst.ImportFrom)
    def import_from(self, node: cst.ImportFrom, ctx: FileContext) -> None:
        if node.relative or node.module is None:
            return
        module = absolute_module(node, ctx)
        found = neuron_module(module) or _torch_neuron_import(module)
        if module == "torch" and type(node.names) is not cst.ImportStar:
            if any(dotted(alias.name) == "neuron" for alias in node.names):
                module, found = "torch.neuron", _TORCH_NEURON  # `from torch import neuron`
        if module == "neuronxcc" and type(node.names) is not cst.ImportStar:
            for (
                alias
            ) in node.names:  # `from neuronxcc import nki`: the legacy NKI namespace, not the compiler
                if dotted(alias.name) == "nki":
                    module, found = "neuronxcc.nki", neuron_module("neuronxcc.nki")
                    break
        if found:
            ctx.report(
                found[0],
                node.module,
                module=module,
                what=found[1],
                legacy_namespace=module.startswith("neuronxcc.nki"),
            )

    @on(cst.Name, cst.Attribute)
    def use(self, node: cst.Name | cst.Attribute, ctx: FileContext) -> None:
        """Every use of a name imported from a Neuron package, as for CUDA-only libraries: the
        imports say a file depends on Neuron, the uses are what leaving Neuron rewrites."""
        if type(node) is cst.Attribute and _names_neuron(node.value) and _device_module(node, ctx):
            return  # `torch.neuron.*` needs no import of a Neuron package
        if ctx.module_roots.isdisjoint(NEURON_ROOTS):
            return  # nothing bound here comes from a Neuron package: no name resolves into one
        if type(node) is cst.Name and ctx.lookup(node.value) is None:
            return  # cheapest test first: most names are not imports
        found = _neuron_use(node, ctx)
        if found is not None:
            qualname, rule, what = found
            extra = {"kernel": True} if rule == "NL905" and _kernel_site(node, ctx) else {}
            ctx.report(
                rule,
                node,
                module=qualname,
                what=what,
                legacy_namespace=qualname.startswith("neuronxcc.nki"),
                **extra,
            )

    @on(cst.Assign)
    def neuron_value(self, node: cst.Assign, ctx: FileContext) -> None:
        """Names a Neuron API built (`m = LlamaForSampling.from_pretrained(...)`), which `to_neuron`
        reads: only in the files it reports in."""
        value = node.value
        if type(value) is not cst.Call or "transformers_neuronx" not in ctx.module_roots:
            return
        qualname = ctx.qualname(value.func)
        if qualname and neuron_module(qualname) is not None:
            # `m = ...` and `self.model = ...` (the model a class keeps and compiles in `__init__`)
            ctx.neuron_built.update(
                ctx.code(t.target) for t in node.targets if type(t.target) in (cst.Name, cst.Attribute)
            )

    @on(cst.Call)
    def to_neuron(self, node: cst.Call, ctx: FileContext) -> None:
        """`self.model.to_neuron()` in a file that uses transformers-neuronx: the library's compile
        step of a model whose class the code may pick by name (`import_class(...)`), so no other
        line of the call names Neuron."""
        func = node.func
        if type(func) is not cst.Attribute or func.attr.value != "to_neuron" or node.args:
            return
        if "transformers_neuronx" not in ctx.module_roots:
            return
        receiver = func.value
        if type(receiver) in (cst.Name, cst.Attribute) and ctx.code(receiver) in ctx.neuron_built:
            return  # `m = LlamaForSampling.from_pretrained(...)`: the class is the finding, where it is named
        ctx.report(
            "NL904",
            func.attr,
            module=".to_neuron()",
            what="transformers-neuronx (end of support): compiles the model for NeuronCores",
            legacy_namespace=False,
        )

    @on(cst.Attribute)
    def neuron_custom_op(self, node: cst.Attribute, ctx: FileContext) -> None:
        """`torch.ops.<ns>.<op>(...)` where a Neuron build registers the operator: the `neuron`
        namespace, or any custom namespace in a file that uses Neuron packages (a torch-neuronx
        custom-op build); `torch.ops.xla.*` are torch_xla's own operators."""
        if type(node.value) is not cst.Attribute or ctx.qualname(node.value) != "torch.ops":
            return
        namespace = node.attr.value
        if not neuron_op_namespace(namespace, ctx) or not called_chain(node, ctx):
            return
        module = f"torch.ops.{namespace}"
        if namespace == "xla":
            ctx.report("NL901", node, module=module, what="PyTorch/XLA operator", legacy_namespace=False)
        else:
            ctx.report(
                "NL903",
                node,
                module=module,
                what="custom operator built for Neuron",
                legacy_namespace=False,
                custom_op=True,
            )

    @on(cst.Call)
    def traced_model_load(self, node: cst.Call, ctx: FileContext) -> None:
        """`torch.jit.load(path)` in a file that uses torch-neuronx or torch-neuron: the inference
        handler of a model traced for Neuron loads its artifact, whose NEFF runs only on Neuron
        (leaving means tracing again from the source model). `torch.load(path)` too where the path
        names a Neuron model (`model_neuron.pt`, `neuron_model_filepath`): given a TorchScript
        archive, torch.load hands it to torch.jit.load; a plain checkpoint load is no finding."""
        if not ctx.imports:
            return
        qualname = ctx.qualname(node.func)
        if qualname == "torch.jit.load":
            what = "loads a TorchScript model"
        elif qualname == "torch.load" and node.args and "neuron" in ctx.code(node.args[0].value).lower():
            what = "loads a model from a path that names a Neuron model"
        else:
            return
        if not any(m.split(".")[0] in _TRACING_ROOTS or _torch_neuron_import(m) for m in ctx.imports):
            return
        ctx.report(
            "NL903",
            node.func,
            end_node=node,
            module=qualname,
            what=(
                f"{what} in a file that uses torch-neuronx: a model traced for Neuron holds a NEFF "
                "that runs only on Neuron"
            ),
            legacy_namespace=False,
        )

    @on(cst.Call)
    def nki_launch(self, node: cst.Call, ctx: FileContext) -> None:
        """`kernel[grid](...)` or `kernel(...)` of an NKI kernel this file defines (`@nki.jit`) or
        makes (`nki_jit()(k)`), and calls of a function a torch-neuronx decorator made an op."""
        func = node.func
        if type(func) is cst.Subscript:
            func = func.value
        if type(func) is not cst.Name:
            return
        binding = ctx.lookup(func.value)
        if binding is None or binding[0] != "kernel" or binding not in _NEURON_CALLABLES:
            return
        if not _in_nki_kernel(ctx):
            rule, what, extra = _NEURON_CALLABLES[binding]
            ctx.report(rule, node.func, module=func.value, what=what, legacy_namespace=False, **extra)

    @on(cst.SimpleString, cst.FormattedString)
    def literal(self, node: cst.CSTNode, ctx: FileContext) -> None:
        value = ctx.literal_value(node)
        if value is None:
            return
        if value == _XLA_INIT_METHOD and literal_role(node, ctx) not in (ROLE_KEY, ROLE_OPTION, ROLE_MESSAGE):
            ctx.report("NL902", node, symbol=repr(value), what="process-group init method (XLA rendezvous)")
            return
        if _XLA_DEVICE.match(value) and "torch" in ctx.imports_seen():
            what = _device_use(node, value, ctx)
            if what is not None:
                ctx.report("NL902", node, symbol=repr(value), what=what)
        elif _ENV.match(value) and literal_role(node, ctx) not in (ROLE_OPTION, ROLE_ATTRIBUTE, ROLE_MESSAGE):
            ctx.report("NL907", node, symbol=value)
