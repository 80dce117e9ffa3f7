"""`neuronlint report`: the migration report.

neuronlint report fixtures/ --format html -o report.html
neuronlint report . --compare-sdk 2.33 --compare-target trn3       # what-if, side by side
neuronlint report src/ --against origin/main --format markdown     # trend for a PR comment
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from neuronlint.cli.options import (
    DATABASE,
    FRAME,
    RUN,
    SELECTION,
    ScanFlags,
    check_output,
    fail,
    shared_options,
)
from neuronlint.cli.progress import progress_factory
from neuronlint.cli.scan import merge_traces
from neuronlint.config import ConfigError
from neuronlint.ruledb import RuleDBError
from neuronlint.safe_text import valid_unicode


@shared_options("paths", *FRAME, *SELECTION, *RUN, *DATABASE)
def report_command(
    flags: ScanFlags,
    format: Annotated[
        str | None,
        typer.Option(
            "--format", "-f", help="html, markdown or json (default: from --output's suffix, else markdown)."
        ),
    ] = None,
    output: Annotated[
        Path | None,
        typer.Option("--output", "-o", help="Write the report to this file instead of standard output."),
    ] = None,
    compare_sdk: Annotated[
        str | None,
        typer.Option(
            "--compare-sdk", help="What-if: also judge the code for this Neuron SDK release, side by side."
        ),
    ] = None,
    compare_target: Annotated[
        str | None,
        typer.Option(
            "--compare-target", help="What-if: also judge the code for this chip (inf2, trn1, trn2, trn3)."
        ),
    ] = None,
    compare_backend: Annotated[
        str | None,
        typer.Option(
            "--compare-backend",
            help="What-if: the PyTorch backend for the comparison (default: chosen for that release and chip).",
        ),
    ] = None,
    against: Annotated[
        str | None,
        typer.Option(
            "--against", help="Trend: compare both scores with the code at this git ref (e.g. origin/main)."
        ),
    ] = None,
    trace: Annotated[
        bool,
        typer.Option(
            "--trace",
            help="Also trace the \\[\\[tool.neuronlint.trace]] models for op verdicts and the op support percentage.",
        ),
    ] = False,
    package_depth: Annotated[
        int, typer.Option("--package-depth", help="Directory levels that name a package.", min=1)
    ] = 1,
    top: Annotated[int, typer.Option("--top", help="Hot spots to list per direction.", min=1)] = 20,
    source_url: Annotated[
        str | None,
        typer.Option(
            "--source-url",
            help="Link findings to a URL template with {path} and {line}, e.g. https://github.com/org/repo/blob/main/{path}#L{line}.",
        ),
    ] = None,
    title: Annotated[
        str | None, typer.Option("--title", help="Report title (default: from the scanned paths).")
    ] = None,
    quiet: Annotated[
        bool, typer.Option("--quiet", "-q", help="No progress or notes on standard error.")
    ] = False,
) -> None:
    """Migration report: CUDA and Neuron coupling scores with their breakdown, blockers, hot spots,
    replacements for CUDA-only libraries and custom kernels, effort, and optional what-if and trend."""
    from functools import partial

    from neuronlint.fix import Flavour
    from neuronlint.fix.run import attach, check_safe_fixes, worker_planner
    from neuronlint.lockin.scoring import score
    from neuronlint.pipeline import run_scan
    from neuronlint.report.build import SourceLinker, build_report
    from neuronlint.report.render import REPORT_FORMATS, format_for, render

    fmt = format or format_for(output)
    if fmt not in REPORT_FORMATS:
        raise fail(f"unknown report format {fmt!r} (expected one of: {', '.join(REPORT_FORMATS)})")
    if source_url is not None and "{path}" not in source_url:
        raise fail("--source-url: the template needs a {path} placeholder (and usually {line})")
    check_output(output)
    settings = flags.settings()
    settings.options.fix_planner = partial(worker_planner, "portable")  # the workers plan the fixes
    try:
        result = run_scan(settings.options, progress_factory(not quiet))
        attach(result, Flavour("portable"), settings.options.base)  # what the fixes remove
        check_safe_fixes(result, settings.options, settings.options.base)  # ... checked by a rescan
        traces = merge_traces(result, settings, quiet) if trace else None
        other_ctx = None
        if compare_sdk or compare_target or compare_backend:
            other_ctx = result.db.context(
                compare_sdk or result.context.sdk,
                compare_target or result.context.target,
                compare_backend,
                settings.options.compiler_flags,
            )
        lockin = score(
            result.findings, result.results, result.db, result.context, package_depth=package_depth
        )
    except (RuleDBError, ConfigError) as exc:
        raise fail(str(exc)) from None
    comparison = None
    if other_ctx is not None:
        from neuronlint.report.whatif import compare

        comparison = compare(result, settings.options, other_ctx, package_depth)
    trend = None
    if against:
        from neuronlint.report.trend import TrendError
        from neuronlint.report.trend import against as trend_against

        try:
            trend = trend_against(against, settings.options, lockin, package_depth)
        except (TrendError, RuleDBError, ConfigError) as exc:
            raise fail(str(exc)) from None
    report_dir = output.resolve().parent if output is not None else None
    link = SourceLinker(source_url, report_dir, settings.options.base.resolve())
    shown_paths = [str(p) for p in settings.options.paths]
    report = build_report(
        lockin,
        result.db,
        result.context,
        paths=shown_paths,
        link=link,
        traces=traces,
        comparison=comparison,
        trend=trend,
        title=title,
        top=top,
        base=settings.options.base.resolve(),
    )
    text = render(fmt, report)
    if output is not None:
        try:
            output.parent.mkdir(parents=True, exist_ok=True)
            output.write_text(valid_unicode(text), encoding="utf-8")
        except OSError as exc:
            raise fail(f"{output}: cannot write the report: {exc.strerror or exc}") from None
        if not quiet:
            cuda, neuron = lockin.repository.scores["cuda"], lockin.repository.scores["neuron"]
            typer.echo(
                f"neuronlint: wrote {output} (CUDA coupling {cuda.score} {cuda.grade}, "
                f"Neuron coupling {neuron.score} {neuron.grade})",
                err=True,
            )
    else:
        sys.stdout.write(valid_unicode(text))


def register(app: typer.Typer) -> None:
    app.command("report")(report_command)
