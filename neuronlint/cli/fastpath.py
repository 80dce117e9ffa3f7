"""`neuronlint scan ...` without building the typer app: the path every pre-commit run takes.

Building the app imports typer, every command module and, with current typer, pydantic, and then
builds a pydantic parser for each of `scan`'s 35 options: together more than the rest of a
one-file scan. For a command line made only of `scan`, its options as declared (`--name VALUE`,
`--name=VALUE`, `-x VALUE`, flags, repeated list options) and paths, this module parses the
arguments from the same declarations (`options.SHARED_SPECS` and `SCAN_OWN` below; a test holds
both equal to the options typer builds, name by name) and calls the same `run_scan_command`.

Anything else - `--help`, another command, an unknown or misspelt option, a missing or dubious
value (one starting with `-`, a non-numeric `--jobs`), an option given twice that takes one value,
bundled short flags - returns None and typer parses the command line, so every message and error
is typer's own.
"""

from __future__ import annotations

import gc
import sys
from pathlib import Path
from typing import Any

from neuronlint.cli.options import SCAN, SHARED_SPECS

# `scan`'s own options (cli/scan.py): parameter name -> (option names, kind); kinds as in
# options.SHARED_SPECS.
SCAN_OWN: dict[str, tuple[tuple[str, ...], str]] = {
    "format": (("--format", "-f"), "str"),
    "output": (("--output", "-o"), "path"),
    "quiet": (("--quiet", "-q"), "bool"),
    "statistics": (("--statistics",), "bool"),
    "show_suppressed": (("--show-suppressed",), "bool"),
    "no_source": (("--no-source",), "bool"),
    "baseline": (("--baseline",), "path"),
    "diff_base": (("--diff-base",), "str"),
    "report_unused_suppressions": (("--report-unused-suppressions",), "bool"),
    "scope": (("--scope",), "strs"),
    "full": (("--full",), "bool"),
    "show_ok": (("--show-ok",), "bool"),
    "pre_commit": (("--pre-commit",), "bool"),
    "trace": (("--trace",), "bool"),
    "apply_fix": (("--fix",), "bool"),
    "fix_diff": (("--diff",), "bool"),
    "unsafe_fixes": (("--unsafe-fixes",), "bool"),
    "to": (("--to",), "str"),
}


def _table() -> dict[str, tuple[str, str]]:
    """Option name -> (parameter name, kind) for every option of `scan`."""
    table: dict[str, tuple[str, str]] = {}
    for name in SCAN:
        decls, kind, _ = SHARED_SPECS[name]
        table.update((decl, (name, kind)) for decl in decls)
    for name, (decls, kind) in SCAN_OWN.items():
        table.update((decl, (name, kind)) for decl in decls)
    return table


def parse_scan(argv: list[str]) -> dict[str, Any] | None:
    """The keyword arguments of `scan` for argv (without the command name), or None to let typer
    parse it."""
    table = _table()
    values: dict[str, Any] = {}
    paths: list[str] = []
    index = 0
    while index < len(argv):
        arg = argv[index]
        index += 1
        if arg == "--":
            paths.extend(argv[index:])
            break
        if not arg.startswith("-") or arg == "-":
            paths.append(arg)
            continue
        name, equals, inline = arg.partition("=") if arg.startswith("--") else (arg, "", "")
        if name not in table:
            return None  # --help, an unknown option, bundled short flags, -fjson: typer decides
        dest, kind = table[name]
        if kind == "bool":
            if equals or dest in values:
                return None
            values[dest] = True
            continue
        if equals:
            value = inline
        else:
            if index >= len(argv) or argv[index].startswith("-"):
                return None  # a missing value, or one typer may read differently
            value = argv[index]
            index += 1
        if kind in ("strs", "paths"):
            values.setdefault(dest, []).append(Path(value) if kind == "paths" else value)
            continue
        if dest in values:
            return None
        if kind == "count":
            if not (value.isascii() and value.isdigit()):
                return None
            values[dest] = int(value)
        else:
            values[dest] = Path(value) if kind == "path" else value
    if paths:
        values["paths"] = [Path(p) for p in paths]
    return values


FEW_FILES = 8  # named files up to which a scan runs without the cycle collector


def run(argv: list[str]) -> int | None:
    """Run `neuronlint scan` when argv is one of the command lines above; its exit code, or None
    when typer is to handle argv."""
    if not argv or argv[0] != "scan":
        return None
    parsed = parse_scan(argv[1:])
    if parsed is None:
        return None
    from neuronlint.cli.options import ScanFlags
    from neuronlint.cli.scanning import run_scan_command

    flags = ScanFlags(**{name: parsed.pop(name) for name in SCAN if name in parsed})
    # A scan of a few named files (what a pre-commit hook runs) is mostly start-up: imports and the
    # rule database build objects that live until exit, the analysis of one file makes no garbage
    # cycles worth collecting, and the cycle collector examining them all costs a few percent of
    # the run. It is off for such a scan (and back on when the command returns); a scan of a
    # directory or of more files keeps it.
    paths = flags.paths or []
    collecting = gc.isenabled()
    if 0 < len(paths) <= FEW_FILES and all(path.is_file() for path in paths):
        gc.disable()
    try:
        return run_scan_command(flags, **parsed)
    except Exception as exc:
        typer = sys.modules.get("typer")  # fail() raises typer's Exit, importing typer then
        if typer is not None and isinstance(exc, typer.Exit):
            return exc.exit_code
        raise
    finally:
        if collecting and not gc.isenabled():
            gc.freeze()  # what the scan built is not examined on the way out either
            gc.enable()
