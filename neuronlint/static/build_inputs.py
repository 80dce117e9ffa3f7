"""Non-Python inputs that reveal CUDA coupling: .cu/.cuh sources, pyproject.toml and requirements files."""

from __future__ import annotations

import sys
from typing import Any

from neuronlint.static.data import library_facts
from neuronlint.static.engine import FileResult, _tool_detection
from neuronlint.static.registry import Emitter
from neuronlint.static.requirements import requirement_name

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


def _detection(
    rule: str, line: int, column: int, end_column: int, snippet: str, **facts: Any
) -> dict[str, Any]:
    return {
        "rule": rule,
        "line": line,
        "column": column,
        "end_line": line,
        "end_column": end_column,
        "facts": {"in_loop": False, **facts},
        "snippet": snippet,
    }


class BuildInputs(Emitter):
    """The non-Python inputs: CUDA sources (NL304), requirements files and pyproject.toml dependencies."""

    emits = {"NL304": ("lines", "kernels")}
    # Homes: the CUDA-only-library checker (setup.py) and the engine (files it cannot read).
    also_emits = {"NL404": ("library", "package", "alternative"), "NL001": ("detail",)}


def analyze_cuda_source(rel_path: str, data: bytes) -> FileResult:
    lines = data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)
    text = data.decode("utf-8", "replace")
    kernels = text.count("__global__")
    first = text.splitlines()[0] if text else ""
    result = FileResult(path=rel_path, lines=lines, parsed=True, defines_kernels=["cuda-source"])
    result.detections.append(
        _detection(
            "NL304",
            1,
            1,
            len(first) + 1,
            f"{rel_path} ({kernels} __global__ kernels)",
            lines=lines,
            kernels=kernels,
        )
    )
    return result


def _dependency_findings(
    rel_path: str, lines: list[str], requirements: list[str], static_data: Any
) -> list[dict]:
    out = []
    for requirement in requirements:
        name = requirement_name(requirement)
        lib = static_data.library_packages.get(name) if name else None
        if lib is None:
            continue
        line_no, column = 1, 1
        for index, line in enumerate(lines, start=1):
            position = line.find(requirement)
            if position >= 0:
                line_no, column = index, position + 1
                break
        out.append(
            _detection(
                "NL404",
                line_no,
                column,
                column + len(requirement),
                requirement,
                package=requirement,
                **library_facts(lib),
            )
        )
    return out


def analyze_requirements(rel_path: str, data: bytes, static_data: Any) -> FileResult:
    text = data.decode("utf-8", "replace")
    lines = text.splitlines()
    requirements = [
        line.split("#")[0].strip()
        for line in lines
        if line.strip() and not line.strip().startswith(("#", "-"))
    ]
    result = FileResult(path=rel_path, lines=len(lines), parsed=True)
    result.detections = _dependency_findings(rel_path, lines, requirements, static_data)
    return result


def analyze_pyproject(rel_path: str, data: bytes, static_data: Any) -> FileResult:
    text = data.decode("utf-8", "replace")
    lines = text.splitlines()
    result = FileResult(path=rel_path, lines=len(lines), parsed=True)
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        result.detections.append(
            _tool_detection("NL001", getattr(exc, "lineno", 1) or 1, f"invalid TOML: {exc}")
        )
        return result
    requirements: list[str] = list(doc.get("build-system", {}).get("requires", []))
    project = doc.get("project", {})
    requirements += list(project.get("dependencies", []))
    for extra in project.get("optional-dependencies", {}).values():
        requirements += list(extra)
    requirements = [r for r in requirements if isinstance(r, str)]
    result.detections = _dependency_findings(rel_path, lines, requirements, static_data)
    return result
