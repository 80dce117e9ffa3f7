"""Neuron SDK version strings ("2.29", "2.31.1") as comparable tuples."""

from __future__ import annotations

import re

_VERSION = re.compile(r"^\d+(\.\d+){1,2}$")


def parse_version(text: str) -> tuple[int, ...]:
    """'2.29' -> (2, 29). Raises ValueError on anything that is not dotted integers."""
    text = text.strip().lstrip("v")
    if not _VERSION.match(text):
        raise ValueError(f"not a Neuron SDK version: {text!r} (expected e.g. 2.29 or 2.31.1)")
    return tuple(int(part) for part in text.split("."))


def release_key(text: str) -> str:
    """The release a version belongs to in the database: major.minor ('2.31.1' -> '2.31')."""
    major, minor = parse_version(text)[:2]
    return f"{major}.{minor}"
