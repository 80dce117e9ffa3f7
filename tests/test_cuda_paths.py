"""Code that runs only where CUDA exists (static/cuda_paths.py, filters/cuda_paths.py): test gates,
skip conditions, CUDA branches and guards, on hand-written edge cases and on real test files of
public repositories (read from local mirrors in setup, skipped when absent, never committed)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests import mirrors
from tests.conftest import scan_paths

GATED_TESTS = """\
import pytest
import torch
import unittest

requires_kernel = pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA")


@pytest.mark.skipif(not torch.cuda.is_available(), reason="CUDA")
def test_decorated():
    x = torch.ones(2).cuda()


@requires_kernel
def test_alias():
    torch.cuda.synchronize()


def test_early_skip():
    if not torch.cuda.is_available():
        pytest.skip("needs cuda")
    y = torch.ones(2, device="cuda")


def test_branch():
    if torch.cuda.is_available():
        torch.cuda.synchronize()
    z = torch.ones(2).cuda()


@pytest.mark.skipif(torch.cuda.is_available(), reason="CPU-only test")
def test_runs_without_cuda():
    w = torch.ones(2).cuda()


@pytest.mark.skipif(not torch.accelerator.is_available(), reason="any accelerator")
def test_any_accelerator():
    v = torch.ones(2).cuda()


class TestMulti(unittest.TestCase):
    @unittest.skipIf(torch.cuda.device_count() < 2, "2 GPUs")
    def test_two(self):
        u = torch.ones(2).cuda()
"""


def _scan(tmp_path: Path, files: dict[str, str], **kwargs):
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return scan_paths([tmp_path], cwd=tmp_path, triage=True, **kwargs)


def test_tests_that_run_only_with_cuda_are_left_out(tmp_path: Path):
    result = _scan(tmp_path, {"tests/test_ops.py": GATED_TESTS})
    lines = sorted(f.line for f in result.active)
    # Kept: the ungated `.cuda()` after the branch (27), a test skipped *with* CUDA (32), one gated
    # on any accelerator (37). Left out: decorated/alias/early-skip/unittest tests, their skip
    # conditions and the `if torch.cuda.is_available():` body with its guard.
    assert lines == [27, 32, 37]
    assert result.left_out == {"test": 10, "guard": 1}
    shown = _scan(tmp_path, {}, show_ok=True)
    assert len(shown.active) == 13
    assert all(f.extra.get("cuda_only") for f in shown.active if f.line not in (27, 32, 37))


def test_selection_markers_are_not_gates(tmp_path: Path):
    source = "import pytest\nimport torch\n\n@pytest.mark.gpu\ndef test_g():\n    x = torch.ones(2).cuda()\n"
    result = _scan(tmp_path, {"tests/test_gpu.py": source})
    assert [(f.line, f.rule) for f in result.active] == [(6, "NL101")]


def test_module_level_skips_gate_the_whole_module(tmp_path: Path):
    files = {
        "test/test_kernels.py": (
            "import pytest\nimport torch\n\nif not torch.cuda.is_available():\n"
            '    pytest.skip("CUDA required", allow_module_level=True)\n\n'
            "def test_k():\n    x = torch.ones(2).cuda()\n"
        ),
        "tests/test_marked.py": (
            "import pytest\nimport torch\n\npytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason='')\n\n"
            "def test_m():\n    torch.cuda.synchronize()\n"
        ),
    }
    result = _scan(tmp_path, files)
    assert result.active == []
    assert result.left_out["test"] == 4


def test_source_blockers_on_cuda_branches_are_warnings(tmp_path: Path):
    source = (
        "import torch\n\n"
        "def setup(model):\n"
        "    if torch.cuda.is_available():\n"
        "        model = model.cuda()\n"
        "    return model\n\n"
        "def other(model):\n"
        "    return model.cuda()\n"
    )
    result = _scan(tmp_path, {"pkg/setup_model.py": source})
    by_line = {f.line: f for f in result.active}
    assert set(by_line) == {5, 9}  # the guard on line 4 is folded into what it guards
    assert (by_line[5].severity.value, by_line[5].capped_from.value) == ("warning", "blocker")
    assert by_line[9].severity.value == "blocker" and by_line[9].capped_from is None


def test_benchmarks_of_gpu_kernels_are_left_out(tmp_path: Path):
    files = {
        "pkg/__init__.py": "",
        "pkg/kernels.py": (
            "import triton\nimport triton.language as tl\n\n@triton.jit\ndef k(x_ptr):\n    pass\n"
        ),
        "benchmarks/bench_kernels.py": (
            "import torch\nfrom pkg.kernels import k\n\nx = torch.ones(8, device='cuda')\nk[(1,)](x)\n"
        ),
        "benchmarks/bench_plain.py": "import torch\n\nx = torch.ones(8, device='cuda')\n",
    }
    result = _scan(tmp_path, files)
    paths = {f.path for f in result.active}
    assert "benchmarks/bench_kernels.py" not in paths
    assert "benchmarks/bench_plain.py" in paths
    assert "pkg/kernels.py" in paths  # the kernel itself is the root cause to port
    assert result.left_out["benchmark"] >= 2


AO = ("pytorch/ao", "36027d82d1ad9949597ea16002ff4940374b1b94")
PEFT = ("huggingface/peft", "5d602fdbff04c33c1c4de55cda9d4ae1d7cb7e40")


@pytest.mark.parametrize(
    "repo, commit, path",
    [
        # `if not torch.cuda.is_available(): pytest.skip(..., allow_module_level=True)`
        (*AO, "test/prototype/moe_training/test_mxfp8_linear.py"),
        # `if not (torch.cuda.is_available() and ...): pytest.skip(...)` at module level
        (*AO, "test/prototype/moe_training/test_kernels.py"),
        # `if not (is_cuda_version_at_least(12, 8) and is_sm_at_least_100()): pytest.skip(...)`
        (*AO, "test/prototype/moe_training/ep/test_permute.py"),
    ],
)
def test_real_test_modules_that_skip_without_cuda(tmp_path: Path, repo: str, commit: str, path: str):
    text = mirrors.show(repo, commit, path).decode("utf-8")
    result = _scan(tmp_path, {path: text})
    assert result.active == [], [f"{f.line} {f.rule}" for f in result.active]
    assert result.left_out.get("test", 0) > 0


def test_real_gpu_test_class_of_peft(tmp_path: Path):
    """peft's tests/test_gpu_examples.py: classes and tests behind @require_torch_gpu,
    @require_bitsandbytes and GPU markers; what is left is test code that also runs elsewhere."""
    path = "tests/test_gpu_examples.py"
    text = mirrors.show(*PEFT, path).decode("utf-8")
    result = _scan(tmp_path, {path: text})
    raw = scan_paths([tmp_path], cwd=tmp_path, select=["ALL"])
    assert len(raw.active) > 50
    assert result.left_out["test"] > 0.8 * len(raw.active)
    lines = text.splitlines()
    for f in result.active:  # nothing that is left sits in a bitsandbytes test
        assert "BitsAndBytesConfig" not in lines[f.line - 1]
