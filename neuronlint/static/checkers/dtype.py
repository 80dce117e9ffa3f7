"""dtype: complex results requested by keyword. (dtype names like torch.float64 are table-driven.)"""

from __future__ import annotations

import libcst as cst

from neuronlint.static.calls import is_true
from neuronlint.static.context import FileContext
from neuronlint.static.registry import Checker, on


class Dtype(Checker):
    """Complex results requested by keyword (NL502); dtype names such as torch.float64 are [[api]] rows."""

    emits = {"NL502": ("dtype", "op", "api")}
    triggers = (
        "float64",
        "double",
        "complex",
        "cfloat",
        "cdouble",
        "chalf",
        "float8",
        "float4",
        "polar",
        "fft",
        "stft",
        "int64",
        "long",
        "uint64",
        "triangular",
    )

    @on(cst.Arg)
    def return_complex(self, node: cst.Arg, ctx: FileContext) -> None:
        if node.keyword is not None and node.keyword.value == "return_complex" and is_true(node.value):
            ctx.report("NL502", node, dtype="complex", op="return_complex=True", api="return_complex=True")
