"""compile-backend: torch.compile and its CUDA-only modes, backends and Inductor options.

`torch._inductor.*` references are table-driven (rules/apis.toml). This module looks at the calls:
`torch.compile(...)`, `@torch.compile`, and `nn.Module.compile(...)` (same arguments, minus the model).
"""

from __future__ import annotations

import libcst as cst

from neuronlint.static.calls import is_true, kwarg
from neuronlint.static.context import FileContext
from neuronlint.static.registry import Checker, on

_CUDA_MODES = frozenset({"reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs"})
_CUDA_BACKENDS = frozenset({"inductor", "cudagraphs", "tensorrt", "torch_tensorrt", "onnxrt", "tvm"})
_NEURON_BACKENDS = frozenset({"neuron", "neuronx", "openxla", "openxla_eval"})
# Keywords of torch.compile; a `.compile(...)` call with any other keyword is not nn.Module.compile.
_COMPILE_KEYWORDS = frozenset({"backend", "mode", "fullgraph", "dynamic", "options", "disable"})


def _module_compile(node: cst.Call, func: cst.Attribute, ctx: FileContext) -> bool:
    """`model.compile(...)` / `block.compile(backend=..., fullgraph=True)` (nn.Module.compile).

    Only torch.compile's keywords and no positional arguments (regex and Keras `compile` take
    others), on a receiver that is a name or attribute (not `jax.jit(f).lower(x).compile()`).
    """
    if type(func.value) not in (cst.Name, cst.Attribute) or ctx.qualname(func) is not None:
        return False
    for arg in node.args:
        if arg.star == "**":
            continue
        if arg.keyword is None or arg.keyword.value not in _COMPILE_KEYWORDS:
            return False
    return "torch" in ctx.imports_seen()


_MAX_KEYS = 64  # a dict with more keys is a table, not a set of compiler options
_ENV_LOOKUPS = frozenset({"os.environ.get", "os.getenv"})


def _option_keys(value: cst.Dict, ctx: FileContext) -> list[tuple[cst.BaseExpression, str]] | None:
    """(key node, key) of the string keys written in a dict literal (`**base` entries add none), or
    None when a key is not a string or the dict is too large to be a set of compiler options."""
    if len(value.elements) > _MAX_KEYS:
        return None
    keys = []
    for element in value.elements:
        if type(element) is not cst.DictElement:
            continue  # `{**base, "max_autotune": True}`: the keys of `base` are chosen where it is written
        names = ctx.strings(element.key)
        if not names:
            return None
        keys.append((element.key, names[0]))
    return keys


def _dict_key(name: str, ctx: FileContext) -> str:
    """Key of the deferred detections of a dict assigned to `name` in the scope being visited."""
    function = ctx.enclosing(cst.FunctionDef)
    return f"dict:{name}" if function is None else f"dict:{id(function)}:{name}"


def _report_options(options: cst.Arg, ctx: FileContext) -> None:
    """One NL803 per Inductor key the code writes: each key of `options={...}`, on the key's line;
    for a dict held by a name (`options=OPTS`, a dict literal assigned at module level or in the
    same function), on the keys where the dict is written. Any other expression (`options=options`,
    a parameter forwarded by a wrapper; `options=cfg.options`) passes on keys chosen elsewhere: the
    keys are reported where they are written, if in Python, and the call is the NL801 finding."""
    value = options.value
    if type(value) is cst.Dict:
        for key_node, key in _option_keys(value, ctx) or ():
            ctx.report("NL803", key_node, option=f"options[{key!r}]")
    elif type(value) is cst.Name:
        local = _dict_key(value.value, ctx)
        ctx.release(local if local in ctx.deferred else f"dict:{value.value}")


def _backend_default(node: cst.SimpleString, ctx: FileContext) -> bool:
    """`os.environ.get("COMPILE_BACKEND", "inductor")`, `backend: str = "inductor"`,
    `add_argument("--backend", default="inductor")`: Inductor chosen as a default."""
    parent, grand = ctx.parent(), ctx.parent(2)
    if type(parent) is cst.Arg and type(grand) is cst.Call:
        if parent.keyword is None:
            return (
                ctx.qualname(grand.func) in _ENV_LOOKUPS and len(grand.args) > 1 and grand.args[1] is parent
            )
        if parent.keyword.value == "default":
            return any("backend" in (ctx.strings(a.value) or ("",))[0] for a in grand.args if a is not parent)
        return False
    if type(parent) is cst.Param:
        return "backend" in parent.name.value
    if type(parent) in (cst.Assign, cst.AnnAssign):
        targets = parent.targets if type(parent) is cst.Assign else ()
        names = [t.target for t in targets] if targets else [parent.target]
        return any("backend" in (dotted_name(t) or "").lower() for t in names)
    return False


def _parameter_default(value: cst.BaseExpression, ctx: FileContext) -> tuple[str, ...] | None:
    """`def compile_model(model, backend="neuron"): torch.compile(model, backend=backend)`: the
    string a parameter defaults to, when the function passes the parameter on unchanged (the caller
    may choose another; the default is the backend the code was written for)."""
    if type(value) is not cst.Name or ctx.lookup(value.value) not in (None, ("other", None)):
        return None  # (a parameter is bound as "other" until the body gives it a known kind)
    param = ctx.parameter(value.value)
    return ctx.strings(param.default) if param is not None and param.default is not None else None


def dotted_name(node: cst.BaseExpression) -> str:
    if type(node) is cst.Name:
        return node.value
    if type(node) is cst.Attribute:
        return node.attr.value
    return ""


# Ahead-of-time Inductor entry points (torch 2.6: torch/_inductor/__init__.py, torch/_export/__init__.py).
_AOT_INDUCTOR = frozenset(
    {"torch._inductor.aot_compile", "torch._inductor.aoti_compile_and_package", "torch._export.aot_compile"}
)


class CompileBackend(Checker):
    """torch.compile / nn.Module.compile calls and decorators: their backend, mode, options and dynamic."""

    emits = {
        "NL801": ("api", "backend"),
        "NL802": ("mode",),
        "NL803": ("option",),
        "NL804": ("symbol",),
        "NL805": ("api", "backend"),
        "NL909": ("backend",),
    }
    triggers = ("compile", "inductor", "mark_dynamic")

    @on(cst.Call)
    def aot_inductor(self, node: cst.Call, ctx: FileContext) -> None:
        """`torch._inductor.aoti_compile_and_package(ep, inductor_configs=options)`: AOTInductor
        compiles an exported program into a CUDA or CPU library (NL805); its Inductor options are NL803."""
        api = ctx.qualname(node.func)
        if api not in _AOT_INDUCTOR:
            return
        ctx.report(
            "NL805", node.func, end_node=node, api=api, backend="AOTInductor, into a CUDA or CPU library"
        )
        for keyword in ("options", "inductor_configs"):
            options = kwarg(node, keyword)
            if options is not None:
                _report_options(options, ctx)

    @on(cst.Call)
    def compile_call(self, node: cst.Call, ctx: FileContext) -> None:
        func = node.func
        if type(func) is cst.Attribute:
            if func.attr.value != "compile":
                return
            api = "torch.compile" if ctx.qualname(func) == "torch.compile" else None
            if api is None and _module_compile(node, func, ctx):
                api = "nn.Module.compile"
        elif type(func) is cst.Name:
            api = (
                "torch.compile" if ctx.qualname(func) == "torch.compile" else None
            )  # `from torch import compile`
        else:
            return
        if api is None:
            return
        backend = kwarg(node, "backend")
        backend_names = ctx.strings(backend.value) if backend is not None else None
        if backend is not None and backend_names is None:
            backend_names = _parameter_default(backend.value, ctx)
        name = backend_names[0] if backend_names else None
        if name in _NEURON_BACKENDS:
            ctx.report("NL909", backend, backend=name)
            return
        if name in _CUDA_BACKENDS:
            ctx.report("NL803", backend, option=f'backend="{name}"')
        mode = kwarg(node, "mode")
        mode_names = ctx.strings(mode.value) if mode is not None else None
        if mode_names and mode_names[0] in _CUDA_MODES:
            ctx.report("NL802", mode, mode=mode_names[0])
        options = kwarg(node, "options")
        if options is not None:
            _report_options(options, ctx)
        dynamic = kwarg(node, "dynamic")
        if dynamic is not None and is_true(dynamic.value):
            ctx.report("NL804", dynamic, symbol="dynamic=True")
        if backend is None:
            if any(arg.star == "**" for arg in node.args):
                chosen = "the backend in its `**` arguments (Inductor unless they set one)"
            else:
                chosen = "the default backend, Inductor"
            ctx.report("NL801", func, end_node=node, api=api, backend=chosen)
        elif name is None:
            text = " ".join(ctx.code(backend.value).split())
            ctx.report("NL801", func, end_node=node, api=api, backend=f"the backend in `{text[:60]}`")

    @on(cst.Assign, leave=True)
    def option_dict(self, node: cst.Assign, ctx: FileContext) -> None:
        """A dict with string keys (module level or in a function) may be passed as `options=NAME`
        later: keep its keys until it is."""
        if len(node.targets) != 1 or type(node.targets[0].target) is not cst.Name:
            return
        if ctx.scope.kind not in ("module", "function"):
            return
        key = _dict_key(node.targets[0].target.value, ctx)
        if type(node.value) is not cst.Dict or ctx.enclosing(cst.If) is None:
            # a dict written under an `if` (`if not package: options = {...}`) is one of the
            # dicts the name may hold: the keys written before stay
            ctx.forget(key)
        if type(node.value) is not cst.Dict:
            if ctx.scope.kind == "function":
                ctx.deferred[key] = []  # a local name shadows a module-level dict of that name
            return
        for key_node, option in _option_keys(node.value, ctx) or ():
            ctx.defer(key, "NL803", key_node, option=f"options[{option!r}]")

    @on(cst.SimpleString)
    def inductor_default(self, node: cst.SimpleString, ctx: FileContext) -> None:
        if ctx.literal_value(node) == "inductor" and _backend_default(node, ctx):
            ctx.report("NL803", node, option='backend "inductor" (a default)')

    @on(cst.Decorator)
    def compile_decorator(self, node: cst.Decorator, ctx: FileContext) -> None:
        if type(node.decorator) is not cst.Call and ctx.qualname(node.decorator) == "torch.compile":
            ctx.report("NL801", node.decorator, api="torch.compile", backend="the default backend, Inductor")
