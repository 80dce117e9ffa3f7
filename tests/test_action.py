"""The composite GitHub Action: its inputs, and its scan script run for real in a shallow clone.

The runner cannot be reproduced here, so the scan step's shell script is run with the same
environment variables the action passes (inputs as NL_*), a $GITHUB_OUTPUT file, and the
neuronlint of this interpreter on PATH.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import yaml

from tests.conftest import ROOT
from tests.reporting_support import GITHUB_ENV, commit_all, git, init_repo

ACTION = ROOT / "action.yml"
BLOCKER_FREE = "import torch\n\n\ndef build():\n    return torch.nn.Linear(2, 2)\n"


def _action() -> dict:
    return yaml.safe_load(ACTION.read_text(encoding="utf-8"))


def _step(name: str) -> dict:
    return next(
        step for step in _action()["runs"]["steps"] if step.get("id") == name or step.get("name") == name
    )


def test_inputs_outputs_and_shell_syntax() -> None:
    action = _action()
    assert action["runs"]["using"] == "composite"
    assert {"paths", "target", "sdk", "diff-base", "baseline", "fail-on", "upload-sarif"} <= set(
        action["inputs"]
    )
    assert set(action["outputs"]) == {"exit-code", "sarif-file"}
    upload = next(
        s
        for s in action["runs"]["steps"]
        if str(s.get("uses", "")).startswith("github/codeql-action/upload-sarif@")
    )
    assert "inputs.upload-sarif == 'true'" in upload["if"]
    for step in action["runs"]["steps"]:
        if "run" in step:
            assert step["shell"] == "bash"
            assert "${{" not in step["run"], "inputs must reach scripts through env, not text substitution"
            checked = subprocess.run(
                ["bash", "-n"], input=step["run"], text=True, capture_output=True, check=False
            )
            assert checked.returncode == 0, checked.stderr


def _run_scan_step(
    workdir: Path, tmp_path: Path, extra_env: dict[str, str] | None = None, **inputs: str
) -> tuple[subprocess.CompletedProcess, dict[str, str]]:
    step = _step("scan")
    output_file = tmp_path / "github_output"
    output_file.write_text("", encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k not in GITHUB_ENV}
    for key, value in step["env"].items():  # defaults of the inputs the step reads
        name = value.split("inputs.")[1].rstrip(" }")
        env[key] = inputs.get(name.replace("-", "_"), str(_action()["inputs"][name].get("default", "")))
    import neuronlint

    env.update(
        {
            "GITHUB_OUTPUT": str(output_file),
            "NO_COLOR": "1",
            "NEURONLINT_NO_CACHE": "1",
            "PATH": f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}",
            "PYTHONPATH": str(Path(neuronlint.__file__).resolve().parent.parent),
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_CONFIG_GLOBAL": os.devnull,
            **(extra_env or {}),
        }
    )
    completed = subprocess.run(
        ["bash", "-c", step["run"]],
        cwd=workdir,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    outputs = dict(
        line.split("=", 1) for line in output_file.read_text(encoding="utf-8").splitlines() if "=" in line
    )
    return completed, outputs


def test_scan_step_in_a_shallow_pull_request_checkout(tmp_path: Path) -> None:
    upstream = tmp_path / "upstream"
    init_repo(upstream, {"model.py": BLOCKER_FREE, "legacy.py": "import torch\nx = torch.ones(1).cuda()\n"})
    git(upstream, "checkout", "-q", "-b", "feature")
    (upstream / "model.py").write_text(
        BLOCKER_FREE + "\n\ndef place(m):\n    m = m.cuda()\n    return m.to('cuda:1')\n", encoding="utf-8"
    )
    commit_all(upstream, "two blockers")
    checkout = tmp_path / "checkout"
    git(
        tmp_path,
        "clone",
        "-q",
        "--depth",
        "1",
        "--single-branch",
        "--branch",
        "feature",
        upstream.as_uri(),
        str(checkout),
    )

    completed, outputs = _run_scan_step(checkout, tmp_path, diff_base="origin/main", upload_sarif="true")
    assert completed.returncode == 0, (
        completed.stderr
    )  # the step itself succeeds; the last step fails the job
    errors = [line for line in completed.stdout.splitlines() if line.startswith("::error ")]
    assert [line.split(",")[1] for line in errors] == ["line=9", "line=10"]
    assert outputs["exit-code"] == "1" and outputs["sarif-file"] == "neuronlint.sarif"
    sarif = json.loads((checkout / "neuronlint.sarif").read_text(encoding="utf-8"))
    # The upload is the full analysis (a changed-lines-only one would close legacy.py's alert);
    # only the annotations follow --diff-base.
    located = sorted(
        (
            r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
            r["locations"][0]["physicalLocation"]["region"]["startLine"],
        )
        for r in sarif["runs"][0]["results"]
    )
    assert ("legacy.py", 2) in located and ("model.py", 9) in located and ("model.py", 10) in located


def test_action_pins_by_commit_and_runs_on_windows() -> None:
    action = _action()
    uses = [str(s["uses"]) for s in action["runs"]["steps"] if "uses" in s]
    assert uses and all(re.fullmatch(r"[\w./-]+@[0-9a-f]{40}", u) for u in uses), uses
    assert any(u.startswith("github/codeql-action/upload-sarif@") for u in uses)
    assert "# v4." in ACTION.read_text(encoding="utf-8")  # upload-sarif at the current major version
    install = next(s for s in action["runs"]["steps"] if s.get("name") == "Install neuronlint")
    assert "Scripts" in install["run"] and "cygpath" in install["run"] and "PIP_CACHE_DIR" in install["env"]


def test_scan_step_fail_on_never_and_bad_inputs(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    init_repo(repo, {"legacy.py": "import torch\nx = torch.ones(1).cuda()\n"})
    completed, outputs = _run_scan_step(repo, tmp_path, fail_on="never")
    assert outputs["exit-code"] == "0" and completed.stdout.startswith("::error file=legacy.py,line=2")
    assert "sarif-file" not in outputs
    completed, outputs = _run_scan_step(repo, tmp_path, sdk="1.0")
    assert outputs["exit-code"] == "2" and "unknown Neuron SDK release" in completed.stderr


def test_fix_diff_goes_to_the_job_summary(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    init_repo(repo, {"model.py": BLOCKER_FREE + "\n\ndef place(m):\n    return m.cuda()\n"})
    summary = tmp_path / "summary.md"
    summary.write_text("", encoding="utf-8")
    completed, outputs = _run_scan_step(
        repo, tmp_path, {"GITHUB_STEP_SUMMARY": str(summary)}, fix_diff="true"
    )
    assert completed.returncode == 0, completed.stderr
    text = summary.read_text(encoding="utf-8")
    assert "### neuronlint fix: safe portable fixes" in text
    assert "```diff" in text and "+    return m.to(DEVICE)" in text
    assert "return m.cuda()" in (repo / "model.py").read_text(encoding="utf-8")  # nothing written
    assert outputs["exit-code"] == "1"  # the scan itself still reports the blocker
