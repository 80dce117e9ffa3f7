"""The `neuronlint` command line. Exit codes: 0 clean, 1 findings at or above --fail-on, 2 usage/config error."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Annotated

import typer

from neuronlint import __version__
from neuronlint.config import ConfigError
from neuronlint.findings import Severity
from neuronlint.ruledb import RuleDBError

EXIT_OK, EXIT_FINDINGS, EXIT_USAGE = 0, 1, 2

app = typer.Typer(
    name="neuronlint",
    help="PyTorch-to-Neuron portability linter: CUDA coupling to remove, Neuron lock-in to watch.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def fail(message: str) -> typer.Exit:
    """Print a one-line error to stderr and return the usage-error exit."""
    typer.echo(f"neuronlint: error: {message}", err=True)
    return typer.Exit(EXIT_USAGE)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"neuronlint {__version__}")
        raise typer.Exit()


@app.callback()
def _main(
    version: Annotated[
        bool | None,
        typer.Option("--version", callback=_version, is_eager=True, help="Show the version and exit."),
    ] = None,
) -> None:
    """neuronlint finds what ties PyTorch code to CUDA and what will block or slow it on AWS Neuron."""


# Shared option declarations (scan and the commands built on it use the same flags).
PathsArg = Annotated[
    list[Path] | None, typer.Argument(help="Files or directories to scan (default: .).", show_default=False)
]
TargetOpt = Annotated[
    str | None, typer.Option("--target", "-t", help="Neuron chip: inf2, trn1, trn2, trn3 (default: trn2).")
]
SdkOpt = Annotated[
    str | None, typer.Option("--sdk", help="Neuron SDK release, e.g. 2.29 (default: newest in the database).")
]
BackendOpt = Annotated[
    str | None,
    typer.Option(
        "--backend", help="PyTorch backend: xla or native (default: native where the release offers it)."
    ),
]
SelectOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--select", help="Only these rules: IDs, prefixes (NL1) or categories; comma-separated or repeated."
    ),
]
ExtendSelectOpt = Annotated[
    list[str] | None,
    typer.Option("--extend-select", help="Add rules to the default set (e.g. the opt-in NL507)."),
]
IgnoreOpt = Annotated[
    list[str] | None, typer.Option("--ignore", help="Skip these rules: IDs, prefixes or categories.")
]
ExcludeOpt = Annotated[
    list[str] | None, typer.Option("--exclude", help="Glob of paths to skip (added to config `exclude`).")
]
ConfigOpt = Annotated[
    Path | None,
    typer.Option("--config", help="pyproject.toml to read [tool.neuronlint] from (default: found upwards)."),
]
RulesDirOpt = Annotated[
    list[Path] | None,
    typer.Option("--rules-dir", help="Extra rule-database directory that adds or overrides entries."),
]
CompilerFlagsOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--compiler-flags",
        help="neuronx-cc flags you compile with, e.g. '--native-int64=enabled' (verdicts depend on them).",
    ),
]
JobsOpt = Annotated[int, typer.Option("--jobs", "-j", help="Worker processes (default: one per CPU).", min=0)]
NoCacheOpt = Annotated[bool, typer.Option("--no-cache", help="Do not read or write the analysis cache.")]
CacheDirOpt = Annotated[
    Path | None,
    typer.Option("--cache-dir", help="Cache directory (default: .neuronlint_cache next to the config)."),
]


def _resolve(paths, **kwargs):
    from neuronlint.settings import UsageError, resolve

    try:
        return resolve(list(paths or []), **kwargs)
    except (UsageError, ConfigError, RuleDBError) as exc:
        raise fail(str(exc)) from None


def _progress_factory(enabled: bool):
    """A rich progress bar on stderr, only for interactive terminals and scans worth waiting for."""
    if not enabled or not sys.stderr.isatty():
        return None
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    state: dict = {}

    def factory(total: int):
        if total < 200:
            return None
        progress = Progress(
            TextColumn("scanning"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=Console(stderr=True),
            transient=True,
        )
        progress.start()
        task = progress.add_task("scan", total=total)
        state["progress"] = progress

        def advance(n: int) -> None:
            progress.advance(task, n)
            if progress.tasks[0].completed >= total:
                progress.stop()

        return advance

    return factory


def exit_code(findings, fail_on: Severity | None, exit_zero: bool) -> int:
    if exit_zero or fail_on is None:
        return EXIT_OK
    worst = max((f.severity.rank for f in findings if f.suppressed is None), default=0)
    return EXIT_FINDINGS if worst >= fail_on.rank else EXIT_OK


@app.command()
def scan(
    paths: PathsArg = None,
    format: Annotated[
        str,
        typer.Option("--format", "-f", help="Output format: text, json, sarif, github, gitlab, markdown."),
    ] = "text",
    output: Annotated[
        Path | None,
        typer.Option(
            "--output", "-o", help="Also write the report in --format to this file; the terminal gets text."
        ),
    ] = None,
    target: TargetOpt = None,
    sdk: SdkOpt = None,
    backend: BackendOpt = None,
    select: SelectOpt = None,
    extend_select: ExtendSelectOpt = None,
    ignore: IgnoreOpt = None,
    exclude: ExcludeOpt = None,
    severity: Annotated[
        str | None,
        typer.Option("--severity", help="Report only findings at or above: info, warning, blocker."),
    ] = None,
    fail_on: Annotated[
        str | None,
        typer.Option(
            "--fail-on", help="Exit 1 when a finding is at or above: blocker, warning (default), info, never."
        ),
    ] = None,
    exit_zero: Annotated[
        bool, typer.Option("--exit-zero", help="Exit 0 even when findings are reported.")
    ] = False,
    quiet: Annotated[
        bool, typer.Option("--quiet", "-q", help="Print findings only: no summary, no progress.")
    ] = False,
    statistics: Annotated[bool, typer.Option("--statistics", help="Add counts per rule.")] = False,
    show_suppressed: Annotated[
        bool, typer.Option("--show-suppressed", help="Also list findings silenced by comments.")
    ] = False,
    no_source: Annotated[bool, typer.Option("--no-source", help="Text output without source lines.")] = False,
    jobs: JobsOpt = 0,
    no_cache: NoCacheOpt = False,
    cache_dir: CacheDirOpt = None,
    config: ConfigOpt = None,
    rules_dir: RulesDirOpt = None,
    compiler_flags: CompilerFlagsOpt = None,
    baseline: Annotated[
        Path | None,
        typer.Option(
            "--baseline",
            help="Report only findings not in this baseline file (`neuronlint baseline create`).",
        ),
    ] = None,
    diff_base: Annotated[
        str | None,
        typer.Option(
            "--diff-base",
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
    trace: Annotated[
        bool,
        typer.Option(
            "--trace",
            help="Also trace the [[tool.neuronlint.trace]] models (imports and runs them; see docs/trace.md).",
        ),
    ] = False,
) -> None:
    """Scan Python sources, CUDA files and build inputs for CUDA coupling and Neuron blockers."""
    from neuronlint.formats import FORMATS, Report, render
    from neuronlint.pipeline import run_scan

    if format not in FORMATS:
        raise fail(f"unknown format {format!r} (expected one of: {', '.join(FORMATS)})")
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
        fail_on=fail_on,
        severity=severity,
        jobs=jobs,
        no_cache=no_cache,
        cache_dir=cache_dir,
        rules_dirs=rule_dirs_or_none(rules_dir),
        compiler_flags=compiler_flags,
    )
    try:
        result = run_scan(settings.options, _progress_factory(not quiet and format == "text"))
        traced = _trace_command.trace_into_scan(result, settings, quiet) if trace else None
    except (RuleDBError, ConfigError) as exc:
        raise fail(str(exc)) from None
    from neuronlint.filters.pipeline import FilterError, FilterRequest, apply_filters

    try:
        filtered = apply_filters(
            result,
            settings.options,
            FilterRequest(baseline, diff_base, report_unused_suppressions, (format,)),
            Path.cwd(),
        )
    except FilterError as exc:
        raise fail(str(exc)) from None
    if traced is not None:
        filtered.report_extra.setdefault("json", {})["trace"] = traced
    for note in [] if quiet else filtered.notes:
        typer.echo(f"neuronlint: {note}", err=True)
    shown = [f for f in filtered.findings if f.severity.rank >= settings.min_severity.rank]
    report = Report(
        findings=shown,
        context=result.context,
        db=result.db,
        files=result.files,
        lines=result.lines,
        statistics=statistics,
        show_source=not no_source,
        extra={"show_suppressed": show_suppressed, "quiet": quiet, **filtered.report_extra},
    )
    if output is not None:
        output.parent.mkdir(parents=True, exist_ok=True)
        output.write_text(render(format, report), encoding="utf-8")
        terminal = render("text", report)
    else:
        terminal = render(format, report)
    sys.stdout.write(terminal)
    raise typer.Exit(exit_code(shown, settings.fail_on, exit_zero))


def rule_dirs_or_none(values):
    return list(values) if values else None


# `rules`, `rules diff` and `explain` live in their own module (the rule database's commands).
from neuronlint.rules_command import register as _register_rule_commands  # noqa: E402

_register_rule_commands(app)


def main() -> None:
    """Console entry point: any unexpected exception becomes a one-line error and exit code 2."""
    try:
        app()
    except SystemExit:
        raise
    except KeyboardInterrupt:
        typer.echo("neuronlint: interrupted", err=True)
        sys.exit(130)
    except Exception as exc:  # noqa: BLE001
        if os.environ.get("NEURONLINT_DEBUG"):
            raise
        typer.echo(
            f"neuronlint: internal error: {type(exc).__name__}: {exc} (set NEURONLINT_DEBUG=1 for a traceback)",
            err=True,
        )
        sys.exit(EXIT_USAGE)


from neuronlint import baseline_command  # noqa: E402,F401  (registers `neuronlint baseline`)
from neuronlint.graph import command as _trace_command  # noqa: E402,F401  (registers `neuronlint trace`)
from neuronlint.report import command as _report_command  # noqa: E402,F401  (registers `neuronlint report`)
