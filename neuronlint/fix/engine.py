"""Plan fixes for one file's findings: the dispatch from a finding's rule to its fixer, and
choosing the edits that can be applied together.

A fix belongs to a finding: only findings the scan reports (selected, not suppressed) are fixed,
and no edit may touch a line that carries a suppressed finding.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace

import libcst as cst

from neuronlint.findings import Finding
from neuronlint.fix.context import FixContext, NoFix
from neuronlint.fix.fixers import FIXERS
from neuronlint.fix.flavours import Flavour
from neuronlint.fix.model import Edit, Plan, overlaps
from neuronlint.fix.source import SourceFile


@dataclass
class FilePlan:
    """The fixes planned for one file: one Plan per fixable finding (by index in `findings`)."""

    path: str
    findings: list[Finding]
    plans: dict[int, Plan]
    error: str | None = None

    def selected(self, unsafe: bool) -> list[int]:
        return [i for i, plan in self.plans.items() if unsafe or plan.applicability == "safe"]


def plan_file(path: str, code: str, findings: Iterable[Finding], flavour: Flavour) -> FilePlan:
    """Plan a fix for every finding of one file that has a fixer; suppressed findings get none."""
    findings = list(findings)
    try:
        source = SourceFile.parse(code)
    except cst.ParserSyntaxError as exc:
        return FilePlan(path, findings, {}, error=f"cannot parse: {exc.message}")
    context = FixContext(source, flavour)
    blocked = suppressed_lines(findings)
    plans: dict[int, Plan] = {}
    for index, finding in enumerate(findings):
        if finding.suppressed is not None or finding.rule not in FIXERS:
            continue
        plan = plan_one(finding, source, context)
        if plan is not None and not blocks(plan, blocked):
            plans[index] = plan
    return FilePlan(path, findings, plans)


def suppressed_lines(findings: Iterable[Finding]) -> set[int]:
    """The lines of a file's suppressed findings: no edit may touch them."""
    return {line for f in findings if f.suppressed is not None for line in range(f.line, f.end_line + 1)}


def blocks(plan: Plan, blocked: set[int]) -> bool:
    """Whether one of the plan's edits touches a line of a suppressed finding."""
    return any(_touches(edit, blocked) for edit in plan.edits)


def plan_one(finding: Finding, source: SourceFile, context: FixContext) -> Plan | None:
    """The fix of one finding (of a rule with a fixer) in a parsed file, or None. A fixer reads the
    finding's rule and span only, and the file's context gives every finding the same shared
    edits (an import, the device variable), so a finding's plan does not depend on the file's
    other findings: the scan's workers plan them (pipeline.plan_fixes) as this does."""
    nodes = source.at(finding.line, finding.column, finding.end_line, finding.end_column)
    if not nodes:
        return None
    try:
        plan = FIXERS[finding.rule](finding, nodes, context)
    except NoFix:
        return None
    if plan is None or not plan.edits:
        return None
    newline = source.module.default_newline
    if newline != "\n":  # fixers write "\n"; the file keeps its own line endings
        edits = tuple(
            replace(e, content=e.content.replace("\r\n", "\n").replace("\n", newline)) for e in plan.edits
        )
        plan = replace(plan, edits=edits)
    return plan


def _touches(edit: Edit, lines: set[int]) -> bool:
    if edit.start == edit.end and edit.column == 1:
        return False  # a whole-line insertion before a line leaves that line alone
    return any(line in lines for line in range(edit.line, edit.end_line + 1))


def choose(plans: list[Plan]) -> tuple[list[Edit], list[Plan]]:
    """Edits of the plans that can be applied together (first come, first served); the rest wait
    for the next round, as ruff does."""
    taken: list[Edit] = []
    applied: list[Plan] = []
    for plan in plans:
        fresh = list(dict.fromkeys(e for e in plan.edits if e not in taken))
        if any(overlaps(e, t) for e in fresh for t in taken) or any(
            overlaps(a, b) for i, a in enumerate(fresh) for b in fresh[i + 1 :]
        ):
            continue
        taken.extend(fresh)
        applied.append(plan)
    return taken, applied
