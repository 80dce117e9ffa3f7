"""Rule selection: `--select`, `--extend-select`, `--ignore` and `per-file-ignores`.

A selector is a rule ID, an ID prefix (`NL1`), a category name (`dtype`) or `ALL`. A rule is
reported when no ignore matches it and an extend-select matches it, or, failing that, a select
matches it (no select: the rule's `default_enabled`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from neuronlint.discover import excluded, relative_posix
from neuronlint.ruledb import RuleDB


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
