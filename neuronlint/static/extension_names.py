"""Names that read as compiled CUDA extension modules: a repository's own `_C` and `*_cuda`
modules, the ones libraries ship (`amp_C`, `flash_attn_2_cuda`), the packages that load one when
imported (`mmcv.ops`), and the modules a file builds. Kept apart from the custom-kernel checker
because bindings and cuda_only_lib read them too (`importlib.import_module`, library imports)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from neuronlint.static.context import FileContext

# NL303's kind at `torch.ops.<namespace>.<op>(...)`; linking and the kernel-call finder read it back.
OPERATOR_NAMESPACE = "custom operator namespace"

# Compiled CUDA extensions that libraries ship under names without the `_C`/`*_cuda` pattern.
# `_custom_ops` is vLLM's thin Python layer over the kernels it compiles into `torch.ops._C`
# (`vllm/_custom_ops.py`): `ops.rms_norm(...)` runs a compiled kernel, as `vllm._C` does. `awq_ext`
# is AutoAWQ's kernel build (AutoAWQ_kernels), `awq_inference_engine` llm-awq's, and
# `exllama_kernels` / `exllamav2_kernels` AutoGPTQ's ExLlama builds; `transformer_engine_torch`
# (`transformer_engine_extensions` before TE 1.x) is Transformer Engine's pybind11 CUDA extension,
# imported as `tex` by TE and by the projects that call its kernels directly (`tex.te_gemm(...)`,
# `tex.cast_to_fp8(...)`). (A general `*_ext` pattern would
# take Python packages such as `nvidia_resiliency_ext` for compiled modules.)
_KNOWN_EXTENSIONS = frozenset(
    {
        "amp_C",
        "awq_ext",
        "awq_inference_engine",
        "exllama_kernels",
        "exllamav2_kernels",
        "transformer_engine_extensions",
        "transformer_engine_torch",
        "syncbn",
        "flash_attn_2_cuda",
        "flash_attn_cuda",
        "fused_mix_prec_layer_norm_cuda",
        "_custom_ops",
    }
)
# Top-level modules that flash-attention's and apex's optional CUDA builds install (`csrc/rotary`,
# `csrc/layer_norm`, ...). Their names are ordinary words (`self.rotary_emb` is a module attribute
# in most models), so only the first component of an absolute name counts: `import rotary_emb`,
# `rotary_emb.apply_rotary(...)`, never `pkg.rotary_emb` or `from .rotary_emb import ...`.
_TOP_LEVEL_EXTENSIONS = frozenset(
    {
        "rotary_emb",
        "dropout_layer_norm",
        "fused_dense_lib",
        "xentropy_cuda_lib",
        "fused_softmax_lib",
        "ft_attention",
        "fmhalib",
        "fast_layer_norm",
    }
)


# Packages whose Python API is a thin layer over a compiled extension they ship, loaded when the
# package is imported: MMCV's `mmcv/ops/__init__.py` imports every op module, and each loads the
# compiled `mmcv._ext` (`ext_loader.load_ext("_ext", [...])`). So an import of the package is the
# extension's import, and each use of an op is a use of the compiled module; the ops written in plain
# PyTorch (point_sample.py, cc_attention.py, corner_pool.py, conv2d_gradfix.py,
# deprecated_wrappers.py, merge_cells.py at mmcv a8073c74) load nothing and are not.
_EXTENSION_PACKAGES = {
    "mmcv.ops": frozenset(
        {
            "point_sample",
            "SimpleRoIAlign",
            "rel_roi_point_to_rel_img_point",
            "cc_attention",
            "CrissCrossAttention",
            "corner_pool",
            "CornerPool",
            "conv2d_gradfix",
            "conv2d",
            "conv_transpose2d",
            "deprecated_wrappers",
            "Conv2d",
            "ConvTranspose2d",
            "Linear",
            "MaxPool2d",
            "merge_cells",
        }
    ),
}


def _in_extension_package(module: str, ctx: FileContext | None) -> str | None:
    """The extension package a dotted name lies in or names (`mmcv.ops.nms` -> `mmcv.ops`), or None.
    Inside the package's own distribution (MMCV's `mmcv/` tree) its ops are the code being ported,
    and their kernels are reported where the package loads them."""
    package = next((p for p in _EXTENSION_PACKAGES if module == p or module.startswith(p + ".")), None)
    if package is None or ctx is None:
        return package
    own = ctx.module_name.partition(".")[0]
    return None if own == package.partition(".")[0] else package


# Helpers named after CUDA, not compiled modules: `move_to_cuda`, `require_cuda`, `skip_if_no_cuda`.
_HELPER_PREFIXES = (
    "to_",
    "move_",
    "require_",
    "requires_",
    "skip_",
    "is_",
    "has_",
    "use_",
    "get_",
    "set_",
    "check_",
    "enable_",
    "disable_",
    "maybe_",
    "with_",
    "on_",
    "only_",
    "run_",
)


# `autogptq_cuda_256`, `autogptq_cuda_64`: one build of an extension per tile width.
_BUILD_SUFFIX = re.compile(r"_\d+$")


def _extension_name(last: str) -> bool:
    """Whether one name component reads as a compiled extension module: `_C`, `*_cuda`,
    `*_cuda_kernel` and `*_cuda_<n>` (one build per width)."""
    if last in ("_C", "_cuda") or last in _KNOWN_EXTENSIONS:
        return True
    last = _BUILD_SUFFIX.sub("", last)
    if not last.endswith(("_cuda", "_cuda_kernel")) or last.endswith("to_cuda"):
        return False
    return not last.lower().startswith(_HELPER_PREFIXES)


# Every identifier that reads as an extension (_extension_name), as a whole word: a qualified name
# has such a component only where the file's bytes or its module name spell one (a file whose only
# `_C` is inside `MY_CONST` or `_CACHE` has none: 184 of pytorch/ao's 633 files hold the bare
# letters, 82 the word).
EXTENSION_IDENTIFIER = re.compile(
    rb"(?<![A-Za-z0-9_])(?:_C|[A-Za-z0-9_]*_cuda(?:_kernel|_[0-9]+)?|"
    + rb"|".join(
        re.escape(n.encode())
        for n in sorted(_KNOWN_EXTENSIONS | _TOP_LEVEL_EXTENSIONS | set(_EXTENSION_PACKAGES))
    )
    + rb")(?![A-Za-z0-9_])"
)


def _extension_at(parts: list[str], end: int) -> bool:
    """Whether component `end` (1-based) of a dotted name reads as a compiled extension module."""
    return _extension_name(parts[end - 1]) or (end == 1 and parts[0] in _TOP_LEVEL_EXTENSIONS)


def names_extension(module: str, ctx: FileContext | None = None) -> bool:
    """Whether a module's dotted name reads as a compiled extension (`fused_cuda`, `pkg._C`), or lies
    in a package that loads one when imported (`mmcv.ops`, outside MMCV's own tree given `ctx`)."""
    parts = module.split(".")
    return _extension_at(parts, len(parts)) or _in_extension_package(module, ctx) is not None


def extension_module(qualname: str, ctx: FileContext | None = None) -> str | None:
    """The compiled CUDA extension module a dotted name lies in (`scaled_masked_softmax_cuda.forward`
    -> `scaled_masked_softmax_cuda`, `vllm._C.ops.x` -> `vllm._C`), or None. A repository's own `_C`,
    `*_cuda` modules, well-known library extensions (`amp_C`, `flash_attn_2_cuda`) and the modules
    this file builds (`CUDAExtension(name=...)`, `cpp_extension.load(name=...)`) count, and so does
    an op of a package that loads one (`mmcv.ops.nms` -> `mmcv.ops`, not its plain-PyTorch ops);
    PyTorch's own `torch._C` does not, nor does a function that merely has `cuda` in its name
    (`move_to_cuda`)."""
    if qualname.startswith("torch.") or qualname == "torch":
        return None
    package = _in_extension_package(qualname, ctx)
    if package is not None:
        op = qualname[len(package) + 1 :].partition(".")[0]
        return package if op and op not in _EXTENSION_PACKAGES[package] else None
    parts = qualname.split(".")
    built = ctx.extension_modules if ctx is not None else ()
    for end in range(1, len(parts) + 1):
        module = ".".join(parts[:end])
        if module in built:
            return module
        if _extension_at(parts, end) and end < len(parts):
            return module  # something is used from it: `ext.forward`, `_C.ops.x`
    return None


def extension_component(module: str) -> int:
    """How many leading components of a dotted name reach the first one that reads as a compiled
    extension (`pkg._C.ops.f` -> 2, `whisper.timing.dtw_cuda` -> 3); 0 when none does."""
    parts = module.split(".")
    return next((end for end in range(1, len(parts) + 1) if _extension_at(parts, end)), 0)
