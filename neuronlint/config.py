"""`[tool.neuronlint]` in pyproject.toml, found by walking up from the scanned path."""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


class ConfigError(Exception):
    """A malformed configuration; the message names the file, the key and the problem."""


@dataclass
class Config:
    """The `[tool.neuronlint]` settings of one pyproject.toml (defaults when there is none)."""

    path: Path | None = None  # the pyproject.toml the settings came from
    root: Path | None = None  # its directory: relative globs and the cache live here
    select: list[str] = field(default_factory=list)
    ignore: list[str] = field(default_factory=list)
    extend_select: list[str] = field(default_factory=list)
    per_file_ignores: dict[str, list[str]] = field(default_factory=dict)
    exclude: list[str] = field(default_factory=list)
    target: str | None = None
    sdk: str | None = None
    backend: str | None = None
    fail_on: str | None = None
    rules_dir: list[str] = field(default_factory=list)
    compiler_flags: list[str] = field(default_factory=list)  # neuronx-cc flags, e.g. "--native-int64=enabled"
    trace: list[dict[str, Any]] = field(default_factory=list)
    cache_dir: str | None = None
    scope_paths: dict[str, list[str]] = field(default_factory=dict)  # scope -> globs (test-paths, ...)
    test_max_severity: str | None = None  # "blocker" lets test code block; default "warning"


_LIST_KEYS = ("select", "ignore", "extend-select", "exclude", "rules-dir", "compiler-flags")
# [tool.neuronlint] key -> scope (neuronlint.scope): globs of files in that scope
SCOPE_KEYS = {
    "test-paths": "test",
    "example-paths": "example",
    "benchmark-paths": "benchmark",
    "docs-paths": "docs",
    "source-paths": "source",
}
_STR_KEYS = {
    "target": None,  # a chip: checked by the rule database, whose chips are rules/chips.toml
    "sdk": None,
    "backend": ("xla", "native"),
    "fail-on": ("blocker", "warning", "info", "never"),
    "cache-dir": None,
    "test-max-severity": ("blocker", "warning", "info"),
}
_KNOWN = set(_LIST_KEYS) | set(_STR_KEYS) | set(SCOPE_KEYS) | {"per-file-ignores", "trace"}


def _read_toml(path: Path) -> dict[str, Any]:
    """Parse a TOML file; ConfigError naming the file for anything that is not a valid TOML document."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read the file: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from None
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from None
    except RecursionError:
        raise ConfigError(f"{path}: not valid TOML: arrays or tables nest too deeply") from None


def _neuronlint_table(data: dict[str, Any]) -> Any:
    """data["tool"]["neuronlint"] when both are tables (None when absent or when `tool` is not a table)."""
    tool = data.get("tool")
    return tool.get("neuronlint") if isinstance(tool, dict) else None


def find_pyproject(start: Path) -> Path | None:
    """The nearest pyproject.toml with a [tool.neuronlint] table, from `start` upwards.

    A pyproject.toml that is not valid TOML is only an error when it mentions neuronlint: any other
    broken pyproject is not ours, and the scan reports it as a finding on that file (NL001). One
    that cannot be read is an error: it may configure neuronlint, and a configuration silently
    ignored would change what CI gates on.
    """
    start = start.resolve()
    directory = start if start.is_dir() else start.parent
    for candidate in (directory, *directory.parents):
        path = candidate / "pyproject.toml"
        if path.is_file():
            try:
                data = _read_toml(path)
            except ConfigError:
                try:
                    ours = b"neuronlint" in path.read_bytes()
                except OSError:
                    ours = True  # unreadable: it may hold [tool.neuronlint]
                if ours:
                    raise
                continue
            if _neuronlint_table(data) is not None:
                return path
    return None


def load_config(path: Path | None) -> Config:
    if path is None:
        return Config()
    data = _read_toml(path)
    if "tool" in data and not isinstance(data["tool"], dict):
        raise ConfigError(f"{path}: key 'tool': expected a table, got {data['tool']!r}")
    table = _neuronlint_table(data)
    if table is None:
        table = {}
    where = f"{path}: [tool.neuronlint]"
    if not isinstance(table, dict):
        raise ConfigError(f"{where}: expected a table")
    config = Config(path=path, root=path.parent)
    for key, value in table.items():
        if key not in _KNOWN:
            import difflib  # only for a misspelt key

            close = difflib.get_close_matches(key.replace("_", "-"), sorted(_KNOWN), n=1, cutoff=0.6)
            hint = f"did you mean '{close[0]}'? " if close else ""
            raise ConfigError(
                f"{where}: key '{key}': unknown key ({hint}known keys: {', '.join(sorted(_KNOWN))})"
            )
        if key in SCOPE_KEYS:
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise ConfigError(f"{where}: key '{key}': expected an array of globs, got {value!r}")
            config.scope_paths[SCOPE_KEYS[key]] = list(value)
        elif key in _LIST_KEYS:
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise ConfigError(f"{where}: key '{key}': expected an array of strings, got {value!r}")
            setattr(config, key.replace("-", "_"), list(value))
        elif key in _STR_KEYS:
            if not isinstance(value, str):
                raise ConfigError(f"{where}: key '{key}': expected a string, got {value!r}")
            choices = _STR_KEYS[key]
            if choices and value not in choices:
                raise ConfigError(
                    f"{where}: key '{key}': expected one of {', '.join(choices)}, got {value!r}"
                )
            setattr(config, key.replace("-", "_"), value)
        elif key == "per-file-ignores":
            if not isinstance(value, dict) or not all(
                isinstance(v, list) and all(isinstance(x, str) for x in v) for v in value.values()
            ):
                raise ConfigError(f"{where}: key 'per-file-ignores': expected a table of glob = [rule IDs]")
            config.per_file_ignores = {k: list(v) for k, v in value.items()}
        elif key == "trace":
            if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
                raise ConfigError(f"{where}: key 'trace': write entries as [[tool.neuronlint.trace]] tables")
            for index, entry in enumerate(value):
                unknown = set(entry) - {"entrypoint", "inputs", "kwargs", "name"}
                if unknown:
                    raise ConfigError(
                        f"{where}.trace[{index}]: key '{sorted(unknown)[0]}': unknown key (known: entrypoint, inputs, kwargs, name)"
                    )
                if not isinstance(entry.get("entrypoint"), str):
                    raise ConfigError(
                        f"{where}.trace[{index}]: key 'entrypoint': required string, e.g. 'pkg.model:build'"
                    )
                inputs = entry.get("inputs", [])
                if not isinstance(inputs, list) or not all(isinstance(i, str) for i in inputs):
                    raise ConfigError(
                        f"{where}.trace[{index}]: key 'inputs': expected an array of specs like 'long[2,128]'"
                    )
                if "kwargs" in entry and not isinstance(entry["kwargs"], dict):
                    raise ConfigError(f"{where}.trace[{index}]: key 'kwargs': expected a table")
            config.trace = list(value)
    return config
