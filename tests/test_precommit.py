"""The pre-commit hook, exercised with the real pre-commit tool in temporary git repositories.

Offline: the hook under test is a `repo: local` copy of .pre-commit-hooks.yaml whose entry is the
neuronlint installed next to this interpreter (installing `language: python` hooks needs an index).
The manifest itself is checked with pre-commit's own validator.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.conftest import ROOT
from tests.reporting_support import git, init_repo

MANIFEST = ROOT / ".pre-commit-hooks.yaml"
BIN = Path(sys.executable).parent


def _pre_commit() -> str:
    found = BIN / "pre-commit"
    if found.is_file():
        return str(found)
    on_path = shutil.which("pre-commit")
    assert on_path, "pre-commit is a dev dependency: pip install -e '.[dev]'"
    return on_path


def _neuronlint_entry(entry: str) -> str:
    """The manifest's `neuronlint scan ...` entry, run by the neuronlint next to this interpreter."""
    script = BIN / "neuronlint"
    program = str(script) if script.is_file() else f"{sys.executable} -m neuronlint"
    return program + entry.removeprefix("neuronlint")


def _hooks() -> dict[str, dict]:
    return {hook["id"]: hook for hook in yaml.safe_load(MANIFEST.read_text(encoding="utf-8"))}


def _local_language() -> str:
    from pre_commit.all_languages import languages

    return "unsupported" if "unsupported" in languages else "system"  # 'system' was renamed in pre-commit 4.4


def _env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "PRE_COMMIT"))}
    env.update(
        {
            "PRE_COMMIT_HOME": str(tmp_path / "pre-commit-home"),
            "NO_COLOR": "1",
            "NEURONLINT_NO_CACHE": "1",
            "GIT_AUTHOR_NAME": "Test",
            "GIT_AUTHOR_EMAIL": "test@example.invalid",
            "GIT_COMMITTER_NAME": "Test",
            "GIT_COMMITTER_EMAIL": "test@example.invalid",
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_CONFIG_GLOBAL": os.devnull,
        }
    )
    import neuronlint

    env["PYTHONPATH"] = str(Path(neuronlint.__file__).resolve().parent.parent)
    return env


def _run(args: list[str], repo: Path, tmp_path: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        args, cwd=repo, capture_output=True, text=True, env=_env(tmp_path), timeout=300, check=False
    )


def _repo(tmp_path: Path, hook_ids: tuple[str, ...]) -> Path:
    """A git repository whose .pre-commit-config.yaml runs this checkout's hook definitions."""
    hooks = []
    for hook_id in hook_ids:
        hook = _hooks()[hook_id]
        local = dict(hook, entry=_neuronlint_entry(hook["entry"]), language=_local_language())
        local.pop("minimum_pre_commit_version", None)
        hooks.append(local)
    config = {"repos": [{"repo": "local", "hooks": hooks}]}
    repo = tmp_path / "repo"
    init_repo(
        repo,
        {
            ".pre-commit-config.yaml": yaml.safe_dump(config, sort_keys=False),
            "pyproject.toml": '[project]\nname = "demo"\n\n[tool.neuronlint]\nexclude = ["legacy"]\n',
            "README.md": "demo\n",
        },
    )
    return repo


@pytest.fixture
def hooked_repo(tmp_path: Path) -> Path:
    return _repo(tmp_path, ("neuronlint",))


@pytest.fixture
def fix_hooked_repo(tmp_path: Path) -> Path:
    return _repo(tmp_path, ("neuronlint-fix", "neuronlint"))


def test_manifest_is_valid_and_describes_the_hook() -> None:
    completed = subprocess.run(
        [_pre_commit(), "validate-manifest", str(MANIFEST)], capture_output=True, text=True, check=False
    )
    assert completed.returncode == 0, completed.stdout + completed.stderr
    hook = _hooks()["neuronlint"]
    assert hook["language"] == "python" and hook["types"] == ["file"]
    assert hook["id"] == "neuronlint" and hook["entry"] == "neuronlint scan --pre-commit"
    assert hook["require_serial"] is True and hook["pass_filenames"] is True
    fixer = _hooks()["neuronlint-fix"]
    assert list(_hooks()) == ["neuronlint", "neuronlint-fix"]
    assert (
        fixer["entry"] == "neuronlint fix"
        and fixer["language"] == "python"
        and fixer["types_or"] == ["python", "jupyter"]
    )


@pytest.mark.parametrize(
    "path",
    [
        "train.py",
        "csrc/add.cu",
        "nb/Train.ipynb",
        "Dockerfile",
        "docker/Dockerfile.gpu",
        "serve.Dockerfile",
        "Containerfile",
        "run.sh",
        "jobs/a.sbatch",
        "Makefile",
        "x.mk",
        "requirements.txt",
        "requirements-gpu.in",
        "constraints.txt",
        "requirements/cuda.txt",
        "pyproject.toml",
        "setup.cfg",
        "environment.yml",
        "conf/recipe.yaml",
        "ds.json",
        "conf/a.toml",
        "README.md",
        "notes.txt",
        "data.csv",
        "Dockerfile.md.txt",
        "setup.cfg.bak",
        "docs/requirements.md",
    ],
)
def test_hook_files_pattern_is_the_cli_discovery(path: str) -> None:
    import re

    from neuronlint.filekinds import kind_of

    hook = _hooks()["neuronlint"]
    assert bool(re.search(hook["files"], path)) == (kind_of(path) is not None)


def test_staged_dockerfile_and_notebook_are_checked(hooked_repo: Path, tmp_path: Path) -> None:
    (hooked_repo / "Dockerfile").write_text("FROM nvidia/cuda:12.4.1-runtime-ubuntu22.04\n", encoding="utf-8")
    notebook = {
        "cells": [
            {"cell_type": "code", "metadata": {}, "outputs": [], "source": ["x = torch.ones(1).cuda()"]}
        ],
        "metadata": {},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    import json

    (hooked_repo / "explore.ipynb").write_text(json.dumps(notebook, indent=1), encoding="utf-8")
    (hooked_repo / "notes.txt").write_text("model.cuda()\n", encoding="utf-8")
    git(hooked_repo, "add", "Dockerfile", "explore.ipynb", "notes.txt")
    completed = _run([_pre_commit(), "run"], hooked_repo, tmp_path)
    assert completed.returncode == 1, completed.stdout + completed.stderr
    assert "NL030" in completed.stdout and "NL101" in completed.stdout and "cell 1:1:" in completed.stdout
    assert "notes.txt" not in completed.stdout  # not a supported type: pre-commit never passes it


def test_hook_checks_requirements_and_fails_on_blockers_only(hooked_repo: Path, tmp_path: Path) -> None:
    (hooked_repo / "requirements.txt").write_text("flash-attn>=2.5\n", encoding="utf-8")
    (hooked_repo / "loop.py").write_text(
        "import torch\n\n\ndef train(model, batches):\n"
        "    for x in batches:\n        loss = model(x).sum()\n        print(loss.item())\n",
        encoding="utf-8",
    )
    git(hooked_repo, "add", "requirements.txt", "loop.py")
    completed = _run([_pre_commit(), "run", "--verbose"], hooked_repo, tmp_path)
    out = completed.stdout + completed.stderr
    assert completed.returncode == 0, out  # two warnings (NL404, NL701): shown, not blocking
    assert "requirements.txt" in out and "NL404" in out and "NL701" in out  # the hook saw both files
    assert "Findings by category" not in out and "Scanned" not in out  # findings only
    (hooked_repo / "pyproject.toml").write_text(
        '[project]\nname = "demo"\n\n[tool.neuronlint]\nfail-on = "warning"\n', encoding="utf-8"
    )
    git(hooked_repo, "add", "pyproject.toml")
    configured = _run([_pre_commit(), "run"], hooked_repo, tmp_path)
    assert configured.returncode == 1, configured.stdout  # the project's fail-on is honoured


def test_staged_blocker_fails_the_hook_with_the_finding(hooked_repo: Path, tmp_path: Path) -> None:
    (hooked_repo / "train.py").write_text(
        "import torch\n\nmodel = torch.nn.Linear(4, 4).cuda()\n", encoding="utf-8"
    )
    git(hooked_repo, "add", "train.py")
    completed = _run([_pre_commit(), "run"], hooked_repo, tmp_path)
    assert completed.returncode == 1, completed.stdout + completed.stderr
    assert "Failed" in completed.stdout
    assert "NL101" in completed.stdout and "train.py" in completed.stdout and "3:" in completed.stdout


def test_clean_staged_file_passes(hooked_repo: Path, tmp_path: Path) -> None:
    (hooked_repo / "util.py").write_text("def add(a, b):\n    return a + b\n", encoding="utf-8")
    git(hooked_repo, "add", "util.py")
    completed = _run([_pre_commit(), "run"], hooked_repo, tmp_path)
    assert completed.returncode == 0, completed.stdout + completed.stderr
    assert "Passed" in completed.stdout


def test_nothing_staged_passes(hooked_repo: Path, tmp_path: Path) -> None:
    completed = _run([_pre_commit(), "run"], hooked_repo, tmp_path)
    assert completed.returncode == 0, completed.stdout + completed.stderr
    assert "no files to check" in completed.stdout.lower()


def test_config_exclude_holds_for_file_names_pre_commit_passes(hooked_repo: Path, tmp_path: Path) -> None:
    legacy = hooked_repo / "legacy" / "old_train.py"
    legacy.parent.mkdir()
    legacy.write_text("import torch\nx = torch.ones(1).cuda()\n", encoding="utf-8")
    git(hooked_repo, "add", "legacy/old_train.py")
    completed = _run([_pre_commit(), "run"], hooked_repo, tmp_path)
    assert completed.returncode == 0, completed.stdout + completed.stderr
    assert "Passed" in completed.stdout  # the hook ran on the file and the config's exclude applied


def test_installed_hook_blocks_a_commit_that_adds_cuda(hooked_repo: Path, tmp_path: Path) -> None:
    installed = _run([_pre_commit(), "install"], hooked_repo, tmp_path)
    assert installed.returncode == 0, installed.stdout + installed.stderr
    (hooked_repo / "model.py").write_text(
        "import torch\n\n\ndef place(m):\n    return m.cuda()\n", encoding="utf-8"
    )
    git(hooked_repo, "add", "model.py")
    blocked = _run(["git", "commit", "-m", "add model"], hooked_repo, tmp_path)
    assert blocked.returncode != 0
    assert "NL101" in blocked.stdout + blocked.stderr
    assert git(hooked_repo, "log", "--oneline").count("\n") == 1  # still only the initial commit
    (hooked_repo / "model.py").write_text(
        "import torch\n\n\ndef place(m, device):\n    return m.to(device)\n", encoding="utf-8"
    )
    git(hooked_repo, "add", "model.py")
    allowed = _run(["git", "commit", "-m", "add model"], hooked_repo, tmp_path)
    assert allowed.returncode == 0, allowed.stdout + allowed.stderr
    assert git(hooked_repo, "log", "--oneline").count("\n") == 2


def test_fix_hook_rewrites_the_staged_file_and_fails_until_it_is_staged(
    fix_hooked_repo: Path, tmp_path: Path
) -> None:
    train = fix_hooked_repo / "train.py"
    train.write_text(
        "import torch\n\n\ndef step(model, x):\n    torch.cuda.synchronize()\n    return model.cuda()(x)\n",
        encoding="utf-8",
    )
    untouched = fix_hooked_repo / "other.py"
    untouched.write_text("import torch\nx = torch.ones(1).cuda()\n", encoding="utf-8")  # not staged
    git(fix_hooked_repo, "add", "train.py")
    first = _run([_pre_commit(), "run"], fix_hooked_repo, tmp_path)
    assert first.returncode == 1, first.stdout + first.stderr
    assert "files were modified by this hook" in first.stdout
    fixed = train.read_text(encoding="utf-8")
    assert "torch.accelerator.synchronize()" in fixed and "model.to(DEVICE)(x)" in fixed
    assert ".cuda()" in untouched.read_text(encoding="utf-8")
    git(fix_hooked_repo, "add", "train.py")
    second = _run([_pre_commit(), "run"], fix_hooked_repo, tmp_path)
    assert second.returncode == 0, second.stdout + second.stderr
    assert second.stdout.count("Passed") == 2
