"""Cross-file links: imports resolve to scanned modules by the names Python would import them under."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import scan_paths

KERNEL = "import triton\n\n@triton.jit\ndef k(x):\n    pass\n"


def _write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def _build_file(extension: str, *sources: str) -> str:
    """A setup.py that builds one CUDA extension named `extension` from `sources`."""
    return (
        "from setuptools import setup\n"
        "from torch.utils.cpp_extension import BuildExtension, CUDAExtension\n"
        f"setup(ext_modules=[CUDAExtension({extension!r}, {list(sources)!r})],\n"
        "      cmdclass={'build_ext': BuildExtension})\n"
    )


def _nl306(root: Path, cwd: Path) -> list[tuple[str, int, str]]:
    result = scan_paths([root], cwd=cwd, select=["NL306"])
    return [(f.path, f.line, f.message.split("`")[1]) for f in result.active]


def test_package_under_src_root_and_relative_import(tmp_path: Path) -> None:
    _write(
        tmp_path,
        {
            "src/pkg/__init__.py": "",
            "src/pkg/ops/__init__.py": "",
            "src/pkg/ops/kernels.py": KERNEL,
            "src/pkg/model.py": "from pkg.ops.kernels import k\n",
            "src/pkg/ops/layer.py": "from .kernels import k\n",
            "tools/run.py": "import pkg.ops.kernels\n",
        },
    )
    assert _nl306(tmp_path, tmp_path) == [
        ("src/pkg/model.py", 1, "src.pkg.ops.kernels"),
        ("src/pkg/ops/layer.py", 1, "src.pkg.ops.kernels"),
        ("tools/run.py", 1, "src.pkg.ops.kernels"),
    ]


def test_same_basename_elsewhere_is_not_a_match(tmp_path: Path) -> None:
    # `from utils import x` means a top-level `utils`, not some package's `utils` submodule.
    _write(
        tmp_path,
        {
            "lib/__init__.py": "",
            "lib/triton_ops/__init__.py": "",
            "lib/triton_ops/utils.py": KERNEL,
            "scripts/train.py": "from utils import helper\n",
            "scripts/utils.py": "def helper():\n    pass\n",
        },
    )
    assert _nl306(tmp_path, tmp_path) == []


def test_scan_outside_cwd_names_modules_from_the_scan_root(tmp_path: Path) -> None:
    _write(
        tmp_path / "repo",
        {"pkg/__init__.py": "", "pkg/kern.py": KERNEL, "pkg/use.py": "from .kern import k\n"},
    )
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    [(path, line, module)] = _nl306(tmp_path / "repo", elsewhere)
    assert module == "pkg.kern" and path.endswith("repo/pkg/use.py") and line == 1


def _nl303(root: Path) -> list[tuple[str, int]]:
    result = scan_paths([root], cwd=root, select=["NL303", "NL306"])
    return sorted((f.path, f.line, f.rule) for f in result.active)


def test_names_the_tree_defines_in_python_are_not_compiled_extensions(tmp_path: Path) -> None:
    # A yacs-style config node named `_C` and a Python function named `*_cuda`, defined in scanned
    # modules and imported elsewhere, are Python code; the `_C` of a package that no .py defines
    # (a compiled module) and a `*_cuda` module built by no file stay extensions.
    _write(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/config/__init__.py": "",
            "pkg/config/defaults.py": "from .node import Node\n\n_C = Node()\n_C.VERSION = 2\n",
            "pkg/config/node.py": "class Node(dict):\n    def clone(self):\n        return Node(self)\n",
            "pkg/config/compat.py": (
                "from pkg.config.defaults import _C\n\n\ndef upgrade(cfg):\n"
                "    return cfg.VERSION < _C.VERSION, _C.clone()\n"
            ),
            "pkg/align.py": (
                "import torch\n\n\ndef path_cuda(x):\n    return x.cumsum(0)\n\n\n"
                "def path_cpu(x):\n    return x.cumsum(0)\n"
            ),
            "tests/test_align.py": "from pkg.align import path_cuda, path_cpu\n\n\ndef test_it():\n    path_cuda(1)\n",
            "pkg/layers.py": "from pkg import _C\nfrom pkg import ext_cuda\n\n\ndef f(x):\n    return _C.nms(x), ext_cuda.run(x)\n",
        },
    )
    assert _nl303(tmp_path) == [
        ("pkg/layers.py", 1, "NL303"),
        ("pkg/layers.py", 2, "NL303"),
        ("pkg/layers.py", 6, "NL303"),
    ]


def test_a_python_module_named_like_an_extension_is_python(tmp_path: Path) -> None:
    _write(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/ops_cuda.py": "def run(x):\n    return x\n",
            "pkg/use.py": "from pkg import ops_cuda\n\n\ndef f(x):\n    return ops_cuda.run(x)\n",
        },
    )
    assert _nl303(tmp_path) == []


def test_calls_of_an_extension_the_project_builds(tmp_path: Path) -> None:
    """Swin-Transformer's `kernels/window_process`: setup.py builds `swin_window_process` (a name
    with no `_C`/`_cuda` in it), and the wrapper imports it and calls its functions. The import and
    each call are custom-kernel findings; a call of something else is not."""
    _write(
        tmp_path,
        {
            "kernels/setup.py": _build_file("swin_window_process", "k.cpp", "k.cu"),
            "kernels/wrap.py": (
                "import torch\n"
                "import swin_window_process\n"
                "from swin_window_process import merge as merge_fn\n"
                "\n"
                "class Roll(torch.autograd.Function):\n"
                "    @staticmethod\n"
                "    def forward(ctx, x, b):\n"
                "        out = swin_window_process.roll_forward(x, b)\n"
                "        return merge_fn(out, torch.flip(out, [0]))\n"
            ),
        },
    )
    wrapper = [(line, rule) for path, line, rule in _nl303(tmp_path) if path.endswith("wrap.py")]
    assert wrapper == [(2, "NL303"), (3, "NL303"), (8, "NL303"), (9, "NL303")]


def test_an_extension_built_through_a_builder_chosen_by_a_cuda_check(tmp_path: Path) -> None:
    """Deformable-DETR's ops/setup.py: `extension = CppExtension`, then `if torch.cuda.is_available():
    extension = CUDAExtension`, then `extension("MultiScaleDeformableAttention", ...)`. Either value
    builds the extension, so the module that imports it is a compiled extension's wrapper."""
    _write(
        tmp_path,
        {
            "ops/setup.py": (
                "import torch\n"
                "from setuptools import setup\n"
                "from torch.utils.cpp_extension import CppExtension, CUDAExtension\n"
                "\n"
                "def get_extensions():\n"
                "    extension = CppExtension\n"
                "    if torch.cuda.is_available():\n"
                "        extension = CUDAExtension\n"
                "    return [extension('MultiScaleDeformableAttention', ['a.cpp', 'a.cu'])]\n"
                "\n"
                "setup(ext_modules=get_extensions())\n"
            ),
            "ops/functions/attn_func.py": (
                "import torch\n"
                "import MultiScaleDeformableAttention as MSDA\n"
                "\n"
                "def forward(value, shapes):\n"
                "    return MSDA.ms_deform_attn_forward(value, shapes)\n"
            ),
        },
    )
    wrapper = [(line, rule) for path, line, rule in _nl303(tmp_path) if path.endswith("attn_func.py")]
    assert wrapper == [(2, "NL303"), (5, "NL303")]
    # the import and the CUDA builder are findings where they are named; the host-only default
    # (`extension = CppExtension`) and the call through the name are not
    builds = scan_paths([tmp_path], cwd=tmp_path, select=["NL302"]).active
    assert sorted(f.line for f in builds if f.path.endswith("setup.py")) == [3, 8]


def test_imports_of_in_repo_modules_written_with_nki(tmp_path: Path) -> None:
    """A fused NKI kernel imports its components from the repository (`from ..components.attention
    import attn`): importing a module that imports NKI at its top level ties the importer to Neuron
    (NL905), a warning where the module writes kernel code (the NKI language or `@nki.jit`), info
    where it only uses NKI's host-side names. A module that imports NKI inside a function, or none,
    is no such module."""
    _write(
        tmp_path,
        {
            "kernels/__init__.py": "",
            "kernels/components/__init__.py": "",
            "kernels/components/attention.py": (
                "import nki.language as nl\n\n\ndef attn(q, k):\n    return nl.matmul(q, k)\n"
            ),
            "kernels/components/enums.py": "from nkilib.core.utils.common_types import NormType\n\nNORM = NormType.RMS\n",
            "kernels/components/lazy.py": "def get():\n    import nki\n    return nki\n",
            "kernels/decode/__init__.py": "",
            "kernels/decode/fused.py": (
                "import nki\n"
                "from ..components.attention import attn\n"
                "from ..components.enums import NORM\n"
                "from ..components.lazy import get\n"
            ),
        },
    )
    result = scan_paths([tmp_path], cwd=tmp_path, select=["NL905"])
    linked = sorted(
        (f.line, f.severity.value, f.message.split("`")[1])
        for f in result.active
        if f.path.endswith("fused.py") and f.line > 1
    )
    assert linked == [
        (2, "warning", "kernels.components.attention"),
        (3, "info", "kernels.components.enums"),
    ]


def test_an_extension_named_through_a_build_helper(tmp_path: Path) -> None:
    """BEVDet's setup.py: `make_cuda_ext(name=..., module=...)` returns `extension(...)`, a name
    holding CUDAExtension or CppExtension; the extension's package imports it as `from . import
    roiaware_pool3d_ext` and calls it, and a module importing that wrapper reaches the kernel."""
    _write(
        tmp_path,
        {
            "setup.py": (
                "import torch\n"
                "from setuptools import setup\n"
                "from torch.utils.cpp_extension import BuildExtension, CppExtension, CUDAExtension\n"
                "\n"
                "def make_cuda_ext(name, module, sources, sources_cuda=[]):\n"
                "    if torch.cuda.is_available():\n"
                "        extension = CUDAExtension\n"
                "        sources += sources_cuda\n"
                "    else:\n"
                "        extension = CppExtension\n"
                "    return extension(name='{}.{}'.format(module, name), sources=sources)\n"
                "\n"
                "setup(ext_modules=[make_cuda_ext(name='roiaware_pool3d_ext', module='det.ops.roiaware',\n"
                "                                 sources=['a.cpp'], sources_cuda=['a.cu'])],\n"
                "      cmdclass={'build_ext': BuildExtension})\n"
            ),
            "det/__init__.py": "",
            "det/ops/__init__.py": "",
            "det/ops/roiaware/__init__.py": "from .points import points_in_boxes\n",
            "det/ops/roiaware/points.py": (
                "from . import roiaware_pool3d_ext\n"
                "\n"
                "def points_in_boxes(points, boxes):\n"
                "    out = points.new_zeros(points.shape[0])\n"
                "    roiaware_pool3d_ext.points_in_boxes_gpu(boxes, points, out)\n"
                "    return out\n"
            ),
            "det/models/head.py": (
                "from det.ops.roiaware.points import points_in_boxes\n"
                "\n"
                "def assign(points, boxes):\n"
                "    return points_in_boxes(points, boxes)\n"
            ),
        },
    )
    found = [(path, line, rule) for path, line, rule in _nl303(tmp_path) if not path.endswith("__init__.py")]
    assert ("det/ops/roiaware/points.py", 1, "NL303") in found
    assert ("det/ops/roiaware/points.py", 5, "NL303") in found
    assert ("det/models/head.py", 1, "NL306") in found


def test_functions_of_extensions_a_module_loads_at_its_top_level(tmp_path: Path) -> None:
    """hszhao/semseg's `lib/psa/src/__init__.py` loads a CPU build and, under a CUDA check, a GPU
    build; `src.cpu.psamask_forward(...)` and `src.gpu.psamask_forward(...)` in the autograd
    Function are uses of them (NL308)."""
    _write(
        tmp_path,
        {
            "psa/__init__.py": "",
            "psa/src/__init__.py": (
                "import torch\n"
                "from torch.utils.cpp_extension import load\n"
                "cpu = load('psamask_cpu', ['cpu/psamask.cpp'])\n"
                "if torch.cuda.is_available():\n"
                "    gpu = load('psamask_gpu', ['gpu/psamask.cpp', 'gpu/psamask_cuda.cu'])\n"
            ),
            "psa/functions/__init__.py": "",
            "psa/functions/psamask.py": (
                "from torch.autograd import Function\n"
                "from .. import src\n"
                "\n"
                "class PSAMask(Function):\n"
                "    @staticmethod\n"
                "    def forward(ctx, x, out):\n"
                "        if not x.is_cuda:\n"
                "            src.cpu.psamask_forward(x, out)\n"
                "        else:\n"
                "            src.gpu.psamask_forward(x, out)\n"
                "        return out\n"
            ),
        },
    )
    result = scan_paths([tmp_path], cwd=tmp_path, select=["NL308"])
    assert [(f.path, f.line) for f in result.active] == [
        ("psa/functions/psamask.py", 8),
        ("psa/functions/psamask.py", 10),
    ]


def test_transformer_engine_extension_reached_through_a_tensor_subclass(tmp_path: Path) -> None:
    """nanotron's fp8 package: `tex` (Transformer Engine's compiled extension) casts in
    `FP8Tensor.__new__` and multiplies in the kernel module; `FP8Linear.forward` returns early only on
    the CPU, so on any accelerator it runs the kernel; the package re-exports both classes, and a
    test builds them (NL308)."""
    _write(
        tmp_path,
        {
            "fp8/__init__.py": "from fp8.linear import FP8Linear\nfrom fp8.tensor import FP8Tensor\n",
            "fp8/tensor.py": (
                "import torch\n"
                "import transformer_engine_torch as tex\n"
                "\n"
                "class FP8Tensor(torch.Tensor):\n"
                "    def __new__(cls, tensor, dtype):\n"
                "        data = tex.cast_to_fp8(tensor, dtype)\n"
                "        return torch.Tensor._make_subclass(cls, data)\n"
            ),
            "fp8/kernel.py": (
                "import transformer_engine_torch as tex\n"
                "\n"
                "def fp8_matmul_kernel(a, b):\n"
                "    return tex.te_gemm(a, b)\n"
            ),
            "fp8/linear.py": (
                "import torch\n"
                "import torch.nn.functional as F\n"
                "from fp8.kernel import fp8_matmul_kernel\n"
                "\n"
                "class FP8Linear(torch.nn.Linear):\n"
                "    def forward(self, x):\n"
                "        if x.device == torch.device('cpu'):\n"
                "            return F.linear(x, self.weight, self.bias)\n"
                "        return fp8_matmul_kernel(x, self.weight)\n"
            ),
            "tests/test_linear.py": (
                "from fp8 import FP8Linear, FP8Tensor\n"
                "\n"
                "def test_forward(x, w):\n"
                "    layer = FP8Linear(16, 16)\n"
                "    return layer(FP8Tensor(x, 1))\n"
            ),
        },
    )
    result = scan_paths([tmp_path], cwd=tmp_path, select=["NL303", "NL306", "NL308"])
    found = sorted((f.path, f.line, f.rule) for f in result.active)
    assert ("fp8/tensor.py", 2, "NL303") in found
    assert ("fp8/kernel.py", 4, "NL303") in found
    assert [(line, rule) for path, line, rule in found if path == "tests/test_linear.py"] == [
        (1, "NL306"),
        (4, "NL308"),
        (5, "NL308"),
    ]


def test_a_python_module_named_like_the_extension_it_builds_is_python(tmp_path: Path) -> None:
    """Megatron's `megatron/core/nccl_allocator.py` JIT-builds an extension named `nccl_allocator`
    inside a function; importing the Python module (`import pkg.nccl_allocator as
    nccl_allocator`) is an import of a kernel module (NL306), not of the compiled extension, so the
    importer is no kernel module itself: a caller of its function that uses the allocator only
    when asked (`if use_nccl:`) reaches no kernel."""
    _write(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/nccl_allocator.py": (
                "import torch.utils.cpp_extension\n"
                "\n"
                "def _build():\n"
                "    name = 'nccl_allocator'\n"
                "    ext = torch.utils.cpp_extension.load_inline(name=name, cpp_sources='', with_cuda=True)\n"
                "    return ext.get_nccl_allocator()\n"
                "\n"
                "def init():\n"
                "    return _build()\n"
            ),
            "pkg/buffer.py": (
                "import pkg.nccl_allocator as nccl_allocator\n"
                "\n"
                "def make_buffer(use_nccl):\n"
                "    if use_nccl:\n"
                "        return nccl_allocator.init()\n"
                "    return None\n"
            ),
            "train.py": "from pkg.buffer import make_buffer\n\nmake_buffer(True)\n",
        },
    )
    found = _nl303(tmp_path)
    assert [(line, rule) for path, line, rule in found if path == "pkg/buffer.py"] == [(1, "NL306")]
    assert [f for f in found if f[0] == "train.py"] == []


def test_triton_launchers_over_a_kernels_module_reached_through_their_package(tmp_path: Path) -> None:
    """flashinfer's layout: `triton/kernels/cascade.py` defines the `@triton.jit` kernels,
    `triton/cascade.py` launches them from plain functions, and `triton/__init__.py` imports the
    launcher module whole (`from . import cascade`). A test that imports the package and calls
    `pkg.triton.cascade.merge_state(...)` uses a kernel: the package import is NL306, the call NL308."""
    _write(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/triton/__init__.py": "from . import cascade  # noqa: F401\n",
            "pkg/triton/kernels/__init__.py": "",
            "pkg/triton/kernels/cascade.py": (
                "import triton\n"
                "import triton.language as tl\n"
                "\n"
                "@triton.jit\n"
                "def merge_kernel(x_ptr, n):\n"
                "    tl.store(x_ptr, tl.load(x_ptr))\n"
            ),
            "pkg/triton/cascade.py": (
                "from .kernels.cascade import merge_kernel\n"
                "\n"
                "def merge_state(x):\n"
                "    merge_kernel[(1,)](x, x.numel())\n"
                "    return x\n"
            ),
            "tests/test_merge.py": (
                "import torch\n"
                "\n"
                "import pkg.triton\n"
                "\n"
                "def test_merge():\n"
                "    pkg.triton.cascade.merge_state(torch.ones(4))\n"
            ),
            "app.py": "from pkg.triton.cascade import merge_state\n\nmerge_state(None)\n",
        },
    )
    result = scan_paths([tmp_path], cwd=tmp_path, select=["NL306", "NL308"])
    found = sorted((f.path, f.line, f.rule) for f in result.active)
    assert [(line, rule) for path, line, rule in found if path == "tests/test_merge.py"] == [
        (3, "NL306"),
        (6, "NL308"),
    ]
    assert [(line, rule) for path, line, rule in found if path == "app.py"] == [(1, "NL306"), (3, "NL308")]


def test_an_extension_imported_in_a_try_whose_handler_only_warns(tmp_path: Path) -> None:
    """tutel's layout: `jit_compiler.py` imports the extension its build defines in `try:` with a
    handler that only logs, so where the import fails the name is unbound and every function that
    runs it fails too: the module wraps the extension, and modules calling its functions reach the
    kernel, also through an early return that takes the extension's CPU kernel (`if not is_cuda:
    return JitCompiler.generate_cpu_kernel(...)`). A module importing the extension itself through
    it (`from .jit_compiler import ext`) imports the extension (NL303) and its calls are uses."""
    _write(
        tmp_path,
        {
            "setup.py": _build_file("tutel_custom_kernel", "kernel.cpp"),
            "pkg/__init__.py": "",
            "pkg/jit_compiler.py": (
                "import logging\n"
                "\n"
                "try:\n"
                "    import tutel_custom_kernel\n"
                "except:\n"
                "    logging.warning('Cannot import JIT optimized kernels.')\n"
                "\n"
                "class JitCompiler:\n"
                "    @staticmethod\n"
                "    def generate_kernel(keywords, template):\n"
                "        return tutel_custom_kernel.inject_source(template)\n"
                "\n"
                "    @staticmethod\n"
                "    def generate_cpu_kernel(kernel_type):\n"
                "        return tutel_custom_kernel.invoke_cpu(kernel_type)\n"
            ),
            "pkg/sparse.py": (
                "from .jit_compiler import JitCompiler\n"
                "\n"
                "def create_forward(dtype, is_cuda=True):\n"
                "    if not is_cuda:\n"
                "        return JitCompiler.generate_cpu_kernel(0)\n"
                "    return JitCompiler.generate_kernel({'dtype': dtype}, 'source')\n"
            ),
            "pkg/dispatch.py": (
                "from . import sparse as jit_kernel\n"
                "\n"
                "class Dispatcher:\n"
                "    def update(self, dtype, is_cuda):\n"
                "        self.func_fwd = jit_kernel.create_forward(dtype, is_cuda)\n"
            ),
            "pkg/communicate.py": (
                "from .jit_compiler import tutel_custom_kernel\n"
                "\n"
                "def init(group):\n"
                "    return tutel_custom_kernel.init_nccl(group)\n"
            ),
            "pkg/fallback.py": (
                "try:\n"
                "    import tutel_custom_kernel\n"
                "except ImportError:\n"
                "    tutel_custom_kernel = None\n"
                "\n"
                "def run(x):\n"
                "    return tutel_custom_kernel.invoke(x)\n"
            ),
            "pkg/uses_fallback.py": "from .fallback import run\n\nrun(1)\n",
            # NeMo's `nlp_overrides.py`: the handler sets a flag the functions test before use
            "pkg/flagged.py": (
                "try:\n"
                "    import tutel_custom_kernel\n"
                "    HAVE_EXT = True\n"
                "except ImportError:\n"
                "    HAVE_EXT = False\n"
                "\n"
                "def run(x):\n"
                "    if HAVE_EXT:\n"
                "        return tutel_custom_kernel.invoke(x)\n"
                "    return x\n"
            ),
            "pkg/uses_flagged.py": "from .flagged import run\n\nrun(1)\n",
            # Transformer Engine's `__init__.py`: the extension is imported in a `try` only to use it
            # there (allow-listing a type for unpickling); no function needs it
            "pkg/serial.py": (
                "import warnings\n"
                "\n"
                "try:\n"
                "    import tutel_custom_kernel as tex\n"
                "    ALLOWED = [tex.DType]\n"
                "except ImportError:\n"
                "    warnings.warn('no safe globals')\n"
                "\n"
                "def helper(x):\n"
                "    return x\n"
            ),
            "pkg/uses_serial.py": "from .serial import helper\n\nhelper(1)\n",
        },
    )
    result = scan_paths([tmp_path], cwd=tmp_path)
    found = sorted((f.path, f.line, f.rule) for f in result.active if f.rule in ("NL303", "NL306", "NL308"))
    assert [(line, rule) for path, line, rule in found if path == "pkg/dispatch.py"] == [
        (1, "NL306"),
        (5, "NL308"),
    ]
    assert [(line, rule) for path, line, rule in found if path == "pkg/sparse.py"] == [
        (1, "NL306"),
        (5, "NL308"),
        (6, "NL308"),
    ]
    assert [(line, rule) for path, line, rule in found if path == "pkg/communicate.py"] == [
        (1, "NL303"),
        (4, "NL303"),
    ]
    # a handler that binds a fallback leaves a path without the extension, and a module that uses it
    # only inside the `try` needs it nowhere else: neither is a kernel module
    assert [
        f for f in found if f[0] in ("pkg/uses_fallback.py", "pkg/uses_flagged.py", "pkg/uses_serial.py")
    ] == []


def test_operators_of_a_namespace_named_as_a_project_package(tmp_path: Path) -> None:
    """pytorch_scatter's layout: the package's `__init__.py` loads the compiled operator library at
    import and re-exports `segment_sum` from a module whose functions call
    `torch.ops.<package>.<op>(...)`. Importers of the package reach the project's own CUDA operators:
    the import is NL306, the call NL308. Operators of a namespace no package of the tree is named
    after (`torch.ops.otherlib`) stay NL303 where they are called and make no kernel module."""
    _write(
        tmp_path,
        {
            "ops_pkg/__init__.py": (
                "import torch\n"
                "\n"
                'torch.ops.load_library("ops_pkg/_segment_cuda.so")\n'
                "\n"
                "from .segment import segment_sum  # noqa: E402\n"
            ),
            "ops_pkg/segment.py": (
                "import torch\n"
                "\n"
                "def segment_sum(src, ptr):\n"
                "    return torch.ops.ops_pkg.segment_sum_csr(src, ptr, None)\n"
            ),
            "other/__init__.py": "",
            "other/wrap.py": ("import torch\n\ndef fused(x):\n    return torch.ops.otherlib.fused(x)\n"),
            "bench/run.py": (
                "import torch\n"
                "\n"
                "from ops_pkg import segment_sum\n"
                "from other.wrap import fused\n"
                "\n"
                "def main():\n"
                "    x = segment_sum(torch.ones(4), torch.tensor([0, 4]))\n"
                "    return fused(x)\n"
            ),
        },
    )
    result = scan_paths([tmp_path], cwd=tmp_path)
    found = sorted((f.path, f.line, f.rule) for f in result.active if f.category == "custom-kernel")
    assert [(line, rule) for path, line, rule in found if path == "bench/run.py"] == [
        (3, "NL306"),
        (7, "NL308"),
    ]
    assert ("other/wrap.py", 4, "NL303") in found
    load = [f for f in result.active if f.path == "ops_pkg/__init__.py" and f.line == 3]
    assert [f.rule for f in load] == ["NL303"]
    # `torch.ops.load_library` is no operator namespace: the message names what it loads
    assert 'torch.ops.load_library("ops_pkg/_segment_cuda.so")` is a load of a compiled operator library' in (
        load[0].message
    )


def test_the_import_of_a_class_whose_used_classmethod_reaches_a_kernel(tmp_path: Path) -> None:
    """nunchaku's layout: the package re-exports a model class whose `from_pretrained` builds the
    compiled engine. A test that imports the class and calls `from_pretrained` reaches the kernel
    there (NL308), so its import is a finding too (NL306), as an import of a function would be."""
    _write(
        tmp_path,
        {
            "pkg/__init__.py": "from .models import Model\n",
            "pkg/models.py": (
                "from pkg._C import QuantizedModel\n"
                "\n"
                "class Model:\n"
                "    @classmethod\n"
                "    def from_pretrained(cls, path):\n"
                "        model = cls()\n"
                "        model.engine = QuantizedModel(path)\n"
                "        return model\n"
                "\n"
                "    def describe(self):\n"
                '        return "model"\n'
            ),
            "tests/test_load.py": (
                "from pkg import Model\n"
                "\n"
                "def test_load():\n"
                '    model = Model.from_pretrained("weights")\n'
                '    assert model.describe() == "model"\n'
            ),
            "tests/test_describe.py": (
                'from pkg import Model\n\ndef test_describe():\n    assert Model.describe(None) == "model"\n'
            ),
        },
    )
    result = scan_paths([tmp_path], cwd=tmp_path, select=["NL306", "NL308"])
    found = sorted((f.path, f.line, f.rule) for f in result.active if f.path.startswith("tests/"))
    # the file that only uses a method without a kernel imports no kernel entry point
    assert found == [("tests/test_load.py", 1, "NL306"), ("tests/test_load.py", 4, "NL308")]


def test_a_function_named_as_its_module_and_package_reexported_by_a_star_import(tmp_path: Path) -> None:
    """bevfusion's ops layout: `ops/bev_pool/bev_pool.py` wraps the extension the build makes,
    `ops/bev_pool/__init__.py` runs `from .bev_pool import bev_pool` (the function, as in Python:
    the module offers that name, so it is no submodule import) and `ops/__init__.py` star-imports
    the package. A model that runs `from ops import bev_pool` and calls `bev_pool(...)` reaches the
    kernel."""
    _write(
        tmp_path,
        {
            "setup.py": _build_file("ops.bev_pool.bev_pool_ext", "src/bev_pool_cuda.cu"),
            "ops/__init__.py": "from .bev_pool import *  # noqa: F403\n",
            "ops/bev_pool/__init__.py": "from .bev_pool import bev_pool\n",
            "ops/bev_pool/bev_pool.py": (
                "from . import bev_pool_ext\n"
                "\n"
                "def bev_pool(feats, coords):\n"
                "    return bev_pool_ext.bev_pool_forward(feats, coords)\n"
            ),
            "models/transform.py": (
                "from ops import bev_pool\n\ndef splat(feats, coords):\n    return bev_pool(feats, coords)\n"
            ),
        },
    )
    result = scan_paths([tmp_path], cwd=tmp_path, select=["NL306", "NL308"])
    found = sorted((f.line, f.rule) for f in result.active if f.path == "models/transform.py")
    assert found == [(1, "NL306"), (4, "NL308")]
