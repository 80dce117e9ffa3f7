"""NL308: host calls, in other files, of a kernel module's entry points (functions that launch a
Triton kernel, build or use a CUDA extension, directly or through the module's other functions),
never of its plain helpers, never inside kernel bodies."""

from __future__ import annotations

import ast
from pathlib import Path

from neuronlint.static.kernel_calls import KERNEL, kernel_calls, kernel_entries
from tests import mirrors
from tests.conftest import scan_paths
from tests.test_groups import write

KERNELS = '''\
import torch
import triton
import triton.language as tl


def block_size(n):
    """A plain helper of the kernel module."""
    return triton.next_power_of_2(n)


@triton.jit
def _combine(a, b):
    return a + b


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, _combine(tl.load(x_ptr + offs, mask=mask), tl.load(y_ptr + offs, mask=mask)), mask=mask)


def _launch(x, y):
    out = torch.empty_like(x)
    n = x.numel()
    add_kernel[(triton.cdiv(n, 1024),)](x, y, out, n, BLOCK=1024)
    return out


def fused_add(x, y):
    if not x.is_cuda:
        return x + y
    return _launch(x, y)


class FusedAdd(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, y):
        return fused_add(x, y)

    @staticmethod
    def backward(ctx, grad):
        return grad, grad


fused_add_fn = FusedAdd.apply
'''

BUILD = """\
import os

from torch.utils import cpp_extension

_ext = None


def _build():
    global _ext
    _ext = cpp_extension.load(name="fused_softmax_cuda", sources=["softmax.cpp", "softmax_cuda.cu"])


def init():
    os.environ["FUSED"] = "1"
    _build()


def cuda_home():
    return cpp_extension.CUDA_HOME
"""

MODEL = """\
import torch

import pkg.ops.kernels
from pkg.ops import kernels as K
from pkg.ops.build import cuda_home, init
from pkg.ops.kernels import FusedAdd, add_kernel, block_size, fused_add, fused_add_fn

import triton


@triton.jit
def local_kernel(x_ptr):
    pkg.ops.kernels._combine(1, 2)  # device code: the kernel is the finding


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        init()
        self.home = cuda_home()  # a plain helper

    def forward(self, x, y):
        n = block_size(x.numel())  # a plain helper
        z = fused_add(x, y)
        z = K.fused_add(fused_add_fn(z, y), y)
        w = "é"; z = FusedAdd.apply(z, y)
        z = pkg.ops.kernels.fused_add(
            z,
            y,
        )
        add_kernel[(n,)](x, y, z, n, BLOCK=n)
        fn = fused_add  # a reference, not a call
        return fn(z, y)
"""


def _project(root: Path) -> Path:
    files = {
        "pkg/__init__.py": "",
        "pkg/ops/__init__.py": "",
        "pkg/ops/kernels.py": KERNELS,
        "pkg/ops/build.py": BUILD,
        "pkg/model.py": MODEL,
    }
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    return root


def _nl308(root: Path, **kwargs) -> list[tuple[str, int, int, str, str]]:
    result = scan_paths([root], cwd=root, **kwargs)
    return [
        (f.path, f.line, f.column, f.facts["name"], f.facts["reaches"])
        for f in result.active
        if f.rule == "NL308"
    ]


LAUNCH = "launches the Triton kernel `add_kernel`"
BUILT = "builds a C++/CUDA extension (`torch.utils.cpp_extension.load`)"


def test_entry_points_of_a_kernel_module_are_reported_where_other_files_call_them(tmp_path: Path) -> None:
    found = _nl308(_project(tmp_path), select=["ALL"])
    through = f"{LAUNCH} (through `_launch`)"
    assert found == [
        ("pkg/model.py", 19, 9, "init", f"{BUILT} (through `_build`)"),
        ("pkg/model.py", 24, 13, "fused_add", through),
        ("pkg/model.py", 25, 13, "fused_add", through),  # one finding per line: the outer call
        ("pkg/model.py", 26, 22, "FusedAdd.apply", through),  # columns in characters, not bytes
        ("pkg/model.py", 27, 13, "fused_add", through),
    ]
    # The launch of the imported kernel (line 31) is already NL301's (a kernel-named callee with a
    # grid); the plain helpers, the reference, the kernel body's device call are no finding.
    result = scan_paths([tmp_path], cwd=tmp_path, select=["ALL"])
    assert ("NL301", 31) in {(f.rule, f.line) for f in result.active if f.path == "pkg/model.py"}
    message = next(f.message for f in result.active if f.rule == "NL308")
    assert message.startswith(
        "Uses `init` from `pkg.ops.build`, which builds a C++/CUDA extension "
        "(`torch.utils.cpp_extension.load`) (through `_build`); that does not run on Neuron"
    )


def test_selecting_nl308_alone_finds_the_same_calls(tmp_path: Path) -> None:
    # The entry points come from the kernel module's own detections (the cpp_extension.load call
    # is the table-driven API checker's): they run when only NL308 is selected.
    project = _project(tmp_path)
    assert _nl308(project, select=["NL308"]) == _nl308(project, select=["ALL"])


def test_a_call_on_its_own_line_of_a_kernel_not_named_like_one_is_a_launch(tmp_path: Path) -> None:
    _project(tmp_path)
    (tmp_path / "pkg/ops/kernels.py").write_text(KERNELS.replace("add_kernel", "fused_add_impl"))
    (tmp_path / "pkg/run.py").write_text(
        "from pkg.ops.kernels import fused_add_impl, _combine\n\n\n"
        "def run(x, y, out, n):\n"
        "    fused_add_impl[(n,)](x, y, out, n, BLOCK=1024)\n"
        "    return _combine(x, y)  # a kernel called without a grid from host code: not a launch\n"
    )
    found = [(path, line, name) for path, line, _c, name, _r in _nl308(tmp_path) if path == "pkg/run.py"]
    assert found == [("pkg/run.py", 5, "fused_add_impl")]


def test_entry_points_follow_calls_methods_and_autograd_functions() -> None:
    tree = ast.parse(KERNELS + BUILD.replace("import os\n", ""))
    detections = [
        {"rule": "NL301", "line": 12, "facts": {"kernel": "_combine", "launch": False}},
        {"rule": "NL301", "line": 17, "facts": {"kernel": "add_kernel", "launch": False}},
        {"rule": "NL301", "line": 27, "facts": {"kernel": "add_kernel", "launch": True}},
    ]
    entries = kernel_entries(tree, detections)
    assert entries["add_kernel"] == entries["_combine"] == KERNEL
    assert entries["_launch"] == LAUNCH
    assert entries["fused_add"] == entries["FusedAdd.forward"] == f"{LAUNCH} (through `_launch`)"
    assert entries["FusedAdd.apply"] == entries["fused_add_fn"] == f"{LAUNCH} (through `_launch`)"
    assert "block_size" not in entries and "FusedAdd.backward" not in entries
    assert "init" not in entries  # no build detection given: `_build` is a plain function here


def test_a_constructor_that_builds_an_extension_is_an_entry_point() -> None:
    code = "class Softmax:\n    def __init__(self):\n        self.ext = load_ext()\n\n    def scale(self):\n        return 2\n"
    code += "\n\ndef load_ext():\n    return cpp_extension.load(name='s', sources=['s.cu'])\n"
    detections = [
        {"rule": "NL302", "line": 10, "facts": {"api": "torch.utils.cpp_extension.load", "builder": "load"}}
    ]
    entries = kernel_entries(ast.parse(code), detections)
    assert entries["Softmax"] == entries["Softmax.__init__"]
    assert "Softmax.scale" not in entries


def test_a_file_python_cannot_parse_adds_no_call_sites() -> None:
    # The worker's result can come from a cache while the file changed since: linking reads the
    # file again and skips it when it no longer parses.
    imported = {1: [("pkg.kernels", "pkg.kernels")]}  # the import line's sites that are kernel modules
    entries = {"pkg.kernels": {"f": LAUNCH, "kernels": LAUNCH}}
    assert kernel_calls(b"from pkg.kernels import f\nf(\n", imported, entries) == []
    assert [d["line"] for d in kernel_calls(b"from pkg.kernels import f\nf(1)\n", imported, entries)] == [2]
    # A function named like its module's last part is still a function of that module.
    called = kernel_calls(b"from pkg.kernels import kernels\nkernels(1)\n", imported, entries)
    assert [(d["line"], d["facts"]["name"]) for d in called] == [(2, "kernels")]


def test_the_fix_rescan_links_nl308_as_the_scan_does(tmp_path: Path) -> None:
    from neuronlint.fix.run import Rescanner
    from neuronlint.pipeline import ScanOptions, run_scan

    project = _project(tmp_path)
    options = ScanOptions(paths=[project], base=project, jobs=1, show_ok=True)
    result = run_scan(options)
    scanned = sorted((f.rule, f.line) for f in result.findings if f.path == "pkg/model.py")
    assert ("NL308", 24) in scanned
    again = Rescanner(result, options).findings("pkg/model.py", (project / "pkg/model.py").read_text())
    assert sorted((f.rule, f.line) for f in again) == scanned


def _sites(result, path: str, rules: tuple[str, ...], fact: str) -> set[tuple[int, str, object]]:
    """(line, rule, one fact) of the active findings of `rules` in one file of a scan."""
    return {(f.line, f.rule, f.facts.get(fact)) for f in result.active if f.path == path and f.rule in rules}


def _lay_out(tmp_path: Path, repo: str, paths: list[str], commit: str = "HEAD") -> Path:
    for rel in paths:
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_bytes(mirrors.show(repo, commit, rel))
    return tmp_path


def test_fused_kernel_builds_of_gpt_neox_are_found(tmp_path: Path) -> None:
    # EleutherAI/gpt-neox builds its fused softmax kernels with cpp_extension.load in
    # megatron/fused_kernels/__init__.py (`load`) and imports the built modules in
    # `load_fused_kernels`; the model and the kernel tests call both from other files.
    root = _lay_out(
        tmp_path,
        "EleutherAI+gpt-neox",
        [
            "megatron/__init__.py",
            "megatron/fused_kernels/__init__.py",
            "megatron/model/__init__.py",
            "megatron/model/fused_softmax.py",
            "tests/model/test_fused_kernels.py",
        ],
    )
    found = {(path, name) for path, _line, _col, name, _reach in _nl308(root, select=["ALL"])}
    assert ("megatron/model/fused_softmax.py", "load_fused_kernels") in found
    assert ("tests/model/test_fused_kernels.py", "load") in found
    assert all(path != "megatron/fused_kernels/__init__.py" for path, _ in found)


def test_megatron_plain_helpers_and_device_functions_of_kernel_modules_are_not_calls(tmp_path: Path) -> None:
    # NVIDIA/Megatron-LM: tensor_parallel/random.py defines a Triton kernel but get_cuda_rng_tracker
    # is a plain helper; the symmetric-memory kernels call multimem_asm's @triton.jit helpers inside
    # kernel bodies; nccl_allocator.init() builds a CUDA extension (load_inline) and is an entry point.
    listed = [p for p in mirrors.names("NVIDIA/Megatron-LM") if p.startswith("megatron/core/")]
    wanted = {
        "megatron/core/nccl_allocator.py",
        "megatron/core/distributed/param_and_grad_buffer.py",
        "megatron/core/tensor_parallel/random.py",
        "megatron/core/tensor_parallel/layers.py",
    }
    symm = "megatron/core/inference/communication/torch_symm_triton/"
    paths = sorted(p for p in listed if p in wanted or p.startswith(symm) or p.endswith("__init__.py"))
    root = _lay_out(tmp_path, "NVIDIA+Megatron-LM", paths)
    found = _nl308(root, select=["ALL"])
    names = {(path, name) for path, _line, _col, name, _reach in found}
    assert ("megatron/core/distributed/param_and_grad_buffer.py", "init") in names
    assert not [n for n in names if n[1] in ("get_cuda_rng_tracker", "ld_128", "st_128", "sync_threads")]
    assert all(not path.startswith(symm) or "._" not in name for path, name in names)


def test_a_module_that_runs_a_compiled_extension_is_a_kernel_module(tmp_path: Path) -> None:
    # Dao-AILab/causal-conv1d: cpp_functions.py imports the compiled `causal_conv1d_cuda` and wraps it
    # in custom ops and `causal_conv1d_*_function`s; the autograd Functions and the kernel benchmark
    # call those wrappers from other files. (setup.py, which builds the extension, is left out.)
    commit = "0d2252d161f25f7907bbd05985c08ab98d255874"
    paths = [
        "causal_conv1d/__init__.py",
        "causal_conv1d/cpp_functions.py",
        "causal_conv1d/causal_conv1d_interface.py",
        "tests/benchmark_determinism_kernels.py",
    ]
    _lay_out(tmp_path, "Dao-AILab+causal-conv1d", paths, commit)
    (tmp_path / ".git").mkdir()  # the repository's root: `causal_conv1d` is its own package
    result = scan_paths([tmp_path], cwd=tmp_path, select=["ALL"], triage=True, show_ok=True)
    found = {
        (f.path, f.line, f.rule) for f in result.active if f.rule in ("NL306", "NL308", "NL401", "NL402")
    }
    interface, bench = "causal_conv1d/causal_conv1d_interface.py", "tests/benchmark_determinism_kernels.py"
    assert found == {
        # the package re-exports the interface's functions, which always run the wrappers
        ("causal_conv1d/__init__.py", 3, "NL306"),
        (interface, 6, "NL306"),
        (interface, 56, "NL308"),
        (interface, 75, "NL308"),
        (interface, 197, "NL308"),
        (bench, 10, "NL306"),
        (bench, 72, "NL308"),
    }
    message = next(f.message for f in result.active if (f.rule, f.path) == ("NL306", interface))
    assert message.startswith(
        "Imports `causal_conv1d.cpp_functions`, which defines or runs custom kernels "
        "(the compiled extension `causal_conv1d_cuda`)"
    )


def test_a_module_that_only_queries_a_compiled_extension_is_not_a_kernel_module(tmp_path: Path) -> None:
    # facebookresearch/detectron2: collect_env_info() imports detectron2._C in a try and asks it for
    # its compiler and CUDA versions; tools/benchmark.py calls it to print the environment.
    root = _lay_out(
        tmp_path,
        "facebookresearch+detectron2",
        [
            "detectron2/__init__.py",
            "detectron2/utils/__init__.py",
            "detectron2/utils/collect_env.py",
            "tools/benchmark.py",
        ],
    )
    result = scan_paths([root], cwd=root, select=["ALL"])
    assert not [f for f in result.active if f.rule in ("NL306", "NL308")]


def test_a_module_that_imports_its_extension_only_where_it_runs_it_is_not_a_kernel_module(
    tmp_path: Path,
) -> None:
    # The shape of gpt-neox's megatron/model/fused_softmax.py: the compiled softmax is imported inside
    # the autograd Function that runs it, so importing the module needs no extension (and the module
    # falls back to torch.softmax where the kernel is missing); only the wrapper's own lines are NL303.
    write(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/fused_softmax.py": (
                "import torch\n\n\n"
                "class ScaledSoftmax(torch.autograd.Function):\n"
                "    @staticmethod\n"
                "    def forward(ctx, inputs, scale):\n"
                "        import scaled_softmax_cuda\n\n"
                "        return scaled_softmax_cuda.forward(inputs, scale)\n"
            ),
            "tests/test_softmax.py": (
                "from pkg.fused_softmax import ScaledSoftmax\n\n\n"
                "def test_softmax(x):\n    assert ScaledSoftmax.apply(x, 1.0) is not None\n"
            ),
        },
    )
    result = scan_paths([tmp_path], cwd=tmp_path, select=["ALL"])
    assert {(f.path, f.rule) for f in result.active if f.rule.startswith("NL30")} == {
        ("pkg/fused_softmax.py", "NL303")
    }


def test_modules_built_around_a_kernel_are_reached_where_they_are_built(tmp_path: Path) -> None:
    # Dao-AILab/flash-attention: ops/fused_dense.py wraps the compiled `fused_dense_lib` in an
    # autograd Function that runs it only in `backward`, and in `nn.Linear` subclasses whose forward
    # calls that Function; ops/activations.py compiles swiglu with torch.cuda.jiterator at import.
    # modules/mlp.py imports both (each in a try) and builds the layers.
    commit = "0251105a2fb19d2957484b7f023cd8c115286ced"
    paths = [
        "flash_attn/modules/mlp.py",
        "flash_attn/ops/fused_dense.py",
        "flash_attn/ops/activations.py",
    ]
    _lay_out(tmp_path, "Dao-AILab/flash-attention", paths, commit)
    for package in ("flash_attn", "flash_attn/modules", "flash_attn/ops"):
        (tmp_path / package / "__init__.py").write_text("")
    result = scan_paths([tmp_path], cwd=tmp_path, select=["ALL"])
    found = _sites(result, "flash_attn/modules/mlp.py", ("NL306", "NL308"), "name")
    assert found == {
        (10, "NL306", None),  # the jiterator module
        (15, "NL306", None),
        (20, "NL306", None),
        (74, "NL308", "ColumnParallelLinear"),
        (83, "NL308", "RowParallelLinear"),
        (131, "NL308", "swiglu"),  # `swiglu = SwiGLUFunction.apply`, whose forward runs `swiglu_fwd`
        (165, "NL308", "ColumnParallelLinear"),
        (174, "NL308", "RowParallelLinear"),
    }
    reaches = {f.facts["name"]: f.facts["reaches"] for f in result.active if f.rule == "NL308"}
    assert reaches["ColumnParallelLinear"].endswith("(through `FusedDenseFunc.backward`)")
    assert reaches["swiglu"] == (
        "compiles a CUDA kernel at run time (`torch.cuda.jiterator._create_jit_fn`) (through `swiglu_fwd`)"
    )


def test_a_class_whose_forward_runs_a_kernel_is_an_entry_point() -> None:
    code = (
        "class QLinear:\n"
        "    @classmethod\n"
        "    def from_linear(cls, linear):\n"
        "        return cls(linear.weight)\n"
        "\n"
        "    def forward(self, x):\n"
        "        return ext.gemm_forward_cuda(x)\n"
        "\n"
        "    def extra_repr(self):\n"
        "        return 'q'\n"
        "\n"
        "\n"
        "class Plain:\n"
        "    def forward(self, x):\n"
        "        return x\n"
    )
    detections = [{"rule": "NL303", "line": 7, "facts": {"module": "ext", "kind": "compiled extension"}}]
    entries = kernel_entries(ast.parse(code), detections)
    uses = "uses the compiled extension `ext`"
    assert entries["QLinear.forward"] == uses
    assert entries["QLinear"] == f"{uses} (through `QLinear.forward`)"
    # `cls(...)` in a classmethod builds the class (a reach keeps its first `through`)
    assert entries["QLinear.from_linear"] == f"{uses} (through `QLinear.forward`)"
    assert "Plain" not in entries and "QLinear.extra_repr" not in entries


def test_wrappers_and_re_exports_of_a_kernel_module_are_followed(tmp_path: Path) -> None:
    # fundamentalvision/Deformable-DETR: setup.py builds `MultiScaleDeformableAttention`;
    # functions/ms_deform_attn_func.py calls it in an autograd Function, re-exported by the
    # functions package; modules/ms_deform_attn.py applies that Function in `MSDeformAttn.forward`,
    # re-exported by the modules package; the transformer imports MSDeformAttn from the package and
    # builds it twice.
    ops = "models/ops/"
    paths = [
        "models/__init__.py",
        "models/deformable_transformer.py",
        f"{ops}setup.py",
        f"{ops}functions/__init__.py",
        f"{ops}functions/ms_deform_attn_func.py",
        f"{ops}modules/__init__.py",
        f"{ops}modules/ms_deform_attn.py",
    ]
    _lay_out(tmp_path, "fundamentalvision/Deformable-DETR", paths, "11169a60c33333af00a4849f1808023eba96a931")
    (tmp_path / "models/ops/__init__.py").write_text("")
    result = scan_paths([tmp_path], cwd=tmp_path, select=["ALL"])
    found = {(f.path, f.line, f.rule) for f in result.active if f.rule in ("NL306", "NL308")}
    transformer = "models/deformable_transformer.py"
    assert {(transformer, 20, "NL306"), (transformer, 197, "NL308"), (transformer, 268, "NL308")} <= found
    assert (f"{ops}modules/ms_deform_attn.py", 112, "NL308") in found  # MSDeformAttnFunction.apply
    message = next(f.message for f in result.active if (f.path, f.line) == (transformer, 197))
    assert message.startswith(
        "Uses `MSDeformAttn` from `models.ops.modules`, which uses the compiled extension "
        "`MultiScaleDeformableAttention.ms_deform_attn_forward`"
    )


WRAPPERS = {
    "pkg/__init__.py": "",
    "pkg/kernels.py": KERNELS,
    "pkg/layers/__init__.py": "from .attention import FusedAttention, helper\n",
    "pkg/layers/attention.py": (
        "from pkg.kernels import fused_add\n\n\n"
        "def helper(x):\n    return x\n\n\n"
        "class FusedAttention:\n"
        "    def forward(self, x, y):\n"
        "        return fused_add(x, y)  # always\n\n\n"
        "def build(kind, x, y):\n"
        "    if kind == 'fused':\n"
        "        return fused_add(x, y)  # one choice of several\n"
        "    return x + y\n\n\n"
        "class Softmax:\n"
        "    def forward(self, x, y):\n"
        "        if x is not None:\n"
        "            return self._fused(x, y)  # the fused path, chosen here\n"
        "        return y\n\n"
        "    def _fused(self, x, y):\n"
        "        return fused_add(x, y)\n"
    ),
    "pkg/uses.py": "from pkg.layers.attention import FusedAttention\n\n\ndef f():\n    return FusedAttention()\n",
    "pkg/app.py": (
        "from pkg.uses import FusedAttention\n"
        "from pkg.layers.attention import Softmax\n\n\n"
        "def run():\n"
        "    return FusedAttention(), Softmax()\n"
    ),
    "pkg/model.py": (
        "from pkg.layers import FusedAttention\n"
        "from pkg.layers import helper\n"
        "from pkg.layers.attention import build\n\n\n"
        "def make(x, y):\n"
        "    layer = FusedAttention()\n"
        "    return build('fused', helper(x), y), layer\n"
    ),
}


def test_only_what_always_runs_a_kernel_is_followed_through_a_wrapper(tmp_path: Path) -> None:
    # A wrapper's function that calls a kernel entry point only under a condition (a model builder
    # choosing the fused path) chooses the kernel case by case: its callers are not reported. An
    # import of a wrapper names one of its entry points, or it is no finding.
    write(tmp_path, WRAPPERS)
    result = scan_paths([tmp_path], cwd=tmp_path, select=["ALL"])
    found = {(f.path, f.line, f.rule) for f in result.active if f.rule in ("NL306", "NL308")}
    model = {(line, rule) for path, line, rule in found if path == "pkg/model.py"}
    assert model == {(1, "NL306"), (7, "NL308")}
    assert ("pkg/layers/attention.py", 10, "NL308") in found
    assert ("pkg/layers/attention.py", 15, "NL308") in found  # the builder's own call is reported
    # `Softmax.forward` reaches the kernel only through a method it calls under an `if`; a plain
    # module importing FusedAttention (pkg/uses.py) uses it, it does not re-export it.
    assert {(line, rule) for path, line, rule in found if path == "pkg/app.py"} == set()
    assert ("pkg/uses.py", 5, "NL308") in found


def test_functions_of_an_extension_a_build_helper_returns_are_extension_calls(tmp_path: Path) -> None:
    # NVlabs/stylegan3's ops: `_plugin = custom_ops.get_plugin(...)` builds and loads the plugin in
    # another module, then `_plugin.bias_act(...)` runs its kernels.
    write(
        tmp_path,
        {
            "torch_utils/__init__.py": "",
            "torch_utils/custom_ops.py": (
                "import torch.utils.cpp_extension\n\n\n"
                "def get_plugin(module_name, sources):\n"
                "    torch.utils.cpp_extension.load(name=module_name, sources=sources)\n"
                "    return __import__(module_name)\n"
            ),
            "torch_utils/ops/__init__.py": "",
            "torch_utils/ops/bias_act.py": (
                "from .. import custom_ops\n\n"
                "_plugin = None\n\n\n"
                "def _init():\n"
                "    global _plugin\n"
                "    _plugin = custom_ops.get_plugin('bias_act_plugin', ['bias_act.cu'])\n\n\n"
                "def bias_act(x, b):\n"
                "    name = str(b)\n"
                "    return _plugin.bias_act(x, b, name.upper())\n"
            ),
        },
    )
    result = scan_paths([tmp_path], cwd=tmp_path, select=["ALL"])
    found = _sites(result, "torch_utils/ops/bias_act.py", ("NL303", "NL308"), "module")
    assert found == {
        (8, "NL308", "torch_utils.custom_ops"),
        (13, "NL303", "_plugin.bias_act"),  # the plugin's function, not `name.upper()`
    }
    message = next(f.message for f in result.active if f.rule == "NL303")
    assert message.startswith(
        "`_plugin.bias_act` is a compiled extension built by `torch_utils.custom_ops.get_plugin`"
    )


def test_a_kernel_package_used_by_the_repository_s_own_examples(tmp_path: Path) -> None:
    # NVIDIA/TransformerEngine: build_tools builds `transformer_engine_torch`; module/linear.py
    # imports it; the module package re-exports `Linear`, and the pytorch package re-exports it
    # from there (a wrapper of a wrapper, found a round later) beside `autocast`, a context manager
    # whose `__enter__` reaches the extension. The examples import the package whole and use it.
    paths = [
        "setup.py",
        "build_tools/__init__.py",
        "build_tools/build_ext.py",
        "build_tools/pytorch.py",
        "build_tools/utils.py",
        "transformer_engine/__init__.py",
        "transformer_engine/pytorch/__init__.py",
        "transformer_engine/pytorch/module/__init__.py",
        "transformer_engine/pytorch/module/linear.py",
        "transformer_engine/pytorch/quantization.py",
        "examples/pytorch/mnist/main.py",
        "examples/pytorch/fsdp/fsdp.py",
    ]
    _lay_out(tmp_path, "NVIDIA/TransformerEngine", paths, "d0067d0da6cb01811b8072a7d304f0e00344ce2b")
    # triage on: its first-party filter is what leaves the package's own calls to linking
    result = scan_paths([tmp_path], cwd=tmp_path, select=["ALL"], show_ok=True, triage=True)
    mnist = _sites(result, "examples/pytorch/mnist/main.py", ("NL306", "NL308", "NL401", "NL402"), "name")
    # `from transformer_engine import pytorch as te`: the package, not a library (NL401) here
    assert {(13, "NL306", None), (24, "NL308", "Linear"), (55, "NL308", "autocast")} <= mnist
    assert not {site for site in mnist if site[1] in ("NL401", "NL402")}
    fsdp = _sites(result, "examples/pytorch/fsdp/fsdp.py", ("NL306", "NL308"), "name")
    # `"linear": te.Linear` in a dict, `with te.autocast(...)`: uses; `layer_type == te.Linear`
    # (line 113, 117) only picks a branch
    assert {(20, "NL306", None), (88, "NL308", "Linear"), (444, "NL308", "autocast")} <= fsdp
    assert not {site for site in fsdp if site[0] in (113, 117)}
    message = next(
        f.message for f in result.active if (f.path, f.line) == ("examples/pytorch/fsdp/fsdp.py", 88)
    )
    assert message.startswith(
        "Uses `Linear` from `transformer_engine.pytorch`, which uses the compiled extension"
    )


def test_modules_a_package_puts_on_sys_path_import_by_bare_name(tmp_path: Path) -> None:
    # NVIDIA/MinkowskiEngine: the package's __init__.py appends its own directory to sys.path and
    # re-exports its layers by bare module name (`from MinkowskiSparseTensor import SparseTensor`),
    # so the example that imports the package whole reaches the compiled backend through it.
    paths = [
        "setup.py",
        "MinkowskiEngine/__init__.py",
        "MinkowskiEngine/MinkowskiConvolution.py",
        "MinkowskiEngine/MinkowskiSparseTensor.py",
        "MinkowskiEngine/MinkowskiCoordinateManager.py",
        "examples/multigpu_ddp.py",
    ]
    _lay_out(tmp_path, "NVIDIA/MinkowskiEngine", paths, "02fc608bea4c0549b0a7b00ca1bf15dee4a0b228")
    result = scan_paths([tmp_path], cwd=tmp_path, select=["ALL"])
    sites = _sites(result, "examples/multigpu_ddp.py", ("NL306", "NL308"), "name")
    assert {(27, "NL306", None), (106, "NL308", "SparseTensor")} <= sites
    # without the sys.path line the bare imports name no module of the package
    init = tmp_path / "MinkowskiEngine/__init__.py"
    init.write_text(init.read_text().replace("sys.path.append(file_dir)", "pass"))
    result = scan_paths([tmp_path], cwd=tmp_path, select=["ALL"])
    assert not _sites(result, "examples/multigpu_ddp.py", ("NL306", "NL308"), "name")
