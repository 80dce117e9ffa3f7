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


_PLATFORM_CLAUSE = re.compile(r"""(sys_platform|platform_system|os_name)\s*(==|!=)\s*["']([^"']*)["']""")
_LINUX = {"sys_platform": "linux", "platform_system": "Linux", "os_name": "posix"}


def installs_on_linux(requirement: str) -> bool:
    """False when the entry's environment marker excludes a Linux host (`; sys_platform == "win32"`).

    Only the platform clauses are read; a marker joined with `or` is excluded only when every
    platform clause is false on Linux.
    """
    _, _, marker = requirement.partition(";")
    clauses = _PLATFORM_CLAUSE.findall(marker)
    if not clauses:
        return True
    truths = [(value == _LINUX[key]) == (op == "==") for key, op, value in clauses]
    if re.search(r"\bor\b", marker):
        return any(truths)
    return all(truths)
