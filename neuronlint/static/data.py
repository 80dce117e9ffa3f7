"""Lookup tables the static checkers need, compiled once from the rule database.

Plain dicts and tuples only: the object is sent to worker processes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from neuronlint.ruledb import RuleDB


@dataclass(frozen=True)
class StaticData:
    api_exact: dict[str, dict[str, Any]]
    api_prefix: tuple[tuple[str, dict[str, Any]], ...]  # longest prefix first
    methods: dict[str, dict[str, Any]]
    attributes: dict[str, dict[str, Any]]
    library_modules: tuple[tuple[str, dict[str, Any]], ...]  # longest module prefix first
    library_packages: dict[str, dict[str, Any]]

    def api(self, qualname: str) -> dict[str, Any] | None:
        """The api entry for a qualified name: exact match first, then the longest prefix."""
        entry = self.api_exact.get(qualname)
        if entry is not None:
            return entry
        for prefix, candidate in self.api_prefix:
            if qualname == prefix or qualname.startswith(prefix + "."):
                return candidate
        return None

    def library(self, module: str) -> dict[str, Any] | None:
        for prefix, lib in self.library_modules:
            if module == prefix or module.startswith(prefix + "."):
                return lib
        return None


def build_static_data(db: RuleDB) -> StaticData:
    exact, prefix, methods, attributes = {}, [], {}, {}
    for entry in db.tables.get("api", ()):
        kind = entry["kind"]
        if kind == "name":
            exact[entry["name"]] = entry
        elif kind == "prefix":
            prefix.append((entry["name"], entry))
        elif kind == "method":
            methods[entry["name"]] = entry
        else:
            attributes[entry["name"]] = entry
    prefix.sort(key=lambda item: -len(item[0]))
    modules = [(m, lib) for lib in db.tables.get("library", ()) for m in lib["modules"]]
    modules.sort(key=lambda item: -len(item[0]))
    packages = {p.lower().replace("_", "-"): lib for lib in db.tables.get("library", ()) for p in lib["packages"]}
    return StaticData(exact, tuple(prefix), methods, attributes, tuple(modules), packages)
