"""Which kind a file is (Python, notebook, Dockerfile, shell, requirements, YAML, ...), by its name.

Kinds are decided by the file name alone, so discovery costs nothing per file; a file whose name
says nothing (a YAML file that is not a config) is read and simply yields no detection. The
scanner of each kind is in neuronlint/filetypes/ (docs/file-types.md).
"""

from __future__ import annotations

import re

# kind -> what docs/file-types.md calls it
KINDS: dict[str, str] = {
    "python": "Python module",
    "cuda": "CUDA source",
    "notebook": "Jupyter notebook",
    "dockerfile": "Dockerfile / Containerfile",
    "shell": "shell script (also SLURM batch scripts)",
    "makefile": "Makefile",
    "requirements": "pip requirements file",
    "pyproject": "pyproject.toml",
    "setupcfg": "setup.cfg",
    "conda": "conda environment file",
    "yaml": "YAML (configuration, Kubernetes manifest, compose file)",
    "json": "JSON configuration",
    "toml": "TOML configuration",
}

_SHELL_SUFFIXES = (".sh", ".bash", ".zsh", ".slurm", ".sbatch")
_YAML_SUFFIXES = (".yaml", ".yml")
_REQUIREMENTS = re.compile(r"(?:requirements|constraints)[\w.+-]*\.(?:txt|in)")
_CONDA = re.compile(r"(?:environment|conda)[\w.+-]*\.ya?ml")
_DOCKERFILE = re.compile(
    r"(?:(?:Docker|Container)file(?:[.-][\w.-]+)?|[\w.-]+\.(?:[Dd]ocker|[Cc]ontainer)file)"
)


def kind_of(rel_path: str) -> str | None:
    """The kind of a file from its path (the last component, and its directory for requirements/)."""
    name = rel_path.rsplit("/", 1)[-1]
    if name.endswith(".py"):
        return "python"
    if name.endswith((".cu", ".cuh")):
        return "cuda"
    if name.endswith(".ipynb"):
        return "notebook"
    if _DOCKERFILE.fullmatch(name):
        return "dockerfile"
    if name.endswith(_SHELL_SUFFIXES):
        return "shell"
    if name in ("Makefile", "makefile", "GNUmakefile") or name.endswith(".mk"):
        return "makefile"
    if _REQUIREMENTS.fullmatch(name) or (
        "/requirements/" in f"/{rel_path}" and name.endswith((".txt", ".in"))
    ):
        return "requirements"
    if name == "pyproject.toml":
        return "pyproject"
    if name == "setup.cfg":
        return "setupcfg"
    if _CONDA.fullmatch(name):
        return "conda"
    if name.endswith(_YAML_SUFFIXES):
        return "yaml"
    if name.endswith(".json"):
        return "json"
    if name.endswith(".toml"):
        return "toml"
    return None


def kind_from_shebang(head: bytes) -> str | None:
    """For a file named explicitly without a telling name: `#!/usr/bin/env python3`, `#!/bin/bash`."""
    if not head.startswith(b"#!"):
        return None
    first = head.split(b"\n", 1)[0]
    if re.search(rb"\bpython[0-9.]*\b", first):
        return "python"
    if re.search(rb"\b(?:ba|z|k|da)?sh\b", first):
        return "shell"
    return None


def is_scannable(name: str) -> bool:
    """Whether discovery picks the file up inside a directory."""
    return kind_of(name) is not None
