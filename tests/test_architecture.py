"""The import graph of neuronlint/, computed from the source: no cycles, arrows only down the layers.

Every `import` and `from ... import` counts, at module level and inside functions (a function-level
import is still a dependency; it only runs later). The layers, top to bottom (docs/architecture.md):

    cli, __main__
    pipeline, graph, report, formats
    static, filetypes, filters, lockin
    ruledb
    findings, config, discover, filekinds, fingerprints, gitrepo, cache, the package itself

A module may import its own layer or a lower one, never a higher one. Static analysis never imports
torch, and nothing outside graph/ does.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

from tests.conftest import ROOT

PACKAGE = ROOT / "neuronlint"

LAYERS: tuple[tuple[str, ...], ...] = (
    ("cli", "__main__"),
    ("pipeline", "graph", "report", "formats", "fix"),
    ("static", "filetypes", "filters", "lockin", "groups", "neuron_packages"),
    ("ruledb",),
    (
        "findings",
        "config",
        "discover",
        "filekinds",
        "fingerprints",
        "digests",
        "gitrepo",
        "cache",
        "scope",
        "workers",
        "safe_text",
        "neuronlint",
    ),
)


def _modules() -> dict[str, Path]:
    modules: dict[str, Path] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        modules[".".join(parts)] = path
    return modules


def _owner(name: str, modules: dict[str, Path]) -> str | None:
    """The module of ours that `name` (a module or a name inside one) comes from."""
    while name and name not in modules:
        name = name.rpartition(".")[0]
    return name or None


def import_graph() -> dict[str, set[str]]:
    """module -> the modules of neuronlint it imports (anywhere in its source)."""
    modules = _modules()
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.Import):
                wanted = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")[: len(package.split(".")) - node.level + 1]
                    origin = ".".join(base + ([node.module] if node.module else []))
                else:
                    origin = node.module or ""
                wanted = [f"{origin}.{alias.name}" for alias in node.names]
            else:
                continue
            for target in wanted:
                if target.split(".")[0] != "neuronlint":
                    continue
                owner = _owner(target, modules)
                if owner is not None and owner != name:
                    graph[name].add(owner)
    return graph


def imports_of(module: str, prefix: str) -> list[int]:
    """Line numbers where `module`'s source imports `prefix` or a submodule of it."""
    path = _modules()[module]
    lines = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and not node.level:
            names = [node.module or ""]
        if any(n == prefix or n.startswith(prefix + ".") for n in names):
            lines.append(node.lineno)
    return lines


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def _top(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def _rank(top: str) -> int:
    for rank, layer in enumerate(LAYERS):
        if top in layer:
            return rank
    raise AssertionError(
        f"neuronlint.{top} is in no layer: add it to LAYERS here and in docs/architecture.md"
    )


def test_the_graph_sees_function_level_and_relative_imports() -> None:
    graph = import_graph()
    # cli/__init__ imports its command modules at the top; pipeline imports the engine in a function.
    assert "neuronlint.cli.scan" in graph["neuronlint.cli"]
    assert "neuronlint.static.engine" in graph["neuronlint.pipeline"]
    assert imports_of("neuronlint.pipeline", "neuronlint.static.engine")
    assert "neuronlint.ruledb" in graph["neuronlint.filters.selection"]  # a name from a package __init__


def test_no_import_cycle_between_modules() -> None:
    cycles = _cycles(import_graph())
    assert not cycles, "import cycles:\n" + "\n".join(" <-> ".join(c) for c in cycles)


def test_no_cycle_between_packages() -> None:
    packages: dict[str, set[str]] = defaultdict(set)
    for module, targets in import_graph().items():
        packages[_top(module)] |= {_top(t) for t in targets if _top(t) != _top(module)}
    cycles = _cycles({name: packages.get(name, set()) for name in {_top(m) for m in _modules()}})
    assert not cycles, f"package-level cycles: {cycles}"


def test_imports_only_go_down_the_layers() -> None:
    upward = []
    for module, targets in import_graph().items():
        for target in sorted(targets):
            if _rank(_top(target)) < _rank(_top(module)):
                upward.append(f"{module} -> {target}")
    assert not upward, "imports pointing up a layer:\n" + "\n".join(upward)


def test_static_analysis_never_imports_torch() -> None:
    offenders = {
        module: imports_of(module, "torch")
        for module in _modules()
        if not module.startswith("neuronlint.graph") and imports_of(module, "torch")
    }
    assert not offenders, f"torch imported outside neuronlint.graph: {offenders}"
    assert not any(imports_of(m, "torch") for m in _modules() if m.startswith("neuronlint.static"))
