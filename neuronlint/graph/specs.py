"""Example-input specs for tracing: `dtype[shape]`, e.g. `long[2,128]` or `float32[1,3,224,224]`.

Pure Python (no torch): the parent validates specs before starting the child that makes tensors.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# Accepted spellings -> torch dtype attribute name (torch.<name>).
DTYPE_ALIASES: dict[str, str] = {
    "float": "float32",
    "float32": "float32",
    "f32": "float32",
    "fp32": "float32",
    "double": "float64",
    "float64": "float64",
    "f64": "float64",
    "half": "float16",
    "float16": "float16",
    "f16": "float16",
    "fp16": "float16",
    "bfloat16": "bfloat16",
    "bf16": "bfloat16",
    "long": "int64",
    "int64": "int64",
    "i64": "int64",
    "int": "int32",
    "int32": "int32",
    "i32": "int32",
    "short": "int16",
    "int16": "int16",
    "int8": "int8",
    "uint8": "uint8",
    "byte": "uint8",
    "bool": "bool",
    "complex64": "complex64",
    "cfloat": "complex64",
    "complex128": "complex128",
    "cdouble": "complex128",
    "float8_e4m3fn": "float8_e4m3fn",
    "float8_e5m2": "float8_e5m2",
}

_SPEC = re.compile(r"^\s*([A-Za-z0-9_]+)\s*\[\s*([0-9,\s]*)\]\s*$")


class SpecError(ValueError):
    """An input spec that is not `dtype[shape]`; the message names the spec and the problem."""


@dataclass(frozen=True)
class InputSpec:
    dtype: str  # torch dtype attribute name, e.g. "int64"
    shape: tuple[int, ...]

    def __str__(self) -> str:
        return f"{self.dtype}[{','.join(map(str, self.shape))}]"


def parse_spec(text: str) -> InputSpec:
    """'long[2,128]' -> InputSpec('int64', (2, 128)); '[]' is a 0-d tensor."""
    match = _SPEC.match(text)
    if not match:
        raise SpecError(
            f"input spec {text!r}: expected dtype[shape], e.g. long[2,128] or float32[1,3,224,224]"
        )
    name, dims = match.group(1), match.group(2)
    dtype = DTYPE_ALIASES.get(name.lower())
    if dtype is None:
        known = ", ".join(sorted(set(DTYPE_ALIASES)))
        raise SpecError(f"input spec {text!r}: unknown dtype {name!r} (known: {known})")
    parts = [p.strip() for p in dims.split(",")] if dims.strip() else []
    if any(not p for p in parts):
        raise SpecError(f"input spec {text!r}: empty dimension in the shape")
    return InputSpec(dtype=dtype, shape=tuple(int(p) for p in parts))


def parse_specs(texts: list[str]) -> list[InputSpec]:
    return [parse_spec(t) for t in texts]
