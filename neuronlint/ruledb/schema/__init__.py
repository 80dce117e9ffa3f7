"""Schema of every rule database file, checked in code so that every error names file, table and key.

Each file under `rules/` holds arrays of tables (`[[rule]]`, `[[release]]`, ...). FILE_TABLES below
is the whole list: a top-level table name, its element spec, and the key that identifies an entry
(used for duplicates and for policy-pack overrides; None = entries have no identity). Adding a
table = its spec in one module here and one line in FILE_TABLES; the loader and `rules diff` read
nothing else. `rules diff` reads the `op` table for "ops gained/lost" (neuronlint/ruledb/diff.py).
"""

from __future__ import annotations

from neuronlint.ruledb.schema import apis, catalogue, lockin, ops, platform, serving
from neuronlint.ruledb.schema.catalogue import PLATFORM_CONDITIONS
from neuronlint.ruledb.schema.spec import (
    CHIPS,
    F,
    Names,
    SchemaError,
    Table,
    is_https_url,
    is_versioned_url,
    validate_table,
)

# Top-level array-of-tables name -> (element spec, key that identifies an entry or None), by file.
FILE_TABLES: dict[str, tuple[Table, str | None]] = {
    # rules/catalogue/*.toml
    "rule": (catalogue.RULE, "id"),
    # rules/releases.toml, rules/chips.toml, rules/platform.toml
    "release": (platform.RELEASE, "version"),
    "chip": (platform.CHIP, "name"),
    "platform": (platform.PLATFORM, None),
    # rules/sources.toml
    "living_source": (platform.LIVING_SOURCE, "url"),
    # rules/apis.toml, rules/libraries.toml
    "api": (apis.API, "name"),
    "library": (apis.LIBRARY, "name"),
    # rules/serving.toml
    "serving": (serving.SERVING, "name"),
    # rules/ops/*.toml
    "torch_xla": (ops.TORCH_XLA, "version"),
    "op": (ops.OP, "name"),
    "op_confirmed": (ops.OP_CONFIRMED, "name"),
    "op_rejection": (ops.OP_REJECTION, "id"),
    # rules/lockin.toml, rules/nki-library.toml
    "lockin_area": (lockin.AREA, "name"),
    "lockin_weight": (lockin.WEIGHT, "name"),
    "lockin_scope": (lockin.SCOPE, "name"),
    "lockin_effort": (lockin.EFFORT, "effort"),
    "lockin_grade": (lockin.GRADE, "grade"),
    "lockin_model": (lockin.MODEL, "name"),
    "nki_replacement": (lockin.NKI_REPLACEMENT, "kind"),
}

__all__ = [
    "CHIPS",
    "FILE_TABLES",
    "PLATFORM_CONDITIONS",
    "F",
    "Names",
    "SchemaError",
    "Table",
    "is_https_url",
    "is_versioned_url",
    "validate_table",
]
