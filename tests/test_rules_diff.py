"""`neuronlint rules diff`: what changes between two releases on one chip, on a known pair.

2.29 -> 2.33 on trn2 is the migration the issue asks about ("what goes away if we move to 2.33 on
trn2"): the default backend moves from PyTorch/XLA to TorchNeuron. The expected entries below are
the reviewed answer; when a rule or fact changes, update them deliberately.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

from neuronlint.cli import app
from neuronlint.ruledb import load_ruledb
from neuronlint.ruledb.diff import diff_releases, op_table_name
from tests.conftest import ROOT

# Updated with issue 12 to the true verdicts: XLA-era dtype/op evidence (NL501, NL502, NL503,
# NL509) is `unknown` on TorchNeuron, complex64 before 2.32 is `unknown` (not "unsupported"), the
# 2.30/2.31 runtime and NKI Library changes reach NL907/NL905, and auto_cast_default stops at 2.32.
EXPECTED_RULE_CHANGES = {
    ("NL012", "", "info/unknown", "info/unknown (not reported)"),
    # Hugging Face Trainer and config rules documented for the XLA backend (finetune_hftrainer.rst)
    ("NL065", "", "blocker/unsupported", "info/unknown"),
    ("NL074", "", "blocker/unsupported", "info/unknown"),
    ("NL075", "", "warning/partial", "warning/partial (not reported)"),
    ("NL103", "", "blocker/unsupported", "blocker/unknown"),
    ("NL115", "", "blocker/unsupported", "info/supported"),
    ("NL115", "documented=False", "warning/unknown", "info/supported"),
    ("NL201", "", "blocker/unsupported", "blocker/unknown"),
    ("NL205", "", "warning/unsupported", "info/supported"),
    ("NL501", "", "warning/unsupported", "warning/unknown"),
    ("NL502", "dtype=complex128", "blocker/unsupported", "warning/unknown"),
    ("NL503", "", "blocker/unsupported", "warning/unknown"),
    ("NL507", "", "info/partial", "info/unknown"),
    ("NL509", "", "blocker/unsupported", "warning/unknown"),
    ("NL801", "", "warning/unsupported", "info/supported"),
    ("NL901", "", "info/supported", "warning/supported"),
    ("NL904", "", "info/supported", "warning/supported"),
    ("NL905", "legacy_namespace=True", "info/supported", "warning/supported"),
    ("NL905", "renamed_to=attention_kv_parallel_segmented_cte", "info/supported", "warning/unsupported"),
    ("NL907", "symbol=NEURON_RT_ASYNC_EXEC_MAX_INFLIGHT_REQUESTS", "info/supported", "warning/unsupported"),
}

EXPECTED_FACT_CHANGES = {
    "backend_status": ("supported", "beta"),
    "int64": ("downcast", "unknown"),
    "native_int64_flag": ("absent", "available"),
    "complex64": ("unknown", "partial"),
    "auto_cast_default": ("none", "unknown"),
    "xla_inference": ("supported", "n/a"),
    "implicit_async_exec": ("available", "removed"),
    "torch_compile": ("unsupported", "supported"),
}


def test_known_pair_229_to_233_on_trn2() -> None:
    diff = diff_releases(load_ruledb(), "2.29", "2.33", "trn2")
    assert (diff.old.backend, diff.new.backend) == ("xla", "native")
    assert (diff.backends_old, diff.backends_new) == (["xla"], ["xla", "native"])
    assert (diff.torch_old, diff.torch_new) == (["2.9"], ["2.13", "2.14"])
    assert (diff.old.training, diff.new.training) == (True, True)
    assert diff.chips_gained == [] and diff.chips_lost == []
    actual = {(c.rule, c.case, c.old.label(), c.new.label()) for c in diff.rules}
    assert actual == EXPECTED_RULE_CHANGES, (
        f"unexpected: {sorted(actual - EXPECTED_RULE_CHANGES)}; missing: {sorted(EXPECTED_RULE_CHANGES - actual)}"
    )
    relaxed = {c.rule for c in diff.rules if c.relaxed}
    assert relaxed == {
        "NL012",
        "NL065",
        "NL074",
        "NL075",
        "NL103",
        "NL115",
        "NL201",
        "NL205",
        "NL501",
        "NL502",
        "NL503",
        "NL509",
        "NL801",
    }
    by_rule = {c.rule: c for c in diff.rules}
    assert not by_rule["NL801"].reason_is_old and 'selects `backend="neuron"`' in by_rule["NL801"].reason
    assert not by_rule["NL502"].reason_is_old and "not documented" in by_rule["NL502"].reason
    assert {f.fact: (f.old, f.new) for f in diff.facts} == EXPECTED_FACT_CHANGES
    # A fact that becomes unknown with no entry saying so cites no page; every other one cites its page.
    assert {f.fact for f in diff.facts if not f.source} == {"auto_cast_default"}
    assert all(f.source.startswith("https://") for f in diff.facts if f.source)
    assert [n.version for n in diff.notes] == ["2.30"] * 3 + ["2.31"] * 4 + ["2.32"] * 4 + ["2.33"] * 6
    assert "PyTorch/XLA (torch-neuronx) no longer supported for training" in diff.notes[0].text
    replaced = {r.subject: (r.old, r.new) for r in diff.replacements}
    assert replaced["cuda"] == ("to(torch_xla.device())", 'to("neuron")')
    old_amp, new_amp = replaced["NL107"]  # autocast: the device type follows the backend
    assert '"xla"' in old_amp and '"neuron"' in new_amp
    assert replaced["torch.cuda.synchronize"][0] == "torch_xla.sync"
    assert replaced["torch.cuda.synchronize"][1].startswith("no direct equivalent")
    # The op table describes PyTorch/XLA lowerings; TorchNeuron op support is not in the database.
    assert op_table_name() == "op"
    assert (
        diff.ops is not None
        and not diff.ops.comparable
        and diff.ops.new_basis == "native backend (no torch-xla)"
    )


def test_same_backend_pair_compares_ops_and_drops_training() -> None:
    db = load_ruledb()
    diff = diff_releases(db, "2.21", "2.30", "trn1")
    assert (diff.old.backend, diff.new.backend) == ("xla", "xla") and diff.replacements == []
    assert (diff.old.training, diff.new.training) == (True, False)
    assert {f.fact: (f.old, f.new) for f in diff.facts}["training"] == (True, False)
    assert diff.chips_gained == ["trn3"]
    assert diff.ops is not None and diff.ops.comparable
    assert (diff.ops.old_basis, diff.ops.new_basis) == ("torch-xla 2.5", "torch-xla 2.9")
    lowered = {
        version: {e["name"] for e in db.tables["op"] if version in e["torch_xla"]}
        for version in ("2.5", "2.9")
    }
    assert diff.ops.gained == sorted(lowered["2.9"] - lowered["2.5"]) and diff.ops.gained
    assert diff.ops.lost == sorted(lowered["2.5"] - lowered["2.9"])
    # Nothing changes within one release family.
    same = diff_releases(db, "2.33", "2.33", "trn2")
    assert (
        same.rules == [] and same.facts == [] and same.notes == [] and same.ops.gained == same.ops.lost == []
    )


def test_declared_flag_changes_the_int64_answer() -> None:
    diff = diff_releases(load_ruledb(), "2.31", "2.32", "trn2", flags=["--native-int64=enabled"])
    changes = {(c.rule, c.old.label(), c.new.label()) for c in diff.rules}
    assert ("NL507", "info/partial", "info/supported") in changes
    assert {f.fact: (f.old, f.new) for f in diff.facts}["int64"] == ("downcast", "native")


def test_cli_text_and_json() -> None:
    runner = CliRunner()
    result = runner.invoke(app, ["rules", "diff", "2.29", "2.33", "--target", "trn2"])
    assert result.exit_code == 0, result.output
    text = result.output
    assert text.startswith("Neuron SDK 2.29 -> 2.33 on trn2\n")
    assert "  backend   xla (torch 2.9) -> native (torch 2.13, 2.14); backend gained: native\n" in text
    assert "Rules whose verdict changes (20; 14 milder, 6 stricter):" in text
    assert "  NL801 torch-compile: warning/unsupported -> info/supported (milder)\n" in text
    assert "  NL205 ddp-wrapper: warning/unsupported -> info/supported (milder)\n" in text
    assert "        no longer applies: The XLA-based torch-neuronx lists DDP/FSDP as unsupported.\n" in text
    assert (
        "  NL905 nki-kernel [legacy_namespace=True]: info/supported -> warning/supported (stricter)\n" in text
    )
    assert "  2.30  PyTorch/XLA (torch-neuronx) no longer supported for training\n" in text
    assert "Operators ([[op]]): not comparable, torch-xla 2.9 -> native backend (no torch-xla)" in text
    result = runner.invoke(app, ["rules", "diff", "2.29", "2.33", "--target", "trn2", "--format", "json"])
    data = json.loads(result.output)
    assert data["old"]["backend"] == "xla" and data["new"]["backend"] == "native"
    assert {(c["rule"], c["case"]) for c in data["rule_changes"]} == {
        (r, c) for r, c, _, _ in EXPECTED_RULE_CHANGES
    }
    assert data["ops"]["comparable"] is False


def test_cli_diff_usage_errors(tmp_path: Path) -> None:
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT), "NO_COLOR": "1"}
    for args, expected in (
        (["2.26", "2.33", "--target", "trn3"], "Neuron SDK 2.26 does not support trn3 with PyTorch"),
        (["2.29", "2.40", "--target", "trn2"], "unknown Neuron SDK release '2.40'"),
        (["2.29", "2.33", "--format", "yaml"], "unknown format 'yaml' (expected text or json)"),
    ):
        proc = subprocess.run(
            [sys.executable, "-m", "neuronlint", "rules", "diff", *args],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=120,
            env=env,
        )
        lines = proc.stderr.strip().splitlines()
        assert proc.returncode == 2 and proc.stdout == "" and len(lines) == 1, proc.stderr
        assert lines[0].startswith("neuronlint: error: ") and expected in lines[0]
