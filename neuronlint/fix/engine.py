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
    blocked = {line for f in findings if f.suppressed is not None for line in range(f.line, f.end_line + 1)}
    plans: dict[int, Plan] = {}
    for index, finding in enumerate(findings):
        if finding.suppressed is not None or finding.rule not in FIXERS:
            continue
        nodes = source.at(finding.line, finding.column, finding.end_line, finding.end_column)
        if not nodes:
            continue
        try:
            plan = FIXERS[finding.rule](finding, nodes, context)
        except NoFix:
            continue
        if plan is None or not plan.edits:
            continue
        if any(_touches(edit, blocked) for edit in plan.edits):
            continue
        newline = source.module.default_newline
        if newline != "\n":  # fixers write "\n"; the file keeps its own line endings
            edits = tuple(
                replace(e, content=e.content.replace("\r\n", "\n").replace("\n", newline)) for e in plan.edits
            )
            plan = replace(plan, edits=edits)
        plans[index] = plan
    return FilePlan(path, findings, plans)


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
