"""The command line's shared vocabulary: exit codes, `fail()`, every shared option declared once,
and `ScanFlags`, the options of one run merged over `[tool.neuronlint]` by one `resolve()`.

A command takes the shared options it needs with `@shared_options("target", "sdk", ...)`: the
decorator adds them to the command's signature (Typer cannot flatten a group of options the way
clap's `#[clap(flatten)]` does) and hands the command one `flags: ScanFlags` argument instead of
fifteen keywords. Options specific to one command (`--format`, `--output`, ...) stay on that
command.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

from neuronlint.config import Config, ConfigError, find_pyproject, load_config
from neuronlint.findings import Finding, Severity
from neuronlint.ruledb import Context, RuleDB, RuleDBError, load_ruledb

if TYPE_CHECKING:
    from neuronlint.pipeline import ScanOptions

EXIT_OK, EXIT_FINDINGS, EXIT_USAGE = 0, 1, 2
DEFAULT_TARGET = "trn2"
DEFAULT_FAIL_ON = "warning"


class UsageError(Exception):
    """Bad command-line input: exit code 2 with this message."""


def fail(message: str) -> Exception:
    """Print a one-line error to stderr and return the usage-error exit (`raise fail(...)`)."""
    import typer  # an error path: the fast path (cli/fastpath.py) turns typer.Exit into the exit code

    echo(f"neuronlint: error: {message}")
    return typer.Exit(EXIT_USAGE)


def echo(message: str, err: bool = True) -> None:
    """One line to stderr (or stdout), as typer.echo writes it, without importing typer."""
    stream = sys.stderr if err else sys.stdout
    stream.write(message + "\n")
    stream.flush()


# ---- the shared options, each declared once ------------------------------------------------------
# name -> (option names, kind, help). The names are ScanFlags' fields, and ScanFlags' defaults are
# the options' defaults. Plain data: typer (and the pydantic it builds each option's parser with)
# is imported only when the command line is built (`shared_options`), never on the fast path
# (cli/fastpath.py), which parses `scan`'s options from this table.
# kinds: paths (the positional paths), str, strs (repeatable), path, bool (a flag), count (an int >= 0)
SHARED_SPECS: dict[str, tuple[tuple[str, ...], str, str]] = {
    "paths": ((), "paths", "Files or directories to scan (default: .)."),
    "target": (("--target", "-t"), "str", "Neuron chip: inf2, trn1, trn2, trn3 (default: trn2)."),
    "sdk": (("--sdk",), "str", "Neuron SDK release, e.g. 2.29 (default: newest in the database)."),
    "backend": (
        ("--backend",),
        "str",
        "PyTorch backend: xla or native (default: native where the release offers it).",
    ),
    "compiler_flags": (
        ("--compiler-flags",),
        "strs",
        "neuronx-cc flags you compile with, e.g. '--native-int64=enabled' (verdicts depend on them).",
    ),
    "select": (
        ("--select",),
        "strs",
        "Only these rules: IDs, prefixes (NL1) or categories; comma-separated or repeated.",
    ),
    "extend_select": (("--extend-select",), "strs", "Add rules to the default set (e.g. the opt-in NL507)."),
    "ignore": (("--ignore",), "strs", "Skip these rules: IDs, prefixes or categories."),
    "exclude": (("--exclude",), "strs", "Glob of paths to skip (added to config `exclude`)."),
    "severity": (("--severity",), "str", "Report only findings at or above: info, warning, blocker."),
    "fail_on": (
        ("--fail-on",),
        "str",
        "Exit 1 when a finding is at or above: blocker, warning (default), info, never.",
    ),
    "exit_zero": (("--exit-zero",), "bool", "Exit 0 even when findings are reported."),
    "jobs": (("--jobs", "-j"), "count", "Worker processes (default: one per CPU)."),
    "no_cache": (("--no-cache",), "bool", "Do not read or write the analysis cache."),
    "cache_dir": (
        ("--cache-dir",),
        "path",
        "Cache directory (default: .neuronlint_cache next to the config).",
    ),
    "config": (
        ("--config",),
        "path",
        "pyproject.toml to read \\[tool.neuronlint] from (default: found upwards).",
    ),
    "rules_dir": (
        ("--rules-dir",),
        "paths",
        "Extra rule-database directory (policy pack) that adds or overrides entries.",
    ),
}

# The groups commands take (in this order in --help, after the command's own options).
FRAME = ("target", "sdk", "backend", "compiler_flags")  # which SDK release, chip and backend
SELECTION = ("select", "extend_select", "ignore", "exclude")  # which rules and files
OUTCOME = ("severity", "fail_on", "exit_zero")  # what is shown and what fails the run
RUN = ("jobs", "no_cache", "cache_dir")  # how the analysis runs
DATABASE = ("config", "rules_dir")  # where settings and policy packs come from
SCAN = ("paths", *FRAME, *SELECTION, *OUTCOME, *RUN, *DATABASE)

# --help: one panel per group (ruff groups its options too) and metavars that name the value, not
# its Python type (typer would print <list[str]>, <bool>).
PANELS = {
    FRAME: "Neuron frame (release, chip, backend)",
    SELECTION: "Rules and files",
    OUTCOME: "What is shown and what fails",
    RUN: "How it runs",
    DATABASE: "Config and policy packs",
}
METAVARS = {
    "paths": "PATH",
    "target": "CHIP",
    "sdk": "RELEASE",
    "backend": "BACKEND",
    "compiler_flags": "FLAGS",
    "select": "RULES",
    "extend_select": "RULES",
    "ignore": "RULES",
    "exclude": "GLOB",
    "severity": "LEVEL",
    "fail_on": "LEVEL",
    "exit_zero": "",
    "jobs": "N",
    "no_cache": "",
    "cache_dir": "DIR",
    "config": "FILE",
    "rules_dir": "DIR",
}


def _shared_annotations() -> dict[str, tuple[Any, Any]]:
    """name -> (typer annotation, default) for every shared option (imports typer)."""
    import typer

    panels = {name: panel for group, panel in PANELS.items() for name in group}
    python_types = {"str": str, "strs": list[str], "path": Path, "bool": bool, "count": int}
    out: dict[str, tuple[Any, Any]] = {}
    for name, (decls, kind, help_text) in SHARED_SPECS.items():
        default = ScanFlags.__dataclass_fields__[name].default
        if name == "paths":
            info: Any = typer.Argument(help=help_text, show_default=False)
            annotation: Any = list[Path] | None
        else:
            extra = {"min": 0} if kind == "count" else {}
            info = typer.Option(*decls, help=help_text, **extra)
            annotation = list[Path] if kind == "paths" else python_types[kind]
            annotation = annotation | None if default is None else annotation
        info.rich_help_panel = panels.get(name)
        info.metavar = METAVARS[name]
        out[name] = (Annotated[annotation, info], default)
    return out


@dataclass
class RunSettings:
    """The effective settings of one run: command-line flags merged over `[tool.neuronlint]`."""

    options: ScanOptions
    config: Config
    fail_on: Severity | None  # None = never fail
    min_severity: Severity
    exit_zero: bool = False

    def exit_code(self, findings: Iterable[Finding]) -> int:
        """0 clean, 1 when an unsuppressed finding is at or above --fail-on (unless --exit-zero)."""
        if self.exit_zero or self.fail_on is None:
            return EXIT_OK
        worst = max((f.severity.rank for f in findings if f.suppressed is None), default=0)
        return EXIT_FINDINGS if worst >= self.fail_on.rank else EXIT_OK

    def database(self) -> RuleDB:
        """The rule database with the policy packs of the config's `rules-dir` and of --rules-dir."""
        return load_ruledb(self.options.rules_dirs)

    def frame(self, db: RuleDB) -> Context:
        """The SDK release x chip x backend frame these settings name (raises RuleDBError)."""
        o = self.options
        return db.context(o.sdk, o.target, o.backend, o.compiler_flags)

    def check(self, db: RuleDB) -> None:
        """Reject a frame the database does not know, naming the config file and key that set it
        (rule selectors are checked by filters.selection)."""
        where = f"{self.config.path}: [tool.neuronlint]" if self.config.path else None
        try:
            self.frame(db)
        except RuleDBError as exc:
            o, c = self.options, self.config
            for key, value, configured in (
                ("sdk", o.sdk, c.sdk),
                ("target", o.target, c.target),
                ("backend", o.backend, c.backend),
            ):
                if where and configured is not None and value == configured and repr(value) in str(exc):
                    raise ConfigError(f"{where}: key '{key}': {exc}") from None
            raise


def check_output(output: Path | None) -> None:
    """Fail before any work when `-o FILE` cannot be written (a directory, or no writable parent)."""
    if output is None:
        return
    if output.is_dir():
        raise fail(f"--output {output}: is a directory; name a file")
    try:
        output.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise fail(f"--output {output}: cannot create its directory: {exc.strerror or exc}") from None
    if not os.access(output.parent, os.W_OK) or (output.exists() and not os.access(output, os.W_OK)):
        raise fail(f"--output {output}: not writable")


def split_rules(values: list[str] | None) -> list[str]:
    """`--select nl1,NL2 --select DType` -> ["NL1", "NL2", "dtype"] (selectors are case-insensitive)."""
    from neuronlint.filters.selection import normalise_selector

    out: list[str] = []
    for value in values or []:
        out.extend(v.strip() for v in value.split(",") if v.strip())
    return [normalise_selector(v) for v in out]


def selector_sources(flags: ScanFlags, config: Config) -> list[tuple[str, list[str]]]:
    """Where each selector came from, for the unknown-selector error: (where, selectors)."""
    in_config = f"{config.path}: [tool.neuronlint] key"
    sources = [
        ("--select", split_rules(flags.select)),
        ("--extend-select", split_rules(flags.extend_select)),
        ("--ignore", split_rules(flags.ignore)),
        (f"{in_config} 'select'", split_rules(config.select)),
        (f"{in_config} 'extend-select'", split_rules(config.extend_select)),
        (f"{in_config} 'ignore'", split_rules(config.ignore)),
    ]
    sources += [
        (f"{in_config} 'per-file-ignores' ({glob!r})", split_rules(rules))
        for glob, rules in config.per_file_ignores.items()
    ]
    return [(where, selectors) for where, selectors in sources if selectors]


@dataclass
class ScanFlags:
    """The shared options as given on the command line (None = not given: the config decides)."""

    paths: list[Path] | None = None
    target: str | None = None
    sdk: str | None = None
    backend: str | None = None
    compiler_flags: list[str] | None = None
    select: list[str] | None = None
    extend_select: list[str] | None = None
    ignore: list[str] | None = None
    exclude: list[str] | None = None
    severity: str | None = None
    fail_on: str | None = None
    exit_zero: bool = False
    jobs: int = 0
    no_cache: bool = False
    cache_dir: Path | None = None
    config: Path | None = None
    rules_dir: list[Path] | None = field(default=None)

    def resolve(self, *, check_paths: bool = True) -> RunSettings:
        """Merge over `[tool.neuronlint]`; raises UsageError or ConfigError with a one-line message.

        The config is `--config`, else the nearest pyproject.toml with a `[tool.neuronlint]` table
        above the first path (above the current directory for commands without paths).
        """
        # Imported here: `neuronlint --help` and `--version` need no pipeline (start-up time).
        from neuronlint.pipeline import ScanOptions, default_cache_dir

        paths = list(self.paths or []) or [Path(".")]
        if check_paths:
            for path in paths:
                if not path.exists():
                    raise UsageError(f"{path}: no such file or directory")
        if self.config is not None:
            if not self.config.is_file():
                raise UsageError(f"{self.config}: config file not found")
            config = load_config(self.config)
        else:
            config = load_config(find_pyproject(paths[0]))
        root = config.root or Path.cwd()
        fail_name = self.fail_on or config.fail_on or DEFAULT_FAIL_ON
        try:
            fail_on = None if fail_name == "never" else Severity.parse(fail_name)
            minimum = Severity.parse(self.severity) if self.severity else Severity.INFO
        except ValueError as exc:
            raise UsageError(str(exc)) from None
        cache_dir = self.cache_dir
        if cache_dir is None and config.cache_dir:
            cache_dir = _under(root, config.cache_dir)
        cache = (
            None
            if self.no_cache or os.environ.get("NEURONLINT_NO_CACHE")
            else (cache_dir or default_cache_dir(root))
        )
        options = ScanOptions(
            paths=paths,
            sdk=self.sdk or config.sdk,
            target=self.target or config.target or DEFAULT_TARGET,
            backend=self.backend or config.backend,
            select=split_rules(self.select) or split_rules(config.select),
            extend_select=split_rules(self.extend_select) + split_rules(config.extend_select),
            ignore=split_rules(self.ignore) + split_rules(config.ignore),
            per_file_ignores={k: split_rules(v) for k, v in config.per_file_ignores.items()},
            # Globs in the config are relative to the config file; reports are relative to the cwd.
            exclude=list(config.exclude) + list(self.exclude or []),
            rules_dirs=rules_dirs(config, self.rules_dir),
            compiler_flags=list(self.compiler_flags or config.compiler_flags),
            jobs=self.jobs,
            cache_dir=cache,
            base=Path.cwd(),
            config_root=config.root,
            scope_paths=dict(config.scope_paths),
            test_cap=Severity.parse(config.test_max_severity or "warning"),
            selector_sources=selector_sources(self, config),
        )
        return RunSettings(options, config, fail_on, minimum, self.exit_zero)

    def settings(self, *, check_paths: bool = True) -> RunSettings:
        """`resolve()` for a command: a bad flag or config ends the run with exit code 2."""
        try:
            settings = self.resolve(check_paths=check_paths)
            settings.check(settings.database())
            return settings
        except (UsageError, ConfigError, RuleDBError) as exc:
            raise fail(str(exc)) from None


def _under(root: Path, value: str) -> Path:
    return Path(value) if Path(value).is_absolute() else root / value


def rules_dirs(config: Config, given: list[Path] | None) -> list[Path]:
    """Policy-pack directories: the config's `rules-dir` (relative to it), then --rules-dir."""
    root = config.root or Path.cwd()
    given = list(given or [])
    dirs = [_under(root, d) for d in config.rules_dir] + given
    for directory in dirs:
        if not directory.is_dir():
            where = (
                "--rules-dir" if directory in given else f"{config.path}: [tool.neuronlint] key 'rules-dir'"
            )
            raise ConfigError(f"{where}: {directory} is not a directory")
    return dirs


def shared_options(*names: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Add the shared options `names` to a command; the command receives them as `flags: ScanFlags`.

    Arguments among them come before the command's own parameters, options after them, in the
    order given.
    """
    import functools
    import inspect

    import typer

    unknown = [n for n in names if n not in SHARED_SPECS]
    if unknown:
        raise ValueError(f"not a shared option: {', '.join(unknown)}")
    known = {f.name for f in fields(ScanFlags)}
    assert set(SHARED_SPECS) == known, "SHARED_SPECS and ScanFlags must list the same options"
    shared = _shared_annotations()

    def decorate(command: Callable[..., Any]) -> Callable[..., Any]:
        own = inspect.signature(command, eval_str=True)
        if "flags" not in own.parameters:
            raise TypeError(f"{command.__name__} must take a `flags: ScanFlags` parameter")
        added = [
            inspect.Parameter(
                name, inspect.Parameter.KEYWORD_ONLY, annotation=shared[name][0], default=shared[name][1]
            )
            for name in names
        ]
        arguments = [p for p in added if isinstance(_info(p), typer.models.ArgumentInfo)]
        options = [p for p in added if p not in arguments]
        rest = [
            p.replace(kind=inspect.Parameter.KEYWORD_ONLY)
            for p in own.parameters.values()
            if p.name != "flags"
        ]

        @functools.wraps(command)
        def run(**kwargs: Any) -> Any:
            flags = ScanFlags(**{name: kwargs.pop(name) for name in names})
            return command(flags=flags, **kwargs)

        parameters = arguments + rest + options
        run.__signature__ = own.replace(parameters=parameters)  # type: ignore[attr-defined]
        run.__annotations__ = {p.name: p.annotation for p in parameters}
        del run.__wrapped__  # typer must read the signature above, not the command's own
        return run

    return decorate


def _info(parameter: Any) -> Any:
    return parameter.annotation.__metadata__[0]
