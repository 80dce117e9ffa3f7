"""Triage on real repositories: scopes, root causes, first-party detection, dependency rules, and a
repository whose notebooks, Dockerfile and YAML recipes are reported on the right lines.

Every repository is read from its local mirror (`/work/.mirror/<owner>+<name>/repo`) at a pinned
commit in the test's setup, exported into a temporary directory and scanned there; nothing of it is
committed. A test is skipped, with the reason, when the mirror or the commit is not available.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from neuronlint.filters import first_party
from neuronlint.scope import ScopeRules
from tests import mirrors
from tests.conftest import scan_paths

PEFT = ("huggingface/peft", "5d602fdbff04c33c1c4de55cda9d4ae1d7cb7e40")
AO = ("pytorch/ao", "36027d82d1ad9949597ea16002ff4940374b1b94")
FOUNDRY = ("mosaicml/llm-foundry", "8c8dd48f72168c5d51e2f7b151595892a8fba43d")
TRL = ("huggingface/trl", "f2cd57710ae345ea6428ae95363267fcf38a3dc8")
CONV1D = ("Dao-AILab/causal-conv1d", "0d2252d")


# ---- scopes --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "repo, commit, expected",
    [
        (
            *PEFT,
            {
                "tests/": "test",
                "tests/testing_utils.py": "test",
                "examples/": "example",
                "docs/": "docs",
                "src/peft/": "source",
                "method_comparison/": "source",
            },
        ),
        (
            *AO,
            {
                "test/": "test",
                "benchmarks/": "benchmark",
                "torchao/testing/": "test",
                "torchao/prototype/float8nocompile/kernels/fp8_dynamic_tensorwise_test.py": "test",
                "torchao/quantization/": "source",
                "docs/": "docs",
            },
        ),
    ],
)
def test_scopes_on_real_layouts(repo: str, commit: str, expected: dict[str, str]):
    files = [p for p in mirrors.names(repo, commit) if p.endswith(".py")]
    rules = ScopeRules()
    for prefix, scope in expected.items():
        chosen = [p for p in files if p == prefix or (prefix.endswith("/") and p.startswith(prefix))]
        assert chosen, prefix
        wrong = [p for p in chosen if rules.classify(p) != scope]
        # Inside docs/ and examples/, a test file is still a test; inside tests/, nothing else.
        wrong = [p for p in wrong if not (scope != "test" and rules.classify(p) == "test")]
        assert not wrong, (prefix, wrong[:5])


# ---- root causes ---------------------------------------------------------------------------------


def test_one_library_root_cause_across_files_of_llm_foundry(tmp_path: Path):
    paths = ["llmfoundry/models/layers/attention.py", "llmfoundry/models/mpt/modeling_mpt.py"]
    mirrors.export(*FOUNDRY, paths, tmp_path)
    result = scan_paths([tmp_path], cwd=tmp_path, triage=True)
    from neuronlint.groups import build_groups

    causes = build_groups(result.findings, result.db, result.context)
    flash = [c for c in causes if c.kind == "library" and c.subject == "flash_attn"]
    assert len(flash) == 1
    [cause] = flash
    assert set(cause.files) == set(paths)
    assert {f.rule for f in cause.findings} >= {"NL401", "NL402"}
    assert all(f.group == cause.id for f in cause.findings)
    # every finding belongs to exactly one root cause
    assert sum(c.count for c in causes) == len(result.active)


# ---- first party ---------------------------------------------------------------------------------


def test_scanning_a_cuda_only_library_itself(tmp_path: Path):
    """causal-conv1d is a CUDA-only library in rules/libraries.toml; scanned as the project, its own
    imports are the code being ported (its kernels are reported where they are defined)."""
    root = mirrors.export(
        *CONV1D,
        ["causal_conv1d", "tests/test_causal_conv1d.py", "setup.py", "pyproject.toml", "csrc"],
        tmp_path / "repo",
    )
    assert "causal_conv1d" in first_party.project_names([root])
    result = scan_paths([root], cwd=root, triage=True)
    libs = [
        f for f in result.active if f.rule in ("NL401", "NL402") and f.facts.get("library") == "causal_conv1d"
    ]
    assert libs == []
    assert any(f.rule == "NL304" for f in result.active)  # the .cu kernels themselves
    # One root cause for the compiled extension: its import and every use of its functions.
    from neuronlint.groups import build_groups

    causes = build_groups(result.findings, result.db, result.context)
    extension = [c for c in causes if c.kind == "extension" and c.subject.startswith("causal_conv1d_cuda")]
    assert [c.subject for c in extension] == ["causal_conv1d_cuda"]
    assert extension[0].count >= 4  # import + fwd, bwd, update
    # A consumer of the library keeps the finding.
    consumer = tmp_path / "consumer"
    consumer.mkdir()
    (consumer / "model.py").write_text(
        "from causal_conv1d import causal_conv1d_fn\n\ny = causal_conv1d_fn(x, w)\n", encoding="utf-8"
    )
    found = scan_paths([consumer], cwd=consumer, triage=True)
    assert {f.rule for f in found.active if f.facts.get("library") == "causal_conv1d"} >= {"NL401"}


# ---- dependencies --------------------------------------------------------------------------------


def test_dependency_entries_of_llm_foundry_setup_py(tmp_path: Path):
    root = mirrors.export(*FOUNDRY, ["setup.py"], tmp_path)
    result = scan_paths([root], cwd=root, triage=True)
    deps = [f for f in result.active if f.rule == "NL404"]
    lines = (root / "setup.py").read_text(encoding="utf-8").splitlines()
    assert deps
    seen = set()
    for f in deps:
        key = (f.line, f.facts.get("library"))
        assert key not in seen, f"duplicate dependency finding {key}"
        seen.add(key)
        package = str(f.facts.get("package") or f.facts.get("library")).replace("_", "-")
        assert package.split("[")[0].lower() in lines[f.line - 1].lower().replace("_", "-"), (f.line, package)
        # every CUDA-only entry of this setup.py is an optional extra: info, no "make it optional"
        assert f.facts.get("optional") and f.severity.value == "info", (f.line, f.message)
        assert "optional extra that" not in f.message


def test_dependency_markers_in_trl_pyproject(tmp_path: Path):
    root = mirrors.export(*TRL, ["pyproject.toml"], tmp_path)
    text = (root / "pyproject.toml").read_text(encoding="utf-8").splitlines()
    result = scan_paths([root], cwd=root, triage=True)
    for f in result.active:
        if f.rule == "NL404":
            line = text[f.line - 1]
            assert "darwin" not in line and "win32" not in line, line


# ---- notebooks, Dockerfile, YAML: a real repository on the right lines ---------------------------

PEFT_FILES = [
    "docker/peft-gpu/Dockerfile",
    "docker/peft-cpu/Dockerfile",
    "examples/sft/configs/deepspeed_config.yaml",
    "examples/sft/configs/fsdp_config.yaml",
    "examples/evaluation/lora-lm-eval.ipynb",
]


def test_peft_notebooks_dockerfiles_and_yaml_recipes(tmp_path: Path):
    root = mirrors.export(*PEFT, PEFT_FILES, tmp_path)
    result = scan_paths([root], cwd=root, triage=True, show_ok=True)
    assert not [f for f in result.findings if f.rule in ("NL001", "NL002", "NL004")]
    found = {(f.path, f.line, f.rule) for f in result.active}
    expected = {
        ("docker/peft-gpu/Dockerfile", 29, "NL030"),  # FROM nvidia/cuda:13.2.1-cudnn-devel-ubuntu24.04
        ("docker/peft-gpu/Dockerfile", 42, "NL404"),  # pip install ... bitsandbytes
        ("docker/peft-gpu/Dockerfile", 75, "NL050"),  # aqlm[gpu]
        ("docker/peft-gpu/Dockerfile", 78, "NL404"),  # deepspeed
        ("docker/peft-gpu/Dockerfile", 80, "NL051"),  # --index-url https://download.pytorch.org/whl/cu132
        ("examples/sft/configs/deepspeed_config.yaml", 3, "NL063"),  # deepspeed_config:
        ("examples/sft/configs/deepspeed_config.yaml", 11, "NL062"),  # distributed_type: DEEPSPEED
    }
    assert expected <= found, sorted(expected - found)
    for path, line, _rule in expected:
        assert (root / path).read_text(encoding="utf-8").splitlines()[line - 1].strip()
    # The notebook's `... if hasattr(torch, "accelerator") else "cuda"`: cell 4, line 5, a fallback
    # that TorchNeuron never takes (info), located by cell and by the notebook's JSON line.
    [cell] = [f for f in result.active if f.path.endswith(".ipynb") and f.rule == "NL101"]
    assert cell.extra["cell"] == {"cell": 4, "line": 5, "column": 93}
    assert cell.severity.value == "info" and cell.capped_from.value == "blocker"
    json_line = (
        (root / "examples/evaluation/lora-lm-eval.ipynb")
        .read_text(encoding="utf-8")
        .splitlines()[cell.line - 1]
    )
    assert 'hasattr(torch, \\"accelerator\\") else \\"cuda\\"' in json_line
    # The CPU image has nothing to port.
    assert not [
        f for f in result.active if f.path == "docker/peft-cpu/Dockerfile" and f.severity.value == "blocker"
    ]


# ---- optional paths of CUDA-only libraries -------------------------------------------------------


@pytest.mark.parametrize(
    "repo, commit, path, line",
    [
        # `if bnb is not None:` (bnb is None when bitsandbytes is missing)
        (*PEFT, "src/peft/helpers.py", 449),
        # `te.onnx_export(True) if is_te_imported and ... else contextlib.nullcontext()`
        (*FOUNDRY, "llmfoundry/callbacks/hf_checkpointer.py", 862),
    ],
)
def test_calls_on_optional_paths_of_a_library_do_not_block(tmp_path: Path, repo, commit, path, line):
    root = mirrors.export(repo, commit, [path], tmp_path)
    result = scan_paths([root], cwd=root, triage=True)
    [call] = [f for f in result.active if f.line == line and f.rule == "NL402"]
    assert call.severity.value == "warning" and call.facts["guarded"]


# ---- root causes name a notebook's cell, as the per-file detail does ------------------------------

PEFT_NOTEBOOKS = [
    "examples/int8_training/peft_bnb_whisper_large_v2_training.ipynb",
    "examples/hra_dreambooth/dreambooth_inference.ipynb",
]


def test_root_causes_locate_notebook_findings_by_cell(tmp_path: Path, monkeypatch):
    import re

    from typer.testing import CliRunner

    from neuronlint.cli import app

    root = mirrors.export(*PEFT, PEFT_NOTEBOOKS, tmp_path)
    # A training loop whose `if loss.item() > 10:` is one construct of two categories (the peft
    # notebooks' only such line sits in a data collator, which is host code).
    loop = [
        "for batch in loader:\n",
        "    loss = model(batch).mean()\n",
        "    if loss.item() > 10:\n",
        "        break\n",
    ]
    cells = [
        {"cell_type": "markdown", "metadata": {}, "source": ["# Training\n"]},
        {
            "cell_type": "code",
            "execution_count": None,
            "metadata": {},
            "outputs": [],
            "source": ["import torch\n"],
        },
        {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [], "source": loop},
    ]
    notebook = {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    (root / "train.ipynb").write_text(json.dumps(notebook), encoding="utf-8")
    monkeypatch.chdir(root)
    output = CliRunner().invoke(app, ["scan", "--exit-zero", "--no-cache"], catch_exceptions=False).output
    causes, _, detail = output.partition("\n\n")
    # The per-file detail: each file's header, then `cell N:line:column` of each finding.
    shown, path = set(), None
    for line in detail.splitlines():
        if line.endswith(".ipynb"):
            path = line
        elif match := re.match(r"  cell (\d+):(\d+):\d+ ", line):
            shown.add(f"{path}:cell {match[1]}:{match[2]}")
    where = [
        place
        for line in causes.splitlines()
        if line.strip().startswith("where:")
        for place in re.sub(r" \(\+[\d,]+ more\)$", "", line.split("where:", 1)[1]).strip().split(", ")
    ]
    assert len(where) >= 8 and shown
    assert set(where) <= shown, sorted(set(where) - shown)  # never the notebook's JSON line
    # One construct's group (NL603 and NL701 on one line) is named by its cell in its headline too.
    [construct] = [line for line in causes.splitlines() if "on one construct" in line]
    assert "train.ipynb:cell 3:3: NL603, NL701 on one construct" in construct
