"""Keeps the name table of each scope current while the walk goes: imports, aliases, constants, loops."""

from __future__ import annotations

import libcst as cst

from neuronlint.static.context import FileContext, Scope
from neuronlint.static.engine import on


def dotted(node: cst.CSTNode | None) -> str:
    """'a.b.c' for a Name/Attribute chain as written in an import."""
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
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


@on(cst.Import)
def _import(node: cst.Import, ctx: FileContext) -> None:
    for alias in node.names:
        full = dotted(alias.name)
        ctx.imports.add(full)
        if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
            ctx.bind(alias.asname.name.value, ("module", full))
        else:
            root = full.split(".")[0]
            ctx.bind(root, ("module", root))


@on(cst.ImportFrom)
def _import_from(node: cst.ImportFrom, ctx: FileContext) -> None:
    module = absolute_module(node, ctx)
    if not module:
        return
    ctx.imports.add(module)
    if isinstance(node.names, cst.ImportStar):
        return
    for alias in node.names:
        name = dotted(alias.name)
        local = alias.asname.name.value if alias.asname and isinstance(alias.asname.name, cst.Name) else name
        ctx.bind(local, ("module", f"{module}.{name}"))
        ctx.imports.add(f"{module}.{name}")


def _bind_value(target: cst.BaseExpression, value: cst.BaseExpression | None, ctx: FileContext) -> None:
    if not isinstance(target, cst.Name):
        return
    name = target.value
    if value is None:
        return
    qualified = ctx.qualname(value)
    if qualified:
        ctx.bind(name, ("module", qualified))
        return
    strings = ctx.strings(value)
    if strings:
        ctx.bind(name, ("str", strings))
        return
    if ctx.is_numpy(value):
        ctx.bind(name, ("numpy", ""))
        return
    # Any other assignment shadows whatever the name meant before.
    if ctx.lookup(name) is not None:
        ctx.bind(name, ("other", None))


@on(cst.Assign, leave=True)
def _assign(node: cst.Assign, ctx: FileContext) -> None:
    for target in node.targets:
        _bind_value(target.target, node.value, ctx)


@on(cst.AnnAssign, leave=True)
def _ann_assign(node: cst.AnnAssign, ctx: FileContext) -> None:
    _bind_value(node.target, node.value, ctx)


def _decorator_names(node: cst.FunctionDef, ctx: FileContext) -> list[str]:
    out = []
    for dec in node.decorators:
        expr = dec.decorator.func if isinstance(dec.decorator, cst.Call) else dec.decorator
        out.append(ctx.qualname(expr) or dotted(expr))
    return out


_KERNEL_DECORATORS = {
    "triton.jit": "triton",
    "triton.autotune": "triton",
    "triton.heuristics": "triton",
    "numba.cuda.jit": "numba-cuda",
    "cupyx.jit.rawkernel": "cupy",
}


@on(cst.FunctionDef)
def _function(node: cst.FunctionDef, ctx: FileContext) -> None:
    kinds = {_KERNEL_DECORATORS[d] for d in _decorator_names(node, ctx) if d in _KERNEL_DECORATORS}
    if kinds:
        kind = sorted(kinds)[0]
        ctx.bind(node.name.value, ("kernel", kind))
        ctx.defines_kernels.append(kind)
    elif ctx.lookup(node.name.value) is not None:
        ctx.bind(node.name.value, ("other", None))
    scope = Scope("function")
    params = node.params
    for param in (*params.posonly_params, *params.params, *params.kwonly_params):
        scope.bindings[param.name.value] = ("other", None)
    for star in (params.star_arg, params.star_kwarg):
        if isinstance(star, cst.Param):
            scope.bindings[star.name.value] = ("other", None)
    ctx.scopes.append(scope)


@on(cst.Lambda)
def _lambda(node: cst.Lambda, ctx: FileContext) -> None:
    ctx.scopes.append(Scope("lambda", loop_depth=ctx.scope.loop_depth))


@on(cst.ClassDef)
def _class(node: cst.ClassDef, ctx: FileContext) -> None:
    ctx.scopes.append(Scope("class"))


@on(cst.FunctionDef, cst.Lambda, cst.ClassDef, leave=True)
def _pop_scope(node: cst.CSTNode, ctx: FileContext) -> None:
    ctx.scopes.pop()


_LOOPS = (cst.For, cst.While, cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp)


@on(*_LOOPS)
def _enter_loop(node: cst.CSTNode, ctx: FileContext) -> None:
    ctx.scope.loop_depth += 1


@on(*_LOOPS, leave=True)
def _leave_loop(node: cst.CSTNode, ctx: FileContext) -> None:
    ctx.scope.loop_depth -= 1
