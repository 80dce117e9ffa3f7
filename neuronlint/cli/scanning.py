"""What `neuronlint scan` does once its options are parsed, without typer.

`cli/scan.py` declares the command for typer; `cli/fastpath.py` parses the same options for the
common command lines without building the typer app (start-up time: typer builds a pydantic
parser for every option). Both call `run_scan_command`, which returns the exit code; a usage
error raises `fail()`'s exit.
"""

from __future__ import annotations

import dataclasses
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from neuronlint.cli.options import EXIT_FINDINGS, EXIT_OK, ScanFlags, check_output, echo, fail
from neuronlint.cli.progress import progress_factory
from neuronlint.config import ConfigError
from neuronlint.findings import Severity
from neuronlint.ruledb import RuleDBError
from neuronlint.safe_text import valid_unicode

if TYPE_CHECKING:
    from collections.abc import Callable

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


def run_scan_command(
    flags: ScanFlags,
    format: str | None = None,
    output: Path | None = None,
    quiet: bool = False,
    statistics: bool = False,
    show_suppressed: bool = False,
    no_source: bool = False,
    baseline: Path | None = None,
    diff_base: str | None = None,
    report_unused_suppressions: bool = False,
    scope: list[str] | None = None,
    full: bool = False,
    show_ok: bool = False,
    pre_commit: bool = False,
    trace: bool = False,
    apply_fix: bool = False,
    fix_diff: bool = False,
    unsafe_fixes: bool = False,
    to: str = "portable",
) -> int:
    """`neuronlint scan` with its options parsed: runs it and returns the exit code."""
    from functools import partial

    from neuronlint.filters import scope as scope_filter
    from neuronlint.filters.chain import FilterError, FilterRequest
    from neuronlint.fix.run import attach, worker_planner
    from neuronlint.formats import FORMATS, PLAIN_FORMATS
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
        if not (fix_diff or apply_fix):  # the workers plan the fixes the output shows
            settings.options.fix_planner = partial(worker_planner, to)
        result = run_scan(settings.options, progress_factory(not quiet and format == "text" and not fix_diff))
        if fix_diff or apply_fix:
            fixed = apply_fixes(result, settings, to, unsafe_fixes, write=not fix_diff)
            if not quiet:
                echo(summary_line(fixed, unsafe_fixes, fix_diff), err=True)
            if fix_diff:
                for item in fixed.changed():
                    sys.stdout.write(item.diff())
                return EXIT_FINDINGS if fixed.changed() else EXIT_OK
            if fixed.changed():
                settings.options.fix_planner = partial(worker_planner, to)
                result = run_scan(settings.options)  # report what the fixes left
        attach(result, flavour_or_fail(to, result), settings.options.base)
        if show_ok:
            list_folded_guards(result)
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
        identities=format not in PLAIN_FORMATS,
    )
    try:
        filtered = filter_scan(result, settings.options, request, Path.cwd())
    except FilterError as exc:
        raise fail(str(exc)) from None
    for note in [] if quiet else excluded_notes(result.excluded_named, flags, settings.config):
        echo(f"neuronlint: {note}", err=True)
    for note in [] if quiet else filtered.notes:
        echo(f"neuronlint: {note}", err=True)
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
        with open(output, "w", encoding="utf-8") as handle:
            write_format(format, plain, handle.write)
        terminal = render_format("text", report)
    elif format in STREAMED:
        terminal = ""
        write_format(format, report, sys.stdout.write)
    else:
        terminal = render_format(format, report)
    if "sarif" in formats and not quiet:
        from neuronlint.formats import sarif

        left_out = sarif.dropped(report)
        if left_out:
            counts = ", ".join(f"{n} {sev}" for sev, n in left_out.items())
            echo(
                f"neuronlint: SARIF keeps the {sarif.MAX_RESULTS} most severe results (GitHub stores "
                f"no more per run); left out: {counts}. Narrow with --severity or --baseline.",
                err=True,
            )
    sys.stdout.write(valid_unicode(terminal))
    return settings.exit_code(report.findings)


def list_folded_guards(result) -> None:
    """`--show-ok` lists everything the triage set aside, the CUDA guards folded into the code they
    guard too (`extra.folded`). Only on the report, after any `--fix` ran and fixes attached: a fix
    relies on the fold (a guard is not rewritten while its body has findings)."""
    for guard in result.folded_guards:
        guard.extra["folded"] = True
    result.findings = sorted([*result.findings, *result.folded_guards], key=lambda f: f.sort_key())


def excluded_notes(excluded: list[tuple[str, str]], flags: ScanFlags, config) -> list[str]:
    """Why a file named on the command line was not scanned: the exclude pattern and where it is set."""
    notes = []
    for path, pattern in excluded:
        if pattern in (flags.exclude or []):
            where = "--exclude"
        else:
            where = (
                f"{config.path}: [tool.neuronlint] key 'exclude'" if config.path else "the config's exclude"
            )
        notes.append(f"{path}: not scanned: it matches the exclude pattern {pattern!r} ({where})")
    return notes


def terminal_style() -> dict:
    """Colour and width for the text report, as rich judges the real stdout: styles on a terminal,
    none when piped, `NO_COLOR` and `FORCE_COLOR` honoured, `TERM=dumb` plain; the terminal's width."""
    environ = os.environ
    try:
        piped = not sys.stdout.isatty()
    except (AttributeError, ValueError):
        piped = True
    if piped and environ.get("TTY_COMPATIBLE") != "1" and environ.get("FORCE_COLOR") is None:
        return {"color": False, "width": None}  # what rich answers here, without importing it
    from rich.console import Console

    console = Console(file=sys.stdout)
    color = console.is_terminal and not console.no_color and console.color_system is not None
    try:
        width = console.size.width if sys.stdout.isatty() else None
    except (AttributeError, ValueError, OSError):
        width = None
    return {"color": color, "width": width}


STREAMED = frozenset({"json"})  # formats written piece by piece (formats/json.py `chunks`)


def write_format(name: str, report: Report, write: Callable[[str], object]) -> None:
    """Render in one format into `write`, as valid Unicode: a streamed format in pieces, so a large
    report is never held whole; the others as render_format renders them."""
    if name in STREAMED:
        from neuronlint.formats import json as json_format

        for chunk in json_format.chunks(report):
            write(valid_unicode(chunk))
    else:
        write(valid_unicode(render_format(name, report)))


def render_format(name: str, report: Report) -> str:
    """Render in one format; `github` also appends its job summary to $GITHUB_STEP_SUMMARY when set."""
    from neuronlint.formats import render

    text = render(name, report)
    summary_file = os.environ.get("GITHUB_STEP_SUMMARY") if name == "github" else None
    if summary_file:
        from neuronlint.formats import github

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
            echo(f"neuronlint: {text}", err=True)

    try:
        return trace_into_scan(result, settings.config, settings.options, note)
    except TraceSetupError as exc:
        raise fail(str(exc)) from None


def flavour_or_fail(to: str, result):
    from neuronlint.fix import FlavourError, flavour_for

    try:
        return flavour_for(to, result.context, result.db)
    except FlavourError as exc:
        raise fail(str(exc)) from None


def apply_fixes(result, settings, to: str, unsafe: bool, write: bool):
    """Fix the scan's files (written when `write`); returns the FixReport."""
    from neuronlint.fix.run import fix_files

    flavour = flavour_or_fail(to, result)
    return fix_files(result, settings.options, flavour, unsafe, write, settings.options.base)


def summary_line(report, unsafe: bool, diff: bool) -> str:
    fixed = sum(report.fixed.values())
    files = len(report.changed())
    verb = "Would fix" if diff else "Fixed"
    text = f"{verb} {fixed} finding{'s' if fixed != 1 else ''} in {files} file{'s' if files != 1 else ''}"
    if report.guards_fixed:  # a scan folds a CUDA guard into the code it guards (docs/fix.md)
        text += _guards(report.guards_fixed, "which the scan folds into the code {it} guard{s}")
    errors = [f for f in report.files if f.error]
    if errors:
        text += f"; {len(errors)} file{'s' if len(errors) != 1 else ''} left as they were ({errors[0].path}: {errors[0].error})"
    left = sum(f.unsafe_left for f in report.files)
    if left and not unsafe:
        text += f"; {left} more with --unsafe-fixes"
    if report.also_gone or report.appeared:
        gone = f"{report.also_gone} other{'s' if report.also_gone != 1 else ''} gone with them"
        new = f"{report.appeared} new"
        text += f"; the fixed code changes what the scan sees: {gone}, {new}"
    text += f"; {len(report.remaining)} finding{'s' if len(report.remaining) != 1 else ''} left"
    if report.guards_shown:
        text += _guards(report.guards_shown, "shown on {its} own now that the code {it} guard{s} is fixed")
    return text + "."


def _guards(count: int, what: str) -> str:
    """The parenthesis ` (1 of them a CUDA guard, <what>)`, in the singular or the plural."""
    one = count == 1
    words = {"it": "it" if one else "they", "its": "its" if one else "their", "s": "s" if one else ""}
    return f" ({count} of them {'a CUDA guard' if one else 'CUDA guards'}, {what.format(**words)})"
