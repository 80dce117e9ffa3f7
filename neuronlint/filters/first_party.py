"""First-party code is the code being ported, not a dependency.

Scanning flash-attention, bitsandbytes or apex themselves, `from flash_attn.ops import ...` inside
the repository is an internal import: the kernels behind it are reported where they are defined
(custom-kernel), and the import is not "a use of a CUDA-only library". Likewise, in the repository
of a Neuron package, the package's own modules (optimum-neuron's `optimum/neuron/`,
neuronx-distributed's `src/neuronx_distributed/`) using that package are not lock-in; their uses of
other Neuron packages (torch_xla, NKI) are, and so are the package's examples and tests. The
project's own import names come from `[project] name` in pyproject.toml, `name=` in setup.py (a
literal, or a string constant assigned at the top of setup.py: `name=PACKAGE_NAME`), and the
package directories (a directory with `__init__.py` at the top or under `src/`).
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterable
from pathlib import Path

from neuronlint.findings import Finding
from neuronlint.neuron_packages import neuron_package

LIBRARY_RULES = frozenset({"NL401", "NL402", "NL403"})
# Lock-in rules whose findings name the Neuron package they use (facts["module"]).
LOCKIN_RULES = frozenset({"NL901", "NL903", "NL904", "NL905", "NL906"})
_SETUP_NAME = re.compile(r"""\bname\s*=\s*["']([A-Za-z0-9][A-Za-z0-9._-]*)["']""")
# `setup(name=PACKAGE_NAME, ...)` with `PACKAGE_NAME = "flash_attn"` at the top of setup.py (the
# setup.py of flash-attention, causal-conv1d, mamba and of ROS packages): the keyword names a constant.
_SETUP_NAME_CONSTANT = re.compile(r"\bname\s*=\s*([A-Za-z_][A-Za-z0-9_]*)\s*[,)]")
_MODULE_CONSTANT = re.compile(
    r"""^([A-Za-z_][A-Za-z0-9_]*)\s*=\s*["']([A-Za-z0-9][A-Za-z0-9._-]*)["']\s*(?:#.*)?$""", re.M
)


def import_name(distribution: str) -> str:
    """`flash-attn` -> `flash_attn` (how a distribution's top-level package is usually spelled)."""
    return re.sub(r"[-.]+", "_", distribution).lower()


def _is_project(directory: Path) -> bool:
    return (directory / "pyproject.toml").is_file() or (directory / "setup.py").is_file()


def _project_root(path: Path) -> Path | None:
    """The nearest directory at or above `path` with a pyproject.toml or setup.py, not above the
    repository (a `.git` entry) the path is in: a repository without either is its own root."""
    start = path if path.is_dir() else path.parent
    for directory in (start, *start.parents):
        if _is_project(directory) or (directory / ".git").exists():
            return directory
    return None


def _packages(base: Path) -> set[str]:
    if not base.is_dir():
        return set()
    return {child.name for child in base.iterdir() if child.is_dir() and (child / "__init__.py").is_file()}


def project_names(paths: Iterable[Path]) -> set[str]:
    """Top-level import names of the projects the scanned paths belong to: the project at or above
    each path, and the projects one level below a repository's root (a repository holding its own
    fork of a library, `apex/setup.py` beside `nemo/setup.py`)."""
    names: set[str] = set()
    folders: set[Path] = set()
    roots: set[Path] = set()
    for path in paths:
        resolved = Path(path).resolve()
        folder = resolved if resolved.is_dir() else resolved.parent
        if folder in folders:
            continue  # files named one by one (pre-commit) share folders and roots: each read once
        folders.add(folder)
        root = _project_root(folder)
        if root is None or root in roots:
            continue
        roots.add(root)
        projects = [root]
        try:
            projects += [child for child in root.iterdir() if child.is_dir() and _is_project(child)]
        except OSError:
            pass
        for project in projects:
            if _is_project(project):
                names |= _declared_names(project)
            names |= _packages(project) | _packages(project / "src")
    return {n for n in names if n}


def _declared_names(root: Path) -> set[str]:
    names: set[str] = set()
    pyproject = root / "pyproject.toml"
    if pyproject.is_file():
        if sys.version_info >= (3, 11):
            import tomllib
        else:  # pragma: no cover
            import tomli as tomllib
        try:
            doc = tomllib.loads(pyproject.read_text(encoding="utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError, OSError, RecursionError):
            doc = {}

        def table(value: object, key: str) -> dict:  # any shape: the file is scanned, never trusted
            found = value.get(key) if isinstance(value, dict) else None
            return found if isinstance(found, dict) else {}

        name = table(doc, "project").get("name") or table(table(doc, "tool"), "poetry").get("name")
        if isinstance(name, str):
            names.add(import_name(name))
    setup = root / "setup.py"
    if setup.is_file():
        try:
            text = setup.read_text(encoding="utf-8", errors="replace")
        except OSError:
            text = ""
        names |= {import_name(m) for m in _SETUP_NAME.findall(text)}
        constants = set(_SETUP_NAME_CONSTANT.findall(text))
        if constants:
            names |= {import_name(v) for k, v in _MODULE_CONSTANT.findall(text) if k in constants}
    return names


def is_first_party(finding: Finding, names: set[str]) -> bool:
    """A library finding (import, call, quantisation flag) whose library is the scanned project, or
    a lock-in finding in a module of the Neuron package it uses (see _inside_own_package)."""
    if not names:
        return False
    if finding.rule in LOCKIN_RULES:
        return _inside_own_package(finding, names)
    if finding.rule not in LIBRARY_RULES:
        return False
    module = str(finding.facts.get("module") or finding.facts.get("api") or "")
    top = module.split(".")[0]
    library = import_name(str(finding.facts.get("library", "")))
    return top in names or library in names


def _inside_own_package(finding: Finding, names: set[str]) -> bool:
    """In the repository of a Neuron package (its project named `optimum-neuron`, or holding the
    package directory `src/neuronx_distributed/`), a module of the package using it
    (`optimum/neuron/trainers/metrics/throughput.py` using `optimum.neuron.*`): the package's own
    code, which is the code being ported. The package's examples and tests (optimum-neuron's
    `examples/`, pytorch/xla's `test/`) use it as its users do and keep their findings, and so does
    a folder that only shares the package's name (the Neuron SDK docs' `nki/examples/`)."""
    package = neuron_package(str(finding.facts.get("module") or ""))
    if package is None or import_name(package) not in names:
        return False
    return f"/{package.replace('.', '/')}/" in "/" + finding.path.replace("\\", "/")


def drop_first_party(findings: list[Finding], names: set[str]) -> list[Finding]:
    return [f for f in findings if not is_first_party(f, names)]
