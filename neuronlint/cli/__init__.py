"""The `neuronlint` command line. Exit codes: 0 clean, 1 findings at or above --fail-on, 2 usage/config error.

This module is the composition root: it creates the app and calls `register(app)` of each command
module, in the order `neuronlint --help` lists them. The shared options live in `cli.options`.
"""

from __future__ import annotations

import os
import sys
from typing import Annotated

import typer

from neuronlint import __version__
from neuronlint.cli import baseline, options, report, rules, scan, trace

COMMANDS = (scan, rules, baseline, trace, report)  # rules registers `rules` and `explain`


def _version(value: bool) -> None:
    if value:
        typer.echo(f"neuronlint {__version__}")
        raise typer.Exit()


def _main(
    version: Annotated[
        bool | None,
        typer.Option("--version", callback=_version, is_eager=True, help="Show the version and exit."),
    ] = None,
) -> None:
    """neuronlint finds what ties PyTorch code to CUDA and what will block or slow it on AWS Neuron."""


def build_app() -> typer.Typer:
    """The command line with every command registered."""
    app = typer.Typer(
        name="neuronlint",
        help="PyTorch-to-Neuron portability linter: CUDA coupling to remove, Neuron lock-in to watch.",
        no_args_is_help=True,
        add_completion=False,
        pretty_exceptions_enable=False,
        context_settings={"help_option_names": ["-h", "--help"]},
    )
    app.callback()(_main)
    for command in COMMANDS:
        command.register(app)
    return app


app = build_app()


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
        sys.exit(options.EXIT_USAGE)
