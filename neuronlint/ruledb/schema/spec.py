"""The pieces every table schema is written with: F (one key), Table, validate_table, shared checks.

A check is a function of one value that returns a problem description or None. Values that name an
entry of another table (a chip in `targets`) are checked against the names the loader collected
from every file before validation (`Names`), so that the list of chips lives in rules/chips.toml
only.
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from typing import Any

from neuronlint.ruledb.model import SdkRange
from neuronlint.ruledb.versions import parse_version

Check = Callable[[Any], "str | None"]


class SchemaError(Exception):
    """One problem with one key of one table; the message is `<where>: key '<key>': <problem>`."""

    def __init__(self, where: str, key: str, problem: str):
        super().__init__(f"{where}: key '{key}': {problem}")
        self.where, self.key, self.problem = where, key, problem


@dataclass(frozen=True)
class Names:
    """The value (a string or an array of strings) must name entries of another table."""

    table: str  # the table whose `unique` key is named, e.g. "chip"
    noun: str  # what the error calls one value: "unknown target 'trn9' (expected one of ...)"


@dataclass(frozen=True)
class F:
    """One key of a table: its type, whether it is required, and extra checks."""

    type: Any  # a Python type, or a tuple of types
    required: bool = False
    choices: tuple[Any, ...] = ()
    check: Check | None = None  # returns a problem description or None
    items: Any = None  # element type for lists; a Table for arrays of tables
    table: Table | None = None  # nested table spec
    names: Names | None = None  # the value names entries of another table (checked after `check`)
    doc: str = ""  # one line for docs/ruledb.md


@dataclass(frozen=True)
class Table:
    fields: dict[str, F]
    open: bool = False  # extra keys allowed (free-form maps such as construct facts)
    extra: Any = field(default=None)  # type (or Table) of the values of an open table


SEVERITIES = ("blocker", "warning", "info")
STATUSES = ("supported", "partial", "unsupported", "unknown")
BACKENDS = ("xla", "native")
EFFORTS = ("none", "mechanical", "rewrite", "kernel-port")
BACKEND_STATES = ("supported", "beta", "maintenance", "not-shipped")
# How a fact is known: "documented" (Neuron's or the library's own documentation, the default) or
# only "reported" in a field report (a public write-up, an issue); reported facts are shown as such.
EVIDENCE = ("documented", "reported")
# What a third-party library runs on, from its own documentation (rules/libraries.toml).
LIBRARY_SUPPORT = ("nvidia-only", "multi-backend", "neuron-path", "unknown")
SCALAR = (str, bool, int)
CHIPS = Names("chip", "target")  # chip names: the `name`s of [[chip]] in rules/chips.toml (and packs)


# ---- value checks ------------------------------------------------------------------------------
def matches(pattern: str, problem: str) -> Check:
    """A check that the value, as a string, matches `pattern` in full; else '<problem>, got <value>'."""
    regex = re.compile(pattern)

    def check(value: Any) -> str | None:
        return None if regex.fullmatch(str(value)) else f"{problem}, got {value!r}"

    return check


def each(check: Check) -> Check:
    """The check applied to every element of an array; the first problem wins."""

    def check_all(values: list[Any]) -> str | None:
        return next((p for p in map(check, values) if p), None)

    return check_all


def is_https_url(value: Any) -> str | None:
    """Sources are https URLs; plain http and bare paths are refused (the loader also checks
    that each is versioned or declared a living page, see is_versioned_url)."""
    if not isinstance(value, str) or not re.fullmatch(r"https://[^\s/]+\.[^\s/]+/\S*", value):
        return f"expected an https:// URL, got {value!r}"
    return None


# A source is versioned when the page it names cannot change under it: documentation at a release
# tag, a file at a tag or commit, a package page at a version, a numbered issue or pull request.
# Anything else is a living page, and rules/sources.toml must declare it ([[living_source]]).
_VERSIONED = (
    re.compile(r"https://awsdocs-neuron\.readthedocs-hosted\.com/en/v\d+\.\d+\.\d+/"),
    re.compile(r"https://github\.com/[^/]+/[^/]+/(blob|tree)/(v?\d[\w.\-]*|[0-9a-f]{7,40})/"),
    re.compile(r"https://github\.com/[^/]+/[^/]+/(pull|issues)/\d+$"),
    re.compile(r"https://github\.com/[^/]+/[^/]+/releases/tag/[\w.\-]+$"),
    re.compile(r"https://(docs\.)?pytorch\.org/docs/\d+\.\d+/"),
    re.compile(r"https://pypi\.org/project/[^/]+/\d[\w.\-]*/$"),
    re.compile(r"https://huggingface\.co/docs/[^/]+/v\d[\w.\-]*/"),
    re.compile(r"https://docs\.vllm\.ai/en/v\d[\w.\-]*/"),
    re.compile(r"https://docs\.nvidia\.com/deeplearning/tensorrt/archives/tensorrt-\d+/"),
)


def is_versioned_url(value: str) -> bool:
    """True for a URL pinned to a release, tag, commit or version (see _VERSIONED)."""
    return any(p.match(value) for p in _VERSIONED)


def urls(value: list[Any]) -> str | None:
    if not value:
        return "at least one source URL is required"
    return each(is_https_url)(value)


def is_version(value: Any) -> str | None:
    try:
        parse_version(str(value))
    except ValueError as exc:
        return str(exc)
    return None


def is_date(value: Any) -> str | None:
    try:
        datetime.date.fromisoformat(value)
    except ValueError:
        return f"expected a date written YYYY-MM-DD, got {value!r}"
    return None


def is_sdk_range(value: Any) -> str | None:
    try:
        SdkRange.parse(value)
    except ValueError as exc:
        return str(exc)
    return None


rule_id = matches(r"NL\d{3}", "rule IDs are 'NL' and three digits")
fact_name = matches(r"[a-z][a-z0-9_]*", "fact names are lower_snake_case")
compiler_flag = matches(
    r"--[a-z0-9][a-z0-9-]*(=\S+)?", "expected a neuronx-cc flag such as '--native-int64=enabled'"
)


def scalars(value: dict[str, Any]) -> str | None:
    for key, item in value.items():
        items = item if isinstance(item, list) else [item]
        if not all(isinstance(i, SCALAR) for i in items):
            return f"'{key}' must be a string, number, true/false or an array of them"
    return None


SOURCES = F(list, items=str, check=urls, doc="versioned Neuron documentation URLs (https)")
SOURCE = F(str, required=True, check=is_https_url, doc="versioned Neuron documentation URL (https)")


# ---- validation --------------------------------------------------------------------------------
def _type_name(tp: Any) -> str:
    if isinstance(tp, tuple):
        return " or ".join(_type_name(t) for t in tp)
    if isinstance(tp, Table):
        return "a table"
    names = {
        str: "a string",
        int: "an integer",
        bool: "true/false",
        list: "an array",
        dict: "a table",
        float: "a number",
    }
    return names.get(tp, str(tp))


def _is_instance(value: Any, expected: Any) -> bool:
    types = expected if isinstance(expected, tuple) else (expected,)
    if isinstance(value, bool):
        return bool in types
    if float in types and isinstance(value, int):
        return True
    return isinstance(value, types)


def validate_table(
    data: Any, spec: Table, where: str, known: Mapping[str, Collection[str]] | None = None
) -> None:
    """Check one table against its spec; raise SchemaError at the first problem.

    `known` maps a table name to the names its entries have (e.g. "chip" -> the chips), for keys
    declared with `names=`; the loader collects it from every file before it validates any.
    """
    if not isinstance(data, dict):
        raise SchemaError(where, "<table>", f"expected a table, got {type(data).__name__}")
    for key, value in data.items():
        fld = spec.fields.get(key)
        if fld is None:
            if not spec.open:
                raise SchemaError(where, key, f"unknown key (known keys: {', '.join(spec.fields)})")
            if isinstance(spec.extra, Table):
                validate_table(value, spec.extra, f"{where}.{key}", known)
            elif spec.extra is not None and not _is_instance(value, spec.extra):
                raise SchemaError(where, key, f"expected {_type_name(spec.extra)}")
            continue
        _validate_value(value, fld, where, key, known)
    for key, fld in spec.fields.items():
        if fld.required and key not in data:
            raise SchemaError(where, key, "required key is missing")


def _validate_value(
    value: Any, fld: F, where: str, key: str, known: Mapping[str, Collection[str]] | None
) -> None:
    if not _is_instance(value, fld.type):
        raise SchemaError(
            where, key, f"expected {_type_name(fld.type)}, got {type(value).__name__} {value!r}"
        )
    if fld.choices and value not in fld.choices:
        raise SchemaError(where, key, f"expected one of {', '.join(map(str, fld.choices))}, got {value!r}")
    if fld.items is not None and isinstance(value, list):
        for i, item in enumerate(value):
            if isinstance(fld.items, Table):
                validate_table(item, fld.items, f"{where}.{key}[{i}]", known)
            elif not _is_instance(item, fld.items):
                raise SchemaError(where, f"{key}[{i}]", f"expected {_type_name(fld.items)}, got {item!r}")
    if fld.table is not None and isinstance(value, dict):
        validate_table(value, fld.table, f"{where}.{key}", known)
    if fld.check is not None:
        problem = fld.check(value)
        if problem:
            raise SchemaError(where, key, problem)
    if fld.names is not None and known is not None:
        names = known.get(fld.names.table, ())
        for name in value if isinstance(value, list) else [value]:
            if name not in names:
                raise SchemaError(
                    where, key, f"unknown {fld.names.noun} {name!r} (expected one of {', '.join(names)})"
                )
