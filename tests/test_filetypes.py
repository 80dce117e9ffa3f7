"""Files other than Python modules: kinds, each scanner's lines, notebooks' positions, unknown types.

The fixtures under fixtures/containers, fixtures/deps, fixtures/configs and fixtures/notebooks are
checked both ways by tests/test_fixtures.py (their `# expect:` annotations); this file covers what
annotations cannot: JSON (no comments), positions inside notebooks, output formats, named files of
unknown type, and the things that must never happen (a bogus Python syntax error, a traceback).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from neuronlint.cli import app
from neuronlint.filekinds import kind_from_shebang, kind_of
from neuronlint.filetypes.configs import scan_config
from neuronlint.filetypes.dependencies import scan_pyproject, scan_requirements
from neuronlint.filetypes.markers import installs_on_linux
from neuronlint.filetypes.notebook import NotebookError, parse_notebook
from neuronlint.filetypes.shell import scan_shell
from tests.conftest import FIXTURES, ROOT, scan_paths

runner = CliRunner()


def _run(args: list[str], cwd: Path):
    import os

    old = os.getcwd()
    os.chdir(cwd)
    try:
        return runner.invoke(app, args, catch_exceptions=False)
    finally:
        os.chdir(old)


@pytest.mark.parametrize(
    "path, kind",
    [
        ("train.py", "python"),
        ("kernels/add.cu", "cuda"),
        ("notebooks/Train.ipynb", "notebook"),
        ("Dockerfile", "dockerfile"),
        ("docker/Dockerfile.gpu", "dockerfile"),
        ("serve.Dockerfile", "dockerfile"),
        ("Containerfile", "dockerfile"),
        ("scripts/launch.sh", "shell"),
        ("jobs/pretrain.slurm", "shell"),
        ("jobs/pretrain.sbatch", "shell"),
        ("Makefile", "makefile"),
        ("build/rules.mk", "makefile"),
        ("requirements.txt", "requirements"),
        ("requirements-gpu.txt", "requirements"),
        ("requirements_dev.in", "requirements"),
        ("constraints.txt", "requirements"),
        ("requirements/cuda.txt", "requirements"),
        ("pyproject.toml", "pyproject"),
        ("setup.cfg", "setupcfg"),
        ("environment.yml", "conda"),
        ("environment-cuda.yaml", "conda"),
        ("configs/recipe.yaml", "yaml"),
        ("k8s/job.yml", "yaml"),
        ("ds_config.json", "json"),
        ("configs/train.toml", "toml"),
        ("README.md", None),
        ("notes.txt", None),
        ("data/train.csv", None),
        ("setup.py.orig", None),
    ],
)
def test_kind_of(path: str, kind: str | None) -> None:
    assert kind_of(path) == kind


def test_kind_from_shebang() -> None:
    assert kind_from_shebang(b"#!/usr/bin/env python3\nimport torch\n") == "python"
    assert kind_from_shebang(b"#!/bin/bash\nset -e\n") == "shell"
    assert kind_from_shebang(b"#!/usr/bin/env bash\n") == "shell"
    assert kind_from_shebang(b"plain text\n") is None


def test_markers_drop_only_what_cannot_install_on_linux() -> None:
    assert not installs_on_linux('sys_platform == "win32"')
    assert not installs_on_linux("platform_system == 'Darwin' and python_version >= '3.9'")
    assert not installs_on_linux("sys_platform == 'darwin' or os_name == 'nt'")
    assert installs_on_linux("sys_platform == 'darwin' or python_version >= '3.9'")
    assert installs_on_linux("platform_machine == 'x86_64'")
    assert installs_on_linux("platform_system != 'Windows'")
    assert installs_on_linux("((")  # malformed: assume it installs


# ---- dependencies --------------------------------------------------------------------------------
def test_requirements_lines_and_markers() -> None:
    text = (
        "--index-url https://download.pytorch.org/whl/cu121\n"
        "torch==2.1.0+cu121 --hash=sha256:abc\n"
        "https://download.pytorch.org/whl/cu118/torch-2.0.1%2Bcu118-cp310-cp310-linux_x86_64.whl\n"
        "nvidia-cudnn-cu12; sys_platform == 'win32'\n"
        "-r base.txt\n"
        "numpy\n"
    )
    found = [(d["rule"], d["line"], d["column"]) for d in scan_requirements(text, None)]
    assert found == [("NL051", 1, 13), ("NL050", 2, 1), ("NL050", 3, 1)]


def test_pyproject_pep621_groups_poetry_and_uv(tmp_path: Path) -> None:
    text = """\
[project]
name = "x"
dependencies = ["torch==2.4.0+cu124", "numpy"]

[dependency-groups]
gpu = ["nvidia-nccl-cu12"]

[tool.poetry.dependencies]
python = "^3.10"
cupy-cuda12x = "^13"

[[tool.uv.index]]
name = "pytorch-cu124"
url = "https://download.pytorch.org/whl/cu124"
"""
    found = [(d["rule"], d["line"]) for d in scan_pyproject(text, None)]
    assert sorted(found) == [("NL050", 3), ("NL050", 10), ("NL051", 14), ("NL052", 6)]


def test_pyproject_invalid_toml_is_one_parse_finding() -> None:
    found = scan_pyproject("[project\nname = 1\n", None)
    assert [d["rule"] for d in found] == ["NL001"]


# ---- shell ---------------------------------------------------------------------------------------
def test_shell_continuations_comments_and_words() -> None:
    text = """\
#!/bin/bash
# nvidia-smi and CUDA_VISIBLE_DEVICES in a comment are not findings
echo "run torchrun yourself"
torchrun \\
  --nnodes 1 \\
  --nproc-per-node gpu \\
  train.py
torchrun --nproc_per_node auto train.py
apt-get install -y \\
  cuda-toolkit-12-4
my-nvidia-smi-wrapper --help
"""
    found = [(d["rule"], d["line"]) for d in scan_shell(text, None)]
    assert found == [("NL043", 6), ("NL033", 10)]


# ---- configs -------------------------------------------------------------------------------------
def test_deepspeed_json_fixture_lines() -> None:
    path = FIXTURES / "configs" / "ds_zero2.json"
    result = scan_paths([path], cwd=ROOT, select=["ALL"])
    assert [(f.line, f.rule) for f in result.active] == [(4, "NL064"), (12, "NL063")]


def test_json_minified_and_disabled_fp16() -> None:
    text = '{"device": "cuda:0", "fp16": {"enabled": false}, "dist_backend": "gloo"}'
    assert [(d["rule"], d["line"], d["column"]) for d in scan_config(text, "json")] == [("NL060", 1, 2)]


def test_yaml_values_that_only_mention_cuda_are_not_settings() -> None:
    text = "description: runs on cuda\ndevice: cpu\nbackend: gloo\ntitle: 'device: cuda'\n"
    assert scan_config(text, "yaml") == []


def test_toml_config_keys() -> None:
    text = '[train]\ndevice = "cuda"\nmixed_precision = "fp16"\n'
    assert [(d["rule"], d["line"]) for d in scan_config(text, "toml")] == [("NL060", 2), ("NL064", 3)]


# ---- notebooks -----------------------------------------------------------------------------------
NOTEBOOK = FIXTURES / "notebooks" / "finetune.ipynb"


def test_notebook_lines_map_to_cells_and_json() -> None:
    text = NOTEBOOK.read_text(encoding="utf-8")
    source, mapping = parse_notebook(text)
    json_lines = text.splitlines()
    for number, line in enumerate(source.splitlines(), start=1):
        if line.strip() and line.strip() != "pass":
            cell, cell_line, json_line, column = mapping.locate(number)
            assert json.loads(json_lines[json_line - 1].strip().rstrip(","))[: len(line)] == line
            assert json_lines[json_line - 1][column - 1 :].startswith(line[:20].replace('"', '\\\\"')[:5])


def test_notebook_findings_in_text_github_and_sarif(tmp_path: Path) -> None:
    target = tmp_path / "train.ipynb"
    target.write_text(NOTEBOOK.read_text(encoding="utf-8"), encoding="utf-8")
    text = _run(["scan", "train.ipynb", "--exit-zero", "--no-cache"], tmp_path).output
    assert "cell 4:1:23" in text and "NL101" in text  # device = torch.device("cuda") in cell 4, line 1
    json_line = next(
        n for n, line in enumerate(target.read_text().splitlines(), 1) if 'torch.device(\\"cuda\\")' in line
    )
    github = _run(["scan", "train.ipynb", "--exit-zero", "--no-cache", "--format", "github"], tmp_path).output
    assert f"file=train.ipynb,line={json_line}," in github
    sarif = json.loads(
        _run(["scan", "train.ipynb", "--exit-zero", "--no-cache", "--format", "sarif"], tmp_path).output
    )
    lines = {
        r["locations"][0]["physicalLocation"]["region"]["startLine"]
        for r in sarif["runs"][0]["results"]
        if r["ruleId"] == "NL101"
    }
    assert json_line in lines


def test_notebook_text_shows_the_cell_line_with_carets_under_the_token(tmp_path: Path) -> None:
    # The per-file detail quotes the cell's own line, not the notebook JSON line that holds it
    # (escaped quotes, other columns), with the carets under the token.
    target = tmp_path / "train.ipynb"
    target.write_text(NOTEBOOK.read_text(encoding="utf-8"), encoding="utf-8")
    lines = _run(["scan", "train.ipynb", "--exit-zero", "--no-cache"], tmp_path).output.splitlines()
    [at] = [i for i, line in enumerate(lines) if line.strip().startswith("cell 4:1:23 ")]
    source, carets = next((lines[i], lines[i + 1]) for i in range(at + 1, at + 5) if "^" in lines[i + 1])
    assert source.strip().startswith('device = torch.device("cuda")')
    start = carets.index("^")
    assert source[start : start + len(carets.strip())] == '"cuda"'


def test_magics_are_skipped_and_lines_kept() -> None:
    nb = {
        "cells": [
            {
                "cell_type": "code",
                "metadata": {},
                "outputs": [],
                "source": ["%%writefile run.py\n", "x = (\n"],
            },
            {
                "cell_type": "code",
                "metadata": {},
                "outputs": [],
                "source": ["for f in files:\n", "    !wget {f}\n", "y = torch.ones(1).cuda()\n", "z?"],
            },
        ],
        "metadata": {},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    source, mapping = parse_notebook(json.dumps(nb, indent=1))
    lines = source.splitlines()
    assert lines[4] == "y = torch.ones(1).cuda()" and mapping.locate(5)[:2] == (2, 3)
    assert not mapping.bad_cells  # the %%writefile body is not Python; the `!wget` leaves a valid body


def test_a_python_body_cell_magic_blanks_the_shell_escapes_in_its_body(tmp_path: Path) -> None:
    # The install cell of many tutorials: `%%capture` keeps a Python body, whose `!pip install`
    # lines are IPython like any cell's (they were reported as a syntax error of the notebook).
    install = [
        "%%capture\n",
        "BRANCH = 'develop'\n",
        "!python -m pip install pkg@$BRANCH\n",
        "%pip install x\n",
    ]
    nb = {
        "cells": [
            {"cell_type": "code", "metadata": {}, "outputs": [], "source": install},
            {
                "cell_type": "code",
                "metadata": {},
                "outputs": [],
                "source": ["%%time\n", "y = torch.ones(1).cuda()\n"],
            },
        ],
        "metadata": {},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    source, mapping = parse_notebook(json.dumps(nb, indent=1))
    assert not mapping.bad_cells
    assert source.splitlines()[:5] == ["", "BRANCH = 'develop'", "pass", "pass", ""]
    (tmp_path / "install.ipynb").write_text(json.dumps(nb, indent=1))
    result = scan_paths([tmp_path / "install.ipynb"], cwd=tmp_path)
    assert [f.rule for f in result.active] == ["NL101"]


@pytest.mark.parametrize(
    "content, detail",
    [
        ("{not json", "invalid notebook JSON"),
        ('{"cells": 3}', "not a Jupyter notebook"),
        ("[]", "not a Jupyter notebook"),
        ('{"cells": [{"cell_type": "code", "source": [1, 2]}]}', "`source` is not text"),
        ('{"cells": [], "metadata": {"kernelspec": {"language": "R"}}}', "a R notebook"),
    ],
)
def test_malformed_notebook_is_one_finding(tmp_path: Path, content: str, detail: str) -> None:
    path = tmp_path / "broken.ipynb"
    path.write_text(content, encoding="utf-8")
    findings = scan_paths([path], cwd=tmp_path, select=["ALL"]).active
    assert [f.rule for f in findings] == ["NL001"] and detail in findings[0].message


def test_parse_notebook_raises_its_own_error() -> None:
    with pytest.raises(NotebookError):
        parse_notebook("{")


def test_notebooks_are_discovered_in_directories() -> None:
    result = scan_paths([FIXTURES / "notebooks"], cwd=ROOT, select=["ALL"])
    assert "fixtures/notebooks/finetune.ipynb" in result.files


# ---- unknown types, named files, no bogus syntax errors ------------------------------------------
def test_named_file_of_unknown_type_is_reported_not_parsed(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("model.cuda() is how we did it\n", encoding="utf-8")
    findings = scan_paths([tmp_path / "notes.txt"], cwd=tmp_path, select=["ALL"]).findings
    assert [(f.rule, f.severity.value) for f in findings] == [("NL004", "info")]
    result = _run(["scan", "notes.txt", "--no-cache"], tmp_path)
    assert result.exit_code == 0 and "not a supported file type" in result.output


def test_unknown_types_in_directories_are_skipped_silently(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("model.cuda()\n", encoding="utf-8")
    (tmp_path / "data.csv").write_text("a,b\n", encoding="utf-8")
    (tmp_path / "train.py").write_text("import torch\n", encoding="utf-8")
    result = scan_paths([tmp_path], cwd=tmp_path, select=["ALL"])
    assert result.files == ["train.py"] and result.findings == []


def test_named_script_with_shebang_is_read_by_its_shebang(tmp_path: Path) -> None:
    (tmp_path / "launch").write_text("#!/bin/bash\nexport CUDA_VISIBLE_DEVICES=0\n", encoding="utf-8")
    (tmp_path / "train").write_text("#!/usr/bin/env python3\nimport torch\nx = torch.ones(1).cuda()\n")
    findings = scan_paths([tmp_path / "launch", tmp_path / "train"], cwd=tmp_path, select=["ALL"]).active
    assert [(f.path, f.rule) for f in findings] == [("launch", "NL040"), ("train", "NL101")]


def test_no_file_kind_produces_a_python_syntax_error() -> None:
    result = scan_paths(
        [FIXTURES / "containers", FIXTURES / "deps", FIXTURES / "configs", FIXTURES / "notebooks"],
        cwd=ROOT,
        select=["ALL"],
    )
    assert len(result.files) >= 15
    assert not [f for f in result.findings if f.rule in ("NL001", "NL002")]


def test_suppression_comments_in_yaml_and_shell(tmp_path: Path) -> None:
    (tmp_path / "recipe.yaml").write_text(
        "device: cuda  # neuronlint: ignore[NL060] -- GPU recipe\n# neuronlint: ignore[NL061]\nbackend: nccl\n",
        encoding="utf-8",
    )
    (tmp_path / "run.sh").write_text("nvidia-smi  # neuronlint: ignore[NL042]\n", encoding="utf-8")
    result = scan_paths([tmp_path], cwd=tmp_path, select=["ALL"])
    assert result.active == [] and len(result.findings) == 3


def test_large_data_json_in_a_directory_is_skipped(tmp_path: Path) -> None:
    (tmp_path / "vocab.json").write_text('{"device": "cuda", "x": "' + "a" * (2 * 1024 * 1024) + '"}')
    assert scan_paths([tmp_path], cwd=tmp_path, select=["ALL"]).findings == []
    named = scan_paths([tmp_path / "vocab.json"], cwd=tmp_path, select=["ALL"]).active
    assert [f.rule for f in named] == ["NL060"]


def test_every_file_type_rule_is_declared_with_its_facts() -> None:
    """Every rule of rules/catalogue/{environment,config}.toml is the file-type scanners' own, and
    every placeholder of its message is a declared fact."""
    import string

    from neuronlint.filetypes.emitters import FileTypes
    from neuronlint.ruledb import load_ruledb

    db = load_ruledb()
    own = {r.id for r in db.rules.values() if r.category in ("environment", "config")} | {"NL004"}
    assert own == set(FileTypes.emits)
    for rule_id, facts in {**FileTypes.emits, **FileTypes.also_emits}.items():
        rule = db.rules[rule_id]
        used = {field for _, field, _, _ in string.Formatter().parse(rule.message) if field}
        assert used <= set(facts), (rule_id, used - set(facts))
