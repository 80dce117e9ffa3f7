"""Line numbers of import statements, read from the text (cheap; no positions from the tree needed).

Used after all files are analysed, to point cross-file findings (imports of in-repo kernel modules,
of compiled extensions) at the importing line.
"""

from __future__ import annotations

import re

_FROM = re.compile(rb"^([ \t]*)from[ \t]+(\.*)([\w.]*)[ \t]+import[ \t]+\(?([^#\n]*)", re.M)
_IMPORT = re.compile(rb"^([ \t]*)import[ \t]+([\w.][\w., \t]*)", re.M)
# Module-level Python definitions whose names read like compiled extensions (`_C = CN()`, a yacs
# config; `def dtw_cuda(...)`, a Python function): functions, classes and assignments at column 0.
_DEFINED = re.compile(
    rb"^(?:(?:async[ \t]+)?def|class)[ \t]+(\w*(?:_C|_cuda|_cuda_kernel))\b"
    rb"|^(\w*(?:_C|_cuda|_cuda_kernel))[ \t]*(?::[^=\n]*)?=(?!=)",
    re.M,
)


def resolve_relative(module_name: str, is_package: bool, level: int, name: str) -> str:
    if not level:
        return name
    base = module_name.split(".") if module_name else []
    base = base if is_package else base[:-1]
    if level - 1 > len(base):
        return ""
    base = base[: len(base) - (level - 1)]
    return ".".join([*base, name] if name else base)


def import_sites(data: bytes, module_name: str, is_package: bool) -> list[list]:
    """[[module, line, column, end_column], ...] for every module an import line may refer to."""
    sites: list[list] = []
    line, counted = 1, 0  # line of byte offset `counted`; matches come in order, so count on from there
    for match in _FROM.finditer(data):
        line += data.count(b"\n", counted, match.start())
        counted = match.start()
        column = len(match.group(1)) + 1
        end = column + len(match.group(0).rstrip()) - len(match.group(1))
        level = len(match.group(2))
        module = resolve_relative(module_name, is_package, level, match.group(3).decode("utf-8", "replace"))
        if not module:
            continue
        sites.append([module, line, column, end])
        for name in match.group(4).decode("utf-8", "replace").split(","):
            name = name.strip().strip("()").split(" as ")[0].strip()
            if name and name != "*" and name.isidentifier():
                sites.append([f"{module}.{name}", line, column, end])
    line, counted = 1, 0
    for match in _IMPORT.finditer(data):
        line += data.count(b"\n", counted, match.start())
        counted = match.start()
        column = len(match.group(1)) + 1
        end = column + len(match.group(0).rstrip()) - len(match.group(1))
        for name in match.group(2).decode("utf-8", "replace").split(","):
            name = name.strip().split(" as ")[0].strip()
            if name:
                sites.append([name, line, column, end])
    return sites


def defined_names(data: bytes) -> list[str]:
    """Names a module defines in Python at its top level that read like compiled extension modules
    (`_C`, `*_cuda`): an import of one from this module is Python code, not an extension."""
    if b"_C" not in data and b"_cuda" not in data:
        return []
    names = {(m.group(1) or m.group(2)).decode("ascii", "replace") for m in _DEFINED.finditer(data)}
    return sorted(names)
