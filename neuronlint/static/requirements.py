"""Dependency declarations: requirement strings to normalised package names."""

from __future__ import annotations

import re

_NAME = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)")


def requirement_name(text: str) -> str | None:
    """'flash-attn>=2.0; sys_platform=="linux"' -> 'flash-attn' (PEP 503 normalised, '_' -> '-')."""
    if text.strip().startswith(("#", "-")):
        return None
    match = _NAME.match(text)
    if not match:
        return None
    return re.sub(r"[-_.]+", "-", match.group(1)).lower()
