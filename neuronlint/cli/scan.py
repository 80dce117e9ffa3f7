"""`neuronlint scan`: the static scan, optionally with the traced models merged in."""

from __future__ import annotations

import dataclasses
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from neuronlint.cli.fix import To, UnsafeFixes, apply_fixes, flavour_or_fail, summary_line
from neuronlint.cli.options import EXIT_FINDINGS, EXIT_OK, SCAN, ScanFlags, check_output, fail, shared_options
from neuronlint.cli.progress import progress_factory
from neuronlint.config import ConfigError
from neuronlint.findings import Severity
from neuronlint.ruledb import RuleDBError
from neuronlint.safe_text import valid_unicode

if TYPE_CHECKING:
    from neuronlint.formats import Report

FORMAT_HELP = (
    "Output format: text, concise, json, sarif, github, gitlab, markdown "
    "(default: from --output's suffix, else text)."
)
OUTPUT_HELP = (
    "Also write the report to this file (.sarif, .json, .md, .txt: the format follows the suffix); "
    "the terminal gets text."
)
# --output suffix -> the format it implies (a mismatching --format is refused). `.json` also fits
# gitlab's Code Quality report, and `.txt`/`.log` any line-based format.
SUFFIX_FORMATS = {
    ".sarif": ("sarif",),
    ".json": ("json", "gitlab", "sarif"),
    ".md": ("markdown",),
    ".markdown": ("markdown",),
    ".txt": ("text", "concise", "github"),
    ".log": ("text", "concise", "github"),
}


def output_format(format: str | None, output: Path | None) -> str:
    """--format, else the one --output's suffix implies, else text; a mismatch is a usage error."""
    suffixes = [s.lower() for s in output.suffixes[-2:]] if output is not None else []
    suffix = ".sarif" if suffixes[-2:] == [".sarif", ".json"] else (suffixes[-1] if suffixes else "")
    implied = SUFFIX_FORMATS.get(suffix)
    if format is None:
        return implied[0] if implied else "text"
    if implied and format not in implied:
        raise fail(
            f"--format {format} does not match the output file {output} "
            f"(a {suffix} file takes --format {' or '.join(implied)}); change one of them"
        )
    return format


@shared_options(*SCAN)
def scan(
    flags: ScanFlags,
    format: Annotated[
        str | None, typer.Option("--format", "-f", help=FORMAT_HELP, show_default=False, metavar="FORMAT")
    ] = None,
    output: Annotated[Path | None, typer.Option("--output", "-o", help=OUTPUT_HELP, metavar="FILE")] = None,
    quiet: Annotated[
        bool, typer.Option("--quiet", "-q", help="Print findings only: no summary, no progress.")
    ] = False,
    statistics: Annotated[
        bool, typer.Option("--statistics", help="Print counts per rule instead of the findings.")
    ] = False,
    show_suppressed: Annotated[
        bool,
        typer.Option(
            "--show-suppressed",
            help="Also list findings silenced by comments (text, concise; sarif: upload them, marked suppressed).",
        ),
    ] = False,
    no_source: Annotated[bool, typer.Option("--no-source", help="Text output without source lines.")] = False,
    baseline: Annotated[
        Path | None,
        typer.Option(
            "--baseline",
            metavar="FILE",
            help="Report only findings not in this baseline file (`neuronlint baseline create`).",
        ),
    ] = None,
    diff_base: Annotated[
        str | None,
        typer.Option(
            "--diff-base",
            metavar="REF",
            help="Report only findings on lines changed since the merge base with this git ref, e.g. origin/main.",
        ),
    ] = None,
    report_unused_suppressions: Annotated[
        bool,
        typer.Option(
            "--report-unused-suppressions",
            help="Report `# neuronlint: ignore[...]` comments that suppress nothing (NL003).",
        ),
    ] = False,
    scope: Annotated[
        list[str] | None,
        typer.Option(
            "--scope",
            help="Only these scopes: source, test, example, benchmark, docs, all (comma-separated or repeated).",
        ),
    ] = None,
    full: Annotated[
        bool,
        typer.Option("--full", help="Text: list every finding with its source line, test code included."),
    ] = False,
    show_ok: Annotated[
        bool,
        typer.Option("--show-ok", help="Also report notes about supported code that needs no change."),
    ] = False,
    pre_commit: Annotated[
        bool,
        typer.Option(
            "--pre-commit",
            help="What the pre-commit hook runs: findings only, and fail on blockers unless --fail-on or config fail-on is set.",
        ),
    ] = False,
    trace: Annotated[
        bool,
        typer.Option(
            "--trace",
            help="Also trace the \\[\\[tool.neuronlint.trace]] models (imports and runs them; see docs/trace.md).",
        ),
    ] = False,
    apply_fix: Annotated[
        bool,
        typer.Option(
            "--fix", help="Apply the safe fixes first (`neuronlint fix`), then report what is left."
        ),
    ] = False,
    fix_diff: Annotated[
        bool,
        typer.Option(
            "--diff", help="Print the fixes as a unified diff instead of findings; exit 1 if there are any."
        ),
    ] = False,
    unsafe_fixes: UnsafeFixes = False,
    to: To = "portable",
) -> None:
    """Scan Python sources, CUDA files and build inputs for CUDA coupling and Neuron blockers."""
    from neuronlint.filters import scope as scope_filter
    from neuronlint.filters.chain import FilterError, FilterRequest
    from neuronlint.fix.run import attach
    from neuronlint.formats import FORMATS
    from neuronlint.pipeline import filter_scan, make_report, run_scan

    format = output_format(format, output)
    if format not in FORMATS:
        raise fail(f"unknown format {format!r} (expected one of: {', '.join(FORMATS)})")
    check_output(output)
    settings = flags.settings()
    settings.options.show_ok = show_ok
    try:
        scopes = scope_filter.parse_scopes(scope or []) if scope else None
    except ValueError as exc:
        raise fail(str(exc)) from None
    if pre_commit:
        quiet = True
        if flags.fail_on is None and settings.config.fail_on is None:
            settings.fail_on = Severity.BLOCKER  # a host-sync warning must not block a commit
    try:
        result = run_scan(settings.options, progress_factory(not quiet and format == "text" and not fix_diff))
        if fix_diff or apply_fix:
            fixed = apply_fixes(result, settings, to, unsafe_fixes, write=not fix_diff)
            if not quiet:
                typer.echo(summary_line(fixed, unsafe_fixes, fix_diff), err=True)
            if fix_diff:
                for item in fixed.changed():
                    sys.stdout.write(item.diff())
                raise typer.Exit(EXIT_FINDINGS if fixed.changed() else EXIT_OK)
            if fixed.changed():
                result = run_scan(settings.options)  # report what the fixes left
        attach(result, flavour_or_fail(to, result), settings.options.base)
        traced = merge_traces(result, settings, quiet) if trace else None
    except (RuleDBError, ConfigError) as exc:
        raise fail(str(exc)) from None
    request = FilterRequest(
        baseline,
        diff_base,
        report_unused_suppressions,
        (format,),
        min_severity=settings.min_severity,
        scopes=scopes,
    )
    try:
        filtered = filter_scan(result, settings.options, request, Path.cwd())
    except FilterError as exc:
        raise fail(str(exc)) from None
    for note in [] if quiet else filtered.notes:
        typer.echo(f"neuronlint: {note}", err=True)
    formats = (format, "text") if output is not None else (format,)
    report = make_report(
        result,
        filtered,
        formats=formats,
        traces=traced,
        statistics=statistics,
        show_source=not no_source,
        show_suppressed=show_suppressed,
        quiet=quiet,
        full=full,
        **terminal_style(),
        unsafe_fixes=unsafe_fixes,
    )
    if output is not None:
        output.parent.mkdir(parents=True, exist_ok=True)
        plain = dataclasses.replace(
            report, options=dataclasses.replace(report.options, color=False, width=None)
        )
        output.write_text(valid_unicode(render_format(format, plain)), encoding="utf-8")
        terminal = render_format("text", report)
    else:
        terminal = render_format(format, report)
    if "sarif" in formats and not quiet:
        from neuronlint.formats import sarif

        left_out = sarif.dropped(report)
        if left_out:
            counts = ", ".join(f"{n} {sev}" for sev, n in left_out.items())
            typer.echo(
                f"neuronlint: SARIF keeps the {sarif.MAX_RESULTS} most severe results (GitHub stores "
                f"no more per run); left out: {counts}. Narrow with --severity or --baseline.",
                err=True,
            )
    sys.stdout.write(valid_unicode(terminal))
    raise typer.Exit(settings.exit_code(report.findings))


def terminal_style() -> dict:
    """Colour and width for the text report, as rich judges the real stdout: styles on a terminal,
    none when piped, `NO_COLOR` and `FORCE_COLOR` honoured, `TERM=dumb` plain; the terminal's width."""
    from rich.console import Console

    console = Console(file=sys.stdout)
    color = console.is_terminal and not console.no_color and console.color_system is not None
    try:
        width = console.size.width if sys.stdout.isatty() else None
    except (AttributeError, ValueError, OSError):
        width = None
    return {"color": color, "width": width}


def render_format(name: str, report: Report) -> str:
    """Render in one format; `github` also appends its job summary to $GITHUB_STEP_SUMMARY when set."""
    from neuronlint.formats import github, render

    text = render(name, report)
    summary_file = os.environ.get("GITHUB_STEP_SUMMARY") if name == "github" else None
    if summary_file:
        try:
            with open(summary_file, "a", encoding="utf-8") as handle:
                handle.write(github.job_summary(report))
        except OSError as exc:
            text += f"neuronlint: could not write the job summary to {summary_file}: {exc.strerror or exc}\n"
    return text


def merge_traces(result, settings, quiet: bool) -> list[dict]:
    """`--trace` (scan and report): the configured models' findings merged into the scan result."""
    from neuronlint.graph.merge import TraceSetupError, trace_into_scan

    def note(text: str) -> None:
        if not quiet:
            typer.echo(f"neuronlint: {text}", err=True)

    try:
        return trace_into_scan(result, settings.config, settings.options, note)
    except TraceSetupError as exc:
        raise fail(str(exc)) from None


def register(app: typer.Typer) -> None:
    app.command("scan")(scan)
