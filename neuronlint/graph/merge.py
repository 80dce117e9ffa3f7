"""Which models to trace (`[[tool.neuronlint.trace]]` or one entrypoint), and `scan --trace`:
trace the configured models and merge their findings into a static scan's result."""

from __future__ import annotations

import importlib.util
import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from neuronlint.config import Config
from neuronlint.filters.suppressions import drop_used
from neuronlint.findings import Finding
from neuronlint.graph.entrypoints import EntrypointError, parse_entrypoint
from neuronlint.graph.specs import SpecError, parse_specs

if TYPE_CHECKING:
    from neuronlint.graph.analysis import TraceTarget
    from neuronlint.pipeline import ScanOptions, ScanResult

# A graph finding of these categories on a line where the static scan reported the same category
# says what the static finding says (a data-dependent op, a host read): it is dropped.
_SAID_BY_STATIC = ("dynamic-shape", "host-sync")


class TraceSetupError(Exception):
    """Tracing cannot start (torch missing, a bad `[[tool.neuronlint.trace]]` entry); one line."""


# The oldest torch the tracer supports (CI runs the trace tests on 2.13.0 and 2.14.1, docs/trace.md);
# the `[trace]` extra asks for at least this, never for one version: tracing imports the user's
# model in the user's own interpreter, so it must take the torch the project already has.
TORCH_FLOOR = (2, 13)


def _install_hint() -> str:
    import shlex
    import sys

    floor = ".".join(map(str, TORCH_FLOOR))
    return f"{shlex.quote(sys.executable)} -m pip install 'torch>={floor}'"


def require_torch() -> None:
    """Tracing needs torch (at least TORCH_FLOOR) in this interpreter (the child runs with it); say
    so in one line, with a command that installs it into this interpreter."""
    floor = ".".join(map(str, TORCH_FLOOR))
    if importlib.util.find_spec("torch") is None:
        raise TraceSetupError(
            f"graph tracing needs torch >= {floor} in this Python: {_install_hint()} "
            "(the static scan does not)"
        )
    from importlib import metadata

    try:
        version = metadata.version("torch")
    except metadata.PackageNotFoundError:
        return  # a torch without distribution metadata (a source build): let it try
    release = tuple(int(part) for part in _leading_numbers(version)[:2])
    if release and release < TORCH_FLOOR:
        raise TraceSetupError(
            f"graph tracing needs torch >= {floor}; this Python has torch {version}: {_install_hint()}, "
            "or trace in a separate environment (the static scan works with any torch)"
        )


def _leading_numbers(version: str) -> list[str]:
    import re

    match = re.match(r"(\d+)(?:\.(\d+))?", version)
    return [g for g in match.groups() if g is not None] if match else []


def targets_from(
    entrypoint: str | None,
    inputs: list[str],
    kwargs_json: str | None,
    configured: list[dict[str, Any]],
    where: str,
    origin: str = "",
    root: Path | None = None,
) -> list[TraceTarget]:
    """The command-line entrypoint, or the configured ones; validated (raises ValueError).

    With `root`, a command-line entrypoint must also name a file or module that exists and come
    with its example inputs: both are usage errors (exit 2), found without importing anything.
    """
    from neuronlint.graph.analysis import TraceTarget

    if entrypoint is not None:
        try:
            kwargs = json.loads(kwargs_json) if kwargs_json else {}
        except json.JSONDecodeError as exc:
            raise ValueError(f"--kwargs: not valid JSON ({exc.msg} at column {exc.colno})") from None
        if not isinstance(kwargs, dict):
            raise ValueError("--kwargs: expected a JSON object such as '{\"dim\": 64}'")
        targets = [TraceTarget(entrypoint, list(inputs), kwargs)]
    else:
        if inputs or kwargs_json:
            raise ValueError("--input and --kwargs need an ENTRYPOINT argument")
        targets = [
            TraceTarget(
                e["entrypoint"],
                list(e.get("inputs", [])),
                dict(e.get("kwargs", {})),
                e.get("name", ""),
                origin,
            )
            for e in configured
        ]
        if not targets:
            raise ValueError(f"no ENTRYPOINT given and no [[tool.neuronlint.trace]] entries in {where}")
    for target in targets:
        try:
            entry = parse_entrypoint(target.entrypoint)
            parse_specs(target.inputs)
        except (EntrypointError, SpecError) as exc:
            raise ValueError(str(exc)) from None
        if entrypoint is not None and root is not None:
            _check_command_line_target(entry, target.inputs, root)
    return targets


def _check_command_line_target(entry: Any, inputs: list[str], root: Path) -> None:
    """Usage errors a user can fix on the command line: a missing module or file, no --input."""
    if entry.source_file(root) is None:
        if entry.path is not None:
            raise ValueError(
                f"entrypoint {entry.text!r}: no such file {entry.path!r} (run from the project root)"
            )
        top = entry.module.split(".")[0]
        if importlib.util.find_spec(top) is None:  # a top-level lookup imports nothing
            raise ValueError(
                f"entrypoint {entry.text!r}: no module {entry.module!r} under {root} or on the Python path"
            )
    _check_defined(entry, root)
    if not inputs:
        raise ValueError(
            f"entrypoint {entry.text!r} needs its example inputs: one --input dtype[shape] per forward() "
            "argument, e.g. --input long[2,128]"
        )


def _check_defined(entry: Any, root: Path) -> None:
    """A name the entrypoint's file does not bind at module level is a typo (exit 2), found by
    parsing the file; a file that could bind names dynamically (star imports, a module
    `__getattr__`, `globals()`) or does not parse is left to the import."""
    import ast
    import difflib

    source = entry.source_file(root)
    if source is None:
        return
    try:
        data = source.read_bytes()
        tree = ast.parse(data)
    except (SyntaxError, ValueError, OSError, RecursionError, MemoryError):
        return
    if b"globals()" in data or b"__getattr__" in data:
        return
    names: set[str] = set()
    pending: list[ast.stmt] = list(tree.body)
    while pending:
        node = pending.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                if alias.name == "*":
                    return
                names.add(alias.asname or alias.name.split(".")[0])
            continue
        for child in ast.walk(node):
            if isinstance(child, ast.Name) and isinstance(child.ctx, ast.Store):
                names.add(child.id)
            elif isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.add(child.name)
            elif isinstance(child, (ast.Import, ast.ImportFrom)):
                for alias in child.names:
                    if alias.name == "*":
                        return
                    names.add(alias.asname or alias.name.split(".")[0])
    first = entry.attr.split(".")[0]
    if first in names:
        return
    close = difflib.get_close_matches(first, sorted(names), n=3)
    hint = f"; did you mean {', '.join(repr(c) for c in close)}?" if close else ""
    shown = source.relative_to(root) if source.is_relative_to(root) else source
    raise ValueError(f"entrypoint {entry.text!r}: {shown} defines no {first!r} at module level{hint}")


def headline(data: dict[str, Any]) -> list[str]:
    """The trace summary in words: documented verdicts first, unknown counted apart, never as unsupported.

    The supported share counts only op calls with a documented verdict for this backend; op calls
    with no public verdict are reported as unknown. On TorchNeuron the XLA backend's op table is
    shown for comparison, labelled as the other backend's.
    """
    counts = data.get("counts", {})
    total, known = data["total_ops"], data.get("known_ops", data["total_ops"])
    unknown = counts.get("unknown", 0)
    backend = data.get("backend", "")
    open_part = f"{unknown} of {total} op calls have no public verdict (unknown, not counted as unsupported)"
    if known:
        lines = [
            f"Supported: {data['supported_percentage']:.2f}% of the {known} op calls with a documented verdict "
            f"for the {backend} backend lowered ({counts.get('lowered', 0)} lowered, {counts.get('rejected', 0)} "
            f"rejected, {counts.get('not-lowered', 0)} not lowered); {open_part}"
        ]
    else:
        lines = [f"Supported: no documented verdict for the {backend} backend; {open_part}"]
    other = data.get("other_backend")
    if other:
        c = other["counts"]
        lines.append(
            f"For comparison, the other backend's table (PyTorch/XLA, torch-xla {other['torch_xla']}; not the "
            f"backend judged here): {c.get('lowered', 0)} lowered, {c.get('rejected', 0)} rejected, "
            f"{c.get('not-lowered', 0)} not lowered, {c.get('unknown', 0)} unknown of {total} op calls"
        )
    return lines


def trace_into_scan(
    result: ScanResult, config: Config, options: ScanOptions, note: Callable[[str], None]
) -> list[dict[str, Any]]:
    """Trace the configured entrypoints and merge their findings into the scan result.

    `note` receives one-line progress messages. Returns the traces as JSON-ready dicts; raises
    TraceSetupError when tracing cannot start.
    """
    from neuronlint.graph.analysis import trace_targets

    where = str(config.path) if config.path else "pyproject.toml (none found)"
    if not config.trace:
        note(f"--trace: no [[tool.neuronlint.trace]] entries in {where}; nothing traced")
        return []
    try:
        targets = targets_from(None, [], None, config.trace, where, str(config.path) if config.path else "")
    except ValueError as exc:
        raise TraceSetupError(f"{where}: [[tool.neuronlint.trace]]: {exc}") from None
    require_torch()
    root = config.root or Path.cwd()
    results = trace_targets(targets, result.db, result.context, options, root)
    static = {(f.path, f.line, f.category) for f in result.findings}
    for traced in results:
        for finding in traced.findings:
            if (
                finding.category in _SAID_BY_STATIC
                and (finding.path, finding.line, finding.category) in static
            ):
                continue
            result.findings.append(finding)
        data = traced.summary
        share = headline(data)[0] if data.get("total_ops") else "no ops recorded"
        note(f"traced {traced.target.label}: {traced.status}, {share}")
    result.findings.sort(key=Finding.sort_key)
    # Suppression comments that silenced a graph finding are used, whatever the static scan saw.
    silenced = [f for r in results for f in r.findings if f.suppressed is not None]
    result.unused_suppressions[:] = drop_used(result.unused_suppressions, silenced)
    return [r.to_dict() for r in results]
