"""Command-line flags merged over `[tool.neuronlint]`: the effective settings of one run."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from neuronlint.config import Config, ConfigError, find_pyproject, load_config
from neuronlint.findings import Severity
from neuronlint.pipeline import ScanOptions, default_cache_dir

DEFAULT_TARGET = "trn2"
DEFAULT_FAIL_ON = "warning"


class UsageError(Exception):
    """Bad command-line input: exit code 2 with this message."""


@dataclass
class RunSettings:
    options: ScanOptions
    config: Config
    fail_on: Severity | None  # None = never fail
    min_severity: Severity


def split_rules(values: list[str] | None) -> list[str]:
    out: list[str] = []
    for value in values or []:
        out.extend(v.strip() for v in value.split(",") if v.strip())
    return [v if v.islower() else v.upper() for v in out]  # category names stay lower-case


def resolve(
    paths: list[Path],
    *,
    config_path: Path | None = None,
    select: list[str] | None = None,
    extend_select: list[str] | None = None,
    ignore: list[str] | None = None,
    exclude: list[str] | None = None,
    target: str | None = None,
    sdk: str | None = None,
    backend: str | None = None,
    fail_on: str | None = None,
    severity: str | None = None,
    jobs: int = 0,
    no_cache: bool = False,
    cache_dir: Path | None = None,
    rules_dirs: list[Path] | None = None,
    compiler_flags: list[str] | None = None,
) -> RunSettings:
    paths = paths or [Path(".")]
    for path in paths:
        if not path.exists():
            raise UsageError(f"{path}: no such file or directory")
    if config_path is not None:
        if not config_path.is_file():
            raise UsageError(f"{config_path}: config file not found")
        config = load_config(config_path)
    else:
        config = load_config(find_pyproject(paths[0]))
    root = config.root or Path.cwd()
    extra_dirs = [Path(d) if Path(d).is_absolute() else root / d for d in config.rules_dir] + list(
        rules_dirs or []
    )
    for directory in extra_dirs:
        if not directory.is_dir():
            where = (
                f"{config.path}: [tool.neuronlint] key 'rules-dir'"
                if directory not in (rules_dirs or [])
                else "--rules-dir"
            )
            raise ConfigError(f"{where}: {directory} is not a directory")
    fail_name = fail_on or config.fail_on or DEFAULT_FAIL_ON
    try:
        fail = None if fail_name == "never" else Severity.parse(fail_name)
        minimum = Severity.parse(severity) if severity else Severity.INFO
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    if cache_dir is None and config.cache_dir:
        cache_dir = (
            Path(config.cache_dir) if Path(config.cache_dir).is_absolute() else root / config.cache_dir
        )
    cache = (
        None if no_cache or os.environ.get("NEURONLINT_NO_CACHE") else (cache_dir or default_cache_dir(root))
    )
    # Globs in the config are relative to the config file; reports are relative to the cwd.
    excludes = list(config.exclude) + list(exclude or [])
    options = ScanOptions(
        paths=paths,
        sdk=sdk or config.sdk,
        target=target or config.target or DEFAULT_TARGET,
        backend=backend or config.backend,
        select=split_rules(select) or split_rules(config.select),
        extend_select=split_rules(extend_select) + split_rules(config.extend_select),
        ignore=split_rules(ignore) + split_rules(config.ignore),
        per_file_ignores={k: split_rules(v) for k, v in config.per_file_ignores.items()},
        exclude=excludes,
        rules_dirs=extra_dirs,
        compiler_flags=list(compiler_flags or config.compiler_flags),
        jobs=jobs,
        cache_dir=cache,
        base=Path.cwd(),
        config_root=config.root,
    )
    return RunSettings(options=options, config=config, fail_on=fail, min_severity=minimum)
