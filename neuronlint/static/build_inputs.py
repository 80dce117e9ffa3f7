"""Non-Python inputs that reveal CUDA coupling: .cu/.cuh sources, pyproject.toml and requirements files."""

from __future__ import annotations

import sys
from typing import Any

from neuronlint.static.data import library_facts
from neuronlint.static.engine import FileResult, _tool_detection
from neuronlint.static.registry import Emitter
from neuronlint.static.requirements import installs_on_linux, requirement_name


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
    rel_path: str, lines: list[str], requirements: list[tuple[str, str]], static_data: Any
) -> list[dict]:
    """One NL404 per CUDA-only entry, on the line that declares it. `requirements` holds
    (requirement, extra) pairs in file order; extra is "" for a required dependency."""
    out = []
    used: dict[str, set[int]] = {}  # the same string in two extras sits on two lines
    for requirement, extra in requirements:
        name = requirement_name(requirement)
        lib = static_data.library_packages.get(name) if name else None
        if lib is None or not installs_on_linux(requirement):
            continue
        taken = used.setdefault(requirement, set())
        found = _declaring_line(lines, requirement, taken)
        if found is None:
            continue
        line_no, column = found
        taken.add(line_no)
        facts = {
            "library": lib["name"],
            "package": requirement.split(";")[0].strip(),
            "optional": bool(extra),
        }
        if extra:
            facts["extra"] = extra
        out.append(
            _detection(
                "NL404",
                line_no,
                column,
                column + len(requirement),
                requirement,
                **{**library_facts(lib), **facts},
            )
        )
    return out


def _declaring_line(lines: list[str], requirement: str, used: set[int]) -> tuple[int, int] | None:
    """The first line not yet taken that holds the entry (quoted in TOML, alone in requirements)."""
    for index, line in enumerate(lines, start=1):
        if index in used:
            continue
        position = line.find(requirement)
        if position < 0:
            continue
        before = line[:position].rstrip()
        if before and before[-1] not in "\"'[,=" and not line.lstrip().startswith(requirement):
            continue
        after = line[position + len(requirement) :]
        rest = after.lstrip()
        if after[:1] not in ("", '"', "'") and rest and not rest.startswith(("#", "\\", "--")):
            continue  # a longer entry that starts the same (`pkg>=1 ; sys_platform == 'win32'`)
        return index, position + 1
    return None


def analyze_requirements(rel_path: str, data: bytes, static_data: Any) -> FileResult:
    text = data.decode("utf-8", "replace")
    lines = text.splitlines()
    requirements = [
        (line.split(" #")[0].strip(), "")
        for line in lines
        if line.strip() and not line.strip().startswith(("#", "-"))
    ]
    result = FileResult(path=rel_path, lines=len(lines), parsed=True)
    result.detections = _dependency_findings(rel_path, lines, requirements, static_data)
    return result


def _first_line(lines: list[str], requirement: str) -> int:
    return next((i for i, line in enumerate(lines) if requirement in line), len(lines))


def _pyproject_requirements(doc: dict[str, Any]) -> tuple[str | None, list[tuple[str, str]]]:
    """(problem with the document's shape or None, the requirement strings it declares)."""
    requirements: list[tuple[str, str]] = []
    build = doc.get("build-system", {})
    project = doc.get("project", {})
    if not isinstance(build, dict):
        return "key 'build-system': expected a table", requirements
    if not isinstance(project, dict):
        return "key 'project': expected a table", requirements
    lists = [
        ("build-system.requires", "", build.get("requires", [])),
        ("project.dependencies", "", project.get("dependencies", [])),
    ]
    extras = project.get("optional-dependencies", {})
    if not isinstance(extras, dict):
        return "key 'project.optional-dependencies': expected a table of arrays", requirements
    lists += [(f"project.optional-dependencies.{name}", name, value) for name, value in extras.items()]
    problem = None
    for key, extra, value in lists:
        if not isinstance(value, list):
            problem = problem or f"key '{key}': expected an array of strings"
            continue
        requirements += [(r, extra) for r in value if isinstance(r, str)]
    return problem, requirements


def analyze_pyproject(rel_path: str, data: bytes, static_data: Any) -> FileResult:
    text = data.decode("utf-8", "replace")
    lines = text.splitlines()
    result = FileResult(path=rel_path, lines=len(lines), parsed=True)
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        result.detections.append(
            _tool_detection("NL001", getattr(exc, "lineno", 1) or 1, f"invalid TOML: {exc}")
        )
        return result
    except RecursionError:
        result.detections.append(
            _tool_detection("NL001", 1, "invalid TOML: arrays or tables nest too deeply")
        )
        return result
    problem, requirements = _pyproject_requirements(doc)
    if problem:
        result.detections.append(_tool_detection("NL001", 1, f"malformed pyproject.toml: {problem}"))
    # Entries in file order, so that repeated strings map to successive lines.
    requirements.sort(key=lambda entry: _first_line(lines, entry[0]))
    result.detections += _dependency_findings(rel_path, lines, requirements, static_data)
    return result
