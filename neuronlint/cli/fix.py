"""`neuronlint fix`: apply the mechanical fixes to the findings `scan` reports (docs/fix.md)."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from neuronlint.cli.options import (
    DATABASE,
    EXIT_FINDINGS,
    EXIT_OK,
    FRAME,
    RUN,
    SELECTION,
    ScanFlags,
    fail,
    shared_options,
)
from neuronlint.cli.progress import progress_factory
from neuronlint.cli.scanning import apply_fixes, summary_line
from neuronlint.config import ConfigError
from neuronlint.ruledb import RuleDBError

TO_HELP = (
    "What to write: portable (device-generic PyTorch, default), neuron (TorchNeuron) or xla (PyTorch/XLA)."
)
UNSAFE_HELP = "Also apply the fixes that need review (see each rule's Fix section)."
DIFF_HELP = "Print a unified diff of the fixes and change nothing; exit 1 when there is something to fix."

To = Annotated[str, typer.Option("--to", help=TO_HELP)]
UnsafeFixes = Annotated[bool, typer.Option("--unsafe-fixes", help=UNSAFE_HELP)]


@shared_options("paths", *FRAME, *SELECTION, *RUN, *DATABASE)
def fix(
    flags: ScanFlags,
    to: To = "portable",
    unsafe_fixes: UnsafeFixes = False,
    diff: Annotated[bool, typer.Option("--diff", help=DIFF_HELP)] = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No summary line, no progress.")] = False,
) -> None:
    """Apply the mechanical fixes (safe ones unless --unsafe-fixes) to the findings `scan` reports."""
    from neuronlint.pipeline import run_scan

    settings = flags.settings()
    try:
        # Fix every finding, also code the scan's triage leaves out (tests that only run with CUDA).
        settings.options.show_ok = True
        result = run_scan(settings.options, progress_factory(not quiet and not diff))
    except (RuleDBError, ConfigError) as exc:
        raise fail(str(exc)) from None
    report = apply_fixes(result, settings, to, unsafe_fixes, write=not diff)
    if diff:
        for item in report.changed():
            sys.stdout.write(item.diff())
    if not quiet:
        typer.echo(summary_line(report, unsafe_fixes, diff), err=True)
    raise typer.Exit(EXIT_FINDINGS if diff and report.changed() else EXIT_OK)


def register(app: typer.Typer) -> None:
    app.command("fix")(fix)
