"""`neuronlint trace`: trace models on the meta device and judge every aten op.

neuronlint trace fixtures/models/gpt_block.py:build --input long[2,64] --sdk 2.29 --target trn2
neuronlint trace                      # every [[tool.neuronlint.trace]] entry in pyproject.toml
neuronlint trace --discover           # nn.Module classes constructible without arguments
"""

from __future__ import annotations

import dataclasses
import json
import shutil
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from neuronlint.cli.options import DATABASE, FRAME, SELECTION, ScanFlags, check_output, fail, shared_options
from neuronlint.cli.scan import FORMAT_HELP, OUTPUT_HELP
from neuronlint.graph.entrypoints import discover
from neuronlint.graph.merge import TraceSetupError, headline, require_torch, targets_from
from neuronlint.graph.ops import LOWERED, NOT_LOWERED, REJECTED, UNKNOWN
from neuronlint.graph.runner import DEFAULT_MEMORY_LIMIT, DEFAULT_TIMEOUT, parse_memory
from neuronlint.ruledb import RuleDBError
from neuronlint.safe_text import valid_unicode

if TYPE_CHECKING:
    from neuronlint.graph.analysis import TraceResult

_VERDICT_STYLE = {LOWERED: "green", NOT_LOWERED: "yellow", REJECTED: "bold red", UNKNOWN: "cyan"}


@shared_options(*FRAME, *SELECTION, "fail_on", "exit_zero", *DATABASE)
def trace(
    flags: ScanFlags,
    entrypoint: Annotated[
        str | None,
        typer.Argument(
            help="pkg.module:factory, pkg.module:ModuleClass or path/to/file.py:factory (default: \\[\\[tool.neuronlint.trace]] entries).",
            show_default=False,
        ),
    ] = None,
    input: Annotated[
        list[str] | None,
        typer.Option(
            "--input",
            "-i",
            help="Example input as dtype[shape], e.g. long[2,128]; repeat per forward() argument.",
        ),
    ] = None,
    kwargs: Annotated[
        str | None,
        typer.Option("--kwargs", help="Constructor/factory keyword arguments as JSON, e.g. '{\"dim\": 64}'."),
    ] = None,
    format: Annotated[str, typer.Option("--format", "-f", help=FORMAT_HELP)] = "text",
    output: Annotated[Path | None, typer.Option("--output", "-o", help=OUTPUT_HELP)] = None,
    timeout: Annotated[
        float, typer.Option("--timeout", help="Seconds allowed per model (import, build, capture).", min=1)
    ] = DEFAULT_TIMEOUT,
    memory_limit: Annotated[
        str, typer.Option("--memory-limit", help="Address-space cap of the tracing process, e.g. 4GiB.")
    ] = f"{DEFAULT_MEMORY_LIMIT // 1024**3}GiB",
    discover_models: Annotated[
        bool,
        typer.Option(
            "--discover",
            help="List nn.Module classes in the project whose constructors need no arguments, then exit.",
        ),
    ] = False,
    no_source: Annotated[bool, typer.Option("--no-source", help="Text output without source lines.")] = False,
    quiet: Annotated[
        bool, typer.Option("--quiet", "-q", help="Print findings only: no op tables, no summary.")
    ] = False,
) -> None:
    """Trace a model on the meta device and judge every aten op for a Neuron SDK release and chip.

    Imports and runs the model's constructor and forward (in a child process with a timeout and a
    memory cap); run it from the project root.
    """
    from neuronlint.formats import FORMATS

    if format not in FORMATS:
        raise fail(f"unknown format {format!r} (expected one of: {', '.join(FORMATS)})")
    check_output(output)
    settings = flags.settings()
    root = Path.cwd()
    if discover_models:
        _print_discovered(discover([root], root, settings.options.exclude), format)
        raise typer.Exit(0)
    try:
        require_torch()
        cap = parse_memory(memory_limit)
    except (TraceSetupError, ValueError) as exc:
        raise fail(str(exc)) from None
    where = str(settings.config.path) if settings.config.path else "pyproject.toml (none found)"
    try:
        origin = str(settings.config.path) if settings.config.path else ""
        targets = targets_from(
            entrypoint, list(input or []), kwargs, settings.config.trace, where, origin, root=root
        )
    except ValueError as exc:
        raise fail(str(exc)) from None
    from neuronlint.graph.analysis import trace_targets

    try:
        db = settings.database()
        settings.options.check_selectors(db)
        ctx = settings.frame(db)
        results = trace_targets(targets, db, ctx, settings.options, root, timeout=timeout, memory_limit=cap)
    except RuleDBError as exc:
        raise fail(str(exc)) from None
    findings = sorted((f for r in results for f in r.findings), key=lambda f: f.sort_key())
    _write_report(results, findings, db, ctx, format, output, not no_source, quiet)
    raise typer.Exit(settings.exit_code(findings))


def _write_report(
    results: list[TraceResult],
    findings: list,
    db: Any,
    ctx: Any,
    format: str,
    output: Path | None,
    show_source: bool,
    quiet: bool = False,
) -> None:
    from neuronlint import fingerprints, gitrepo
    from neuronlint.cli.scan import render_format
    from neuronlint.formats import LOCKIN_FORMATS, RenderOptions, Report
    from neuronlint.pipeline import lockin_result

    prefix = gitrepo.prefix(Path.cwd())
    fingerprints.assign(findings, prefix)
    files = sorted({f.path for f in findings})
    lockin = lockin_result(findings, None, db, ctx) if format in LOCKIN_FORMATS else None
    report = Report(
        findings=findings,
        context=ctx,
        db=db,
        files=files,
        lines=0,
        show_source=show_source,
        options=RenderOptions(repo_prefix=prefix, traces=[r.to_dict() for r in results], lockin=lockin),
    )
    if output is not None:
        output.parent.mkdir(parents=True, exist_ok=True)
        output.write_text(valid_unicode(render_format(format, report)), encoding="utf-8")
    if quiet and (format == "text" or output is not None):
        quiet_report = dataclasses.replace(report, options=dataclasses.replace(report.options, quiet=True))
        sys.stdout.write(render_format("text", quiet_report))  # findings only, as `scan -q`
    elif format == "text" or output is not None:
        sys.stdout.write(render_text(results, report))
    else:
        sys.stdout.write(render_format(format, report))


def render_text(results: list[TraceResult], report: Any) -> str:
    """Per model: the op table and supported share (like torch_neuronx.analyze), then the findings."""
    import io
    import os

    from rich.table import Table
    from rich.text import Text

    from neuronlint.formats import plural, render, summary
    from neuronlint.formats.text import safe_console
    from neuronlint.safe_text import neutralise_lines

    buffer = io.StringIO()
    force = os.environ.get("FORCE_COLOR") is not None
    width = max(100, shutil.get_terminal_size((120, 24)).columns)
    console = safe_console(  # model code's exception text is scanned text too
        file=buffer,
        width=width,
        highlight=False,
        force_terminal=force or None,
        no_color=os.environ.get("NO_COLOR") is not None or (not force and not sys.stdout.isatty()),
    )
    ctx = report.context
    for result in results:
        data = result.summary
        inputs = ", ".join(result.target.inputs) or "no inputs"
        title = Text(f"{result.target.label} ({inputs})", style="bold")
        capture = {
            "export": "torch.export",
            "symbolic_trace": "torch.fx.symbolic_trace (export failed)",
            "partial": "partial: forward on fake tensors up to the failure",
        }.get(data.get("capture") or "", "not captured")
        console.print(title)
        frame = f"Neuron SDK {ctx.sdk} on {ctx.target}, {ctx.backend} backend"
        if data.get("torch_xla"):
            frame += f" (torch-xla {data['torch_xla']})"
        console.print(f"  {capture}; {frame}")
        if ctx.backend == "native":
            console.print(
                "  TorchNeuron publishes no per-op table: ops are unknown unless neuronx-cc rejects them "
                "(--backend xla or an older --sdk gives torch-xla verdicts)"
            )
        ops = data.get("ops", [])
        if ops:
            table = Table(show_edge=False, pad_edge=False, box=None, padding=(0, 2))
            for column in ("op", "calls", "dtypes", "verdict", "where / why"):
                table.add_column(
                    column,
                    justify="right" if column == "calls" else "left",
                    no_wrap=column in ("op", "verdict"),
                )
            for row in _op_rows(ops):
                table.add_row(
                    row["op"],
                    str(row["count"]),
                    row["dtypes"],
                    Text(row["verdict"], style=_VERDICT_STYLE[row["verdict"]]),
                    row["detail"],
                )
            console.print(table)
        if data.get("total_ops"):
            for line in headline(data):
                console.print(f"  {line}", markup=False)
        elif result.status in ("aborted", "failed"):
            console.print("  No ops recorded: see the findings below.")
        params = data.get("parameters")
        if params:
            console.print(
                f"  Weights: {params['count']:,} parameters, {params['bytes'] / 1024**3:.2f} GiB; one {ctx.target} chip "
                f"has {params['hbm_gib_per_chip']} GiB HBM (weights need {params['chips_for_weights']} chip(s))"
            )
        console.print()
    text = neutralise_lines(buffer.getvalue())  # model names and exception text come from the model
    findings_text = render("text", report)
    text += "\n".join(line for line in findings_text.splitlines() if not line.startswith("Scanned ")) + "\n"
    counts = summary(report.findings)["by_severity"]
    found = ", ".join(plural(counts[s], s) for s in ("blocker", "warning", "info"))
    text += (
        f"Traced {plural(len(results), 'model')} for Neuron SDK {ctx.sdk} on {ctx.target} "
        f"({ctx.backend} backend): {found}.\n"
    )
    return text


def _op_rows(ops: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per op and verdict: calls, dtypes seen, and call sites or the reason."""
    rows: dict[tuple[str, str], dict[str, Any]] = {}
    for op in ops:
        key = (op["op"], op["verdict"])
        row = rows.setdefault(
            key,
            {
                "op": op["op"],
                "verdict": op["verdict"],
                "count": 0,
                "dtypes": [],
                "sites": [],
                "reason": op["reason"],
            },
        )
        row["count"] += op["count"]
        dtypes = ", ".join(dict.fromkeys(op["inputs"] + op["outputs"])) or "-"
        if dtypes not in row["dtypes"]:
            row["dtypes"].append(dtypes)
        if op["call_site"] not in row["sites"]:
            row["sites"].append(op["call_site"])
    order = {REJECTED: 0, NOT_LOWERED: 1, UNKNOWN: 2, LOWERED: 3}
    out = []
    for row in sorted(rows.values(), key=lambda r: (order[r["verdict"]], -r["count"], r["op"])):
        sites = ", ".join(row["sites"][:3]) + (
            f" (+{len(row['sites']) - 3})" if len(row["sites"]) > 3 else ""
        )
        detail = sites if row["verdict"] == LOWERED else f"{sites}: {row['reason']}"
        dtypes = "; ".join(row["dtypes"][:2]) + ("; ..." if len(row["dtypes"]) > 2 else "")
        out.append({**row, "dtypes": dtypes, "detail": detail})
    return out


def _print_discovered(candidates: list, format: str) -> None:
    if format == "json":
        rows = [
            {"entrypoint": c.entrypoint, "path": c.path, "line": c.line, "forward": list(c.forward_params)}
            for c in candidates
        ]
        sys.stdout.write(json.dumps({"models": rows}, indent=2) + "\n")
        return
    if not candidates:
        typer.echo("No nn.Module subclasses with argument-free constructors found.")
        return
    for c in candidates:
        hint = " ".join("--input DTYPE[SHAPE]" for _ in c.forward_params) or "(forward takes no inputs)"
        typer.echo(
            f"{c.path}:{c.line}: neuronlint trace {c.entrypoint} {hint}  # forward({', '.join(c.forward_params)})"
        )
    from neuronlint.formats import plural

    typer.echo(f"{plural(len(candidates), 'model class', 'model classes')} found.")


def register(app: typer.Typer) -> None:
    app.command("trace")(trace)
