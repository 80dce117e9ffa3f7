"""Load the rule database: the bundled `rules/` plus optional policy packs that add or override."""

from __future__ import annotations

import hashlib
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from neuronlint.findings import CATEGORIES, Severity
from neuronlint.ruledb.model import (
    Chip,
    Condition,
    Release,
    Rule,
    RuleDB,
    RuleDBError,
    SdkRange,
    VerdictRule,
)
from neuronlint.ruledb.schema import FILE_TABLES, SchemaError, validate_table

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib


def default_rules_dir() -> Path:
    """The database shipped with neuronlint (a symlink to the repository's `rules/`)."""
    return Path(__file__).resolve().parent.parent / "rules"


_CACHE: dict[tuple[str, ...], RuleDB] = {}


def load_ruledb(extra_dirs: Sequence[Path | str] = ()) -> RuleDB:
    """Load and validate the bundled database, then each extra directory on top of it (once per process)."""
    dirs = [default_rules_dir(), *(Path(d) for d in extra_dirs)]
    key = tuple(str(d.resolve()) for d in dirs)
    if key not in _CACHE:
        _CACHE[key] = _load(dirs)
    return _CACHE[key]


def _load(dirs: Sequence[Path]) -> RuleDB:
    entries: dict[str, dict[Any, dict[str, Any]]] = {name: {} for name in FILE_TABLES}
    origin: dict[tuple[str, Any], str] = {}
    digest = hashlib.sha256()
    for directory in dirs:
        if not directory.is_dir():
            raise RuleDBError(f"{directory}: rules directory does not exist")
        for path in sorted(directory.rglob("*.toml")):
            raw = path.read_bytes()
            digest.update(str(path.relative_to(directory)).encode() + b"\0" + raw)
            try:
                data = tomllib.loads(raw.decode("utf-8"))
            except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
                raise RuleDBError(f"{path}: not valid TOML: {exc}") from None
            _merge_file(path, data, entries, origin)
    try:
        rules = {rid: _build_rule(d, origin[("rule", rid)]) for rid, d in entries["rule"].items()}
        releases = {_release_key(v): _build_release(d) for v, d in entries["release"].items()}
        chips = {name: _build_chip(d) for name, d in entries["chip"].items()}
    except SchemaError as exc:
        raise RuleDBError(str(exc)) from None
    tables = {name: list(values.values()) for name, values in entries.items() if name not in ("rule", "release", "chip")}
    if not releases:
        raise RuleDBError(f"{dirs[0]}: no [[release]] entries found")
    return RuleDB(rules=rules, releases=releases, chips=chips, tables=tables, fingerprint=digest.hexdigest()[:16])


def _release_key(version: str) -> str:
    from neuronlint.ruledb.versions import release_key

    return release_key(version)


def _merge_file(path: Path, data: dict[str, Any], entries: dict, origin: dict) -> None:
    for table_name, items in data.items():
        if table_name not in FILE_TABLES:
            known = ", ".join(f"[[{t}]]" for t in FILE_TABLES)
            raise RuleDBError(f"{path}: key '{table_name}': unknown table (expected one of {known})")
        if not isinstance(items, list):
            raise RuleDBError(f"{path}: key '{table_name}': write it as an array of tables, [[{table_name}]]")
        spec, unique = FILE_TABLES[table_name]
        for index, item in enumerate(items):
            label = f"{path}: [[{table_name}]] #{index + 1}"
            if isinstance(item, dict) and unique and unique in item:
                label += f" ({unique}={item[unique]!r})"
            ident = item.get(unique) if (unique and isinstance(item, dict)) else f"{path}#{index}"
            if unique and ident is None:
                raise RuleDBError(f"{label}: key '{unique}': required key is missing")
            previous = entries[table_name].get(ident)
            # A later directory overrides an entry key by key (a policy pack may change one severity).
            merged = {**previous, **item} if previous is not None and origin.get((table_name, ident)) != str(path) else item
            if previous is not None and origin.get((table_name, ident)) == str(path):
                raise RuleDBError(f"{label}: key '{unique}': duplicate entry {ident!r} in the same file")
            try:
                validate_table(merged, spec, label)
                if table_name == "rule" and merged["category"] not in CATEGORIES:
                    raise SchemaError(label, "category", f"expected one of {', '.join(CATEGORIES)}, got {merged['category']!r}")
            except SchemaError as exc:
                raise RuleDBError(str(exc)) from None
            entries[table_name][ident] = merged
            origin[(table_name, ident)] = str(path)


def _condition(when: dict[str, Any]) -> Condition:
    return Condition(
        sdk=SdkRange.parse(when["sdk"]) if "sdk" in when else None,
        targets=tuple(when.get("targets", ())),
        backend=when.get("backend"),
        facts=dict(when.get("facts", {})),
    )


def _build_rule(d: dict[str, Any], file: str) -> Rule:
    verdicts = tuple(
        VerdictRule(
            when=_condition(v["when"]),
            severity=Severity(v["severity"]) if "severity" in v else None,
            status=v.get("status"),
            note=v.get("note", ""),
            sources=tuple(v.get("sources", ())),
            enabled=v.get("enabled", True),
        )
        for v in d.get("verdict", ())
    )
    return Rule(
        id=d["id"],
        name=d["name"],
        title=d["title"],
        category=d["category"],
        severity=Severity(d["severity"]),
        status=d["status"],
        message=d["message"],
        summary=d["summary"],
        why=d["why"],
        instead=dict(d["instead"]),
        example=d["example"],
        example_fixed=d.get("example_fixed", ""),
        sources=tuple(d["sources"]),
        verdicts=verdicts,
        replacement=dict(d.get("replacement", {})),
        effort=d.get("effort", "mechanical"),
        origin=d.get("origin", "static"),
        default_enabled=d.get("default_enabled", True),
        file=file,
    )


def _build_release(d: dict[str, Any]) -> Release:
    return Release(
        version=d["version"],
        date=d["date"],
        backends=d["backends"],
        changes=tuple(d.get("changes", ())),
        source=d["source"],
        raw=d,
    )


def _build_chip(d: dict[str, Any]) -> Chip:
    return Chip(
        name=d["name"],
        title=d["title"],
        neuroncore=d["neuroncore"],
        cores=d["cores"],
        hbm_gib=d["hbm_gib"],
        dtypes=d["dtypes"],
        source=d["source"],
        raw=d,
    )
