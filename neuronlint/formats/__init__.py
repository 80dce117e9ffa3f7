"""Output formats of `scan` and `trace`. Each module renders a Report to text and nothing else: no
files written, no environment read for what to show (the GitHub job summary is returned by
`github.job_summary` and written by the CLI). Adding a format is adding one module here.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from neuronlint.findings import Finding
from neuronlint.ruledb import Context, RuleDB

if TYPE_CHECKING:
    from neuronlint.filters.baseline import BaselineSummary
    from neuronlint.filters.changed_lines import ChangedLines, DiffSummary
    from neuronlint.lockin import LockinResult

# format name -> module under neuronlint.formats exposing render(report) -> str
FORMATS: dict[str, str] = {
    "text": "text",
    "concise": "concise",
    "json": "json",
    "sarif": "sarif",
    "github": "github",
    "gitlab": "gitlab",
    "markdown": "markdown",
}
# Formats that show the lock-in score (github: in the job summary); the command computes it for them.
LOCKIN_FORMATS = frozenset({"markdown", "github"})
# Formats that show neither fingerprints nor repository paths: `scan` computes neither for them.
PLAIN_FORMATS = frozenset({"text", "concise"})


@dataclass
class RenderOptions:
    """What the run adds to its findings, and how the command wants them shown."""

    repo_prefix: str = ""  # path of the current directory inside its git repository ("" = its root)
    show_suppressed: bool = False  # text: also list findings silenced by comments
    quiet: bool = False  # text: findings only, no summary
    full: bool = False  # text: every finding with its source line, test code included (--full)
    baseline: BaselineSummary | None = None  # --baseline was used: its counts
    diff_base: DiffSummary | None = None  # --diff-base was used: its counts
    changed_lines: ChangedLines | None = None  # github: findings on these lines are annotated first
    cwd: Path | None = None  # reported paths are relative to this (with changed_lines)
    traces: list[dict[str, Any]] | None = None  # json: the traced models (scan --trace, trace)
    lockin: LockinResult | None = None  # markdown: the lock-in score of the whole scan (None: counts)
    color: bool = False  # text: ANSI styles (the command decides: a terminal, NO_COLOR, FORCE_COLOR)
    width: int | None = None  # text: the terminal's width (None: not a terminal, 120 columns)
    hidden_by_severity: dict[str, int] = field(default_factory=dict)  # --severity left these out
    min_severity: str = "info"  # --severity
    unsafe_fixes: bool = False  # text: --unsafe-fixes was given, so unsafe fixes count as fixable too
    # findings the triage left out as test/benchmark code that runs only with CUDA (by scope)
    left_out: dict[str, int] = field(default_factory=dict)


@dataclass
class Report:
    """What a format needs: the findings to show plus the frame they were judged in."""

    findings: list[Finding]  # findings to report (suppressed ones included, flagged as such)
    context: Context
    db: RuleDB
    files: list[str]
    lines: int
    statistics: bool = False
    show_source: bool = True
    options: RenderOptions = field(default_factory=RenderOptions)

    @property
    def active(self) -> list[Finding]:
        return [f for f in self.findings if f.suppressed is None]


def render(format_name: str, report: Report) -> str:
    module = importlib.import_module(f"neuronlint.formats.{FORMATS[format_name]}")
    return module.render(report)


def plural(count: int, word: str, plural_form: str | None = None) -> str:
    """`1 file`, `2 files`, `1 blocker`, `0 info` (info has no plural)."""
    if count == 1 or word == "info":
        return f"{count} {word}"
    return f"{count} {plural_form or word + 's'}"


def summary(findings: list[Finding]) -> dict[str, Any]:
    """Counts by severity and by category (active findings only): shared by JSON and other formats."""
    by_severity = {"blocker": 0, "warning": 0, "info": 0}
    by_category: dict[str, dict[str, int]] = {}
    by_rule: dict[str, int] = {}
    fixable = {"safe": 0, "unsafe": 0}
    for f in findings:
        if f.suppressed is not None:
            continue
        if f.fix is not None and f.fix.automatic:
            fixable[f.fix.applicability] += 1
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
        "fixable": fixable,  # findings with an automatic fix (`neuronlint fix`), by safety
    }
