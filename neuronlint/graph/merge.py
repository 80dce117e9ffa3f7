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


def require_torch() -> None:
    """Tracing needs torch in this interpreter (the child runs with it); say so in one line."""
    if importlib.util.find_spec("torch") is None:
        raise TraceSetupError(
            "graph tracing needs torch: pip install 'neuronlint[trace]' (the static scan does not)"
        )


def targets_from(
    entrypoint: str | None,
    inputs: list[str],
    kwargs_json: str | None,
    configured: list[dict[str, Any]],
    where: str,
    origin: str = "",
) -> list[TraceTarget]:
    """The command-line entrypoint, or the configured ones; validated (raises ValueError)."""
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
            parse_entrypoint(target.entrypoint)
            parse_specs(target.inputs)
        except (EntrypointError, SpecError) as exc:
            raise ValueError(str(exc)) from None
    return targets


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
        share = (
            f"{data['supported_percentage']:.2f}% of {data['total_ops']} op calls lowered"
            if data.get("total_ops")
            else "no ops recorded"
        )
        note(f"traced {traced.target.label}: {traced.status}, {share}")
    result.findings.sort(key=Finding.sort_key)
    # Suppression comments that silenced a graph finding are used, whatever the static scan saw.
    silenced = [f for r in results for f in r.findings if f.suppressed is not None]
    result.unused_suppressions[:] = drop_used(result.unused_suppressions, silenced)
    return [r.to_dict() for r in results]
