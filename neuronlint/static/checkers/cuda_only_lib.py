"""cuda-only-lib: imports of CUDA-only libraries (rules/libraries.toml), their call sites, bnb flags.

An import or call is "guarded" (reported as a warning, not a blocker) when it sits where the library
is optional (static/optional_imports.py), or uses a name an optional import bound.
"""

from __future__ import annotations

import re
from typing import Any

import libcst as cst

from neuronlint.static.bindings import absolute_module, dotted
from neuronlint.static.calls import is_true, name_of
from neuronlint.static.context import FileContext, snippet_of
from neuronlint.static.data import library_facts
from neuronlint.static.extension_names import extension_module, names_extension
from neuronlint.static.optional_imports import optional_guard
from neuronlint.static.registry import Checker, on

# Kernel languages: their calls live inside kernels, reported once per kernel (NL301, NL305).
_KERNEL_LANGUAGES = frozenset({"triton", "helion", "cutlass_dsl", "cutile", "tilelang"})


def _guarded(ctx: FileContext, lib: dict, node: cst.CSTNode | None = None) -> bool:
    return optional_guard(ctx, lib["modules"], node) is not None


# What the library's record says (rules/libraries.toml): the message, severity and advice follow it.
_RECORD_FACTS = (
    "library",
    "support",
    "runs_on",
    "neuron_path",
    "alternative",
    "alternative_no_nki",
)  # library_facts
_LIB_FACTS = (*_RECORD_FACTS, "module", "lib_status", "guarded", "guard", "helper", "pure_helper")


def _is_helper(lib: dict, name: str) -> bool:
    """A device-free helper of the library (its logger, its config): not a place to port."""
    return any(name == h or name.startswith(h + ".") for h in lib.get("helpers", ()))


def _is_pure_helper(lib: dict, name: str) -> bool:
    """A pure-PyTorch utility of the library (flash_attn's padding functions): its calls run on any
    device once the library imports."""
    return any(name == h or name.startswith(h + ".") for h in lib.get("pure_helpers", ()))


def _lib_facts(
    lib: dict, module: str, ctx: FileContext, use: bool = False, node: cst.CSTNode | None = None
) -> dict:
    guard = optional_guard(ctx, lib["modules"], node) or (
        "import" if use and _optional(module, ctx) else None
    )
    return {
        **library_facts(lib),
        "module": module,
        "lib_status": lib["status"],
        "guarded": guard is not None,
        "guard": guard,
        "helper": _is_helper(lib, module),
        "pure_helper": use and _is_pure_helper(lib, module),
    }


def _optional(qualname: str, ctx: FileContext) -> bool:
    """A use of a name whose import was optional (`try: from flash_attn import f` ... `f(x)`): the
    call site has the import's severity."""
    names = ctx.optional_imports
    if not names:
        return False
    while qualname:
        if qualname in names:
            return True
        qualname = qualname.rpartition(".")[0]
    return False


def _note_optional(node: cst.Import | cst.ImportFrom, lib: dict, ctx: FileContext) -> None:
    if not _guarded(ctx, lib):
        return
    if type(node) is cst.Import:
        ctx.optional_imports.update(dotted(a.name) for a in node.names)
        return
    module = absolute_module(node, ctx)
    if type(node.names) is cst.ImportStar:
        ctx.optional_imports.add(module)
    else:
        ctx.optional_imports.update(f"{module}.{dotted(a.name)}" for a in node.names)


def _library_use(node: cst.BaseExpression, ctx: FileContext) -> None:
    qualname = ctx.qualname(node)
    if not qualname or extension_module(qualname, ctx):
        return  # a compiled CUDA extension is a custom kernel (NL303), even one a library ships
    lib = ctx.data.library(qualname)
    # Triton, Helion, CuTe DSL, cuTile and TileLang calls live inside kernels, reported once per kernel.
    if lib is None or lib["name"] in _KERNEL_LANGUAGES:
        return
    if any(scope.kernel_body for scope in ctx.scopes):
        return  # `cuda.local.array(...)` inside a `@numba.cuda.jit` kernel: the kernel is the finding
    ctx.report("NL402", node, api=qualname, **_lib_facts(lib, qualname, ctx, use=True, node=node))


def _is_bnb_config(call: cst.CSTNode | None, ctx: FileContext) -> bool:
    if type(call) is not cst.Call:
        return False
    qualname = ctx.qualname(call.func) or ""
    return name_of(call.func) == "BitsAndBytesConfig" or qualname.endswith(".BitsAndBytesConfig")


# Literals a quantisation flag may be given that are not `True` (and so choose no quantisation).
_LITERALS = (cst.Integer, cst.Float, cst.Imaginary, cst.SimpleString, cst.ConcatenatedString)


def _bnb_facts(ctx: FileContext) -> dict:
    lib = ctx.data.library("bitsandbytes")
    return library_facts(lib) if lib is not None else {"library": "bitsandbytes"}


class CudaOnlyLib(Checker):
    """Imports and uses of CUDA-only libraries (rules/libraries.toml), bitsandbytes flags, setup.py requirements."""

    emits = {
        "NL401": _LIB_FACTS,
        "NL402": ("api", *_LIB_FACTS),
        "NL403": ("symbol", "switched", *_RECORD_FACTS),
        "NL404": ("package", "optional", "extra", *_RECORD_FACTS),
    }
    triggers = (
        "flash_attn",
        "xformers",
        "apex",
        "bitsandbytes",
        "triton",
        "mamba_ssm",
        "causal_conv1d",
        "amp_C",
        "transformer_engine",
        "deepspeed",
        "tensorrt",
        "cupy",
        "pycuda",
        "dali",
        "load_in_8bit",
        "load_in_4bit",
        "BitsAndBytesConfig",
        "liger_kernel",
        "vllm",
        "selective_scan",
        "install_requires",
        "extra",
        "require",
        "flash_attention_",
        "flashinfer",
        "flash_mla",
        "deep_ep",
        "deep_gemm",
        "nvshmem",
        "sageattention",
        "pynvml",
        "helion",
        "flash_attn_interface",
        "flashattn_hopper",
    )

    @classmethod
    def trigger_words(cls, data: Any = None) -> tuple[str, ...]:
        """The hand-listed words and the top-level name of every library module (rules/libraries.toml)."""
        modules = data.library_modules if data is not None else {}
        return cls.triggers + tuple(sorted({m.split(".")[0] for m in modules}))

    # Cross-file linking adds no finding on a line that already reports a library import.
    feeds = ("NL303", "NL306", "NL308")
    import_findings = frozenset({"NL401"})

    @on(cst.Import)
    def import_(self, node: cst.Import, ctx: FileContext) -> None:
        if ctx.in_type_checking():
            return  # an import for annotations only never runs: not a dependency
        for alias in node.names:
            module = dotted(alias.name)
            lib = ctx.data.library(module)
            if lib is not None and not names_extension(module, ctx):
                ctx.report("NL401", alias, **_lib_facts(lib, module, ctx))
                _note_optional(node, lib, ctx)

    @on(cst.ImportFrom)
    def import_from(self, node: cst.ImportFrom, ctx: FileContext) -> None:
        if node.relative or node.module is None or ctx.in_type_checking():
            return
        module = absolute_module(node, ctx)
        lib = ctx.data.library(module)
        if lib is None and type(node.names) is not cst.ImportStar:
            # `from apex import amp` and `from deepspeed import ops` name the library one level down.
            for alias in node.names:
                lib = ctx.data.library(f"{module}.{dotted(alias.name)}")
                if lib is not None:
                    module = f"{module}.{dotted(alias.name)}"
                    break
        if lib is not None and not names_extension(module, ctx):
            ctx.report("NL401", node.module, **_lib_facts(lib, module, ctx))
            _note_optional(node, lib, ctx)

    @on(cst.Call)
    def call(self, node: cst.Call, ctx: FileContext) -> None:
        if ctx.qualname(node.func) and not ctx.enclosing(cst.Decorator):
            _library_use(node.func, ctx)

    @on(cst.ClassDef)
    def subclass(self, node: cst.ClassDef, ctx: FileContext) -> None:
        # `class TELinear(te.pytorch.Linear)`: the class is the library's layer under another name.
        for base in node.bases:
            if base.keyword is None:
                _library_use(base.value, ctx)

    @on(cst.Arg)
    def bnb_flags(self, node: cst.Arg, ctx: FileContext) -> None:
        if node.keyword is None or node.keyword.value not in ("load_in_8bit", "load_in_4bit"):
            return
        value = node.value
        if is_true(value):
            symbol, switched = f"{node.keyword.value}=True", {}
        elif type(value) in _LITERALS or (type(value) is cst.Name and value.value in ("False", "None")):
            return  # `load_in_8bit=False`: no quantisation
        else:
            # `load_in_8bit=args.load_8bit`, `load_in_4bit=bits == 4`: bitsandbytes when the flag is set
            symbol = f"{node.keyword.value}={snippet_of(ctx.code(value))}"
            switched = {"switched": True}
        if not _is_bnb_config(ctx.parent(), ctx):  # the config call itself is the finding
            ctx.report("NL403", node, symbol=symbol, **switched, **_bnb_facts(ctx))

    @on(cst.Call)
    def bnb_config(self, node: cst.Call, ctx: FileContext) -> None:
        if _is_bnb_config(node, ctx):
            ctx.report("NL403", node.func, symbol="BitsAndBytesConfig", **_bnb_facts(ctx))

    @on(cst.Arg)
    def flash_attention_choice(self, node: cst.Arg, ctx: FileContext) -> None:
        """`from_pretrained(..., attn_implementation="flash_attention_2")`: flash_attn through a framework."""
        if node.keyword is not None and node.keyword.value == "attn_implementation":
            _flash_attention(node.value, ctx)

    @on(cst.Call)
    def xformers_attention(self, node: cst.Call, ctx: FileContext) -> None:
        """`unet.enable_xformers_memory_efficient_attention()`: diffusers (and models built on it)
        route attention through xformers, a CUDA-only library reached through a framework."""
        func = node.func
        if type(func) is cst.Attribute and func.attr.value == _XFORMERS_SWITCH:
            lib = ctx.data.library("xformers")
            if lib is not None:
                facts = _lib_facts(lib, "xformers", ctx, node=node)
                ctx.report("NL402", func.attr, end_node=node, api=f"{_XFORMERS_SWITCH}()", **facts)

    @on(cst.Call)
    def framework_quantization(self, node: cst.Call, ctx: FileContext) -> None:
        """`GPTQConfig(bits=4)`, `EetqConfig()` from transformers: quantisation reached through a
        framework, which runs the library's GPU kernels (as `BitsAndBytesConfig` does, NL403)."""
        if not ctx.mentions(_QUANTIZATION_CONFIGS):
            return  # this runs at every call: most files name neither config (an alias too is imported by it)
        qualname = ctx.qualname(node.func) or ""
        config = qualname.rpartition(".")[2]
        library = _FRAMEWORK_QUANTIZATION.get(config) if qualname.startswith("transformers.") else None
        lib = ctx.data.library(library) if library else None
        if lib is not None:
            facts = _lib_facts(lib, library, ctx, node=node)
            ctx.report("NL402", node.func, api=f"{config}(...)", **facts)

    @on(cst.DictElement)
    def flash_attention_key(self, node: cst.DictElement, ctx: FileContext) -> None:
        if (ctx.strings(node.key) or ("",))[0] == "attn_implementation":
            _flash_attention(node.value, ctx)

    @on(cst.Assign)
    def requirement_lists(self, node: cst.Assign, ctx: FileContext) -> None:
        """setup.py lists built before the `setup()` call: `extra_deps["gpu"] = ["flash-attn==2.7"]`,
        `install_requires = [...]`, `extras = {"gpu": [...]}`."""
        if len(node.targets) != 1 or not ctx.path.endswith("setup.py"):
            return
        target = node.targets[0].target
        if type(target) is cst.Subscript:
            keys = (
                ctx.strings(target.slice[0].slice.value) if type(target.slice[0].slice) is cst.Index else None
            )
            name, extra = dotted(target.value), (keys[0] if keys else "?")
        else:
            name, extra = dotted(target), ""
        if not _REQUIREMENT_NAME.search(name):
            return
        optional = bool(extra) or "extra" in name.lower() or type(node.value) is cst.Dict
        _requirements(node.value, ctx, optional, extra)

    @on(cst.Return)
    def returned_requirements(self, node: cst.Return, ctx: FileContext) -> None:
        """setup.py helpers that compute the requirements: `def get_default_dependencies(): ...
        return ["torch>=2.1.2", "triton>=2.3.1"]` (Liger-Kernel's, by detected platform)."""
        if node.value is None or not ctx.path.endswith("setup.py"):
            return
        function = ctx.enclosing(cst.FunctionDef)
        if function is None or not _REQUIREMENT_NAME.search(function.name.value):
            return
        name = function.name.value.lower()
        _requirements(node.value, ctx, "extra" in name or "optional" in name, "")

    @on(cst.Arg)
    def install_requires(self, node: cst.Arg, ctx: FileContext) -> None:
        if node.keyword is None or node.keyword.value not in ("install_requires", "extras_require"):
            return
        if not ctx.path.endswith("setup.py"):
            return
        _requirements(node.value, ctx, node.keyword.value == "extras_require", "")


_REQUIREMENT_NAME = re.compile(r"(?i)(require|deps|dependencies|extras|packages)")
_FLASH_ATTENTION = re.compile(r"^flash_attention_\d$")
_XFORMERS_SWITCH = "enable_xformers_memory_efficient_attention"
# transformers' quantisation configs and the GPU library each one loads the model with.
_FRAMEWORK_QUANTIZATION = {"GPTQConfig": "auto_gptq", "EetqConfig": "eetq"}
_QUANTIZATION_CONFIGS = tuple(_FRAMEWORK_QUANTIZATION)


def _flash_attention(value: cst.BaseExpression, ctx: FileContext) -> None:
    names = ctx.strings(value) if type(value) in (cst.SimpleString, cst.ConcatenatedString) else None
    lib = ctx.data.library("flash_attn")
    if names and _FLASH_ATTENTION.match(names[0]) and lib is not None:
        facts = _lib_facts(lib, "flash_attn", ctx)
        ctx.report("NL402", value, api=f'attn_implementation="{names[0]}"', **facts)


def _requirements(root: cst.BaseExpression, ctx: FileContext, optional: bool, first_extra: str) -> None:
    """NL404 on each requirement string of a CUDA-only package in a list, tuple or dict of lists."""
    from neuronlint.static.requirements import installs_on_linux, requirement_name

    stack: list[tuple[cst.BaseExpression, str]] = [(root, first_extra)]
    while stack:
        value, extra = stack.pop()
        if type(value) in (cst.List, cst.Tuple, cst.Set):
            stack.extend((e.value, extra) for e in value.elements)
        elif type(value) is cst.Dict:
            for element in value.elements:
                if type(element) is cst.DictElement:
                    key = ctx.strings(element.key) if type(element.key) is cst.SimpleString else []
                    stack.append((element.value, key[0] if key else "?"))
        elif type(value) is cst.SimpleString:
            text = ctx.strings(value)
            name = requirement_name(text[0]) if text else None
            lib = ctx.data.library_packages.get(name) if name else None
            if lib is not None and installs_on_linux(text[0]):
                facts = {"optional": optional, **({"extra": extra or "?"} if optional else {})}
                ctx.report(
                    "NL404",
                    value,
                    package=text[0].split(";")[0].strip(),
                    **library_facts(lib),
                    **facts,
                )
