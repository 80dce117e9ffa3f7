"""custom-kernel rules (NL301-NL307) on real scans, including the cross-file import rule NL306."""

from __future__ import annotations

import textwrap

from neuronlint.findings import Severity
from tests import mirrors
from tests.annotated_source import check, only
from tests.conftest import scan_paths

KERNELS = {"select": ["custom-kernel"]}


def test_triton_kernels_and_launches(tmp_path):
    check(
        tmp_path,
        """
        import torch
        import triton
        import triton.language as tl

        @triton.autotune(configs=[triton.Config({"BLOCK": 128})], key=["n"])
        @triton.jit  # expect: NL301
        def scale_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
            offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)

        def scale(x):
            out = torch.empty_like(x)
            grid = lambda meta: (triton.cdiv(x.numel(), meta["BLOCK"]),)
            scale_kernel[grid](x, out, x.numel())  # expect: NL301
            return out

        def table_lookup(tables, key, values):
            return tables[key](values)
    """,
        **KERNELS,
    )


def test_launch_through_an_imported_kernel_with_a_grid(tmp_path):
    check(
        tmp_path,
        """
        import triton
        from .kernels import add_kernel

        def add(x, y, out):
            add_kernel[(triton.cdiv(x.numel(), 1024),)](x, y, out, x.numel())  # expect: NL301
            return out
    """,
        name="pkg/ops.py",
        **KERNELS,
    )


def test_jit_function_reference(tmp_path):
    check(
        tmp_path,
        """
        import triton

        def is_kernel(fn):
            return isinstance(fn, triton.JITFunction)  # expect: NL301
    """,
        **KERNELS,
    )


def test_cpp_extension_builders(tmp_path):
    findings = check(
        tmp_path,
        """
        from torch.utils import cpp_extension  # expect: NL302
        from torch.utils.cpp_extension import BuildExtension, CppExtension, CUDAExtension, load, load_inline  # expect: NL302

        class NinjaBuild(BuildExtension):  # expect: NL302
            pass

        fused = load(name="fused", sources=["fused.cpp", "fused_kernel.cu"])  # expect: NL302
        inline = load_inline(name="inline_ops", cpp_sources=["int f();"], functions=["f"])  # expect: NL302
        ext = CUDAExtension("fused_cuda", ["fused.cpp", "fused_kernel.cu"])  # expect: NL302
        cmdclass = {"build_ext": BuildExtension}  # expect: NL302
        inc = cpp_extension.include_paths()  # expect: NL302
    """,
        **KERNELS,
    )
    assert next(f for f in findings if f.line == 9).severity.value == "blocker"
    findings = check(
        tmp_path,
        """
        from torch.utils.cpp_extension import CppExtension  # expect: NL302

        host = CppExtension("host_ops", ["host.cpp"])  # expect: NL302
    """,
        **KERNELS,
    )
    host = next(f for f in findings if f.line == 3)
    assert host.severity.value == "warning" and host.status == "partial"  # a CppExtension is host code


def test_compiled_extension_imports(tmp_path):
    check(
        tmp_path,
        """
        import fused_softmax_cuda  # expect: NL303
        from mypkg import _C  # expect: NL303
        from mypkg.ops import ngram_repeat_block_cuda  # expect: NL303
        from .utils import move_to_cuda, move_batch_to_cuda
        import torch._C
        from torch.utils.cpp_extension import CUDA_HOME  # expect: NL302
        from utils import require_cuda, skip_if_no_cuda

        ROOT = CUDA_HOME
        _C.fused_forward(x)  # expect: NL303
        ngram_repeat_block_cuda.forward(tokens)  # expect: NL303
        move_to_cuda(batch)


        @require_cuda
        def test_kernel():
            ...
    """,
        name="mypkg/layers.py",
        **KERNELS,
    )


def test_top_level_extensions_of_flash_attention_builds(tmp_path):
    """flash-attention's optional CUDA builds install top-level modules with ordinary names: only an
    absolute import of one is the extension, never a model's `self.rotary_emb` or a package module."""
    check(
        tmp_path,
        """
        import torch
        import rotary_emb  # expect: NL303
        from .rotary_emb import apply_rotary_emb
        from mypkg.rotary_emb import RotaryEmbedding


        def rotate(x1, x2, cos, sin):
            rotary_emb.apply_rotary(x1, x2, cos, sin, x1, x2, False)  # expect: NL303
            return apply_rotary_emb(x1) + RotaryEmbedding(x2)


        class Attention(torch.nn.Module):
            def __init__(self, rotary_emb):
                super().__init__()
                self.rotary_emb = rotary_emb

            def forward(self, x):
                return self.rotary_emb(x)
    """,
        name="mypkg/layers.py",
        **KERNELS,
    )


def test_uses_of_a_module_built_by_cpp_extension_load(tmp_path):
    # stylegan2-pytorch's op/fused_act.py: the module `load(...)` returns is a compiled extension,
    # and each call of it is a finding, like a call of an imported one (NL303).
    check(
        tmp_path,
        """
        import os
        from torch.autograd import Function
        from torch.utils.cpp_extension import load, load_inline  # expect: NL302

        module_path = os.path.dirname(__file__)
        fused = load(  # expect: NL302
            "fused",
            sources=[os.path.join(module_path, "fused_bias_act.cpp"), os.path.join(module_path, "kernel.cu")],
        )
        upfirdn = load_inline(name="upfirdn2d", cpp_sources=["int f();"], cuda_sources=[KERNEL], functions=["f"])  # expect: NL302


        class FusedLeakyReLUFunction(Function):
            @staticmethod
            def forward(ctx, input, bias, negative_slope, scale):
                empty = input.new_empty(0)
                out = fused.fused_bias_act(input, bias, empty, 3, 0, negative_slope, scale)  # expect: NL303
                ctx.save_for_backward(out)
                return out


        def upfirdn2d(x, kernel):
            return upfirdn.upfirdn2d(x, kernel, 1, 1)  # expect: NL303


        def unrelated(loader):
            data = loader.load("fused")
            return data.fused_bias_act


        def get_fbd_cuda():
            # peft's boft/layer.py: the module is built lazily and handed back, not used here
            global _FBD_CUDA
            try:
                fbd_cuda = load(name="fbd_cuda", sources=["fbd_cuda.cpp", "fbd_cuda_kernel.cu"])  # expect: NL302
            except Exception:
                fbd_cuda = None
            _FBD_CUDA = fbd_cuda
            return _FBD_CUDA


        def build_allocator(src):
            # Megatron-LM: a CUDA build whose library path is read, and a host-only C++ extension
            mod = load_inline(name="managed_alloc_runtime", cpp_sources=[src], functions=[], with_cuda=True)  # expect: NL302
            path = mod.__file__
            share = load_inline(name="share_storage_ext", cpp_sources=src, functions=["share_storage"])  # expect: NL302
            return path, share.share_storage
    """,
        **KERNELS,
    )


def test_custom_operator_namespaces(tmp_path):
    check(
        tmp_path,
        """
        import torch

        def forward(x, node):
            y = torch.ops.fused.gelu(x)  # expect: NL303
            z = torch.ops.fused.gelu.default(y)  # expect: NL303
            w = torch.ops.aten.relu(z)
            if node.target is torch.ops.fused.gelu.default:
                pass
            return torch.ops.c10d_functional.all_reduce(w, "sum", "0")
    """,
        **KERNELS,
    )


def test_custom_operators_registered_only_for_cuda_are_cuda_api(tmp_path):
    findings = check(
        tmp_path,
        """
        import torch

        @torch.library.custom_op("fused::rmsnorm", mutates_args=(), device_types="cuda")  # expect: NL116
        def rmsnorm(x: torch.Tensor) -> torch.Tensor:
            return x

        @rmsnorm.register_kernel("cuda")  # expect: NL116
        def _(x):
            return x

        @rmsnorm.register_kernel("cpu")
        def _(x):
            return x

        lib = torch.library.Library("fused", "IMPL")
        lib.impl("rmsnorm", rmsnorm, "CUDA")  # expect: NL116

        @torch.library.custom_op("fused::generic", mutates_args=())
        def generic(x: torch.Tensor) -> torch.Tensor:
            return x
    """,
        select=["custom-kernel", "cuda-api"],
    )
    assert findings[0].category == "cuda-api"
    assert "registers fused::rmsnorm for the CUDA dispatch key only" in findings[0].message


def test_cupy_numba_pycuda_kernels(tmp_path):
    check(
        tmp_path,
        """
        import cupy as cp
        from numba import cuda
        from pycuda.compiler import SourceModule

        add = cp.RawKernel(r"extern \\"C\\" __global__ void add(float* x) {}", "add")  # expect: NL305
        mod = SourceModule("__global__ void twice(float* a) {}")  # expect: NL305

        @cuda.jit  # expect: NL305
        def scale(x, a):
            i = cuda.grid(1)
            x[i] *= a
    """,
        **KERNELS,
    )


def test_jiterator(tmp_path):
    check(
        tmp_path,
        """
        import torch

        code = "template <typename T> T gelu(T x) { return x; }"
        gelu = torch.cuda.jiterator._create_jit_fn(code)  # expect: NL307
    """,
        **KERNELS,
    )


def test_cuda_source_file(tmp_path):
    source = tmp_path / "kernels" / "scale.cu"
    source.parent.mkdir()
    source.write_text(
        "#include <cuda_runtime.h>\n__global__ void scale(float* x, float a) { x[threadIdx.x] *= a; }\n"
    )
    result = scan_paths([tmp_path], cwd=tmp_path, select=["custom-kernel"])
    finding = only(result.active, "NL304")
    assert (finding.path, finding.line) == ("kernels/scale.cu", 1)
    assert "2 lines" in finding.message


def _write(root, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"))


def test_kernel_module_imports_across_files(tmp_path):
    _write(
        tmp_path,
        {
            "model/__init__.py": "",
            "model/kernels.py": """
            import triton

            @triton.jit
            def add_kernel(x_ptr, n):
                pass
        """,
            "model/layers.py": """
            import torch
            from .kernels import add_kernel
            from . import kernels as k
            from model.kernels import add_kernel as again
        """,
            "model/plain.py": """
            from .layers import torch
        """,
        },
    )
    result = scan_paths([tmp_path], cwd=tmp_path, select=["NL306"])
    assert sorted((f.path, f.line) for f in result.active) == [
        ("model/layers.py", 2),
        ("model/layers.py", 3),
        ("model/layers.py", 4),
    ]
    assert "model.kernels" in result.active[0].message and "triton" in result.active[0].message


def test_import_of_an_extension_built_by_setup_py(tmp_path):
    _write(
        tmp_path,
        {
            "setup.py": """
            from setuptools import setup
            from torch.utils.cpp_extension import BuildExtension, CUDAExtension

            setup(name="fused", ext_modules=[CUDAExtension("fused_lamb", ["lamb.cpp", "lamb_kernel.cu"])],
                  cmdclass={"build_ext": BuildExtension})
        """,
            "optim/lamb.py": """
            import torch
            import fused_lamb
        """,
        },
    )
    result = scan_paths([tmp_path], cwd=tmp_path, select=["NL303"])
    assert [(f.path, f.line) for f in result.active] == [("optim/lamb.py", 2)]


def test_importers_of_a_module_over_an_extension_built_by_setup_py(tmp_path):
    """llm-awq's shape: `qmodule` imports the extension its setup.py builds at the top, so it cannot
    be imported without the build, and importing it reaches the kernel (NL306); a guarded import
    of the extension does not make its module a kernel module."""
    _write(
        tmp_path,
        {
            "kernels/setup.py": """
            from setuptools import setup
            from torch.utils.cpp_extension import BuildExtension, CUDAExtension

            setup(name="engine", ext_modules=[CUDAExtension(name="engine_ext", sources=["gemm.cu"])],
                  cmdclass={"build_ext": BuildExtension})
        """,
            "quant/__init__.py": "",
            "quant/qmodule.py": """
            import torch
            import engine_ext


            class QLinear(torch.nn.Module):
                def forward(self, x):
                    return engine_ext.gemm_forward(x, self.qweight)
        """,
            "quant/optional.py": """
            try:
                import engine_ext
            except ImportError:
                engine_ext = None
        """,
            "quant/quantizer.py": """
            from .qmodule import QLinear
            from .optional import engine_ext


            def convert(m):
                from .qmodule import QLinear as Q
                return QLinear(m), Q, engine_ext
        """,
        },
    )
    result = scan_paths([tmp_path], cwd=tmp_path, select=["NL306"])
    assert [(f.path, f.line) for f in result.active] == [("quant/quantizer.py", 1), ("quant/quantizer.py", 6)]


def test_fixture_packages_link_kernels_and_extensions_across_files():
    """The fixture harness scans one file at a time; the cross-file rules need the whole package."""
    from tests.conftest import FIXTURES, ROOT

    triton = scan_paths([FIXTURES / "triton_kernels"], cwd=ROOT, select=["NL306"])
    assert [(f.path, f.line) for f in triton.active] == [("fixtures/triton_kernels/fused/layers.py", 8)]
    assert "fused.kernels" in triton.active[0].message
    extension = scan_paths([FIXTURES / "cpp_extension"], cwd=ROOT, select=["NL303", "NL306"])
    assert sorted((f.path, f.line, f.rule) for f in extension.active) == [
        ("fixtures/cpp_extension/fused_adam/__init__.py", 1, "NL306"),  # optimizer.py runs the extension
        ("fixtures/cpp_extension/fused_adam/optimizer.py", 5, "NL303"),
        ("fixtures/cpp_extension/fused_adam/optimizer.py", 28, "NL303"),
    ]


def test_extension_named_only_by_the_package_path():
    """`from . import ops` in package `pkg._C`: the file's text has no extension-like word, its module
    name has (the handler's early exit, FileContext.mentions, reads both)."""
    from neuronlint.pipeline import build_static_data
    from neuronlint.ruledb.loader import load_ruledb
    from neuronlint.static.engine import analyze_python

    data = b"import torch\nfrom . import ops\n\nops.fused(torch.ones(2))\n"
    result = analyze_python("pkg/_C/use.py", data, build_static_data(load_ruledb()))
    assert [(d["rule"], d["line"], d["facts"]["module"]) for d in result.detections] == [
        ("NL303", 4, "pkg._C.ops.fused")
    ]


def test_an_undecodable_package_name_is_read_by_the_early_exit():
    """A file under a folder whose name is not UTF-8 (`caf\\xe9`, kept as a surrogate escape): its
    dotted module name is matched as bytes, never encoded strictly (that was an NL002)."""
    from neuronlint.pipeline import build_static_data
    from neuronlint.ruledb.loader import load_ruledb
    from neuronlint.static.engine import analyze_python

    data = b"import torch\nfrom . import ops\n\nops.fused(torch.ones(2))\n"
    result = analyze_python("caf\udce9/_C/use.py", data, build_static_data(load_ruledb()))
    assert [(d["rule"], d["line"]) for d in result.detections] == [("NL303", 4)]


def test_every_name_that_reads_as_an_extension_is_found_by_the_early_exit_pattern():
    """The handler's early exit (FileContext.mentions_pattern) must never skip a file in which some
    component could read as an extension: every identifier `_extension_name` accepts is matched,
    wherever it stands (alone, in a dotted name, after non-ASCII letters, in the module name)."""
    import re

    from neuronlint.static.extension_names import (
        _KNOWN_EXTENSIONS,
        _TOP_LEVEL_EXTENSIONS,
        EXTENSION_IDENTIFIER,
        _extension_name,
    )
    from tests.conftest import FIXTURES, ROOT

    words = set(_KNOWN_EXTENSIONS) | {"_C", "_cuda", "amp_C", "syncbn", "MY_CONST", "_CACHE", "to_cuda"}
    stems = ["", "x", "fused_adam", "éx", "to", "move_to", "is", "a1", "_", "__"]
    for stem in stems:
        for tail in ("_cuda", "_cuda_kernel", "_C", "_cudaX", "cuda", "_kernel_cuda"):
            words.add(stem + tail)
    # and every identifier of this repository's own sources and fixtures
    for path in [*ROOT.joinpath("neuronlint").rglob("*.py"), *FIXTURES.rglob("*.py")]:
        words |= set(re.findall(r"\w+", path.read_text(encoding="utf-8", errors="replace")))
    accepted = sorted({w for w in words if _extension_name(w)} | _TOP_LEVEL_EXTENSIONS)
    assert {"_C", "amp_C", "fused_adam_cuda", "x_cuda_kernel", "éx_cuda"} <= set(accepted)
    for word in accepted:
        for text in (word, f"import {word}\n", f"a.{word}.b", f"({word})", f"from . import {word} as e"):
            assert EXTENSION_IDENTIFIER.search(text.encode()), (word, text)
    # what the early exit skips: the letters inside other words
    for text in ("MY_CONST = 1", "self._CACHE", "def to_cudaX(): pass", "xcuda"):
        assert EXTENSION_IDENTIFIER.search(text.encode()) is None, text


def test_a_compiled_extension_is_a_blocker_unless_its_import_is_optional(tmp_path):
    """An extension imported unconditionally fails to import where it was not built: a blocker, at
    the import and at each use. In `try: ... except ImportError:` a path without it exists: a
    warning, and so are the uses of what that import bound."""
    from neuronlint.findings import Severity

    findings = check(
        tmp_path,
        """
        import fused_adam_cuda  # expect: NL303

        try:
            import fused_softmax_cuda  # expect: NL303
        except ImportError:
            fused_softmax_cuda = None


        def step(p, g, x):
            fused_adam_cuda.adam(p, g)  # expect: NL303
            return fused_softmax_cuda.forward(x)  # expect: NL303
        """,
        **KERNELS,
    )
    severity = {f.line: f.severity for f in findings}
    assert severity == {1: Severity.BLOCKER, 4: Severity.WARNING, 10: Severity.BLOCKER, 11: Severity.WARNING}


def test_kernels_kept_in_variables_are_launched_through_them(tmp_path):
    # unsloth's RMS norm: a kernel made by `triton.jit(fn)` and wrapped again by
    # `triton.heuristics(...)`, a kernel chosen by a conditional expression, and a plain alias.
    check(
        tmp_path,
        """
        import triton

        def _backward(X):
            pass

        _backward = triton.jit(_backward)  # expect: NL301
        _backward = triton.heuristics({"GEMMA": lambda args: args["GEMMA"]})(_backward)

        @triton.jit  # expect: NL301
        def _forward(X):
            pass

        @triton.jit  # expect: NL301
        def _gemma_forward(X):
            pass

        def run(x, n_rows, gemma):
            fx = _gemma_forward if gemma else _forward
            fx[(n_rows,)](x)  # expect: NL301
            _backward[(n_rows,)](x)  # expect: NL301
            g = _forward
            g[(n_rows,)](x)  # expect: NL301
            options = {"a": 1} if gemma else {"a": 2}
            return options["a"]
    """,
        **KERNELS,
    )


def test_a_decorator_called_with_its_options_only_makes_no_kernel(tmp_path):
    check(
        tmp_path,
        """
        import triton

        tune = triton.autotune(configs=[triton.Config({"BLOCK": 64})], key=["n"])

        def lookup(handlers, key, x):
            handler = tune
            return handler[key](x)
    """,
        **KERNELS,
    )


def test_vllm_custom_ops_are_compiled_kernels(tmp_path):
    # `vllm._custom_ops` is vLLM's Python layer over the kernels it compiles into `torch.ops._C`:
    # text-generation-inference's ROCm layer norm calls them.
    check(
        tmp_path,
        """
        from vllm import _custom_ops as ops  # expect: NL303

        def rms_norm(out, x, weight, eps):
            ops.rms_norm(out, x, weight, eps)  # expect: NL303
            return out
    """,
        **KERNELS,
    )


def test_a_host_only_default_build_beside_a_cuda_one(tmp_path):
    """detectron2, pytorch3d, xformers and Deformable-DETR choose `extension = CppExtension` and
    switch to `CUDAExtension` when CUDA is there: the CUDA build is the finding, the host-only
    default is not. A setup.py that only ever builds a `CppExtension` keeps its finding."""
    check(
        tmp_path,
        """
        import torch
        from torch.utils.cpp_extension import CppExtension, CUDAExtension  # expect: NL302


        def get_extensions():
            extension = CppExtension
            if torch.cuda.is_available():  # expect: NL106
                extension = CUDAExtension  # expect: NL302
            return [extension("ops._C", ["ops/vision.cpp"])]
        """,
        name="setup.py",
    )
    check(
        tmp_path,
        """
        from torch.utils.cpp_extension import CppExtension  # expect: NL302

        extension = CppExtension  # expect: NL302
        modules = [extension("ops._C", ["ops/vision.cpp"])]  # expect: NL302
        """,
        name="setup.py",
    )


def test_host_only_builds_beside_a_cuda_build_are_not_findings(tmp_path):
    """A CppExtension in a build file that also builds with CUDAExtension is its CPU build: openfold's
    CPU stub of `attn_core_inplace_cuda`, AutoGPTQ's CPU-only qigen, the "cpu" entry of
    MinkowskiEngine's table of builds. The CUDA builds beside them stay findings."""
    cases = [
        ("aqlaboratory/openfold", "ce0029e1199b65fd834fe822be50d936cfe57fd4", 81, 103),
        ("AutoGPTQ/AutoGPTQ", "9f7d37072917ab3a7545835f23e808294a542153", None, 192),
        ("NVIDIA/MinkowskiEngine", "02fc608bea4c0549b0a7b00ca1bf15dee4a0b228", 244, 225),
    ]
    path = "setup.py"
    for repo, commit, cuda_line, cpu_line in cases:
        target = tmp_path / repo.replace("/", "__") / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(mirrors.show(repo, commit, path))
        found = {f.line for f in scan_paths([target], cwd=tmp_path, select=["NL302"]).active}
        assert cpu_line not in found, repo
        assert cuda_line is None or cuda_line in found, repo


def test_openmmlab_extension_loader_and_its_ops(tmp_path):
    """mmcv's ops modules load the compiled `mmcv._ext` by name (`ext_loader.load_ext("_ext",
    [...])`): the loader call is its import, and every use of an op of it is a custom kernel, also
    on a CPU-only path; an ordinary function named `load_ext` is not a loader."""
    check(
        tmp_path,
        """
        import torch
        from ..utils import ext_loader
        from .config import load_ext

        ext_module = ext_loader.load_ext("_ext", ["nms", "softnms"])  # expect: NL303
        settings = load_ext("defaults", ["a"])


        def nms(boxes, scores, thr):
            return ext_module.nms(boxes, scores, iou_threshold=thr)  # expect: NL303


        def soft_nms(boxes, scores):
            return ext_module.softnms(boxes.cpu(), scores.cpu())  # expect: NL303
        """,
        name="mmcv/ops/nms.py",
        select=["custom-kernel"],
    )


def test_deepspeed_op_builders_load_compiled_ops(tmp_path):
    """DeepSpeed's `FusedAdamBuilder().load()` compiles its op (or finds it prebuilt) and imports
    it: the load is the extension's import, and every use of the module it returns, through a
    name, an instance attribute or an alias of one of its functions, is a custom kernel. A `load()`
    of anything else (a checkpoint, a builder of another package) is not."""
    check(
        tmp_path,
        """
        import torch
        from deepspeed.ops.op_builder import FusedAdamBuilder, RaggedUtilsBuilder
        from mypkg.builders import CacheBuilder


        class FusedAdam(torch.optim.Optimizer):
            def __init__(self, params):
                fused_adam_cuda = FusedAdamBuilder().load()  # expect: NL303
                self.multi_tensor_adam = fused_adam_cuda.multi_tensor_adam  # expect: NL303
                self.cache = CacheBuilder().load()


        class RaggedWrapper:
            def __init__(self, ids):
                self._utils_module = RaggedUtilsBuilder().load()  # expect: NL303
                host_alloc = self._utils_module.allocate_fast_host_buffer  # expect: NL303
                self._ids_shadow = host_alloc(ids)  # expect: NL303
                self.state = torch.load("state.pt")
        """,
        name="deepspeed/ops/adam/fused_adam.py",
        select=["custom-kernel"],
    )


def test_fbgemm_and_torchvision_operators_are_compiled_extensions(tmp_path):
    """`torch.ops.fbgemm.*` (FBGEMM_GPU) and `torch.ops.torchvision.*` are registered by those
    packages' compiled libraries, with CPU and CUDA kernels: custom operators, not PyTorch's own
    (`torch.ops.aten.*`)."""
    check(
        tmp_path,
        """
        import torch


        def to_dense(values, lengths, max_length):
            offsets = torch.ops.fbgemm.asynchronous_complete_cumsum(lengths)  # expect: NL303
            dense = torch.ops.fbgemm.jagged_2d_to_dense(values, offsets, max_length)  # expect: NL303
            pooled = torch.ops.torchvision.roi_align(dense, offsets, 1.0, 7, 7, 2, True)  # expect: NL303
            return torch.ops.aten.relu(pooled)
        """,
        select=["custom-kernel"],
    )


def test_an_extension_imported_with_importlib(tmp_path):
    """openfold's `attn_core_inplace_cuda = importlib.import_module("attn_core_inplace_cuda")`
    imports the compiled extension its setup.py builds: the line is the import's finding and every
    use of the module is a custom kernel. `importlib.import_module` of a Python module is not."""
    check(
        tmp_path,
        """
        import importlib

        attn_core_inplace_cuda = importlib.import_module("attn_core_inplace_cuda")  # expect: NL303
        helpers = importlib.import_module("openfold.utils.helpers")


        def attention(q, k, v):
            attn_core_inplace_cuda.forward_(q, k, v)  # expect: NL303
            return helpers.softmax(q)
        """,
        select=["custom-kernel"],
    )


def test_extensions_imported_through_a_try_import_helper_and_per_width_builds(tmp_path):
    """AutoAWQ's `awq_ext, msg = try_import("awq_ext")` imports its compiled extension through a
    helper that returns None when the import fails (a warning, as a `try:` import is); AutoGPTQ's
    `autogptq_cuda_256` / `autogptq_cuda_64` are one build per tile width, used through an attribute
    the layer sets. A helper importing a Python module imports no extension."""
    findings = check(
        tmp_path,
        """
        import torch
        from awq.utils.module import try_import

        awq_ext, msg = try_import("awq_ext")  # expect: NL303
        triton_gemm, _ = try_import("awq.modules.triton.gemm")
        try:
            import autogptq_cuda_256  # expect: NL303
        except ImportError:
            autogptq_cuda_256 = None


        class QuantLinear(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.autogptq_cuda = autogptq_cuda_256

            def forward(self, x, w):
                self.autogptq_cuda.vecquant4matmul(x, w)  # expect: NL303
                if awq_ext is not None:
                    return awq_ext.gemm_forward_cuda(x, w)  # expect: NL303
                return triton_gemm.gemm(x, w)
        """,
        select=["custom-kernel"],
    )
    helper_import = next(f for f in findings if "`awq_ext` is" in f.message)
    assert helper_import.severity is Severity.WARNING


def test_mmcv_ops_are_compiled_kernels_and_not_a_library(tmp_path):
    """mmdetection3d's and mmrotate's box NMS: importing `mmcv.ops` loads MMCV's compiled `_ext`, so
    the import and each use of an op are the compiled extension's (NL303, a blocker), not a
    library's (NL401/NL402); its plain-PyTorch ops (`point_sample`) are no finding, nor is the rest
    of MMCV (`mmcv.transforms`, `mmcv.cnn`). NMS also sizes its result by the data (NL601)."""
    findings = check(
        tmp_path,
        """
        from mmcv.cnn import ConvModule
        from mmcv.ops import nms, nms_rotated  # expect: NL303
        from mmcv.ops import point_sample  # expect: NL303
        from mmcv.ops.convex_iou import convex_giou  # expect: NL303
        from mmcv.transforms import BaseTransform


        def post(boxes, scores, feats, points, pred, target):
            keep = nms(boxes, scores, 0.5)  # expect: NL303 NL601
            dets, idx = nms_rotated(boxes, scores, 0.1)  # expect: NL303 NL601
            sampled = point_sample(feats, points)
            loss = convex_giou(pred, target)  # expect: NL303
            return keep, dets, sampled, loss, ConvModule, BaseTransform


        class Boxes:
            def nms(self, scores):  # a method named as the op it calls is no use of it
                return nms(self.tensor, scores, 0.5)  # expect: NL303 NL601


        try:
            from mmcv.ops import nms_quadri  # expect: NL303
        except ImportError:
            nms_quadri = None
        """,
        select=["custom-kernel", "cuda-only-lib", "dynamic-shape"],
    )
    assert {f.severity for f in findings if f.rule == "NL303" and f.line < 20} == {Severity.BLOCKER}


def test_a_build_class_chosen_by_a_conditional_expression_names_its_extension(tmp_path):
    """torchsparse's setup.py picks `CUDAExtension if device == "cuda" else CppExtension` and calls
    the name with the extension's dotted name; the modules that import `torchsparse.backend` and
    call it use the compiled extension."""
    _write(
        tmp_path,
        {
            "setup.py": """
            import torch
            from setuptools import setup
            from torch.utils.cpp_extension import BuildExtension, CppExtension, CUDAExtension

            device = "cuda" if torch.cuda.is_available() else "cpu"
            extension_type = CUDAExtension if device == "cuda" else CppExtension
            setup(
                name="torchsparse",
                ext_modules=[extension_type("torchsparse.backend", ["backend/pybind_cuda.cu"])],
                cmdclass={"build_ext": BuildExtension},
            )
        """,
            "torchsparse/__init__.py": "",
            "torchsparse/nn/__init__.py": "",
            "torchsparse/nn/devoxelize.py": """
            import torch
            import torchsparse.backend


            def devoxelize(feats, idx, weights):
                if feats.device.type == "cuda":
                    return torchsparse.backend.devoxelize_forward_cuda(feats, idx, weights)
                return torchsparse.backend.devoxelize_forward_cpu(feats, idx, weights)
        """,
        },
    )
    result = scan_paths([tmp_path], cwd=tmp_path, select=["NL303"])
    assert [(f.path, f.line) for f in result.active] == [
        ("torchsparse/nn/devoxelize.py", 2),
        ("torchsparse/nn/devoxelize.py", 7),
        ("torchsparse/nn/devoxelize.py", 8),
    ]


def test_a_kernel_package_imported_whole_and_entry_points_handed_to_a_caller(tmp_path):
    """nvdiffrast's samples `import nvdiffrast.torch as dr` and call `dr.rasterize(...)`: the import
    reaches the kernels (NL306) as a `from` import of an entry point does; an import of the package
    whose file uses nothing of it is no finding. DCNv2's tests hand an entry point to `gradcheck`,
    which calls it (NL308)."""
    _write(
        tmp_path,
        {
            "setup.py": """
            from setuptools import setup
            from torch.utils.cpp_extension import BuildExtension, CUDAExtension

            setup(name="raster", ext_modules=[CUDAExtension("_raster_c", ["raster.cu"])],
                  cmdclass={"build_ext": BuildExtension})
        """,
            "raster/__init__.py": "",
            "raster/torch/__init__.py": """
            from .ops import rasterize, helper
        """,
            "raster/torch/ops.py": """
            import torch
            import _raster_c


            def rasterize(pos, tri):
                return _raster_c.rasterize_fwd(pos, tri)


            def helper(x):
                return x + 1
        """,
            "samples/render.py": """
            import torch
            import raster.torch as dr
            from torch.autograd import gradcheck
            from raster.torch.ops import rasterize


            def render(pos, tri):
                out = dr.rasterize(pos, tri)
                gradcheck(rasterize, (pos, tri))
                return out
        """,
            "samples/unused.py": """
            import raster.torch as dr

            VERSION = dr.__name__
        """,
        },
    )
    result = scan_paths([tmp_path], cwd=tmp_path, select=["NL306", "NL308"])
    found = sorted((f.path, f.line, f.rule) for f in result.active if f.path.startswith("samples/"))
    assert found == [
        ("samples/render.py", 2, "NL306"),
        ("samples/render.py", 4, "NL306"),
        ("samples/render.py", 8, "NL308"),
        ("samples/render.py", 9, "NL308"),
    ]
