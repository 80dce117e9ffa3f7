"""custom-kernel: Triton launches, C++/CUDA extensions built or imported, custom torch.ops namespaces.

Kernel decorators and cpp_extension names come from the api table; this module adds the patterns
that are not plain names: `kernel[grid](...)` launches, extension names declared in setup.py,
`torch.ops.<namespace>` calls into compiled libraries.
"""

from __future__ import annotations

import libcst as cst

from neuronlint.static.bindings import dotted
from neuronlint.static.calls import arg_value
from neuronlint.static.context import FileContext
from neuronlint.static.engine import on, triggers

triggers("triton", "cpp_extension", "Extension", "torch.ops", "_C", "_cuda", "grid")

# torch.ops namespaces that ship with PyTorch itself (not user-compiled kernels).
_BUILTIN_OP_NAMESPACES = frozenset(
    {"aten", "prims", "quantized", "quantized_decomposed", "c10d", "_c10d_functional", "c10d_functional",
     "_dtensor", "profiler", "higher_order", "fbgemm", "torchvision", "torchaudio", "_quantized", "mkldnn",
     "onednn", "inductor", "debugprims", "rngprims", "_inductor_test", "_test", "mylib", "xla", "neuron"}
)  # fmt: skip


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


@on(cst.Call)
def _launch(node: cst.Call, ctx: FileContext) -> None:
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
    elif _is_grid(index.value) and isinstance(kernel, (cst.Name, cst.Attribute)):
        ctx.report("NL301", func, kernel=dotted(kernel), launch=True, end_node=node)


_EXTENSIONS = {"torch.utils.cpp_extension.CUDAExtension", "torch.utils.cpp_extension.CppExtension",
               "setuptools.Extension", "distutils.core.Extension", "setuptools.extension.Extension"}  # fmt: skip


@on(cst.Call)
def _extension_names(node: cst.Call, ctx: FileContext) -> None:
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
def _torch_ops(node: cst.Attribute, ctx: FileContext) -> None:
    # torch.ops.<namespace>.<op>: report at the namespace, once per chain.
    if not isinstance(node.value, cst.Attribute) or ctx.qualname(node.value) != "torch.ops":
        return
    namespace = node.attr.value
    if namespace in _BUILTIN_OP_NAMESPACES:
        return
    ctx.report("NL303", node, module=f"torch.ops.{namespace}", kind="custom operator namespace")


def _extension_import(module: str) -> bool:
    last = module.split(".")[-1]
    return last in ("_C", "_cuda") or last.endswith("_cuda") or last.endswith("_cuda_kernel")


@on(cst.Import)
def _import_extension(node: cst.Import, ctx: FileContext) -> None:
    for alias in node.names:
        module = dotted(alias.name)
        if _extension_import(module) and not module.startswith("torch.") and ctx.data.library(module) is None:
            ctx.report("NL303", alias, module=module, kind="compiled extension")


@on(cst.ImportFrom)
def _import_from_extension(node: cst.ImportFrom, ctx: FileContext) -> None:
    from neuronlint.static.bindings import absolute_module

    module = absolute_module(node, ctx) or (dotted(node.module) if node.module else "")
    names = [] if isinstance(node.names, cst.ImportStar) else node.names
    candidates = [(module, node.module)] + [(f"{module}.{dotted(a.name)}" if module else dotted(a.name), a) for a in names]
    for full, where in candidates:
        if full and where is not None and _extension_import(full) and not full.startswith("torch."):
            if ctx.data.library(full) is None:
                ctx.report("NL303", where, module=full, kind="compiled extension")
                return
