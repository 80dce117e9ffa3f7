"""The `neuronlint` command line. Exit codes: 0 clean, 1 findings at or above --fail-on, 2 usage/config error.

This module is the composition root: `build_app()` creates the app and calls `register(app)` of each
command module, in the order `neuronlint --help` lists them. The shared options live in
`cli.options`. `main()` first offers the command line to `cli.fastpath`, which runs the common
`scan` command lines without building the app (typer and the pydantic parsers it builds cost more
than the rest of a one-file scan); everything else, `--help` and every error included, goes to typer.
`app` is built on first use (`from neuronlint.cli import app`).
"""

from __future__ import annotations

import os
import re
import sys
import typing
from typing import TYPE_CHECKING, Annotated

from neuronlint import __version__
from neuronlint.cli import options

if TYPE_CHECKING:
    import typer


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


_UNESCAPED = re.compile(r"(?<!\\)\[")


def plain_help(app: typer.Typer) -> None:
    """Help texts are shown as written: rich markup would eat `[shape]` or `[tool.neuronlint]`, so
    every `[` is escaped; a flag shows no `<bool>` metavar and any other option names its value."""
    import inspect

    for command in app.registered_commands:
        for parameter in inspect.signature(command.callback, eval_str=True).parameters.values():
            for info in getattr(parameter.annotation, "__metadata__", ()):
                if getattr(info, "help", None):
                    info.help = _UNESCAPED.sub(r"\\[", info.help)
                if isinstance(info, typer.models.OptionInfo) and info.metavar is None:
                    kind = typing.get_args(parameter.annotation)[0]
                    info.metavar = "" if kind is bool or kind == (bool | None) else _metavar(kind)
    for group in app.registered_groups:
        plain_help(group.typer_instance)


def _metavar(kind: object) -> str:
    text = str(getattr(kind, "__name__", kind)).lower()
    for word, metavar in (("path", "PATH"), ("int", "N"), ("float", "NUMBER")):
        if word in text:
            return metavar
    return "TEXT"


def build_app() -> typer.Typer:
    """The command line with every command registered."""
    # typer evaluates the annotations of `_main` in this module's namespace, so the name is global.
    global typer
    import typer

    from neuronlint.cli import baseline, fix, report, rules, scan, trace

    commands = (scan, fix, rules, baseline, trace, report)  # rules registers `rules` and `explain`
    app = typer.Typer(
        name="neuronlint",
        help="PyTorch-to-Neuron portability linter: CUDA coupling to remove, Neuron lock-in to watch.",
        no_args_is_help=True,
        add_completion=False,
        pretty_exceptions_enable=False,
        context_settings={"help_option_names": ["-h", "--help"]},
    )
    app.callback()(_main)
    for command in commands:
        command.register(app)
    plain_help(app)
    return app


_APP: list[typer.Typer] = []


def __getattr__(name: str) -> typing.Any:
    if name == "app":
        if not _APP:
            _APP.append(build_app())
        return _APP[0]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def main() -> None:
    """Console entry point: any unexpected exception becomes a one-line error and exit code 2."""
    from neuronlint.cli import fastpath

    try:
        code = fastpath.run(sys.argv[1:])
        if code is not None:
            sys.stdout.flush()
            sys.exit(code)
        __getattr__("app")()
    except SystemExit:
        raise
    except KeyboardInterrupt:
        options.echo("neuronlint: interrupted")
        sys.exit(130)
    except BrokenPipeError:
        # `neuronlint scan | head`: the reader left; say nothing more (as click does).
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(1)
    except Exception as exc:  # noqa: BLE001
        if os.environ.get("NEURONLINT_DEBUG"):
            raise
        options.echo(
            f"neuronlint: internal error: {type(exc).__name__}: {exc} (set NEURONLINT_DEBUG=1 for a traceback)"
        )
        sys.exit(options.EXIT_USAGE)
