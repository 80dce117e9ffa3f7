"""Schema of rules/apis.toml (`[[api]]`) and rules/libraries.toml (`[[library]]`)."""

from __future__ import annotations

from neuronlint.ruledb.schema.spec import SOURCE, STATUSES, F, Table, rule_id

API = Table(
    {
        "name": F(str, required=True),
        "kind": F(str, required=True, choices=("name", "prefix", "method", "attribute")),
        "rule": F(str, required=True, check=rule_id),
        # method rows: "device" = only calls on values that may live on the device count (a host
        # tensor's `.unique()` is CPU work); by default any receiver that is not numpy/pandas does.
        "receiver": F(str, choices=("device",)),
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
