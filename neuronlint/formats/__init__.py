"""Output formats. Each module renders a Report to text; adding a format is adding one module here."""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import Any

from neuronlint.findings import Finding
from neuronlint.ruledb import Context, RuleDB

# format name -> module under neuronlint.formats exposing render(report) -> str
FORMATS: dict[str, str] = {
    "text": "text",
    "json": "json",
    "sarif": "sarif",
    "github": "github",
    "gitlab": "gitlab",
    "markdown": "markdown",
}


@dataclass
class Report:
    """What a reporter needs: the findings to show plus the frame they were judged in."""

    findings: list[Finding]  # findings to report (suppressed ones included, flagged as such)
    context: Context
    db: RuleDB
    files: list[str]
    lines: int
    statistics: bool = False
    show_source: bool = True
    extra: dict[str, Any] = field(default_factory=dict)  # format-specific additions (baseline, diff…)

    @property
    def active(self) -> list[Finding]:
        return [f for f in self.findings if f.suppressed is None]


def render(format_name: str, report: Report) -> str:
    module = importlib.import_module(f"neuronlint.formats.{FORMATS[format_name]}")
    return module.render(report)


def summary(findings: list[Finding]) -> dict[str, Any]:
    """Counts by severity and by category (active findings only): shared by JSON and other formats."""
    by_severity = {"blocker": 0, "warning": 0, "info": 0}
    by_category: dict[str, dict[str, int]] = {}
    by_rule: dict[str, int] = {}
    for f in findings:
        if f.suppressed is not None:
            continue
        by_severity[f.severity.value] += 1
        cat = by_category.setdefault(f.category, {"blocker": 0, "warning": 0, "info": 0})
        cat[f.severity.value] += 1
        by_rule[f.rule] = by_rule.get(f.rule, 0) + 1
    return {
        "total": sum(by_severity.values()),
        "by_severity": by_severity,
        "by_category": dict(sorted(by_category.items())),
        "by_rule": dict(sorted(by_rule.items())),
        "suppressed": sum(1 for f in findings if f.suppressed is not None),
    }
