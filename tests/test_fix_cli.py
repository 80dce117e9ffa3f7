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
