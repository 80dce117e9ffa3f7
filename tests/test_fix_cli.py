"""`neuronlint fix` and `scan --fix / --diff / --unsafe-fixes` as users run them: exit codes, what
is written, the text marker and count, JSON and SARIF fixes, the frame check of `--to`."""

from __future__ import annotations

import json
import os
from pathlib import Path

import jsonschema
import pytest
from typer.testing import CliRunner

from neuronlint.cli import app

runner = CliRunner()
SCHEMA_PATH = Path("/work/shared/schemas/sarif-2.1.0.json")

TRAIN = """\
import torch
import torch.distributed as dist

torch.backends.cudnn.benchmark = True


def setup(model):
    dist.init_process_group("nccl")
    torch.cuda.synchronize()  # wait for the GPU
    return model.cuda()
"""


def run(args: list[str], cwd: Path):
    old = os.getcwd()
    os.chdir(cwd)
    try:
        return runner.invoke(app, [*args, "--no-cache"], catch_exceptions=False)
    finally:
        os.chdir(old)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "train.py").write_text(TRAIN)
    return tmp_path


def test_fix_diff_changes_nothing_and_exits_1(project):
    result = run(["fix", "--diff"], project)
    assert result.exit_code == 1
    assert "--- a/train.py" in result.stdout and "+    return model.to(DEVICE)" in result.stdout
    assert "Would fix 3 findings in 1 file; 1 more with --unsafe-fixes" in result.stderr
    assert (project / "train.py").read_text() == TRAIN


def test_fix_writes_safe_fixes_then_is_a_no_op(project):
    result = run(["fix"], project)
    assert result.exit_code == 0, result.output
    text = (project / "train.py").read_text()
    assert "dist.init_process_group(dist.get_default_backend_for_device(DEVICE))" in text
    assert "        torch.accelerator.synchronize()  # wait for the GPU" in text
    assert "torch.backends.cudnn.benchmark = True" in text  # unsafe: left alone
    again = run(["fix", "--diff"], project)
    assert again.exit_code == 0 and again.stdout == ""
    unsafe = run(["fix", "--unsafe-fixes"], project)
    assert unsafe.exit_code == 0
    assert "cudnn" not in (project / "train.py").read_text()


def test_scan_marks_and_counts_fixable_findings(project):
    result = run(["scan", "--exit-zero"], project)
    assert "NL102 [*]" in result.stdout and "NL109 [*]" not in result.stdout
    assert (
        "[*] 3 fixable with `neuronlint fix` (1 more with `neuronlint fix --unsafe-fixes`)." in result.stdout
    )
    unsafe = run(["scan", "--exit-zero", "--unsafe-fixes"], project)
    assert (
        "NL109 [*]" in unsafe.stdout
        and "[*] 4 fixable with `neuronlint fix --unsafe-fixes`." in unsafe.stdout
    )


def test_scan_fix_reports_what_is_left(project):
    result = run(["scan", "--fix", "--fail-on", "info"], project)
    assert "Fixed 3 findings in 1 file" in result.stderr
    assert "NL109" in result.stdout and "NL102" not in result.stdout
    assert result.exit_code == 1  # the cuDNN flag is still there


GUARDED = """\
import os

import torch
import torch.distributed as dist

local_rank = int(os.environ["LOCAL_RANK"])
if torch.cuda.is_available():
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
"""


def test_a_folded_cuda_guard_is_counted_once(tmp_path):
    # The scan folds the guard into the two findings of its body (summary.left_out.guard = 1).
    (tmp_path / "train.py").write_text(GUARDED)
    data = json.loads(run(["scan", "--format", "json", "--exit-zero"], tmp_path).stdout)
    assert [f["rule"] for f in data["findings"]] == ["NL106", "NL201"]
    assert data["summary"]["left_out"] == {"guard": 1}
    # Safe fixes rewrite the body; the guard's own fix is unsafe, so it is left, on its own now:
    # one of the findings left, not a new finding.
    safe = run(["fix"], tmp_path)
    assert safe.stderr.strip() == (
        "Fixed 2 findings in 1 file; 1 more with --unsafe-fixes; 1 finding left (1 of them a CUDA"
        " guard, shown on its own now that the code it guards is fixed)."
    )
    assert "if torch.cuda.is_available():" in (tmp_path / "train.py").read_text()
    left = json.loads(run(["scan", "--format", "json", "--exit-zero"], tmp_path).stdout)
    assert [(f["rule"], f["line"]) for f in left["findings"]] == [("NL106", 8)]
    # With --unsafe-fixes the guard is fixed too, in the round after its body: counted once, as fixed.
    (tmp_path / "train.py").write_text(GUARDED)
    unsafe = run(["fix", "--unsafe-fixes"], tmp_path)
    assert unsafe.stderr.strip() == (
        "Fixed 3 findings in 1 file (1 of them a CUDA guard, which the scan folds into the code it"
        " guards); 0 findings left."
    )
    assert "if torch.accelerator.is_available():" in (tmp_path / "train.py").read_text()


def test_show_ok_lists_the_folded_guard_and_fix_still_folds_it(tmp_path):
    # --show-ok lists what the triage set aside, the folded guard too (extra.folded, no fix
    # attached: a fix never rewrites a guard alone); the default output and `fix` keep the fold.
    (tmp_path / "train.py").write_text(GUARDED)
    listed = json.loads(run(["scan", "--format", "json", "--exit-zero", "--show-ok"], tmp_path).stdout)
    rows = [(f["rule"], f["line"], f["extra"].get("folded", False)) for f in listed["findings"]]
    assert rows == [("NL106", 7, True), ("NL106", 8, False), ("NL201", 9, False)]
    guard = listed["findings"][0]
    assert "fix" not in guard and guard["group"] and listed["summary"]["left_out"] == {"guard": 1}
    default = json.loads(run(["scan", "--format", "json", "--exit-zero"], tmp_path).stdout)
    assert [f["rule"] for f in default["findings"]] == ["NL106", "NL201"]
    safe = run(["scan", "--show-ok", "--fix", "--exit-zero"], tmp_path)
    assert safe.stderr.strip().startswith("Fixed 2 findings in 1 file; 1 more with --unsafe-fixes; ")
    assert "if torch.cuda.is_available():" in (tmp_path / "train.py").read_text()


def test_a_guard_is_not_rewritten_while_the_code_it_guards_still_needs_cuda(tmp_path):
    # Rewriting the guard alone would send the CUDA-only body down the Neuron path.
    code = GUARDED.replace(
        '    dist.init_process_group("nccl")\n', "    torch.cuda.nvtx.range_push('step')\n"
    )
    (tmp_path / "train.py").write_text(code)
    result = run(["fix", "--unsafe-fixes"], tmp_path)
    text = (tmp_path / "train.py").read_text()
    assert "if torch.cuda.is_available():" in text and "torch.cuda.nvtx.range_push" in text
    assert result.stderr.strip().startswith("Fixed 1 finding in 1 file; ")
    assert "CUDA guard" not in result.stderr


KERNELS = """\
import triton
import triton.language as tl


@triton.jit
def scale_kernel(src, dst, factor, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(dst + offsets, tl.load(src + offsets, mask=mask) * factor, mask=mask)
"""

LAYER = """\
import fastops_cuda
import torch

from fastops.kernels import scale_kernel


class Scale(torch.nn.Module):
    def forward(self, x):
        out = torch.empty_like(x)
        scale_kernel[(x.numel() // 256 + 1,)](x, out, 2.0, x.numel(), BLOCK=256)
        return fastops_cuda.finish(out)


def build():
    return Scale().cuda()
"""

SETUP = """\
from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CUDAExtension

setup(
    name="fastops",
    ext_modules=[CUDAExtension("fastops_cuda", ["csrc/scale.cu"])],
    cmdclass={"build_ext": BuildExtension},
)
"""


HEAD = """\
from fastops.ops_cuda import fused_scale


def run(x):
    return fused_scale(x.cuda(), 2.0)
"""


def kernel_project(root: Path) -> Path:
    """A package whose layer imports a Triton kernel of another module (NL306) and the compiled
    extension its setup.py builds (NL303), and whose head imports a Python module named like an
    extension (ops_cuda.py: not NL303): what only the whole scan can see."""
    (root / "fastops").mkdir()
    (root / "fastops" / "__init__.py").write_text("")
    (root / "fastops" / "kernels.py").write_text(KERNELS)
    (root / "fastops" / "layer.py").write_text(LAYER)
    (root / "fastops" / "ops_cuda.py").write_text("def fused_scale(x, factor):\n    return x * factor\n")
    (root / "fastops" / "head.py").write_text(HEAD)
    (root / "setup.py").write_text(SETUP)
    return root


def test_fix_counts_match_a_rescan_when_the_fixed_file_imports_project_kernels(tmp_path):
    # The fix's rescan of each file alone must link its imports as the scan does: the NL306 and
    # NL303 on layer.py's import lines stay (kernels get no fix), so nothing is "gone with them";
    # head.py's import of ops_cuda.py stays no finding, so nothing is "new"; and "findings left"
    # is what the next scan shows (Megatron-LM's fix benchmark cross-check).
    project = kernel_project(tmp_path)
    before = json.loads(run(["scan", "--format", "json", "--exit-zero"], project).stdout)["findings"]
    linked = [(f["rule"], f["line"]) for f in before if f["path"] == "fastops/layer.py"]
    assert ("NL303", 1) in linked and ("NL306", 4) in linked
    assert [f["rule"] for f in before if f["path"] == "fastops/head.py"] == ["NL101"]
    result = run(["fix"], project)
    after = json.loads(run(["scan", "--format", "json", "--exit-zero"], project).stdout)["findings"]
    assert "Scale().to(DEVICE)" in (project / "fastops" / "layer.py").read_text()
    assert "fused_scale(x.to(DEVICE), 2.0)" in (project / "fastops" / "head.py").read_text()
    assert result.stderr.strip() == f"Fixed 2 findings in 2 files; {len(after)} findings left."
    assert len(after) == len(before) - 2
    assert {(f["rule"], f["line"]) for f in after if f["path"] == "fastops/layer.py"} >= {
        ("NL303", 1),
        ("NL306", 4),
    }
    assert not [f for f in after if f["path"] == "fastops/head.py"]


def test_a_file_rescanned_alone_shows_what_the_scan_showed(tmp_path):
    # The fix's per-file rescan (Rescanner) of unchanged text gives back the scan's findings of
    # that file, the cross-file ones included.
    from neuronlint.fix.run import Rescanner
    from neuronlint.pipeline import ScanOptions, run_scan

    project = kernel_project(tmp_path)
    options = ScanOptions(paths=[project], base=project, jobs=1, show_ok=True)
    result = run_scan(options)
    rescan = Rescanner(result, options)
    for path in result.files:
        scanned = sorted((f.rule, f.line) for f in result.findings if f.path == path)
        again = sorted((f.rule, f.line) for f in rescan.findings(path, (project / path).read_text()))
        assert again == scanned, path


def test_scan_diff_is_fix_diff(project):
    result = run(["scan", "--diff", "--unsafe-fixes"], project)
    assert result.exit_code == 1
    assert "-torch.backends.cudnn.benchmark = True" in result.stdout
    assert (project / "train.py").read_text() == TRAIN


def test_json_and_sarif_carry_the_edits(project):
    data = json.loads(run(["scan", "--format", "json", "--exit-zero"], project).stdout)
    assert data["summary"]["fixable"] == {"safe": 3, "unsafe": 1}
    sync = next(f for f in data["findings"] if f["rule"] == "NL102")
    assert sync["fix"]["applicability"] == "safe"
    assert sync["fix"]["edits"][-1]["content"].startswith("if torch.accelerator.is_available():")
    sarif = json.loads(run(["scan", "--format", "sarif", "--exit-zero"], project).stdout)
    if SCHEMA_PATH.exists():
        jsonschema.validate(sarif, json.loads(SCHEMA_PATH.read_text()))
    results = {r["ruleId"]: r for r in sarif["runs"][0]["results"]}
    (change,) = results["NL101"]["fixes"][0]["artifactChanges"]
    assert change["artifactLocation"]["uri"] == "train.py"
    inserted = [r["insertedContent"]["text"] for r in change["replacements"]]
    assert inserted[-1] == "to(DEVICE)" and inserted[0].startswith("DEVICE = torch.accelerator")
    assert "unsafe" in results["NL109"]["fixes"][0]["description"]["text"]


def test_a_flavour_the_frame_lacks_exits_2(project):
    result = run(["fix", "--to", "neuron", "--sdk", "2.29", "--target", "trn1"], project)
    assert result.exit_code == 2
    assert "--to neuron needs the native backend" in result.stderr
    ok = run(["fix", "--to", "xla", "--sdk", "2.29", "--target", "trn1", "--diff"], project)
    assert ok.exit_code == 1 and "torch_xla" in ok.stdout


def test_report_shows_what_the_safe_fixes_remove(project):
    result = run(["report", "--format", "json"], project)
    data = json.loads(result.stdout)
    fixes = data["summary"]["fixes"]
    assert fixes["safe_findings"] == 3 and fixes["unsafe_findings"] == 1
    assert 0 < fixes["safe_hours"] <= fixes["hours"] and 0 < fixes["safe_share"] <= 100
    assert "Safe automatic fixes (`neuronlint fix`) remove 3 of the" in data["summary"]["headline"]
