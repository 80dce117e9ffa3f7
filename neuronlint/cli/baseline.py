"""`neuronlint baseline create`: record today's findings so that `scan --baseline` reports only new ones."""

from __future__ import annotations

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
from neuronlint.config import ConfigError
from neuronlint.ruledb import RuleDBError

DEFAULT_BASELINE = Path("neuronlint-baseline.json")

baseline_app = typer.Typer(
    name="baseline",
    help="Adopt neuronlint on an existing code base: accept today's findings, fail only on new ones.",
    no_args_is_help=True,
)


@shared_options("paths", *FRAME, *SELECTION, *RUN, *DATABASE)
def create(
    flags: ScanFlags,
    output: Annotated[
        Path, typer.Option("--output", "-o", help="Baseline file to write.")
    ] = DEFAULT_BASELINE,
) -> None:
    """Scan and write the fingerprints of every current finding (path, rule, normalised statement).

    Then run `neuronlint scan --baseline FILE` in CI with the same options. Re-run this command
    when the scan says baselined findings were fixed, to tighten the baseline.
    """
    from neuronlint.filters import baseline as baseline_filter
    from neuronlint.pipeline import run_scan

    check_output(output)
    settings = flags.settings()
    try:
        result = run_scan(settings.options)
    except (RuleDBError, ConfigError) as exc:
        raise fail(str(exc)) from None
    try:
        document = baseline_filter.write(result.findings, output, Path.cwd())
    except OSError as exc:
        raise fail(f"{output}: cannot write the baseline: {exc.strerror or exc}") from None
    typer.echo(
        f"neuronlint: wrote {output}: {document['findings']} finding(s) as {len(document['entries'])} fingerprint(s) "
        f"from {len(result.files)} file(s) (Neuron SDK {result.context.sdk}, {result.context.target})"
    )


def register(app: typer.Typer) -> None:
    baseline_app.command("create")(create)
    app.add_typer(baseline_app, name="baseline")
