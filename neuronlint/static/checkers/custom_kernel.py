"""custom-kernel: Triton launches, C++/CUDA extensions built or imported, custom torch.ops namespaces.

Kernel decorators and cpp_extension names come from the api table; this module adds the patterns
that are not plain names: `kernel[grid](...)` launches, extension names declared in setup.py,
`torch.ops.<namespace>` calls into compiled libraries.
"""

from __future__ import annotations

import libcst as cst

from neuronlint.static.bindings import (
    EXTENSION_BUILDER,
    EXTENSION_BUILDERS,
    dotted,
    loaded_extension,
    without_fallback,
)
from neuronlint.static.calls import arg_value, name_of
from neuronlint.static.context import FileContext
from neuronlint.static.extension_names import (
    EXTENSION_IDENTIFIER,
    OPERATOR_NAMESPACE,
    extension_component,
    extension_module,
    names_extension,
)
from neuronlint.static.nodes import defines_name
from neuronlint.static.optional_imports import optional_guard
from neuronlint.static.registry import Checker, on

# `torch.ops`' own functions, which load operator libraries (a shared object, a Python module that
# registers operators), and what NL303 calls their calls.
_OPS_LOADERS = frozenset({"load_library", "import_module"})
_LIBRARY_LOAD = "load of a compiled operator library"
# torch.ops namespaces that ship with PyTorch itself (not user-compiled kernels). `fbgemm` (FBGEMM_GPU)
# and `torchvision` are not among them: their operators are compiled extensions of those packages,
# with CPU and CUDA kernels and none for XLA or Neuron.
_BUILTIN_OP_NAMESPACES = frozenset(
    {
        "aten",
        "prims",
        "quantized",
        "quantized_decomposed",
        "c10d",
        "_c10d_functional",
        "c10d_functional",
        "_dtensor",
        "profiler",
        "higher_order",
        "torchaudio",
        "_quantized",
        "mkldnn",
        "onednn",
        "inductor",
        "debugprims",
        "rngprims",
        "_inductor_test",
        "_test",
        "xla",
        "neuron",
    }
)


def _is_grid(node: cst.BaseExpression) -> bool:
    if type(node) is cst.Name:
        return "grid" in node.value.lower()
    if type(node) is cst.Lambda:
        return True
    if type(node) is cst.Call and type(node.func) in (cst.Name, cst.Attribute):
        return "grid" in dotted(node.func).lower() or "cdiv" in dotted(node.func)
    if type(node) is cst.Tuple:
        return any(type(e.value) is cst.Call and "cdiv" in dotted(e.value.func) for e in node.elements)
    return False


_NEURON_KERNEL_ROOTS = ("nki", "neuronxcc", "nkilib", "neuronx_distributed", "torch_neuronx")


def _is_neuron_name(qualname: str | None) -> bool:
    return bool(qualname) and qualname.split(".", 1)[0] in _NEURON_KERNEL_ROOTS


# Packages whose presence in a file says its custom operators are built for Neuron.
_NEURON_PACKAGES = frozenset(
    {"torch_neuronx", "neuronxcc", "neuronx_distributed", "neuronx_distributed_inference", "nki", "nkilib"}
)


def neuron_op_namespace(namespace: str, ctx: FileContext) -> bool:
    """`torch.ops.neuron.*`, `torch.ops.xla.*`, or a custom namespace called from a file that uses
    torch-neuronx, NxD or NKI (its custom-op build is a Neuron one)."""
    if namespace in ("neuron", "xla"):
        return True
    if namespace in _BUILTIN_OP_NAMESPACES:
        return False
    return not _NEURON_PACKAGES.isdisjoint(ctx.imports_seen())


def _is_grid_tuple(node: cst.BaseExpression) -> bool:
    return type(node) in (cst.Tuple, cst.List) and bool(node.elements)


_EXTENSIONS = {
    "torch.utils.cpp_extension.CUDAExtension",
    "torch.utils.cpp_extension.CppExtension",
    "setuptools.Extension",
    "distutils.core.Extension",
    "setuptools.extension.Extension",
}


def called_chain(node: cst.Attribute, ctx: FileContext) -> bool:
    """Whether the attribute chain starting at `node` is the callee of a call (`torch.ops.ns.op(x)`,
    `torch.ops.ns.op.default(x)`), as opposed to an op referenced by a graph pass (`n.target is ...`)."""
    chain: cst.CSTNode = node
    for ancestor in reversed(ctx.parents):
        if type(ancestor) is cst.Attribute and ancestor.value is chain:
            chain = ancestor
            continue
        return type(ancestor) is cst.Call and ancestor.func is chain
    return False


# Calls that register a custom operator's kernel for one device type.
_REGISTRATIONS = frozenset({"custom_op", "register_kernel", "impl"})
_CUDA_DISPATCH = frozenset({"cuda", "autogradcuda"})


def _cuda_dispatch(node: cst.BaseExpression | None, ctx: FileContext) -> bool:
    values = ctx.strings(node) if node is not None else None
    if values:
        return any(v.lower() in _CUDA_DISPATCH for v in values)
    if type(node) in (cst.List, cst.Tuple, cst.Set):
        return any(_cuda_dispatch(e.value, ctx) for e in node.elements)
    return False


def cuda_registration_arg(call: cst.Call, ctx: FileContext) -> cst.Arg | None:
    """The argument naming the CUDA dispatch key of `torch.library.custom_op(...,
    device_types="cuda")`, `op.register_kernel("cuda")`, `lib.impl("op", fn, "CUDA")`: a custom
    operator implemented for CUDA only. None for any other call."""
    if name_of(call.func) not in _REGISTRATIONS:
        return None
    return next((a for a in call.args if _cuda_dispatch(a.value, ctx)), None)


def registers_cuda_kernel(call: cst.Call, ctx: FileContext) -> bool:
    """Whether `call` registers a custom operator's kernel for CUDA only (cuda_registration_arg)."""
    return cuda_registration_arg(call, ctx) is not None


# Calls that define a custom operator (or open its library): the first argument names the namespace.
_OP_DEFINITIONS = frozenset(
    {
        "Library",
        "define",
        "custom_op",
        "triton_op",
        "impl",
        "register_fake",
        "register_autograd",
        "impl_abstract",
    }
)


def _report_extension_import(module: str, node: cst.CSTNode, ctx: FileContext) -> None:
    """NL303 at the import of a compiled extension. Where the import is optional (`try: import
    fused_cuda` / `except ImportError`) a path without it exists, and the file's uses of it are
    optional too (ctx.optional_imports)."""
    guarded = optional_guard(ctx, [module], node) is not None or _tries_import(node)
    if guarded:
        ctx.optional_imports.add(module)
    ctx.report("NL303", node, module=module, kind="compiled extension", guarded=guarded)
    _required(module, ctx)


def _tries_import(node: cst.CSTNode) -> bool:
    """`try_import("awq_ext")`: a helper named for catching the failed import (it returns None)."""
    return type(node) is cst.Call and name_of(node.func).startswith(("try_", "safe_", "optional_"))


# The kernel kind of a module that imports a compiled extension at its top level (outside `try`/`if`)
# and runs it on data in its functions (a wrapper module such as causal-conv1d's `cpp_functions.py`),
# followed by the extension's name; cross-file linking keeps it only if the extension is not a name
# the scanned tree defines in Python (static.link).
WRAPS_EXTENSION = "the compiled extension"
_CPP_EXTENSION = "torch.utils.cpp_extension"
_EXTENSION_BUILDERS = EXTENSION_BUILDERS


def _required(module: str, ctx: FileContext) -> None:
    """Record a compiled extension imported at the file's top level, outside `if`, and outside
    `try` unless a handler binds a fallback (bindings.without_fallback): the functions that run it
    then run it or fail."""
    if ctx.scope.kind != "module" or ctx.enclosing(cst.If) is not None:
        return
    if ctx.enclosing(cst.Try) is not None and not without_fallback(module, ctx):
        return
    end = extension_component(module)
    if end:
        ctx.required_extensions.add(".".join(module.split(".")[:end]))


def _callee(call: cst.Call, ctx: FileContext) -> str:
    """The qualified name a call calls, also through a name holding a build class
    (`extension = CUDAExtension`, then `extension(...)`)."""
    callee = ctx.qualname(call.func) or ""
    if not callee and type(call.func) is cst.Name:
        binding = ctx.lookup(call.func.value)  # `extension(...)`, CppExtension or CUDAExtension
        if binding is not None and binding[0] == EXTENSION_BUILDER:
            callee = binding[1]
    return callee


class CustomKernel(Checker):
    """Triton launches, compiled extensions built or imported, custom torch.ops namespaces and registrations."""

    emits = {
        "NL301": ("kernel", "launch"),
        "NL303": ("module", "kind", "guarded"),
    }
    # Imports of torch.utils.cpp_extension (the table-driven api checker reports its uses).
    # Launches of numba CUDA kernels (the api checker reports their `@cuda.jit` definitions).
    also_emits = {"NL302": ("api", "builder"), "NL305": ("kernel", "launch")}
    triggers = (
        "triton",
        "cpp_extension",
        "Extension",
        "torch.ops",
        "_C",
        "_cuda",
        "grid",
        "load_ext",
        "op_builder",
    )
    # The extension modules and kernels a file defines (FileContext) are what cross-file linking reads.
    feeds = ("NL303", "NL306", "NL308")
    import_findings = frozenset({"NL303"})

    @on(cst.Call)
    def launch(self, node: cst.Call, ctx: FileContext) -> None:
        func = node.func
        if type(func) is not cst.Subscript:
            return
        kernel = func.value
        binding = ctx.lookup(kernel.value) if type(kernel) is cst.Name else None
        if binding is not None and binding[0] == "kernel" and binding[1] == "nki":
            return  # an NKI kernel launch is Neuron lock-in (NL905), never a CUDA kernel
        if binding is not None and binding[0] == "kernel" and binding[1] != "triton" and len(func.slice) > 1:
            # `kernel[blocks, threads, stream](...)`: the launch of a numba CUDA kernel
            ctx.report("NL305", func, kernel=kernel.value, launch=True, end_node=node)
            return
        if len(func.slice) != 1:
            return
        index = func.slice[0].slice
        if type(index) is not cst.Index:
            return
        if _is_neuron_name(ctx.qualname(kernel)):
            return  # `flash_fwd[grid](...)` of a kernel imported from NKI or the NKI library
        if binding is not None and binding[0] == "kernel":
            ctx.report("NL301", func, kernel=kernel.value, launch=True, end_node=node)
        elif type(kernel) in (cst.Name, cst.Attribute) and (
            _is_grid(index.value) or (_is_grid_tuple(index.value) and "kernel" in name_of(kernel).lower())
        ):
            # `handlers[key](x)` is an ordinary lookup; a kernel-named callee with a tuple of sizes is a launch.
            ctx.report("NL301", func, kernel=dotted(kernel), launch=True, end_node=node)

    @on(cst.Call)
    def extension_names(self, node: cst.Call, ctx: FileContext) -> None:
        callee = _callee(node, ctx)
        loaded = loaded_extension(node, ctx, callee)
        if loaded is not None:
            # the loader imports the compiled module: its line is the import's finding
            ctx.extension_modules.add(loaded)
            _report_extension_import(loaded, node, ctx)
            return
        if callee in _EXTENSION_BUILDERS:
            name = ctx.strings(arg_value(node, 0, "name"))
            if name:
                ctx.extension_modules.add(name[0])
            ctx.defines_kernels.append("cuda-extension")
            return
        if callee not in _EXTENSIONS:
            return
        name = ctx.strings(arg_value(node, 0, "name"))
        if name:
            ctx.extension_modules.add(name[0])
        sources = arg_value(node, 1, "sources")
        code = ctx.code(sources) if sources is not None else ""
        if callee.endswith("CUDAExtension") or ".cu" in code:
            ctx.defines_kernels.append("cuda-extension")

    @on(cst.Return)
    def builder_wrapper(self, node: cst.Return, ctx: FileContext) -> None:
        """`def make_cuda_ext(name, module, sources): ... return CUDAExtension(...)` (MMDetection3D,
        OpenPCDet, BEVDet setup.py files): the function builds an extension, so its calls name one
        (`make_cuda_ext(name="roiaware_pool3d_ext", ...)`), and imports of that name are of a
        compiled extension this project builds."""
        value = node.value
        if type(value) is not cst.Call or ctx.scope.kind != "function" or len(ctx.scopes) != 2:
            return
        callee = _callee(value, ctx)
        function = ctx.enclosing(cst.FunctionDef)
        if callee in _EXTENSIONS and function is not None:
            ctx.scopes[0].bindings[function.name.value] = (EXTENSION_BUILDER, callee)

    @on(cst.Call)
    def op_definition(self, node: cst.Call, ctx: FileContext) -> None:
        """`torch.library.Library("ns", "FRAGMENT")`, `@custom_op("ns::op")`, `lib.define(...)`: the
        file defines operators of that namespace, and their kernels are reported where they are."""
        callee = name_of(node.func)
        if callee not in _OP_DEFINITIONS or not node.args:
            return
        values = ctx.strings(node.args[0].value)
        if not values:
            return
        if callee == "Library":
            ctx.op_namespaces.add(values[0])
        elif "::" in values[0]:
            ctx.op_namespaces.add(values[0].split("::", 1)[0])

    @on(cst.Attribute)
    def torch_ops(self, node: cst.Attribute, ctx: FileContext) -> None:
        # torch.ops.<namespace>.<op>(...): report at the namespace, once per call.
        if type(node.value) is not cst.Attribute or ctx.qualname(node.value) != "torch.ops":
            return
        namespace = node.attr.value
        if namespace in _OPS_LOADERS:
            # `torch.ops.load_library(path)` is no namespace: it loads a compiled operator library
            call = ctx.parent()
            loaded = ctx.code(call.args[0].value) if type(call) is cst.Call and call.args else ""
            ctx.report("NL303", node, module=f"torch.ops.{namespace}({loaded})", kind=_LIBRARY_LOAD)
            return
        if namespace in _BUILTIN_OP_NAMESPACES or not called_chain(node, ctx):
            return
        if namespace in ctx.op_namespaces:
            return  # an operator this file defines: its kernel (Triton, CUDA registration) is the finding
        if neuron_op_namespace(namespace, ctx):
            return  # a Neuron build's operator: Neuron lock-in (NL903), not a CUDA kernel
        ctx.report("NL303", node, module=f"torch.ops.{namespace}", kind=OPERATOR_NAMESPACE)

    @on(cst.Import)
    def import_extension(self, node: cst.Import, ctx: FileContext) -> None:
        for alias in node.names:
            module = dotted(alias.name)
            if names_extension(module, ctx) and not module.startswith("torch."):
                _report_extension_import(module, alias, ctx)
            elif module == _CPP_EXTENSION or module.startswith(_CPP_EXTENSION + "."):
                ctx.report("NL302", alias, api=_CPP_EXTENSION, builder="import")

    @on(cst.ImportFrom)
    def import_from_extension(self, node: cst.ImportFrom, ctx: FileContext) -> None:
        from neuronlint.static.bindings import absolute_module

        module = absolute_module(node, ctx) or (dotted(node.module) if node.module else "")
        names = [] if type(node.names) is cst.ImportStar else node.names
        candidates = [(module, node.module)] + [
            (f"{module}.{dotted(a.name)}" if module else dotted(a.name), a) for a in names
        ]
        if (
            module == _CPP_EXTENSION
            or f"{module}.{''.join(dotted(a.name) for a in names[:1])}" == _CPP_EXTENSION
        ):
            # `from torch.utils.cpp_extension import CUDA_HOME, load` / `from torch.utils import
            # cpp_extension`: the import line is the finding (a CUDA_HOME probe is not another one).
            only = [dotted(a.name) for a in names]
            builder = only[0] if len(only) == 1 else "import"
            ctx.report("NL302", node.module or node, api=_CPP_EXTENSION, builder=builder)
            return
        for full, where in candidates:
            if full and where is not None and names_extension(full, ctx) and not full.startswith("torch."):
                _report_extension_import(full, where, ctx)
                return

    @on(cst.Name, cst.Attribute)
    def extension_use(self, node: cst.Name | cst.Attribute, ctx: FileContext) -> None:
        """Every call or attribute use of a compiled extension (`ext.forward(x)`, `_C.ops.f(x)`)."""
        if not ctx.extension_modules and not ctx.mentions_pattern(EXTENSION_IDENTIFIER):
            return  # no qualified name of this file can have a component that reads as an extension
        is_name = type(node) is cst.Name  # `type() is`: a failing isinstance() on LibCST's classes is slow
        if is_name and ctx.lookup(node.value) is None:
            return
        parent = ctx.parent()
        if type(parent) is cst.Attribute and (parent.value is node or is_name):
            return  # only the outermost attribute of a chain
        if defines_name(parent, node) or (
            is_name and type(parent) is cst.AssignTarget and parent.target is node
        ):
            # `def points_in_boxes_part(self):` in a module that imports the op of that name, or an
            # assignment rebinding the name: nothing is used from the extension
            return
        qualname = ctx.qualname(node)
        if not qualname or ctx.enclosing(cst.Import, cst.ImportFrom, cst.Annotation) is not None:
            return
        if qualname in ctx.extension_modules or qualname.rpartition(".")[2].startswith("__"):
            # the module object itself (`ext = None`, `_EXT = ext`, `return ext`) or its metadata
            # (`ext.__file__`, the path of the built library): nothing is used from it
            return
        root = extension_module(qualname, ctx)
        if root is not None:
            guarded = root in ctx.optional_imports or optional_guard(ctx, [root], node) is not None
            ctx.report("NL303", node, module=qualname, kind="compiled extension", guarded=guarded)
            if ctx.required_extensions and ctx.scope.kind in ("function", "lambda", "comprehension"):
                call = ctx.parent()
                if (
                    type(call) is cst.Call
                    and call.func is node
                    and call.args
                    and root in ctx.required_extensions
                ):
                    # a function that runs the extension on data (`causal_conv1d_cuda.causal_conv1d_fwd(x,
                    # ...)`, not a query such as `_C.get_cuda_version()`), in a module that cannot be
                    # imported without it: the module wraps a custom kernel, and its importers reach it
                    ctx.defines_kernels.append(f"{WRAPS_EXTENSION} `{root}`")
