"""`neuronlint scan` as typer declares it: the static scan, optionally with the traced models
merged in. The work is in `cli/scanning.py` (typer-free, shared with the fast path)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from neuronlint.cli.fix import To, UnsafeFixes
from neuronlint.cli.options import SCAN, ScanFlags, shared_options
from neuronlint.cli.scanning import (  # noqa: F401 - trace and report use these from here
    FORMAT_HELP,
    OUTPUT_HELP,
    SUFFIX_FORMATS,
    merge_traces,
    output_format,
    render_format,
    run_scan_command,
    terminal_style,
)


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
        typer.Option(
            "--show-ok",
            help="Also report what the default output leaves out: notes about supported code, and "
            "test code with nothing to port (tests that run only with CUDA, a test's own value checks), "
            "and the CUDA guards folded into the code they guard.",
        ),
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
    raise typer.Exit(
        run_scan_command(
            flags,
            format=format,
            output=output,
            quiet=quiet,
            statistics=statistics,
            show_suppressed=show_suppressed,
            no_source=no_source,
            baseline=baseline,
            diff_base=diff_base,
            report_unused_suppressions=report_unused_suppressions,
            scope=scope,
            full=full,
            show_ok=show_ok,
            pre_commit=pre_commit,
            trace=trace,
            apply_fix=apply_fix,
            fix_diff=fix_diff,
            unsafe_fixes=unsafe_fixes,
            to=to,
        )
    )


def register(app: typer.Typer) -> None:
    app.command("scan")(scan)
