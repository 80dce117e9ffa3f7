"""Rule selection: `--select`, `--extend-select`, `--ignore` and `per-file-ignores`.

A selector is a rule ID, an ID prefix (`NL1`), a category name (`dtype`) or `ALL`. A rule is
reported when no ignore matches it and an extend-select matches it, or, failing that, a select
matches it (no select: the rule's `default_enabled`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from neuronlint.discover import excluded, relative_posix
from neuronlint.ruledb import RuleDB, RuleDBError


class SelectorError(RuleDBError):
    """A rule selector that names no rule, prefix or category (a usage error: exit 2)."""


def normalise_selector(value: str) -> str:
    """Selectors are case-insensitive: IDs, prefixes and `ALL` upper-case, categories lower-case."""
    value = value.strip()
    upper = value.upper()
    return upper if upper == "ALL" or re.fullmatch(r"NL\d*", upper) else value.lower()


def known_selectors(db: RuleDB) -> list[str]:
    """Every valid selector spelt in full: `ALL`, the rule IDs and the category names."""
    return ["ALL", *sorted(db.rules), *sorted({r.category for r in db.rules.values()})]


def check_selectors(db: RuleDB, selectors: Iterable[str], where: str) -> None:
    """Raise SelectorError for the first selector (from `where`) that matches no rule."""
    categories = {r.category for r in db.rules.values()}
    for selector in selectors:
        if selector == "ALL" or selector in categories or any(r.startswith(selector) for r in db.rules):
            continue
        import difflib  # only for a selector that names nothing

        if selector.startswith("NL"):
            close = difflib.get_close_matches(selector, sorted(db.rules), n=3, cutoff=0.6)
        else:
            close = difflib.get_close_matches(selector, sorted(categories), n=3, cutoff=0.5)
        hint = f"; did you mean {', '.join(repr(c) for c in close)}?" if close else ""
        named = sorted(rule_id for rule_id, rule in db.rules.items() if rule.name == selector)
        if named:
            hint = f"; {selector!r} is the name of {', '.join(named)}: select rules by ID"
        raise SelectorError(
            f"unknown rule selector {selector!r} in {where} (a rule ID, an ID prefix such as NL1, "
            f"a category or ALL; `neuronlint rules list` shows them){hint}"
        )


def rule_matches(rule_id: str, category: str, selectors: Iterable[str]) -> bool:
    return any(s == "ALL" or rule_id.startswith(s) or s == category for s in selectors)


def rule_enabled(
    db: RuleDB, rule_id: str, select: list[str], extend_select: list[str], ignore: list[str]
) -> bool:
    rule = db.rules[rule_id]
    if rule_matches(rule_id, rule.category, ignore):
        return False
    if rule_matches(rule_id, rule.category, extend_select):
        return True
    if select:
        return rule_matches(rule_id, rule.category, select)
    return rule.default_enabled


@dataclass(frozen=True)
class Selection:
    """The rules a run reports, globally and per file."""

    select: list[str] = field(default_factory=list)
    extend_select: list[str] = field(default_factory=list)
    ignore: list[str] = field(default_factory=list)
    per_file_ignores: dict[str, list[str]] = field(default_factory=dict)  # glob -> selectors
    config_root: Path | None = None  # per-file-ignores globs are relative to this

    def enabled(self, db: RuleDB, rule_id: str) -> bool:
        """Whether the run reports `rule_id` at all (per-file ignores aside)."""
        return rule_enabled(db, rule_id, self.select, self.extend_select, self.ignore)

    def file_ignores(self, path: str) -> list[str]:
        """The per-file-ignores selectors whose glob matches a reported path."""
        glob_path = relative_posix(Path(path), self.config_root) if self.config_root else path
        return [
            rule
            for glob, rules in self.per_file_ignores.items()
            if excluded(glob_path, [glob])
            for rule in rules
        ]

    def allows(self, db: RuleDB, rule_id: str, path: str, file_ignores: list[str] | None = None) -> bool:
        """Whether a finding of `rule_id` at `path` is reported (`file_ignores`: precomputed for path)."""
        if rule_id not in db.rules:
            return False
        ignores = self.file_ignores(path) if file_ignores is None else file_ignores
        return rule_enabled(db, rule_id, self.select, self.extend_select, self.ignore + ignores)
