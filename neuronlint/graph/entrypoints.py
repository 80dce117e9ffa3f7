"""Trace entrypoints: `pkg.module:factory`, `pkg.module:ModuleClass` or `path/to/file.py:factory`.

Parsing, locating and discovery are static (ast, no imports), so the parent process never runs
user code; `load` (importing the module) runs only in the child that traces.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import os
import re
import sys
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from neuronlint.discover import discover as discover_files
from neuronlint.discover import relative_posix

_DOTTED = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$")


class EntrypointError(ValueError):
    """A malformed entrypoint string; the message names it and shows the accepted forms."""


@dataclass(frozen=True)
class Entrypoint:
    text: str
    attr: str  # attribute path in the module, e.g. "build" or "Model"
    module: str | None = None  # dotted module name (module form)
    path: str | None = None  # file path (file form), as given

    def source_file(self, root: Path) -> Path | None:
        """The Python file that defines the entrypoint, found without importing anything."""
        if self.path is not None:
            candidate = Path(self.path)
            candidate = candidate if candidate.is_absolute() else root / candidate
            return candidate if candidate.is_file() else None
        assert self.module is not None
        base = root.joinpath(*self.module.split("."))
        for candidate in (base.with_suffix(".py"), base / "__init__.py"):
            if candidate.is_file():
                return candidate
        return None


def parse_entrypoint(text: str) -> Entrypoint:
    """Split 'pkg.mod:attr' or 'dir/file.py:attr'; raise EntrypointError on anything else."""
    forms = "expected pkg.module:factory, pkg.module:ModuleClass or path/to/file.py:factory"
    left, sep, attr = text.strip().rpartition(":")
    if not sep or not left or not _DOTTED.match(attr):
        raise EntrypointError(f"entrypoint {text!r}: {forms}")
    if left.endswith(".py") or "/" in left or os.sep in left:
        return Entrypoint(text=text, attr=attr, path=left)
    if not _DOTTED.match(left):
        raise EntrypointError(f"entrypoint {text!r}: {forms}")
    return Entrypoint(text=text, attr=attr, module=left)


def _parse(data: bytes) -> ast.Module:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a scanned file's SyntaxWarnings are not ours to print
        return ast.parse(data)


def locate(entry: Entrypoint, root: Path) -> tuple[str, int] | None:
    """(file, line) of the `def`/`class` the entrypoint names, by parsing its file; None if unknown."""
    source = entry.source_file(root)
    if source is None:
        return None
    try:
        tree = _parse(source.read_bytes())
    except (SyntaxError, ValueError, OSError, RecursionError, MemoryError):
        return str(source), 1
    scope: list[ast.stmt] = tree.body
    line = 1
    for part in entry.attr.split("."):
        found = next(
            (
                n
                for n in scope
                if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and n.name == part
            ),
            None,
        )
        if found is None:
            found_assign = next(
                (
                    n
                    for n in scope
                    if isinstance(n, ast.Assign)
                    and any(isinstance(t, ast.Name) and t.id == part for t in n.targets)
                ),
                None,
            )
            return str(source), (found_assign.lineno if found_assign else line)
        line = found.lineno
        scope = found.body
    return str(source), line


# ---- child side ------------------------------------------------------------------------------
def load(entry: Entrypoint, root: Path) -> Any:
    """Import the entrypoint's module and return the named attribute (runs user code)."""
    if str(root) not in sys.path:
        sys.path.insert(0, str(root))
    if entry.module is not None:
        module = importlib.import_module(entry.module)
    else:
        path = Path(entry.path or "")
        path = path if path.is_absolute() else root / path
        if not path.is_file():
            raise FileNotFoundError(f"no such file: {entry.path}")
        module = _import_file(path.resolve(), root.resolve())
    value: Any = module
    for part in entry.attr.split("."):
        if not hasattr(value, part):
            raise AttributeError(
                f"{value.__name__ if hasattr(value, '__name__') else value!r} has no attribute {part!r}"
            )
        value = getattr(value, part)
    return value


def _import_file(path: Path, root: Path) -> Any:
    """Import a file by path; under the root it gets its dotted name so relative imports work."""
    try:
        relative = path.relative_to(root).with_suffix("")
        parts = list(relative.parts)
        if parts[-1] == "__init__":
            parts.pop()
        if parts and all(p.isidentifier() for p in parts):
            return importlib.import_module(".".join(parts))
    except (ValueError, ImportError):
        pass
    name = "neuronlint_trace_" + re.sub(r"\W", "_", path.stem)
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


# ---- discovery -------------------------------------------------------------------------------
@dataclass(frozen=True)
class Candidate:
    entrypoint: str  # ready to pass to `neuronlint trace`
    path: str
    line: int
    forward_params: tuple[str, ...]  # forward()'s parameters after self, for the --input hint


_MODULE_BASES = {"Module", "nn.Module", "torch.nn.Module"}


def discover(paths: list[Path], root: Path, exclude: list[str] | None = None) -> list[Candidate]:
    """nn.Module subclasses whose constructor needs no arguments, found by parsing (no imports).

    A class counts when it derives from nn.Module directly or through another class found in the
    same tree, and its own `__init__` (or the nearest inherited one found) has defaults for every
    parameter. Imported base classes from outside the tree are not followed.
    """
    classes: dict[str, tuple[ast.ClassDef, Path]] = {}
    for file in discover_files(paths, exclude or [], root):
        if file.suffix != ".py":
            continue
        try:
            tree = _parse(file.read_bytes())
        except (SyntaxError, ValueError, OSError, RecursionError, MemoryError):
            continue
        for node in tree.body:
            if isinstance(node, ast.ClassDef):
                classes.setdefault(f"{file}:{node.name}", (node, file))
    by_name: dict[str, list[tuple[ast.ClassDef, Path]]] = {}
    for node, file in classes.values():
        by_name.setdefault(node.name, []).append((node, file))

    def bases(node: ast.ClassDef) -> list[str]:
        return [ast.unparse(b) for b in node.bases]

    def is_module(node: ast.ClassDef, seen: frozenset[str] = frozenset()) -> bool:
        for base in bases(node):
            if base in _MODULE_BASES:
                return True
            short = base.rsplit(".", 1)[-1]
            for parent, _ in by_name.get(short, []):
                if parent.name not in seen and is_module(parent, seen | {node.name}):
                    return True
        return False

    def init_of(node: ast.ClassDef, seen: frozenset[str] = frozenset()) -> ast.FunctionDef | None | bool:
        """The __init__ that applies: a FunctionDef, None (nn.Module's own), or False (unknown)."""
        own = next((n for n in node.body if isinstance(n, ast.FunctionDef) and n.name == "__init__"), None)
        if own is not None:
            return own
        for base in bases(node):
            if base in _MODULE_BASES:
                return None
            short = base.rsplit(".", 1)[-1]
            parents = by_name.get(short, [])
            if parents and parents[0][0].name not in seen:
                return init_of(parents[0][0], seen | {node.name})
            return False
        return None

    found: list[Candidate] = []
    for node, file in classes.values():
        if not is_module(node):
            continue
        init = init_of(node)
        if init is False or (isinstance(init, ast.FunctionDef) and not _no_required_args(init)):
            continue
        forward = next((n for n in node.body if isinstance(n, ast.FunctionDef) and n.name == "forward"), None)
        params = tuple(a.arg for a in (forward.args.posonlyargs + forward.args.args)[1:]) if forward else ()
        relative = relative_posix(file, root)
        module = relative.removesuffix(".py").removesuffix("/__init__").replace("/", ".")
        target = (
            f"{module}:{node.name}"
            if all(p.isidentifier() for p in module.split("."))
            else f"{relative}:{node.name}"
        )
        found.append(Candidate(entrypoint=target, path=relative, line=node.lineno, forward_params=params))
    return sorted(found, key=lambda c: (c.path, c.line))


def _no_required_args(init: ast.FunctionDef) -> bool:
    args = init.args
    positional = args.posonlyargs + args.args
    required_positional = len(positional) - 1 - len(args.defaults)  # minus self
    required_kwonly = sum(1 for d in args.kw_defaults if d is None)
    return required_positional <= 0 and required_kwonly == 0
