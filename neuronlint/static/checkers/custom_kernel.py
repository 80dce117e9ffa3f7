"""custom-kernel: Triton launches, C++/CUDA extensions built or imported, custom torch.ops namespaces.

Kernel decorators and cpp_extension names come from the api table; this module adds the patterns
that are not plain names: `kernel[grid](...)` launches, extension names declared in setup.py,
`torch.ops.<namespace>` calls into compiled libraries.
"""

from __future__ import annotations

import libcst as cst

from neuronlint.static.bindings import dotted
from neuronlint.static.calls import arg_value, name_of
from neuronlint.static.context import FileContext
from neuronlint.static.registry import Checker, on

# torch.ops namespaces that ship with PyTorch itself (not user-compiled kernels).
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
        "fbgemm",
        "torchvision",
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
    if isinstance(node, cst.Name):
        return "grid" in node.value.lower()
    if isinstance(node, cst.Lambda):
        return True
    if isinstance(node, cst.Call) and isinstance(node.func, (cst.Name, cst.Attribute)):
        return "grid" in dotted(node.func).lower() or "cdiv" in dotted(node.func)
    if isinstance(node, cst.Tuple):
        return any(isinstance(e.value, cst.Call) and "cdiv" in dotted(e.value.func) for e in node.elements)
    return False


def _is_grid_tuple(node: cst.BaseExpression) -> bool:
    return isinstance(node, (cst.Tuple, cst.List)) and bool(node.elements)


_EXTENSIONS = {
    "torch.utils.cpp_extension.CUDAExtension",
    "torch.utils.cpp_extension.CppExtension",
    "setuptools.Extension",
    "distutils.core.Extension",
    "setuptools.extension.Extension",
}


def _called_chain(node: cst.Attribute, ctx: FileContext) -> bool:
    """Whether the attribute chain starting at `node` is the callee of a call (`torch.ops.ns.op(x)`,
    `torch.ops.ns.op.default(x)`), as opposed to an op referenced by a graph pass (`n.target is ...`)."""
    chain: cst.CSTNode = node
    for ancestor in reversed(ctx.parents):
        if isinstance(ancestor, cst.Attribute) and ancestor.value is chain:
            chain = ancestor
            continue
        return isinstance(ancestor, cst.Call) and ancestor.func is chain
    return False


# Calls that register a custom operator's kernel for one device type.
_REGISTRATIONS = frozenset({"custom_op", "register_kernel", "impl"})
_CUDA_DISPATCH = frozenset({"cuda", "autogradcuda"})


def _cuda_dispatch(node: cst.BaseExpression | None, ctx: FileContext) -> bool:
    values = ctx.strings(node) if node is not None else None
    if values:
        return any(v.lower() in _CUDA_DISPATCH for v in values)
    if isinstance(node, (cst.List, cst.Tuple, cst.Set)):
        return any(_cuda_dispatch(e.value, ctx) for e in node.elements)
    return False


def registers_cuda_kernel(call: cst.Call, ctx: FileContext) -> bool:
    """`torch.library.custom_op(..., device_types="cuda")`, `op.register_kernel("cuda")`,
    `lib.impl("op", fn, "CUDA")`: a custom operator implemented for CUDA only."""
    return name_of(call.func) in _REGISTRATIONS and any(_cuda_dispatch(a.value, ctx) for a in call.args)


def _extension_import(module: str) -> bool:
    last = module.split(".")[-1]
    if last.endswith("to_cuda"):
        return False  # `from .utils import move_to_cuda`: a function, not a compiled module
    return last in ("_C", "_cuda") or last.endswith("_cuda") or last.endswith("_cuda_kernel")


class CustomKernel(Checker):
    """Triton launches, compiled extensions built or imported, custom torch.ops namespaces and registrations."""

    emits = {
        "NL301": ("kernel", "launch"),
        "NL303": ("module", "kind"),
    }
    triggers = (
        "triton",
        "cpp_extension",
        "Extension",
        "torch.ops",
        "_C",
        "_cuda",
        "grid",
        "custom_op",
        "register_kernel",
        ".impl(",
    )
    # The extension modules and kernels a file defines (FileContext) are what cross-file linking reads.
    feeds = ("NL303", "NL306")
    import_findings = frozenset({"NL303"})

    @on(cst.Call)
    def launch(self, node: cst.Call, ctx: FileContext) -> None:
        func = node.func
        if not isinstance(func, cst.Subscript) or len(func.slice) != 1:
            return
        index = func.slice[0].slice
        if not isinstance(index, cst.Index):
            return
        kernel = func.value
        binding = ctx.lookup(kernel.value) if isinstance(kernel, cst.Name) else None
        if binding is not None and binding[0] == "kernel":
            ctx.report("NL301", func, kernel=kernel.value, launch=True, end_node=node)
        elif isinstance(kernel, (cst.Name, cst.Attribute)) and (
            _is_grid(index.value) or (_is_grid_tuple(index.value) and "kernel" in name_of(kernel).lower())
        ):
            # `handlers[key](x)` is an ordinary lookup; a kernel-named callee with a tuple of sizes is a launch.
            ctx.report("NL301", func, kernel=dotted(kernel), launch=True, end_node=node)

    @on(cst.Call)
    def extension_names(self, node: cst.Call, ctx: FileContext) -> None:
        callee = ctx.qualname(node.func) or ""
        if callee not in _EXTENSIONS:
            return
        name = ctx.strings(arg_value(node, 0, "name"))
        if name:
            ctx.extension_modules.add(name[0])
        sources = arg_value(node, 1, "sources")
        code = ctx.module.code_for_node(sources) if sources is not None else ""
        if callee.endswith("CUDAExtension") or ".cu" in code:
            ctx.defines_kernels.append("cuda-extension")

    @on(cst.Attribute)
    def torch_ops(self, node: cst.Attribute, ctx: FileContext) -> None:
        # torch.ops.<namespace>.<op>(...): report at the namespace, once per call.
        if not isinstance(node.value, cst.Attribute) or ctx.qualname(node.value) != "torch.ops":
            return
        namespace = node.attr.value
        if namespace in _BUILTIN_OP_NAMESPACES or not _called_chain(node, ctx):
            return
        ctx.report("NL303", node, module=f"torch.ops.{namespace}", kind="custom operator namespace")

    @on(cst.Call)
    def cuda_registration(self, node: cst.Call, ctx: FileContext) -> None:
        if not registers_cuda_kernel(node, ctx):
            return
        names = [
            v
            for a in node.args
            for v in (ctx.strings(a.value) or ())
            if "::" in v or v.lower() not in _CUDA_DISPATCH
        ]
        receiver = node.func.value if isinstance(node.func, cst.Attribute) else None
        op = names[0] if names else (dotted(receiver) if receiver is not None else name_of(node.func))
        ctx.report(
            "NL303",
            node.func,
            module=op or "custom operator",
            kind="custom operator implemented only for CUDA",
        )

    @on(cst.Import)
    def import_extension(self, node: cst.Import, ctx: FileContext) -> None:
        for alias in node.names:
            module = dotted(alias.name)
            if (
                _extension_import(module)
                and not module.startswith("torch.")
                and ctx.data.library(module) is None
            ):
                ctx.report("NL303", alias, module=module, kind="compiled extension")

    @on(cst.ImportFrom)
    def import_from_extension(self, node: cst.ImportFrom, ctx: FileContext) -> None:
        from neuronlint.static.bindings import absolute_module

        module = absolute_module(node, ctx) or (dotted(node.module) if node.module else "")
        names = [] if isinstance(node.names, cst.ImportStar) else node.names
        candidates = [(module, node.module)] + [
            (f"{module}.{dotted(a.name)}" if module else dotted(a.name), a) for a in names
        ]
        for full, where in candidates:
            if full and where is not None and _extension_import(full) and not full.startswith("torch."):
                if ctx.data.library(full) is None:
                    ctx.report("NL303", where, module=full, kind="compiled extension")
                    return
