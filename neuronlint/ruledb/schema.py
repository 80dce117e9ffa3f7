"""Schema of the rule database files, checked in code so that every error names file, table and key.

Each file under `rules/` holds arrays of tables (`[[rule]]`, `[[release]]`, ...). A file kind is a
top-level table name registered in FILE_TABLES with its element spec and the key that identifies
an entry (used for duplicates and for policy-pack overrides). Other areas register their own
tables with `register_table` (e.g. an operator table), and `rules diff` looks for them there.
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from neuronlint.ruledb.versions import parse_version


class SchemaError(Exception):
    """One problem with one key of one table; the message is `<where>: key '<key>': <problem>`."""

    def __init__(self, where: str, key: str, problem: str):
        super().__init__(f"{where}: key '{key}': {problem}")
        self.where, self.key, self.problem = where, key, problem


@dataclass(frozen=True)
class F:
    """One key of a table: its type, whether it is required, and extra checks."""

    type: Any  # a Python type, or a tuple of types
    required: bool = False
    choices: tuple[Any, ...] = ()
    check: Callable[[Any], str | None] | None = None  # returns a problem description or None
    items: Any = None  # element type for lists; a Table for arrays of tables
    table: Table | None = None  # nested table spec
    doc: str = ""  # one line for docs/ruledb.md


@dataclass(frozen=True)
class Table:
    fields: dict[str, F]
    open: bool = False  # extra keys allowed (free-form maps such as construct facts)
    extra: Any = field(default=None)  # type (or Table) of the values of an open table


SEVERITIES = ("blocker", "warning", "info")
STATUSES = ("supported", "partial", "unsupported", "unknown")
TARGETS = ("inf2", "trn1", "trn2", "trn3")
BACKENDS = ("xla", "native")
EFFORTS = ("none", "mechanical", "rewrite", "kernel-port")
BACKEND_STATES = ("supported", "beta", "maintenance", "not-shipped")
SCALAR = (str, bool, int)


# ---- value checks ------------------------------------------------------------------------------
def is_https_url(value: Any) -> str | None:
    """Sources must be versioned documentation URLs; plain http and bare paths are refused."""
    if not isinstance(value, str) or not re.fullmatch(r"https://[^\s/]+\.[^\s/]+/\S*", value):
        return f"expected an https:// URL, got {value!r}"
    return None


def _urls(value: list[Any]) -> str | None:
    if not value:
        return "at least one source URL is required"
    return next((p for p in map(is_https_url, value) if p), None)


def _is_version(value: Any) -> str | None:
    try:
        parse_version(str(value))
    except ValueError as exc:
        return str(exc)
    return None


def _is_date(value: Any) -> str | None:
    try:
        datetime.date.fromisoformat(value)
    except ValueError:
        return f"expected a date written YYYY-MM-DD, got {value!r}"
    return None


def _is_sdk_range(value: Any) -> str | None:
    from neuronlint.ruledb.model import SdkRange

    try:
        SdkRange.parse(value)
    except ValueError as exc:
        return str(exc)
    return None


def _rule_id(value: Any) -> str | None:
    if not re.fullmatch(r"NL\d{3}", str(value)):
        return f"rule IDs are 'NL' and three digits, got {value!r}"
    return None


def _fact_name(value: Any) -> str | None:
    if not re.fullmatch(r"[a-z][a-z0-9_]*", str(value)):
        return f"fact names are lower_snake_case, got {value!r}"
    return None


def _compiler_flag(value: Any) -> str | None:
    if not re.fullmatch(r"--[a-z0-9][a-z0-9-]*(=\S+)?", str(value)):
        return f"expected a neuronx-cc flag such as '--native-int64=enabled', got {value!r}"
    return None


def _targets(value: list[str]) -> str | None:
    return next(
        (f"unknown target {t!r} (expected one of {', '.join(TARGETS)})" for t in value if t not in TARGETS),
        None,
    )


def _scalars(value: dict[str, Any]) -> str | None:
    for key, item in value.items():
        items = item if isinstance(item, list) else [item]
        if not all(isinstance(i, SCALAR) for i in items):
            return f"'{key}' must be a string, number, true/false or an array of them"
    return None


# ---- file kinds --------------------------------------------------------------------------------
SOURCES = F(list, items=str, check=_urls, doc="versioned Neuron documentation URLs (https)")
SOURCE = F(str, required=True, check=is_https_url, doc="versioned Neuron documentation URL (https)")

WHEN = Table(
    {
        "sdk": F(str, check=_is_sdk_range, doc="SDK range, e.g. '>=2.30,<2.33'"),
        "targets": F(list, items=str, check=_targets, doc="chips, e.g. ['trn2', 'trn3']"),
        "backend": F(str, choices=BACKENDS, doc="xla or native"),
        "platform": F(
            dict, check=_scalars, doc="platform facts (rules/platform.toml), e.g. { int64 = 'native' }"
        ),
        "facts": F(
            dict, check=_scalars, doc="facts the checker found at the construct, e.g. { in_loop = true }"
        ),
    }
)

# `when` keys that describe the Neuron platform: a verdict using them states a Neuron fact and
# must cite its own source; verdicts on construct facts alone inherit the rule's sources.
PLATFORM_CONDITIONS = ("sdk", "targets", "backend", "platform")

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
        "category": F(str, required=True),  # checked against findings.CATEGORIES by the loader
        "severity": F(str, required=True, choices=SEVERITIES),
        "status": F(str, required=True, choices=STATUSES),
        "message": F(str, required=True),
        "summary": F(str, required=True),
        "why": F(str, required=True),
        "instead": F(dict, required=True, table=Table({"xla": F(str), "native": F(str), "any": F(str)})),
        "example": F(str, required=True),
        "example_fixed": F(str),
        "sources": F(list, required=True, items=str, check=_urls),
        "verdict": F(list, items=VERDICT),
        "replacement": F(dict, table=Table({"xla": F(str), "native": F(str)})),
        "effort": F(str, choices=EFFORTS),
        "origin": F(str, choices=("static", "graph")),
        "default_enabled": F(bool),
    }
)

BACKEND_INFO = Table(
    {
        "chips": F(
            list, required=True, items=str, check=_targets, doc="chips this backend runs on in the release"
        ),
        "training": F(bool, required=True, doc="whether Neuron supports training with it"),
        "status": F(
            str, required=True, choices=BACKEND_STATES, doc="supported, beta, maintenance or not-shipped"
        ),
        "package": F(str, required=True, doc="pip package name"),
        "versions": F(list, items=str, doc="exact package versions in the release (manifest)"),
        "torch": F(list, required=True, items=str, doc="PyTorch versions"),
        "torch_xla": F(list, items=str, doc="torch-xla versions (XLA backend only)"),
        "device": F(str, required=True, doc="the torch device string: xla or neuron"),
        "note": F(str),
        "source": SOURCE,
    }
)

RELEASE = Table(
    {
        "version": F(str, required=True, check=_is_version, doc="major.minor, e.g. '2.33'"),
        "date": F(str, required=True, check=_is_date, doc="release date of the .0 release, YYYY-MM-DD"),
        "patches": F(list, items=str, doc="patch releases with dates, e.g. '2.31.1 (2026-08-12)'"),
        "source": SOURCE,
        "note": F(str, doc="conflicts between sources and other caveats, stated once"),
        "compiler": F(str, doc="neuronx-cc version"),
        "nki": F(str, doc="NKI version"),
        "backends": F(
            dict,
            required=True,
            table=Table({"xla": F(dict, table=BACKEND_INFO), "native": F(dict, table=BACKEND_INFO)}),
        ),
        "changes": F(
            list, items=Table({"text": F(str, required=True), "source": SOURCE, "tags": F(list, items=str)})
        ),
    }
)

DTYPE = Table(
    {
        "status": F(str, required=True, choices=STATUSES),
        "note": F(str),
        "source": SOURCE,
    }
)

CHIP = Table(
    {
        "name": F(str, required=True, choices=TARGETS),
        "title": F(str, required=True),
        "neuroncore": F(str, required=True, doc="NeuronCore generation, e.g. NeuronCore-v3"),
        "cores": F(int, required=True, doc="physical NeuronCores per chip"),
        "hbm_gib": F(int, required=True),
        "hbm_bandwidth": F(str),
        "lnc": F(str, doc="logical NeuronCore configuration"),
        "int64_mode": F(str, required=True, doc="how 64-bit integers are computed"),
        "dtypes": F(dict, required=True, table=Table({}, open=True, extra=DTYPE)),
        "instances": F(list, items=str),
        "source": SOURCE,
    }
)

PLATFORM = Table(
    {
        "fact": F(str, required=True, check=_fact_name, doc="fact name used in `when.platform`"),
        "value": F(SCALAR, required=True, doc="value of the fact where this entry applies"),
        "sdk": F(str, check=_is_sdk_range, doc="SDK range where the entry applies"),
        "targets": F(list, items=str, check=_targets, doc="chips where it applies"),
        "backend": F(str, choices=BACKENDS),
        "flag": F(str, check=_compiler_flag, doc="applies only when the user declares this neuronx-cc flag"),
        "note": F(str),
        "source": SOURCE,
    }
)

# Top-level array-of-tables name -> (element spec, key that identifies an entry or None)
FILE_TABLES: dict[str, tuple[Table, str | None]] = {
    "rule": (RULE, "id"),
    "release": (RELEASE, "version"),
    "chip": (CHIP, "name"),
    "platform": (PLATFORM, None),
}


def register_table(name: str, spec: Table, unique_key: str | None) -> None:
    """Other concerns (ops, apis, libraries, weights) register their table schema here.

    An operator table registered under a name starting with "op" is read by `rules diff` for
    "ops gained/lost"; its entries are matched with the optional keys `sdk` (range), `targets`,
    `backend`, `torch_xla` (versions) and `status` (see neuronlint/ruledb/diff.py).
    """
    FILE_TABLES[name] = (spec, unique_key)


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


def validate_table(data: Any, spec: Table, where: str) -> None:
    """Check one table against its spec; raise SchemaError at the first problem."""
    if not isinstance(data, dict):
        raise SchemaError(where, "<table>", f"expected a table, got {type(data).__name__}")
    for key, value in data.items():
        fld = spec.fields.get(key)
        if fld is None:
            if not spec.open:
                raise SchemaError(where, key, f"unknown key (known keys: {', '.join(spec.fields)})")
            if isinstance(spec.extra, Table):
                validate_table(value, spec.extra, f"{where}.{key}")
            elif spec.extra is not None and not _is_instance(value, spec.extra):
                raise SchemaError(where, key, f"expected {_type_name(spec.extra)}")
            continue
        _validate_value(value, fld, where, key)
    for key, fld in spec.fields.items():
        if fld.required and key not in data:
            raise SchemaError(where, key, "required key is missing")


def _validate_value(value: Any, fld: F, where: str, key: str) -> None:
    if not _is_instance(value, fld.type):
        raise SchemaError(
            where, key, f"expected {_type_name(fld.type)}, got {type(value).__name__} {value!r}"
        )
    if fld.choices and value not in fld.choices:
        raise SchemaError(where, key, f"expected one of {', '.join(map(str, fld.choices))}, got {value!r}")
    if fld.items is not None and isinstance(value, list):
        for i, item in enumerate(value):
            if isinstance(fld.items, Table):
                validate_table(item, fld.items, f"{where}.{key}[{i}]")
            elif not _is_instance(item, fld.items):
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
        "source": SOURCE,
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
        "source": SOURCE,
    }
)

register_table("api", API, "name")
register_table("library", LIBRARY, "name")

# The operator tables (rules/ops/*.toml) register themselves; their module needs no torch.
import neuronlint.graph.optables  # noqa: E402,F401,I001
import neuronlint.lockin.tables  # noqa: E402,F401,I001  (registers the [[lockin_*]] and [[nki_replacement]] tables)
