"""Lookup tables the static checkers need, compiled once from the rule database.

Plain dicts and tuples only: the object is sent to worker processes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from neuronlint.ruledb import RuleDB


@dataclass(frozen=True)
class StaticData:
    """The tables the checkers read, derived once from the database."""

    api_exact: dict[str, dict[str, Any]]
    api_prefix: dict[str, dict[str, Any]]  # dotted prefix -> entry (matches the name and below)
    methods: dict[str, dict[str, Any]]
    attributes: dict[str, dict[str, Any]]
    library_modules: dict[str, dict[str, Any]]  # module prefix -> library
    library_packages: dict[str, dict[str, Any]]
    serving: tuple[dict[str, Any], ...] = ()  # rules/serving.toml entries (NL080, filetypes/)
    api_stems: tuple[tuple[str, dict[str, Any]], ...] = ()  # (text, entry): names starting with it

    def api(self, qualname: str) -> dict[str, Any] | None:
        """The api entry for a qualified name: exact match first, then the longest prefix."""
        entry = self.api_exact.get(qualname)
        if entry is not None:
            return entry
        entry = _longest_prefix(self.api_prefix, qualname)
        if entry is None:
            for stem, row in self.api_stems:
                if qualname.startswith(stem):
                    return row
        return entry

    def imported_api(self, module: str) -> dict[str, Any] | None:
        """The api row whose import line is itself a finding (`import torch.backends.cudnn`)."""
        entry = self.api(module)
        return entry if entry is not None and entry.get("import_line") else None

    def library(self, module: str) -> dict[str, Any] | None:
        return _longest_prefix(self.library_modules, module)


def _longest_prefix(table: dict[str, dict[str, Any]], dotted: str) -> dict[str, Any] | None:
    """Entry for the longest dotted prefix of `dotted` in `table` ('a.b.c' tries a.b.c, a.b, a).

    One dict lookup per name component: these run for every call and attribute in every file.
    """
    while dotted:
        entry = table.get(dotted)
        if entry is not None:
            return entry
        cut = dotted.rfind(".")
        if cut < 0:
            return None
        dotted = dotted[:cut]
    return None


def build_static_data(db: RuleDB) -> StaticData:
    exact, prefix, methods, attributes = {}, {}, {}, {}
    stems: list[tuple[str, dict[str, Any]]] = []
    for entry in db.tables.get("api", ()):
        kind = entry["kind"]
        if kind == "name":
            exact[entry["name"]] = entry
        elif kind == "prefix":
            prefix[entry["name"]] = entry
        elif kind == "stem":
            stems.append((entry["name"], entry))
        elif kind == "method":
            methods[entry["name"]] = entry
        else:
            attributes[entry["name"]] = entry
    modules = {m: lib for lib in db.tables.get("library", ()) for m in lib["modules"]}
    packages = {
        p.lower().replace("_", "-"): lib for lib in db.tables.get("library", ()) for p in lib["packages"]
    }
    serving = tuple(dict(entry) for entry in db.tables.get("serving", ()))
    return StaticData(exact, prefix, methods, attributes, modules, packages, serving, tuple(stems))


def library_facts(lib: dict[str, Any]) -> dict[str, Any]:
    """What a library's record says (rules/libraries.toml): NL401-NL404 messages, severity and advice
    follow it (what the library runs on, its Neuron path, its alternative with and without NKI)."""
    return {
        "library": lib["name"],
        "support": lib["support"],
        "runs_on": lib.get("runs_on", "an undocumented set of devices"),
        "neuron_path": lib.get("neuron_path"),
        "alternative": lib["alternative"],
        "alternative_no_nki": lib.get("alternative_no_nki") or lib["alternative"],
    }
