"""Dependencies wherever they are declared: requirements files, pyproject.toml (PEP 621, PEP 735
groups, Poetry, uv indexes), setup.cfg and conda environment files, and `pip install` commands.

Rules: NL404 (a CUDA-only library, rules/libraries.toml), NL050 (a CUDA build of a package:
`+cu124`, `[cuda12]` extras, `-gpu` packages, conda `*cuda*` builds), NL051 (a CUDA wheel index),
NL052 (the CUDA runtime itself: pytorch-cuda, cudatoolkit, nvidia-*-cu12), NL080 (a serving tool,
rules/serving.toml). An entry whose environment marker excludes Linux never installs on a Neuron
host and is not reported.
"""

from __future__ import annotations

import re
import sys
from typing import Any

from neuronlint.filetypes.common import dedupe, detection, strip_comment
from neuronlint.filetypes.markers import installs_on_linux
from neuronlint.static.data import library_facts

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

_REQUIREMENT = re.compile(
    r"""^\s*(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[(?P<extras>[^\]]*)\])?\s*(?P<rest>[^;]*)(?:;(?P<marker>.*))?$"""
)
CUDA_INDEX = re.compile(
    r"(?:/whl/(?:nightly/|test/)?cu\d{2,3}\b|\+cu\d{2,3}\b|%2[Bb]cu\d{2,3}\b|pypi\.(?:ngc\.)?nvidia\.com)"
)
_CUDA_LOCAL_VERSION = re.compile(r"(?:\+|%2[Bb])cu\d{2,3}\b")
_CUDA_RUNTIME = re.compile(
    r"^(?:pytorch-cuda|cudatoolkit(?:-dev)?|cuda|cuda-(?:toolkit|runtime|nvcc|cudart|python|bindings|libraries|compiler|version|nvrtc|cccl)(?:-dev)?|cudnn|nccl|nvidia-[a-z0-9-]+-cu\d+|nvidia-cuda-[a-z0-9-]+)$"
)
_GPU_BUILD = re.compile(r"^(?:[a-z0-9-]+-gpu|mxnet-cu\d+|cupy-cuda\d+x?)$")
_CONDA_SPEC = re.compile(
    r"^\s*(?:(?P<channel>[\w.-]+)::)?(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)\s*(?P<rest>.*)$"
)


def normalise(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def check_requirement(
    text: str, line: int, column: int, data: Any, conda: bool = False
) -> list[dict[str, Any]]:
    """Detections for one requirement string found at (line, column)."""
    text = text.strip()
    if not text:
        return []
    if text.startswith(("http://", "https://", "file:", "git+")) or text.endswith(".whl"):
        if _CUDA_LOCAL_VERSION.search(text) or CUDA_INDEX.search(text):
            return [_det("NL050", line, column, text, package=text, build="CUDA wheel URL")]
        return []
    if conda:
        match = _CONDA_SPEC.match(text)
        if match is None:
            return []
        name, rest, extras, marker = match.group("name"), match.group("rest"), "", ""
    else:
        match = _REQUIREMENT.match(text)
        if match is None:
            return []
        name, rest = match.group("name"), match.group("rest") or ""
        extras, marker = match.group("extras") or "", match.group("marker") or ""
    if marker and not installs_on_linux(marker):
        return []
    key = normalise(name)
    out: list[dict[str, Any]] = []
    lib = data.library_packages.get(key) if data is not None else None
    serving = _serving_package(data, key)
    if serving is not None:
        out.append(_serving_det(serving, line, column, text, use=f"dependency `{text}`"))
    elif lib is not None:
        out.append(_det("NL404", line, column, text, package=text, **library_facts(lib)))
    if _CUDA_RUNTIME.match(key):
        out.append(_det("NL052", line, column, text, package=text))
    elif _CUDA_LOCAL_VERSION.search(rest) or (conda and re.search(r"cuda", rest, re.I)):
        out.append(_det("NL050", line, column, text, package=text, build="CUDA build"))
    elif extras and re.search(r"\bcuda|\bgpu\b", extras, re.I):
        out.append(_det("NL050", line, column, text, package=text, build=f"extra [{extras}]"))
    elif _GPU_BUILD.match(key) and lib is None:
        out.append(_det("NL050", line, column, text, package=text, build="GPU build"))
    elif " @ " in f" {rest}" and CUDA_INDEX.search(rest):
        out.append(_det("NL050", line, column, text, package=text, build="CUDA wheel URL"))
    return out


def check_index_url(url: str, line: int, column: int) -> list[dict[str, Any]]:
    if CUDA_INDEX.search(url):
        return [_det("NL051", line, column, url, url=url)]
    return []


def _det(rule: str, line: int, column: int, text: str, **facts: Any) -> dict[str, Any]:
    return detection(rule, line, column, column + len(text), text, **facts)


def _serving_package(data: Any, key: str) -> dict[str, Any] | None:
    for entry in getattr(data, "serving", ()) or ():
        if key in entry.get("packages", ()):
            return entry
    return None


def _serving_det(entry: dict[str, Any], line: int, column: int, text: str, use: str) -> dict[str, Any]:
    return detection(
        "NL080",
        line,
        column,
        column + len(text),
        text,
        tool=entry["title"],
        serving=entry["name"],
        use=use,
        neuron_status=entry["status"],
        verdict=entry["verdict"],
        gpu_only=bool(entry.get("gpu_only", False)),
    )


# ---- requirements files --------------------------------------------------------------------------
_OPTION_WITH_URL = re.compile(r"^(?:-i|--index-url|--extra-index-url|-f|--find-links)(?:\s*=\s*|\s+)(\S+)")


def scan_requirements(text: str, data: Any) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for number, raw in enumerate(text.splitlines(), start=1):
        line = strip_comment(raw).rstrip().removesuffix("\\").rstrip()
        stripped = line.lstrip()
        if not stripped:
            continue
        column = len(line) - len(stripped) + 1
        option = _OPTION_WITH_URL.match(stripped)
        if option:
            out += check_index_url(option.group(1), number, column + option.start(1))
            continue
        if stripped.startswith("-e ") or stripped.startswith("--editable"):
            target = stripped.split(None, 1)[-1]
            out += check_requirement(target, number, column + stripped.find(target), data)
            continue
        if stripped.startswith("-"):
            continue  # -r, -c, --hash, --pre, ...
        requirement = re.split(r"\s+--", stripped, maxsplit=1)[0]  # drop per-line options (--hash=...)
        out += check_requirement(requirement, number, column, data)
    return dedupe(out)


# ---- pyproject.toml ------------------------------------------------------------------------------
def _locate(lines: list[str], needle: str, start: int = 0) -> tuple[int, int]:
    for quote in ('"', "'"):
        quoted = f"{quote}{needle}{quote}"
        for index in range(start, len(lines)):
            position = lines[index].find(quoted)
            if position >= 0:
                return index + 1, position + 2
    for index in range(start, len(lines)):
        position = lines[index].find(needle)
        if position >= 0:
            return index + 1, position + 1
    return 1, 1


def _locate_untaken(lines: list[str], needle: str, taken: set[int]) -> tuple[int, int]:
    """The first quoted occurrence of an entry on a line not yet given to an equal entry."""
    quoted = [f'"{needle}"', f"'{needle}'"]
    for index, line in enumerate(lines):
        if index + 1 in taken:
            continue
        for text in quoted:
            position = line.find(text)
            if position >= 0:
                taken.add(index + 1)
                return index + 1, position + 2
    return _locate(lines, needle)


def _section_line(lines: list[str], header: str) -> int:
    pattern = re.compile(r"^\s*\[\s*" + re.escape(header).replace(r"\.", r"\s*\.\s*") + r"\s*\]")
    for index, line in enumerate(lines):
        if pattern.match(line):
            return index
    return 0


def _key_line(lines: list[str], key: str, start: int) -> tuple[int, int]:
    pattern = re.compile(r"""^\s*["']?""" + re.escape(key) + r"""["']?\s*=""")
    for index in range(start + 1, len(lines)):
        if lines[index].lstrip().startswith("["):
            break
        if pattern.match(lines[index]):
            return index + 1, len(lines[index]) - len(lines[index].lstrip()) + 1
    return start + 1, 1


def scan_pyproject(text: str, data: Any) -> list[dict[str, Any]]:
    lines = text.splitlines()
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        return [
            {
                "rule": "NL001",
                "line": getattr(exc, "lineno", 1) or 1,
                "column": 1,
                "end_line": getattr(exc, "lineno", 1) or 1,
                "end_column": 2,
                "facts": {"in_loop": False, "detail": f"invalid TOML: {exc}"},
                "snippet": "",
            }
        ]
    except RecursionError:
        return [_malformed("invalid TOML: arrays or tables nest too deeply")]
    from neuronlint.static.build_inputs import _pyproject_requirements

    problem, _ = _pyproject_requirements(doc)
    if problem:
        return [_malformed(f"malformed pyproject.toml: {problem}")]
    try:
        return _scan_pyproject_doc(doc, lines, data)
    except (AttributeError, TypeError):  # tool.poetry or dependency-groups of another shape
        return [_malformed("malformed pyproject.toml: a dependency table has an unexpected shape")]


def _malformed(detail: str) -> dict[str, Any]:
    return {
        "rule": "NL001",
        "line": 1,
        "column": 1,
        "end_line": 1,
        "end_column": 2,
        "facts": {"in_loop": False, "detail": detail},
        "snippet": "",
    }


def _scan_pyproject_doc(doc: dict[str, Any], lines: list[str], data: Any) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    strings: list[str] = list(doc.get("build-system", {}).get("requires", []))
    project = doc.get("project", {})
    strings += list(project.get("dependencies", []))
    for group in doc.get("dependency-groups", {}).values():
        strings += [item for item in group if isinstance(item, str)]
    for requirement in strings:
        if isinstance(requirement, str):
            line, column = _locate(lines, requirement)
            out += check_requirement(requirement, line, column, data)
    taken: set[int] = set()  # the same entry in two extras sits on two lines
    for name, entries in project.get("optional-dependencies", {}).items():
        for requirement in entries:
            if isinstance(requirement, str):
                line, column = _locate_untaken(lines, requirement, taken)
                for found in check_requirement(requirement, line, column, data):
                    if found["rule"] in ("NL050", "NL404"):  # named in an optional extra
                        found["facts"].update(optional=True, extra=str(name))
                    out.append(found)
    tool = doc.get("tool", {})
    poetry = tool.get("poetry", {})
    tables = [("tool.poetry.dependencies", poetry.get("dependencies", {}))]
    tables += [("tool.poetry.dev-dependencies", poetry.get("dev-dependencies", {}))]
    for group_name, group in poetry.get("group", {}).items():
        tables.append((f"tool.poetry.group.{group_name}.dependencies", group.get("dependencies", {})))
    for header, table in tables:
        if not isinstance(table, dict):
            continue
        start = _section_line(lines, header)
        for name, spec in table.items():
            out += _poetry_entry(lines, start, name, spec, data)
    sources = list(poetry.get("source", [])) + list(tool.get("uv", {}).get("index", []))
    for source in sources:
        url = source.get("url") if isinstance(source, dict) else None
        if isinstance(url, str):
            line, column = _locate(lines, url)
            out += check_index_url(url, line, column)
    for key in ("index-url", "extra-index-url", "find-links"):
        values = tool.get("uv", {}).get(key, [])
        for url in [values] if isinstance(values, str) else values:
            if isinstance(url, str):
                line, column = _locate(lines, url)
                out += check_index_url(url, line, column)
    return dedupe(out)


def _poetry_entry(lines: list[str], start: int, name: str, spec: Any, data: Any) -> list[dict[str, Any]]:
    if name == "python":
        return []
    specs = spec if isinstance(spec, list) else [spec]  # multiple-constraint dependencies
    out: list[dict[str, Any]] = []
    line, column = _key_line(lines, name, start)
    for item in specs:
        version, marker = "", ""
        if isinstance(item, str):
            version = item
        elif isinstance(item, dict):
            version = str(item.get("version", ""))
            marker = str(item.get("markers", ""))
            platform = item.get("platform")
            if isinstance(platform, str) and platform.lower() in ("darwin", "win32", "windows", "cygwin"):
                continue
            url = item.get("url")
            if isinstance(url, str) and (CUDA_INDEX.search(url) or _CUDA_LOCAL_VERSION.search(url)):
                out.append(
                    _det("NL050", line, column, name, package=f"{name} ({url})", build="CUDA wheel URL")
                )
                continue
        requirement = f"{name}{_poetry_version(version)}" + (f"; {marker}" if marker else "")
        found = check_requirement(requirement, line, column, data)
        for det in found:
            det["end_column"] = column + len(name)
            det["snippet"] = lines[line - 1].strip()[:200] if 0 < line <= len(lines) else name
        out += found
    return out


def _poetry_version(version: str) -> str:
    version = version.strip()
    if not version or version == "*":
        return ""
    if version[0].isdigit():
        return f"=={version}"
    return version.replace("^", ">=").replace("~", ">=")


# ---- setup.cfg -----------------------------------------------------------------------------------
_CFG_KEYS = {"install_requires", "setup_requires", "tests_require"}


def scan_setup_cfg(text: str, data: Any) -> list[dict[str, Any]]:
    """`[options] install_requires`, `setup_requires` and every key of `[options.extras_require]`."""
    out: list[dict[str, Any]] = []
    section, collecting = "", False
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.split(";", 1)[0] if raw.lstrip().startswith(";") else raw
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        header = re.match(r"^\[([^\]]+)\]", line)
        if header:
            section, collecting = header.group(1).strip(), False
            continue
        indented = line[0].isspace()
        value = line
        if not indented:
            key, sep, value = line.partition("=")
            if not sep:
                key, sep, value = line.partition(":")
            key = key.strip()
            collecting = (section == "options" and key in _CFG_KEYS) or section == "options.extras_require"
            if not collecting:
                continue
        elif not collecting:
            continue
        requirement = strip_comment(value).strip()
        if requirement:
            column = raw.find(requirement) + 1
            out += check_requirement(requirement, number, column, data)
    return dedupe(out)


# ---- conda environment files ---------------------------------------------------------------------
def scan_conda(text: str, data: Any) -> list[dict[str, Any]]:
    """`dependencies:` entries (conda specs) and the nested `- pip:` list (pip requirements)."""
    out: list[dict[str, Any]] = []
    in_deps, deps_indent, pip_indent = False, -1, -1
    for number, raw in enumerate(text.splitlines(), start=1):
        line = strip_comment(raw).rstrip()
        if not line.strip():
            continue
        indent = len(line) - len(line.lstrip())
        stripped = line.strip()
        top = re.match(r"^([A-Za-z_][\w-]*)\s*:", line)
        if top and indent == 0:
            in_deps = top.group(1) == "dependencies"
            deps_indent, pip_indent = -1, -1
            continue
        if not in_deps or not stripped.startswith("-"):
            continue
        item = stripped[1:].strip().strip("'\"")
        if pip_indent >= 0 and indent <= pip_indent:
            pip_indent = -1
        if deps_indent < 0:
            deps_indent = indent
        if re.match(r"^pip\s*:", item):
            pip_indent = indent
            continue
        column = raw.find(item) + 1 if item else indent + 1
        if pip_indent >= 0:
            option = _OPTION_WITH_URL.match(item)
            if option:
                out += check_index_url(option.group(1), number, column + option.start(1))
            elif not item.startswith("-"):
                out += check_requirement(item, number, column, data)
        else:
            out += check_requirement(item, number, column, data, conda=True)
    return dedupe(out)
