"""Build the rule database from the TOML files `loader` read: parse, validate against `schema/`,
merge policy packs over the bundled entries, check references across files.

A policy pack is a directory of TOML files with the same tables. An entry whose identifying key
(rule `id`, library `name`, ...) already exists overrides it key by key; a new entry must be
complete. Packs are validated exactly like the bundled files.
"""

from __future__ import annotations

import string
import sys
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from neuronlint.findings import CATEGORIES, Severity
from neuronlint.ruledb.cases import build_case, page_cases
from neuronlint.ruledb.model import (
    Advice,
    Chip,
    Condition,
    PlatformFact,
    Release,
    Rule,
    RuleDB,
    RuleDBError,
    SdkRange,
    VerdictRule,
)
from neuronlint.ruledb.schema import (
    FILE_TABLES,
    PLATFORM_CONDITIONS,
    SchemaError,
    is_versioned_url,
    validate_table,
)
from neuronlint.ruledb.versions import parse_version, release_key

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib


class _Entries:
    """Raw entries per table, merged across directories, remembering where each came from."""

    def __init__(self) -> None:
        self.by_table: dict[str, dict[Any, dict[str, Any]]] = {name: {} for name in FILE_TABLES}
        self.where: dict[tuple[str, Any], str] = {}  # (table, ident) -> label for error messages
        self.file: dict[tuple[str, Any], str] = {}  # (table, ident) -> file that last set it
        self.rank: dict[tuple[str, Any], int] = {}  # (table, ident) -> directory index
        self.policy_severity: dict[str, str] = {}  # rule id -> severity a policy pack fixes for every frame


def compile_files(files: Sequence[tuple[int, Path, bytes]], fingerprint: str) -> RuleDB:
    """Parse, validate and build the database from (rank, displayed path, bytes) in load order."""
    parsed: list[tuple[Path, dict[str, Any], int]] = []
    for rank, path, raw in files:
        try:
            data = tomllib.loads(raw.decode("utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise RuleDBError(f"{path}: not valid TOML: {exc}") from None
        except RecursionError:
            raise RuleDBError(f"{path}: not valid TOML: arrays or tables nest too deeply") from None
        parsed.append((path, data, rank))
    # Names other tables may refer to (a verdict's `targets`), known before any entry is validated.
    known = {"chip": _chip_names(data for _, data, _ in parsed)}
    entries = _Entries()
    for path, data, rank in parsed:
        _merge_file(path, data, entries, rank, known)
    try:
        db = _build(entries, fingerprint)
        _check_references(db, entries)
    except SchemaError as exc:
        raise RuleDBError(str(exc)) from None
    return db


def _chip_names(files: Iterable[dict[str, Any]]) -> tuple[str, ...]:
    """The `name` of every [[chip]] in every file, in file order: the chips are data, nowhere else."""
    names: dict[str, None] = {}
    for data in files:
        chips = data.get("chip")
        for chip in chips if isinstance(chips, list) else ():
            if isinstance(chip, dict) and isinstance(chip.get("name"), str):
                names[chip["name"]] = None
    return tuple(names)


def _merge_file(
    path: Path, data: dict[str, Any], entries: _Entries, rank: int, known: Mapping[str, Sequence[str]]
) -> None:
    for table_name, items in data.items():
        if table_name not in FILE_TABLES:
            known = ", ".join(f"[[{t}]]" for t in FILE_TABLES)
            raise RuleDBError(f"{path}: key '{table_name}': unknown table (expected one of {known})")
        if not isinstance(items, list):
            raise RuleDBError(f"{path}: key '{table_name}': write it as an array of tables, [[{table_name}]]")
        spec, unique = FILE_TABLES[table_name]
        for index, item in enumerate(items):
            label = f"{path}: [[{table_name}]] #{index + 1}"
            if not isinstance(item, dict):
                raise RuleDBError(f"{label}: key '{table_name}': expected a table, got {item!r}")
            if unique is None:
                ident: Any = (rank, str(path), index)
                merged = item
            else:
                ident = item.get(unique)
                if ident is None:
                    raise RuleDBError(f"{label}: key '{unique}': required key is missing")
                if table_name == "release" and isinstance(ident, str):
                    try:
                        ident = release_key(ident)
                    except ValueError as exc:
                        raise RuleDBError(f"{label}: key 'version': {exc}") from None
                label += f" ({unique}={item[unique]!r})"
                previous = entries.by_table[table_name].get(ident)
                if previous is not None and entries.file[(table_name, ident)] == str(path):
                    raise RuleDBError(
                        f"{label}: key '{unique}': duplicate entry {item[unique]!r} in the same file"
                    )
                if previous is not None and entries.rank[(table_name, ident)] == rank:
                    other = entries.where[(table_name, ident)]
                    raise RuleDBError(
                        f"{label}: key '{unique}': {item[unique]!r} is already defined in {other}"
                    )
                if previous is None and rank > 0:
                    _check_complete_new_entry(item, spec, label, table_name, unique)
                # A later directory overrides an entry key by key (a policy pack may change one severity).
                merged = {**previous, **item} if previous is not None else item
                if table_name == "rule" and previous is not None and rank > 0 and "severity" in item:
                    entries.policy_severity[ident] = item["severity"]
            try:
                validate_table(merged, spec, label, known)
                if table_name == "rule" and merged["category"] not in CATEGORIES:
                    raise SchemaError(
                        label,
                        "category",
                        f"expected one of {', '.join(CATEGORIES)}, got {merged['category']!r}",
                    )
            except SchemaError as exc:
                raise RuleDBError(str(exc)) from None
            entries.by_table[table_name][ident] = merged
            entries.where[(table_name, ident)] = label
            entries.file[(table_name, ident)] = str(path)
            entries.rank[(table_name, ident)] = rank


def _check_complete_new_entry(item: dict[str, Any], spec: Any, label: str, table: str, unique: str) -> None:
    """A pack entry with an unknown ID must be a whole new entry, not an override of nothing."""
    missing = [k for k, f in spec.fields.items() if f.required and k not in item]
    if missing:
        raise RuleDBError(
            f"{label}: key '{unique}': no {table} {item[unique]!r} in the database to override "
            f"(a new {table} also needs: {', '.join(missing)})"
        )


def _condition(when: dict[str, Any]) -> Condition:
    return Condition(
        sdk=SdkRange.parse(when["sdk"]) if "sdk" in when else None,
        targets=tuple(when.get("targets", ())),
        backend=when.get("backend"),
        platform=dict(when.get("platform", {})),
        facts=dict(when.get("facts", {})),
    )


def _build(entries: _Entries, fingerprint: str) -> RuleDB:
    by_table = entries.by_table
    rules = {
        rid: _build_rule(d, entries.where[("rule", rid)], entries.policy_severity.get(rid))
        for rid, d in by_table["rule"].items()
    }
    releases = {key: _build_release(d) for key, d in by_table["release"].items()}
    chips = {name: _build_chip(d) for name, d in by_table["chip"].items()}
    if not releases:
        raise RuleDBError("the rule database has no [[release]] entries")
    # Policy packs (higher rank) come first so that their platform entries win.
    platform_items = sorted(
        by_table["platform"].items(), key=lambda item: (-item[0][0], item[0][1], item[0][2])
    )
    platform = tuple(
        _build_platform(d, f"{ident[1]}: [[platform]] #{ident[2] + 1}") for ident, d in platform_items
    )
    tables = {
        name: list(values.values())
        for name, values in by_table.items()
        if name not in ("rule", "release", "chip", "platform")
    }
    return RuleDB(
        rules=rules, releases=releases, chips=chips, platform=platform, tables=tables, fingerprint=fingerprint
    )


def _check_template(text: Any, where: str, key: str) -> None:
    """A message template may only name facts: `{name}`, no positions, attributes or indexes."""
    if not isinstance(text, str):
        return
    try:
        fields = [name for _, name, _, _ in string.Formatter().parse(text) if name is not None]
    except ValueError as exc:
        raise SchemaError(where, key, f"not a valid message template: {exc}") from None
    for name in fields:
        if not name.isidentifier():
            raise SchemaError(where, key, f"template field {{{name}}}: a field names a fact, e.g. {{symbol}}")


def _build_rule(d: dict[str, Any], where: str, policy_severity: str | None = None) -> Rule:
    _check_template(d.get("message"), where, "message")
    for language, text in dict(d.get("instead", {})).items():
        _check_template(text, where, f"instead.{language}")
    verdicts = []
    for index, v in enumerate(d.get("verdict", ())):
        when = _condition(v["when"])
        if when.depends_on_platform and not v.get("sources"):
            keys = ", ".join(k for k in PLATFORM_CONDITIONS if k in v["when"])
            raise SchemaError(
                f"{where}.verdict[{index}]",
                "sources",
                f"a verdict that depends on {keys} states a Neuron fact and needs its own sources",
            )
        _check_template(v.get("note"), f"{where}.verdict[{index}]", "note")
        verdicts.append(
            VerdictRule(
                when=when,
                severity=Severity(v["severity"]) if "severity" in v else None,
                status=v.get("status"),
                note=v.get("note", ""),
                sources=tuple(v.get("sources", ())),
                enabled=v.get("enabled", True),
                evidence=v.get("evidence", "documented"),
            )
        )
    cases = tuple(build_case(c, d["id"]) for c in d.get("case", ()))
    example, fixed = page_cases(cases)
    advice = []
    for index, a in enumerate(d.get("advice", ())):
        when = _condition(a["when"])
        if when.depends_on_platform and not a.get("sources"):
            raise SchemaError(
                f"{where}.advice[{index}]",
                "sources",
                "advice that depends on the platform states a Neuron fact and needs its own sources",
            )
        advice.append(Advice(when=when, instead=dict(a["instead"]), sources=tuple(a.get("sources", ()))))
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
        example=example.shown if example else "",
        example_fixed=fixed.shown if fixed else "",
        cases=cases,
        sources=tuple(d["sources"]),
        verdicts=tuple(verdicts),
        replacement=dict(d.get("replacement", {})),
        effort=d.get("effort", "mechanical"),
        origin=d.get("origin", "static"),
        default_enabled=d.get("default_enabled", True),
        unit=d.get("unit", ""),
        library=d.get("library", ""),
        fix=dict(d.get("fix", {})),
        file=where.split(": [[", 1)[0],
        policy_severity=Severity(policy_severity) if policy_severity else None,
        advice=tuple(advice),
    )


def _build_release(d: dict[str, Any]) -> Release:
    return Release(
        version=release_key(d["version"]),
        date=d["date"],
        backends=d["backends"],
        changes=tuple(d.get("changes", ())),
        source=d["source"],
        note=d.get("note", ""),
        raw=d,
    )


def _build_chip(d: dict[str, Any]) -> Chip:
    return Chip(
        name=d["name"],
        title=d["title"],
        neuroncore=d["neuroncore"],
        cores=d["cores"],
        hbm_gib=d["hbm_gib"],
        int64_mode=d["int64_mode"],
        dtypes=d["dtypes"],
        source=d["source"],
        raw=d,
    )


def _build_platform(d: dict[str, Any], where: str) -> PlatformFact:
    return PlatformFact(
        fact=d["fact"],
        value=d["value"],
        when=_condition({k: d[k] for k in ("sdk", "targets", "backend") if k in d}),
        flag=d.get("flag"),
        note=d.get("note", ""),
        source=d["source"],
        file=where,
        evidence=d.get("evidence", "documented"),
    )


_SOURCE_KEYS = ("source", "sources", "support_source")


def _cited_urls(value: Any, path: str = "") -> list[tuple[str, str]]:
    """(key path, URL) for every source a raw entry cites, nested tables and arrays included."""
    found: list[tuple[str, str]] = []
    if isinstance(value, dict):
        for key, item in value.items():
            where = f"{path}.{key}" if path else key
            if key in _SOURCE_KEYS:
                urls = item if isinstance(item, list) else [item]
                found.extend((where, u) for u in urls if isinstance(u, str))
            else:
                found.extend(_cited_urls(item, where))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found.extend(_cited_urls(item, f"{path}[{index}]"))
    return found


def _check_sources_versioned(entries: _Entries) -> None:
    """Every cited URL is versioned (a release tag, commit, version) or declared a living page."""
    living = set(entries.by_table.get("living_source", {}))
    for table, items in entries.by_table.items():
        if table == "living_source":
            continue
        for ident, item in items.items():
            for key, url in _cited_urls(item):
                if not is_versioned_url(url) and url not in living:
                    raise SchemaError(
                        entries.where[(table, ident)],
                        key,
                        f"{url} is not a versioned page (a release tag, commit or version); cite the "
                        "versioned page, or declare it in a [[living_source]] entry with the reason",
                    )


def _check_libraries(db: RuleDB, entries: _Entries) -> None:
    """A library's claim about what it runs on names its source; a Neuron path names the path."""
    for lib in db.tables.get("library", ()):
        where = entries.where[("library", lib["name"])]
        if lib["support"] != "unknown" and not lib.get("support_source"):
            raise SchemaError(where, "support_source", f"support = {lib['support']!r} needs its own source")
        if lib["support"] == "neuron-path" and not lib.get("neuron_path"):
            raise SchemaError(where, "neuron_path", "support = 'neuron-path' names the path")


def _check_references(db: RuleDB, entries: _Entries) -> None:
    """Cross-file checks: names one file uses must exist in another."""
    _check_sources_versioned(entries)
    _check_libraries(db, entries)
    facts = set(db.platform_fact_names())
    for rule in db.rules.values():
        where = entries.where[("rule", rule.id)]
        conditions = [(f"verdict[{i}]", v.when) for i, v in enumerate(rule.verdicts)]
        conditions += [(f"advice[{i}]", a.when) for i, a in enumerate(rule.advice)]
        for label, when in conditions:
            for name in when.platform:
                if name not in facts:
                    raise SchemaError(
                        f"{where}.{label}.when.platform",
                        name,
                        f"unknown platform fact (rules/platform.toml defines: {', '.join(sorted(facts))})",
                    )
    for key, release in db.releases.items():
        where = entries.where[("release", key)]
        if not release.backends:
            raise SchemaError(
                where, "backends", "a release needs at least one PyTorch backend (xla or native)"
            )
        for backend, info in release.backends.items():
            missing = [c for c in info["chips"] if c not in db.chips]
            if missing:
                raise SchemaError(f"{where}.backends.{backend}", "chips", f"no [[chip]] named {missing[0]!r}")
    for api in db.tables.get("api", ()):
        if api["rule"] not in db.rules:
            where = entries.where[("api", api["name"])]
            raise SchemaError(where, "rule", f"no rule {api['rule']!r} in the database")
    # A verdict whose SDK range matches no release in the database is dead data, usually a typo.
    known = {parse_version(v) for v in db.releases}
    for rule in db.rules.values():
        for index, verdict in enumerate(rule.verdicts):
            rng = verdict.when.sdk
            if rng is not None and not any(rng.contains(v) for v in known):
                where = entries.where[("rule", rule.id)]
                raise SchemaError(
                    f"{where}.verdict[{index}].when",
                    "sdk",
                    f"range {rng.text!r} matches no release in the database",
                )
