"""`neuronlint report`: the migration report (registered on neuronlint.cli.app).

neuronlint report fixtures/ --format html -o report.html
neuronlint report . --compare-sdk 2.33 --compare-target trn3       # what-if, side by side
neuronlint report src/ --against origin/main --format markdown     # trend for a PR comment
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer

from neuronlint.cli import (
    BackendOpt,
    CacheDirOpt,
    CompilerFlagsOpt,
    ConfigOpt,
    ExcludeOpt,
    ExtendSelectOpt,
    IgnoreOpt,
    JobsOpt,
    NoCacheOpt,
    PathsArg,
    RulesDirOpt,
    SdkOpt,
    SelectOpt,
    TargetOpt,
    _progress_factory,
    _resolve,
    app,
    fail,
    rule_dirs_or_none,
)
from neuronlint.config import ConfigError
from neuronlint.ruledb import RuleDBError

REPORT_FORMATS = ("html", "markdown", "json")
_SUFFIXES = {".html": "html", ".htm": "html", ".md": "markdown", ".markdown": "markdown", ".json": "json"}


def render(format_name: str, report: dict) -> str:
    """Render a built report (neuronlint.report.build.build_report) in one of REPORT_FORMATS."""
    if format_name == "json":
        return json.dumps(report, indent=2, ensure_ascii=False) + "\n"
    if format_name == "html":
        from neuronlint.report import html

        return html.render(report)
    from neuronlint.report import markdown

    return markdown.render(report)


@app.command("report")
def report_command(
    paths: PathsArg = None,
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
    target: TargetOpt = None,
    sdk: SdkOpt = None,
    backend: BackendOpt = None,
    select: SelectOpt = None,
    extend_select: ExtendSelectOpt = None,
    ignore: IgnoreOpt = None,
    exclude: ExcludeOpt = None,
    config: ConfigOpt = None,
    rules_dir: RulesDirOpt = None,
    compiler_flags: CompilerFlagsOpt = None,
    jobs: JobsOpt = 0,
    no_cache: NoCacheOpt = False,
    cache_dir: CacheDirOpt = None,
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
            help="Also trace the [[tool.neuronlint.trace]] models for op verdicts and the op support percentage.",
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
    from neuronlint.lockin.scoring import score
    from neuronlint.pipeline import run_scan
    from neuronlint.report.build import SourceLinker, build_report

    fmt = format or (_SUFFIXES.get(output.suffix.lower()) if output is not None else None) or "markdown"
    if fmt not in REPORT_FORMATS:
        raise fail(f"unknown report format {fmt!r} (expected one of: {', '.join(REPORT_FORMATS)})")
    if source_url is not None and "{path}" not in source_url:
        raise fail("--source-url: the template needs a {path} placeholder (and usually {line})")
    settings = _resolve(
        paths,
        config_path=config,
        select=select,
        extend_select=extend_select,
        ignore=ignore,
        exclude=exclude,
        target=target,
        sdk=sdk,
        backend=backend,
        jobs=jobs,
        no_cache=no_cache,
        cache_dir=cache_dir,
        rules_dirs=rule_dirs_or_none(rules_dir),
        compiler_flags=compiler_flags,
    )
    try:
        result = run_scan(settings.options, _progress_factory(not quiet))
        traces = None
        if trace:
            from neuronlint.graph import command as trace_command

            traces = trace_command.trace_into_scan(result, settings, quiet)
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
            output.write_text(text, encoding="utf-8")
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
        sys.stdout.write(text)
