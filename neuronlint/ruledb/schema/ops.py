"""Schema of the operator tables in rules/ops/*.toml (read by the graph analysis, neuronlint/graph/ops.py).

Tables:
  [[torch_xla]]     one per torch-xla version: its git tag and the lowering list it was read from
  [[op]]            one per aten op overload torch-xla lowers: `torch_xla` = versions that lower it
  [[op_confirmed]]  ops on Neuron's "Supported Operators" page (confirmed, not an allow-list)
  [[op_rejection]]  neuronx-cc rejections of an op or a dtype (complex, FNUZ fp8, integer topk...)
"""

from __future__ import annotations

from typing import Any

from neuronlint.ruledb.schema.spec import (
    BACKENDS,
    CHIPS,
    SOURCE,
    STATUSES,
    F,
    Table,
    each,
    is_sdk_range,
    is_version,
    matches,
    scalars,
)

# torch dtype names as `str(torch.float32)` minus the "torch." prefix (what capture records).
DTYPE_NAMES = (
    "float64",
    "float32",
    "float16",
    "bfloat16",
    "complex32",
    "complex64",
    "complex128",
    "int64",
    "int32",
    "int16",
    "int8",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "bool",
    "float8_e4m3fn",
    "float8_e5m2",
    "float8_e4m3fnuz",
    "float8_e5m2fnuz",
    "float8_e8m0fnu",
    "float4_e2m1fn_x2",
)

aten_name = matches(
    r"aten::[A-Za-z0-9_]+(\.[A-Za-z0-9_]+)?",
    "expected an aten op name such as 'aten::add.Tensor' or 'aten::topk'",
)


def _dtypes(value: list[Any]) -> str | None:
    unknown = [d for d in value if d not in DTYPE_NAMES]
    if unknown:
        return (
            f"unknown dtype {unknown[0]!r} (expected torch dtype names such as {', '.join(DTYPE_NAMES[:4])})"
        )
    return None


error_code = matches(r"NCC_[A-Z]{4}\d{3}", "expected a neuronx-cc error code such as 'NCC_EVRF004'")
identifier = matches(r"[a-z0-9][a-z0-9-]*", "expected a lower-case id such as 'complex-dtype'")


TORCH_XLA = Table(
    {
        "version": F(str, required=True, check=is_version, doc="torch-xla major.minor, e.g. '2.9'"),
        "tag": F(str, required=True, doc="git tag of pytorch/xla the lowering list was read at"),
        "source": SOURCE,
    }
)

OP = Table(
    {
        "name": F(str, required=True, check=aten_name, doc="aten op and overload, e.g. 'aten::add.Tensor'"),
        "torch_xla": F(
            list, required=True, items=str, check=each(is_version), doc="torch-xla versions that lower it"
        ),
        "absent_from_torch": F(
            str,
            check=is_version,
            doc="torch major.minor from which on PyTorch does not register this op (the tracer's floor when "
            "it was gone before): no trace on that torch or newer can contain it",
        ),
        "note": F(str),
    }
)

OP_CONFIRMED = Table(
    {
        "name": F(str, required=True, check=aten_name, doc="aten op, any overload, e.g. 'aten::add'"),
        "sdk": F(str, required=True, check=is_sdk_range, doc="Neuron SDK releases whose page lists it"),
        "status": F(str, required=True, choices=STATUSES),
        "absent_from_torch": F(
            str,
            check=is_version,
            doc="torch major.minor from which on PyTorch does not register this op (the tracer's floor when "
            "it was gone before): no trace on that torch or newer can contain it",
        ),
        "source": SOURCE,
    }
)

OP_REJECTION = Table(
    {
        "id": F(str, required=True, check=identifier),
        "code": F(
            str,
            check=error_code,
            doc="neuronx-cc error code, e.g. NCC_EVRF004 (absent when the source gives none)",
        ),
        "ops": F(
            list,
            items=str,
            check=each(aten_name),
            doc="ops it applies to (base name = any overload); absent = every op",
        ),
        "dtypes": F(list, items=str, check=_dtypes, doc="dtypes that trigger it; absent = any dtype"),
        "operands": F(
            str, choices=("any", "inputs", "outputs"), doc="where the dtype must appear (default any)"
        ),
        "sdk": F(str, check=is_sdk_range),
        "targets": F(list, items=str, names=CHIPS),
        "backend": F(str, choices=BACKENDS),
        "platform": F(
            dict,
            check=scalars,
            doc="platform facts (rules/platform.toml), e.g. { complex64 = 'unsupported' }",
        ),
        "status": F(
            str,
            required=True,
            choices=STATUSES,
            doc="unsupported = rejected; unknown = not documented either way",
        ),
        "note": F(str, required=True),
        "source": SOURCE,
    }
)
