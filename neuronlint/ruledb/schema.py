"""Schema of the rule database files, checked in code so errors name file, table and key."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from neuronlint.ruledb.versions import parse_version


class SchemaError(Exception):
    def __init__(self, where: str, key: str, problem: str):
        super().__init__(f"{where}: key '{key}': {problem}")
        self.where, self.key, self.problem = where, key, problem


@dataclass(frozen=True)
class F:
    """One key of a table: its type, whether it is required, and extra checks."""

    type: Any
    required: bool = False
    choices: tuple[str, ...] = ()
    check: Callable[[Any], str | None] | None = None  # returns a problem description or None
    items: Any = None  # element type for lists; a Table for lists of tables
    table: Table | None = None  # nested table spec


@dataclass(frozen=True)
class Table:
    fields: dict[str, F]
    open: bool = False  # extra keys allowed (free-form maps such as facts)
    extra: Any = field(default=None)  # type of values for open tables


def _is_url(value: Any) -> str | None:
    if not isinstance(value, str) or not value.startswith(("https://", "http://")):
        return f"expected a URL (https://...), got {value!r}"
    return None


def _is_version(value: Any) -> str | None:
    try:
        parse_version(str(value))
    except ValueError as exc:
        return str(exc)
    return None


def _is_sdk_range(value: Any) -> str | None:
    from neuronlint.ruledb.model import SdkRange

    try:
        SdkRange.parse(value)
    except ValueError as exc:
        return str(exc)
    return None


def _rule_id(value: Any) -> str | None:
    import re

    if not re.fullmatch(r"NL\d{3}", str(value)):
        return f"rule IDs are 'NL' and three digits, got {value!r}"
    return None


SEVERITIES = ("blocker", "warning", "info")
STATUSES = ("supported", "partial", "unsupported", "unknown")
TARGETS = ("inf2", "trn1", "trn2", "trn3")
BACKENDS = ("xla", "native")
EFFORTS = ("none", "mechanical", "rewrite", "kernel-port")

SOURCES = F(list, items=str, check=lambda v: next((p for p in map(_is_url, v) if p), None))

WHEN = Table(
    {
        "sdk": F(str, check=_is_sdk_range),
        "targets": F(list, items=str, check=lambda v: next((f"unknown target {t!r}" for t in v if t not in TARGETS), None)),
        "backend": F(str, choices=BACKENDS),
        "facts": F(dict),
    }
)

VERDICT = Table(
    {
        "when": F(dict, required=True, table=WHEN),
        "severity": F(str, choices=SEVERITIES),
        "status": F(str, choices=STATUSES),
        "note": F(str),
        "enabled": F(bool),
        "sources": SOURCES,
    }
)

RULE = Table(
    {
        "id": F(str, required=True, check=_rule_id),
        "name": F(str, required=True),
        "title": F(str, required=True),
        "category": F(str, required=True),  # checked against CATEGORIES by the loader
        "severity": F(str, required=True, choices=SEVERITIES),
        "status": F(str, required=True, choices=STATUSES),
        "message": F(str, required=True),
        "summary": F(str, required=True),
        "why": F(str, required=True),
        "instead": F(dict, required=True, table=Table({"xla": F(str), "native": F(str), "any": F(str)})),
        "example": F(str, required=True),
        "example_fixed": F(str),
        "sources": F(list, required=True, items=str, check=lambda v: None if v else "at least one source URL is required") ,
        "verdict": F(list, items=VERDICT),
        "replacement": F(dict, table=Table({"xla": F(str), "native": F(str)})),
        "effort": F(str, choices=EFFORTS),
        "origin": F(str, choices=("static", "graph")),
        "default_enabled": F(bool),
    }
)

BACKEND_INFO = Table(
    {
        "chips": F(list, required=True, items=str),
        "training": F(bool, required=True),
        "package": F(str),
        "torch": F(list, items=str),
        "torch_xla": F(str),
        "status": F(str),
        "source": F(str, required=True, check=_is_url),
    }
)

RELEASE = Table(
    {
        "version": F(str, required=True, check=_is_version),
        "date": F(str, required=True),
        "source": F(str, required=True, check=_is_url),
        "backends": F(dict, required=True, table=Table({"xla": F(dict, table=BACKEND_INFO), "native": F(dict, table=BACKEND_INFO)})),
        "changes": F(list, items=Table({"text": F(str, required=True), "source": F(str, required=True, check=_is_url), "tags": F(list, items=str)})),
        "compiler": F(str),
        "nki": F(str),
    }
)

CHIP = Table(
    {
        "name": F(str, required=True, choices=TARGETS),
        "title": F(str, required=True),
        "neuroncore": F(str, required=True),
        "cores": F(int, required=True),
        "hbm_gib": F(int, required=True),
        "hbm_bandwidth": F(str),
        "dtypes": F(dict, required=True, table=Table({}, open=True, extra=dict)),
        "instances": F(list, items=str),
        "source": F(str, required=True, check=_is_url),
    }
)

# Top-level array-of-tables name -> (element spec, key that must be unique)
FILE_TABLES: dict[str, tuple[Table, str | None]] = {
    "rule": (RULE, "id"),
    "release": (RELEASE, "version"),
    "chip": (CHIP, "name"),
}


def register_table(name: str, spec: Table, unique_key: str | None) -> None:
    """Other concerns (ops, apis, libraries, weights) register their table schema here."""
    FILE_TABLES[name] = (spec, unique_key)


def _type_name(tp: Any) -> str:
    return {str: "a string", int: "an integer", bool: "true/false", list: "an array", dict: "a table", float: "a number"}.get(tp, str(tp))


def validate_table(data: Any, spec: Table, where: str) -> None:
    if not isinstance(data, dict):
        raise SchemaError(where, "<table>", f"expected a table, got {type(data).__name__}")
    for key, value in data.items():
        fld = spec.fields.get(key)
        if fld is None:
            if spec.open:
                if spec.extra is not None and not isinstance(value, spec.extra):
                    raise SchemaError(where, key, f"expected {_type_name(spec.extra)}")
                continue
            known = ", ".join(spec.fields)
            raise SchemaError(where, key, f"unknown key (known keys: {known})")
        _validate_value(value, fld, where, key)
    for key, fld in spec.fields.items():
        if fld.required and key not in data:
            raise SchemaError(where, key, "required key is missing")


def _validate_value(value: Any, fld: F, where: str, key: str) -> None:
    expected = fld.type
    ok = isinstance(value, expected) and not (expected is int and isinstance(value, bool))
    if expected is float:
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
    if not ok:
        raise SchemaError(where, key, f"expected {_type_name(expected)}, got {type(value).__name__} {value!r}")
    if fld.choices and value not in fld.choices:
        raise SchemaError(where, key, f"expected one of {', '.join(fld.choices)}, got {value!r}")
    if fld.items is not None and isinstance(value, list):
        for i, item in enumerate(value):
            if isinstance(fld.items, Table):
                validate_table(item, fld.items, f"{where}.{key}[{i}]")
            elif not isinstance(item, fld.items):
                raise SchemaError(where, f"{key}[{i}]", f"expected {_type_name(fld.items)}, got {item!r}")
    if fld.table is not None and isinstance(value, dict):
        validate_table(value, fld.table, f"{where}.{key}")
    if fld.check is not None:
        problem = fld.check(value)
        if problem:
            raise SchemaError(where, key, problem)


API = Table(
    {
        "name": F(str, required=True),
        "kind": F(str, required=True, choices=("name", "prefix", "method", "attribute")),
        "rule": F(str, required=True, check=_rule_id),
        "xla": F(str),
        "native": F(str),
        "note": F(str),
        "facts": F(dict, table=Table({}, open=True)),
        "source": F(str, required=True, check=_is_url),
    }
)

LIBRARY = Table(
    {
        "name": F(str, required=True),
        "modules": F(list, required=True, items=str),
        "packages": F(list, required=True, items=str),
        "status": F(str, required=True, choices=STATUSES),
        "kind": F(str, required=True),
        "alternative": F(str, required=True),
        "source": F(str, required=True, check=_is_url),
    }
)

register_table("api", API, "name")
register_table("library", LIBRARY, "name")
