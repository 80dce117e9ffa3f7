"""cuda-only-lib: imports of CUDA-only libraries (rules/libraries.toml), their call sites, bnb flags."""

from __future__ import annotations

import libcst as cst

from neuronlint.static.bindings import absolute_module, dotted
from neuronlint.static.calls import is_true
from neuronlint.static.context import FileContext
from neuronlint.static.engine import on, triggers

triggers("flash_attn", "xformers", "apex", "bitsandbytes", "triton", "mamba_ssm", "causal_conv1d", "amp_C",
         "transformer_engine", "deepspeed", "tensorrt", "cupy", "pycuda", "dali", "load_in_8bit",
         "load_in_4bit", "BitsAndBytesConfig", "liger_kernel", "vllm", "selective_scan", "install_requires")  # fmt: skip

_IMPORT_ERRORS = {"ImportError", "ModuleNotFoundError", "Exception", "BaseException"}


def _guarded(ctx: FileContext) -> bool:
    """Inside `try:` whose handlers catch ImportError: an optional dependency with a fallback."""
    parents = ctx.parents
    for i in range(len(parents) - 1, 0, -1):
        node = parents[i - 1]
        if isinstance(node, cst.Try) and parents[i] is node.body:
            for handler in node.handlers:
                if handler.type is None:
                    return True
                names = {dotted(e.value) for e in handler.type.elements} if isinstance(handler.type, cst.Tuple) else {dotted(handler.type)}
                if names & _IMPORT_ERRORS:
                    return True
    return False


def _lib_facts(lib: dict, module: str, ctx: FileContext) -> dict:
    return {"library": lib["name"], "module": module, "alternative": lib["alternative"],
            "lib_status": lib["status"], "guarded": _guarded(ctx)}  # fmt: skip


@on(cst.Import)
def _import(node: cst.Import, ctx: FileContext) -> None:
    for alias in node.names:
        module = dotted(alias.name)
        lib = ctx.data.library(module)
        if lib is not None:
            ctx.report("NL401", alias, **_lib_facts(lib, module, ctx))


@on(cst.ImportFrom)
def _import_from(node: cst.ImportFrom, ctx: FileContext) -> None:
    if node.relative or node.module is None:
        return
    module = absolute_module(node, ctx)
    lib = ctx.data.library(module)
    if lib is None and not isinstance(node.names, cst.ImportStar):
        # `from apex import amp` and `from deepspeed import ops` name the library one level down.
        for alias in node.names:
            lib = ctx.data.library(f"{module}.{dotted(alias.name)}")
            if lib is not None:
                module = f"{module}.{dotted(alias.name)}"
                break
    if lib is not None:
        ctx.report("NL401", node.module, **_lib_facts(lib, module, ctx))


@on(cst.Call)
def _call(node: cst.Call, ctx: FileContext) -> None:
    qualname = ctx.qualname(node.func)
    if not qualname:
        return
    lib = ctx.data.library(qualname)
    # Triton call sites live inside kernels, already reported once per kernel (NL301).
    if lib is None or lib["name"] == "triton":
        return
    if ctx.enclosing(cst.Decorator):
        return
    ctx.report("NL402", node.func, api=qualname, **_lib_facts(lib, qualname, ctx))


@on(cst.Arg)
def _bnb_flags(node: cst.Arg, ctx: FileContext) -> None:
    if node.keyword is not None and node.keyword.value in ("load_in_8bit", "load_in_4bit") and is_true(node.value):
        ctx.report("NL403", node, symbol=f"{node.keyword.value}=True")


@on(cst.Name)
def _bnb_config(node: cst.Name, ctx: FileContext) -> None:
    if node.value == "BitsAndBytesConfig" and isinstance(ctx.parent(), cst.Call) and ctx.parent().func is node:
        ctx.report("NL403", node, symbol="BitsAndBytesConfig")


@on(cst.Arg)
def _install_requires(node: cst.Arg, ctx: FileContext) -> None:
    if node.keyword is None or node.keyword.value not in ("install_requires", "extras_require"):
        return
    if not ctx.path.endswith("setup.py"):
        return
    from neuronlint.static.requirements import requirement_name

    stack = [node.value]
    while stack:
        value = stack.pop()
        if isinstance(value, (cst.List, cst.Tuple, cst.Set)):
            stack.extend(e.value for e in value.elements)
        elif isinstance(value, cst.Dict):
            stack.extend(e.value for e in value.elements if isinstance(e, cst.DictElement))
        elif isinstance(value, cst.SimpleString):
            text = ctx.strings(value)
            name = requirement_name(text[0]) if text else None
            lib = ctx.data.library_packages.get(name) if name else None
            if lib is not None:
                ctx.report("NL404", value, library=lib["name"], package=text[0], alternative=lib["alternative"])
