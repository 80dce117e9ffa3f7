"""Shell scripts, SLURM batch scripts and Makefiles, line by line (also used for Dockerfile RUN/ENV
lines and notebook `!` escapes).

Rules: NL031 `docker run --gpus` / `--runtime=nvidia`, NL033 CUDA toolkit installs (apt/yum/dnf,
NVIDIA's package repository, the CUDA runfile), NL040 `CUDA_VISIBLE_DEVICES`, NL041 `NCCL_*`
variables, NL042 `nvidia-smi`, NL043 `torchrun --nproc-per-node gpu`, NL045 SLURM GPU
requests (`--gres=gpu`, `--gpus*`), the dependency rules for `pip install` / `conda install`
arguments, NL080 serving launchers.
"""

from __future__ import annotations

import re
from typing import Any

from neuronlint.filetypes import dependencies
from neuronlint.filetypes.common import dedupe, detection, strip_comment
from neuronlint.filetypes.images import image_detections

_CUDA_VISIBLE = re.compile(r"\bCUDA_VISIBLE_DEVICES\b")
# `CUDA_VISIBLE_DEVICES=` (empty, "" or -1) hides every GPU: a CPU-only run or build, which a Neuron
# host runs the same way (nothing is partitioned).
_HIDES_GPUS = re.compile(r"""\bCUDA_VISIBLE_DEVICES=(?:""|''|"-1"|'-1'|-1)?(?=[\s;&|)]|$)""")
_NCCL_VAR = re.compile(r"\b(?:TORCH_)?NCCL_[A-Z0-9_]+\b")
_NVIDIA_SMI = re.compile(r"(?<![\w-])nvidia-smi\b")
_DOCKER_GPUS = re.compile(r"(?<![\w-])(?:--gpus(?:[= ]\S+)?|--runtime[= ]nvidia\b)")
_TORCHRUN = re.compile(r"\b(?:torchrun|torch\.distributed\.(?:run|launch))\b")
_NPROC = re.compile(r"--nproc[-_]per[-_]node(?:=|\s+)[\"']?(gpu)\b")
_SLURM_GPU = re.compile(
    r"(?<![\w-])(?:--gres[= ]\S*gpu\S*|--gpus(?:-per-(?:node|task|socket))?[= ]\S+|-G\s*\d+)"
)
_SBATCH = re.compile(r"^\s*#\s*(?:SBATCH|PBS)\b")
_CUDA_TOOLKIT_PKG = re.compile(
    r"(?<![\w-])(?:cuda-toolkit(?:-[\d-]+)?|cuda-(?:compat|libraries|runtime|drivers|nvcc|cudart|command-line-tools)(?:-[\w.-]+)?|cuda(?:-\d+-\d+)?|libcudnn\d*(?:-[\w.-]+)?|libnccl\d*(?:-[\w.-]+)?|libcu(?:pti|blas|sparse|rand|fft|solver)[\w.-]*|libnvjitlink[\w.-]*|libnpp[\w.-]*|nvidia-container-toolkit|nvidia-driver-\d+|libnvinfer\w*|tensorrt)(?=[\s=]|$)"
)
_PKG_MANAGER = re.compile(r"\b(?:apt-get|apt|yum|dnf|microdnf|zypper)\s+(?:-\S+\s+)*install\b")
_NVIDIA_REPO = re.compile(
    r"developer\.download\.nvidia\.com/compute/(?:cuda|machine-learning)|cuda_\d+\.\d+[\w.]*_linux\.run"
)
# Image references a launcher pulls (`srun --container-image=...`, `docker run ...`, `IMAGE=...`):
# only registries that name CUDA or serving images unambiguously.
_IMAGE_REF = re.compile(
    r"(?<![\w./-])((?:nvcr\.io/nvidia|(?:docker\.io/)?nvidia/cuda|vllm/vllm-openai|ghcr\.io/huggingface/text-generation-inference|lmsysorg/sglang|pytorch/torchserve)[\w./:@-]*)"
)
_PIP_INSTALL = re.compile(r"\b(?:pip3?|uv\s+pip|python3?\s+-m\s+pip)\s+install\b")
_CONDA_INSTALL = re.compile(r"\b(?:conda|mamba|micromamba)\s+install\b")


def scan_shell(text: str, data: Any) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for number, raw, context in logical_lines(text.splitlines()):
        out += scan_command(raw, number, data, context)
    return dedupe(out)


def scan_makefile(text: str, data: Any) -> list[dict[str, Any]]:
    return scan_shell(text, data)  # recipes and variable assignments read the same way


def logical_lines(lines: list[str], comments_continue: bool = False) -> list[tuple[int, str, str]]:
    """(line number, the physical line, the command text of the lines it continues).

    Each physical line is scanned alone, so positions stay exact; the context makes an option on a
    `\\` continuation line still belong to the `torchrun` or `pip install` above it. In
    Dockerfiles (`comments_continue`) comment lines inside a continued instruction are skipped.
    """
    out = []
    context = ""
    for number, raw in enumerate(lines, start=1):
        out.append((number, raw, context))
        if comments_continue and raw.lstrip().startswith("#"):
            continue  # Dockerfile: comment lines inside a continued instruction are dropped
        body = strip_comment(raw).rstrip()
        context = (context + " " + body[:-1]) if body.endswith("\\") else ""
    return out


def scan_command(raw: str, number: int, data: Any, context: str = "") -> list[dict[str, Any]]:
    """Detections on one physical line of shell (with the text of the lines it continues)."""
    out: list[dict[str, Any]] = []
    if _SBATCH.match(raw):
        for match in _SLURM_GPU.finditer(raw):
            out.append(_at("NL045", number, match, raw, request=match.group(0)))
        return out
    line = strip_comment(raw)
    if not line.strip() or line.lstrip().startswith("#"):
        return out
    command = f"{context} {line}"
    for match in _CUDA_VISIBLE.finditer(line):
        if not _HIDES_GPUS.match(line, match.start()):
            out.append(_at("NL040", number, match, raw, variable="CUDA_VISIBLE_DEVICES"))
    for match in _NCCL_VAR.finditer(line):
        out.append(_at("NL041", number, match, raw, variable=match.group(0)))
    for match in _NVIDIA_SMI.finditer(line):
        out.append(_at("NL042", number, match, raw))
    if re.search(r"\b(?:docker|podman|nerdctl)\b", command):
        for match in _DOCKER_GPUS.finditer(line):
            out.append(_at("NL031", number, match, raw, flag=match.group(0)))
    if re.search(r"\b(?:srun|sbatch|salloc)\b", command):
        for match in _SLURM_GPU.finditer(line):
            out.append(_at("NL045", number, match, raw, request=match.group(0)))
    if _TORCHRUN.search(command):
        for match in _NPROC.finditer(line):
            out.append(_at("NL043", number, match, raw, value=match.group(1)))
    if _PKG_MANAGER.search(command):
        for match in _CUDA_TOOLKIT_PKG.finditer(line):
            if _PKG_MANAGER.search(line) and match.start() < _PKG_MANAGER.search(line).end():
                continue
            out.append(_at("NL033", number, match, raw, package=match.group(0)))
    for match in _NVIDIA_REPO.finditer(line):
        out.append(_at("NL033", number, match, raw, package=match.group(0)))
    pip = _PIP_INSTALL.search(command)
    conda = _CONDA_INSTALL.search(command)
    if pip or conda:
        start = 0
        own = (_PIP_INSTALL if pip else _CONDA_INSTALL).search(line)
        if own:
            start = own.end()
        out += _install_arguments(line, start, number, data, conda=bool(conda) and not pip)
    out += serving_commands(line, number, data)
    if "nvidia" in line or "/" in line:
        for match in _IMAGE_REF.finditer(line):
            image = match.group(1).rstrip(":")
            out += image_detections(image, number, match.start(1) + 1, raw, data)
    return out


def _install_arguments(line: str, start: int, number: int, data: Any, conda: bool) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    tokens = list(re.finditer(r"\S+", line[start:]))
    expect_url = False
    for token in tokens:
        word = token.group(0).strip("'\"")
        column = start + token.start() + 1
        if word in ("&&", "||", ";", "|") or word.startswith(("&&", ";")):
            break
        if expect_url:
            out += dependencies.check_index_url(word, number, column)
            expect_url = False
            continue
        if word in ("-i", "--index-url", "--extra-index-url", "-f", "--find-links", "-c", "--channel"):
            expect_url = word not in ("-c", "--channel")
            if word in ("-c", "--channel"):
                continue
            continue
        option = re.match(r"^(?:--index-url|--extra-index-url|--find-links)=(\S+)", word)
        if option:
            out += dependencies.check_index_url(option.group(1), number, column)
            continue
        if word.startswith("-") or word == "\\" or "$" in word:
            continue
        out += dependencies.check_requirement(word, number, column, data, conda=conda)
    return out


def serving_commands(line: str, number: int, data: Any) -> list[dict[str, Any]]:
    out = []
    for entry in getattr(data, "serving", ()) or ():
        for pattern in entry.get("commands", ()):
            match = re.search(r"(?<![\w./-])" + re.escape(pattern) + r"(?![\w-])", line)
            if match:
                out.append(
                    dependencies._serving_det(
                        entry, number, match.start() + 1, match.group(0), use=f"`{match.group(0)}` launcher"
                    )
                )
                out[-1]["snippet"] = line.strip()[:200]
                break
    return out


def _at(rule: str, number: int, match: re.Match[str], raw: str, **facts: Any) -> dict[str, Any]:
    det = detection(rule, number, match.start() + 1, match.end() + 1, raw, **facts)
    return det
