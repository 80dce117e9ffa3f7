"""scripts/new_rule.py, run into a temporary copy of the checkout: the new rule loads, has its emitter,
and its cases run (a table-driven rule passes at once; a checker method fires once written)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT

SOURCE = "https://awsdocs-neuron.readthedocs-hosted.com/en/v2.32.0/about-neuron/whats-new.html"
CHECK = """
import json, sys, tempfile
from pathlib import Path
import neuronlint
from neuronlint.ruledb import load_ruledb
from neuronlint.static.checkers import CHECKERS
from neuronlint.static.checkers.api_names import ApiNames
from tests.rule_cases import run_case

db = load_ruledb()
rule = db.rules[sys.argv[1]]
print(json.dumps({
    "package": neuronlint.__file__,
    "cases": [case.fires for case in rule.cases],
    "emitters": [c.__name__ for c in CHECKERS if sys.argv[1] in c.emits]
    + (["ApiNames"] if sys.argv[1] in ApiNames.declared(db.tables) else []),
    "problems": [run_case(Path(tempfile.mkdtemp()), rule.id, case) for case in rule.cases],
}))
"""


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    copy = tmp_path / "checkout"
    ignore = shutil.ignore_patterns(".venv", ".git", "__pycache__", "*.egg-info", "fixtures", "benchmarks")
    shutil.copytree(ROOT, copy, symlinks=True, ignore=ignore)
    return copy


def _run(copy: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(copy)}
    return subprocess.run(
        [sys.executable, *args], cwd=copy, env=env, capture_output=True, text=True, timeout=300
    )


def _check(copy: Path, rule_id: str) -> dict:
    done = _run(copy, "-c", CHECK, rule_id)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert Path(result["package"]).resolve().is_relative_to(copy.resolve())  # the copy, not the checkout
    return result


def test_table_driven_rule_is_one_record_and_one_api_row(checkout: Path) -> None:
    done = _run(
        checkout, "scripts/new_rule.py", "NL117", "--name", "cuda-foo", "--category", "cuda-api",
        "--api", "torch.cuda.foo_bar", "--source", SOURCE,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "wrote docs/rules/NL117.md" in done.stdout
    result = _check(checkout, "NL117")
    assert result["cases"] == [True, False]
    assert result["emitters"] == ["ApiNames"]
    assert result["problems"] == [[], []]


def test_code_driven_rule_gets_an_emits_entry_and_a_method_stub(checkout: Path) -> None:
    done = _run(
        checkout, "scripts/new_rule.py", "NL117", "--name", "cuda-foo", "--category", "cuda-api",
        "--checker", "CudaApi", "--source", SOURCE,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    module = (checkout / "neuronlint/static/checkers/cuda_api.py").read_text(encoding="utf-8")
    assert (
        '"NL117": ("symbol",),' in module and "def cuda_foo(self, node: cst.Call, ctx: FileContext)" in module
    )
    result = _check(checkout, "NL117")
    assert result["emitters"] == ["CudaApi"]
    # The stub reports nothing yet: the firing case runs and says what is missing; the quiet one passes.
    firing, quiet = result["problems"]
    assert len(firing) == 1 and "expected but not reported:\n    3: NL117" in firing[0]
    assert quiet == []


def test_an_existing_id_is_refused(checkout: Path) -> None:
    done = _run(
        checkout, "scripts/new_rule.py", "NL101", "--name", "x", "--category", "cuda-api",
        "--api", "torch.cuda.x", "--source", SOURCE,
    )  # fmt: skip
    assert done.returncode == 2 and "NL101 already exists in rules/catalogue/cuda-api.toml" in done.stderr
