"""Real files of every non-Python kind, from public repositories, and the lines they must report.

Each case names a file by its git blob id in a local mirror of its repository
(`/work/.mirror/<owner>+<name>/repo`, or $NEURONLINT_MIRRORS); the blob is read with
`git cat-file`, written under its own path into a temporary directory and scanned there. Nothing
is committed here but the ids and the expected (line, rule) pairs, which were labelled by reading
the files (docs/file-types.md, /finding conventions). A case is skipped, with the reason, when its
mirror or blob is not available.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests import mirrors
from tests.conftest import scan_paths

# The rules of the file-type scanners, plus what a notebook's Python is labelled with below.
FILE_RULES = ("NL0", "NL404")


CASES = [
    # (repository, path, blob, {(line, rule)})
    (
        "EleutherAI/gpt-neox",
        "containers/docker/Dockerfile",
        "aa9a1cc6e899504b0e5602ab4ff0489470d95574",
        {(15, "NL030"), (32, "NL033")},  # FROM nvcr.io/nvidia/pytorch; apt-get install libcupti-dev
    ),
    (
        "EleutherAI/gpt-neox",
        "containers/docker/docker-compose-dockerhub.yml",
        "4ac5113f7779595555d9e2a09002253325b21435",
        {(4, "NL042"), (11, "NL031"), (16, "NL031")},  # command: nvidia-smi; runtime/driver: nvidia
    ),
    (
        "EleutherAI/gpt-neox",
        "configs/slurm_125M.yml",
        "2ac60e53417ddc23f9e369e063c720b37883a66a",
        {(24, "NL063"), (44, "NL064"), (53, "NL061")},  # zero_optimization, fp16.enabled, nccl
    ),
    (
        "EleutherAI/gpt-neox",
        "requirements/requirements.txt",
        "21906f0e2c889c511b5325fbc53f94afd633f0f2",
        {(1, "NL404")},  # deepspeed@git+...DeeperSpeed
    ),
    (
        "EleutherAI/gpt-neox",
        "requirements/requirements-transformerengine.txt",
        "3202ef4f2d88e0051d67c714033094ded13ae79f",
        {(1, "NL404"), (2, "NL404")},  # transformer-engine[pytorch], flash-attn
    ),
    (
        "NVIDIA/NeMo",
        "docker/Dockerfile.speech",
        "9fea05036868fc496d6609a79f11ee50f423ef22",
        {(17, "NL030"), (142, "NL404")},  # ARG BASE_IMAGE=nvcr.io/nvidia/pytorch; pip install flash-attn
    ),
    (
        "NVIDIA/NeMo",
        "examples/asr/slurm_example.sh",
        "827146465844f8c184b1657d84c242b87e775422",
        {(9, "NL045"), (34, "NL030")},  # #SBATCH --gpus-per-node=8; CONTAINER=nvcr.io/nvidia/nemo
    ),
    (
        "NVIDIA/NeMo",
        "examples/nlp/language_modeling/conf/megatron_gpt_export.yaml",
        "24d0c1548e69b973c4846a7479def920e8638a11",
        {(4, "NL060"), (24, "NL060")},  # trainer.accelerator: gpu; export_options.device: 'cuda'
    ),
    (
        "NVIDIA/NeMo",
        "examples/voice_agent/environment.yml",
        "6589bcb04ab71c9da8227cbd1d1d1a102614abdd",
        {(9, "NL052"), (59, "NL404"), (236, "NL404"), (298, "NL404"), (404, "NL404")}
        | {(n, "NL052") for n in [*range(224, 235), 239, 240, 241]},
    ),
    (
        "mosaicml/llm-foundry",
        "mcli/mcli-1b-eval.yaml",
        "8b228aa5795a81602de3913559e4b13a592925ef",
        {(12, "NL030"), (49, "NL064")},  # image ...:2.7.0_cu128-latest; precision: amp_fp16
    ),
    (
        "mosaicml/llm-foundry",
        "scripts/train/yamls/pretrain/mpt-125m.yaml",
        "644dfc26c107b1ce3f3eeb1ad3607fd3906ee477",
        set(),  # precision: amp_bf16, init_device: meta: nothing to report
    ),
]


@pytest.mark.parametrize("repo, path, blob, expected", CASES, ids=[f"{c[0]}:{c[1]}" for c in CASES])
def test_real_file_lines(tmp_path: Path, repo: str, path: str, blob: str, expected: set) -> None:
    target = tmp_path / path
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(mirrors.blob(repo, blob))
    result = scan_paths([tmp_path], cwd=tmp_path, select=["ALL"])
    assert result.files == [path]
    actual = {(f.line, f.rule) for f in result.active if f.rule.startswith(FILE_RULES)}
    assert not [f for f in result.findings if f.rule in ("NL001", "NL002")]
    assert actual == expected, f"missing {sorted(expected - actual)}, unexpected {sorted(actual - expected)}"


def test_real_notebook_cells_and_json_lines(tmp_path: Path) -> None:
    """meta-llama/llama-cookbook's PEFT quickstart: a CUDA query, bitsandbytes and `.to("cuda")`."""
    data = mirrors.blob("meta-llama/llama-cookbook", "79096fee3a7f4430fefd2b5dff7f79f5d0b6560e")
    target = tmp_path / "quickstart_peft_finetuning.ipynb"
    target.write_bytes(data)
    result = scan_paths([target], cwd=tmp_path, select=["ALL"])
    assert not [f for f in result.findings if f.rule in ("NL001", "NL002")]
    found = {
        (f.extra["cell"]["cell"], f.extra["cell"]["line"], f.category)
        for f in result.active
        if f.category in ("cuda-api", "cuda-only-lib")
    }
    # cell 6 line 14: torch.cuda.get_device_properties(0); line 20: BitsAndBytesConfig(;
    # cell 8 line 24: tokenizer(...).to("cuda")
    assert found == {(6, 14, "cuda-api"), (6, 20, "cuda-only-lib"), (8, 24, "cuda-api")}
    notebook = json.loads(data)
    lines = data.decode("utf-8").splitlines()
    for f in result.active:
        cell = notebook["cells"][f.extra["cell"]["cell"] - 1]
        source_line = "".join(cell["source"]).split("\n")[f.extra["cell"]["line"] - 1]
        assert json.loads(lines[f.line - 1].strip().rstrip(",")).rstrip("\n") == source_line


def test_one_scan_of_a_tree_of_real_files(tmp_path: Path) -> None:
    """The cases above as one repository: discovered together, each on its own lines, no parse errors."""
    expected: set[tuple[str, int, str]] = set()
    for repo, path, blob, lines in CASES:
        target = tmp_path / repo.replace("/", "+") / path
        target.parent.mkdir(parents=True, exist_ok=True)
        try:
            target.write_bytes(mirrors.blob(repo, blob))
        except pytest.skip.Exception:
            continue
        expected |= {(target.relative_to(tmp_path).as_posix(), line, rule) for line, rule in lines}
    if not expected:
        pytest.skip("no mirror of any case is available")
    result = scan_paths([tmp_path], cwd=tmp_path, select=["ALL"])
    actual = {(f.path, f.line, f.rule) for f in result.active if f.rule.startswith(FILE_RULES)}
    assert actual == expected
    assert not [f for f in result.findings if f.rule in ("NL001", "NL002", "NL004")]
