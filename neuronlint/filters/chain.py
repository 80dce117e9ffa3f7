"""Every filter of a run, in one fixed order (see neuronlint/filters/__init__.py).

`scope()` runs inside the scan, per file: rule selection and per-file ignores, then in-source
suppressions. `apply_filters()` runs on the scan's findings (graph findings merged in): NL003,
fingerprints, baseline, changed lines, severity. Neither knows the pipeline: they take findings,
the database frame and a `Selection`.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from neuronlint import fingerprints, gitrepo
from neuronlint.filters import scope as scope_filter
from neuronlint.filters import suppressions
from neuronlint.filters.selection import Selection
from neuronlint.filters.unused import is_broken, unused_suppression_findings
from neuronlint.findings import Finding, Severity
from neuronlint.ruledb import Context, RuleDB

if TYPE_CHECKING:  # the baseline and changed-line filters are imported only when they run
    from neuronlint.filters.baseline import BaselineSummary
    from neuronlint.filters.changed_lines import ChangedLines, DiffSummary

Suppression = dict[str, Any]  # one parsed `# neuronlint: ignore[...]` comment


class FilterError(Exception):
    """A filter cannot run (bad baseline file, missing diff base); one line for the user."""


def scope(
    files: Iterable[tuple[str, list[Finding], list[Suppression]]], db: RuleDB, selection: Selection
) -> tuple[list[Finding], list[tuple[str, Suppression]]]:
    """Per file (path, judged findings, its suppression comments): keep the selected rules, then
    mark the findings a comment silences. Returns the findings in report order (suppressed ones
    included, flagged) and the (path, comment) pairs that silenced nothing."""
    findings: list[Finding] = []
    unused: list[tuple[str, Suppression]] = []
    for path, judged, comments in files:
        ignores = selection.file_ignores(path)
        kept = [f for f in judged if selection.allows(db, f.rule, path, ignores)]
        if comments:
            unused += [(path, entry) for entry in suppressions.apply(kept, comments)]
        findings += kept
    findings.sort(key=Finding.sort_key)
    return findings, unused


@dataclass
class FilterRequest:
    """What the filters after the scan are asked to do (the command line's filter options)."""

    baseline: Path | None = None
    diff_base: str | None = None
    report_unused_suppressions: bool = False
    formats: tuple[str, ...] = ()  # output formats of this run (GitHub annotations want changed lines first)
    min_severity: Severity = Severity.INFO  # --severity
    scopes: frozenset[str] | None = None  # --scope (None: every scope)
    # Fingerprints and the repository prefix (a git call): off only for outputs that show neither
    # (text, concise), so a one-file text scan does not pay for them.
    identities: bool = True


@dataclass
class FilterOutcome:
    """The findings the filters left for the report, and what each filter did."""

    findings: list[Finding]  # what the report shows
    scanned: list[Finding]  # every finding of the scan (NL003 included, fingerprinted): lock-in scores these
    cwd: Path
    repo_prefix: str = ""
    notes: list[str] = field(default_factory=list)  # one-line messages for stderr
    baseline: BaselineSummary | None = None
    diff_base: DiffSummary | None = None
    changed_lines: ChangedLines | None = None  # also set when it only orders annotations
    # --severity: the active findings it left out, by severity ("warning" -> 2287); {} = none hidden
    hidden_by_severity: dict[str, int] = field(default_factory=dict)
    min_severity: str = "info"


def github_pr_base() -> str | None:
    """The pull request's base branch inside GitHub Actions (`origin/<base>`), else None."""
    base = os.environ.get("GITHUB_BASE_REF", "").strip()
    return f"origin/{base}" if base and os.environ.get("GITHUB_ACTIONS") == "true" else None


def apply_filters(
    findings: list[Finding],
    unused: list[tuple[str, Suppression]],
    *,
    files: list[str],
    db: RuleDB,
    context: Context,
    selection: Selection,
    request: FilterRequest,
    cwd: Path,
) -> FilterOutcome:
    """The filters after the scan, in order; raises FilterError with a one-line message.

    1. unused suppressions become NL003 findings (--report-unused-suppressions; misspelt ones and
       ones naming no rule always),
    2. every finding gets its fingerprint (before anything is dropped, so occurrences are stable),
    3. the baseline hides known findings (--baseline FILE),
    4. only findings on changed lines stay (--diff-base REF),
    5. only findings at or above --severity stay.
    """
    findings = list(findings)
    if request.report_unused_suppressions:
        findings.extend(unused_suppression_findings(unused, db, context, selection, cwd))
    else:  # a misspelt keyword or a rule that does not exist is always reported: it silences nothing
        broken = [(path, entry) for path, entry in unused if is_broken(entry, db)]
        findings.extend(unused_suppression_findings(broken, db, context, selection, cwd))
    findings.sort(key=Finding.sort_key)
    path_prefix = ""
    if request.identities or request.baseline is not None:
        path_prefix = gitrepo.prefix(cwd)
        fingerprints.assign(findings, path_prefix)
    outcome = FilterOutcome(findings=findings, scanned=findings, cwd=cwd, repo_prefix=path_prefix)

    if request.baseline is not None:
        from neuronlint.filters import baseline as baseline_filter
        from neuronlint.filters.baseline import BaselineSummary

        try:
            loaded = baseline_filter.load(request.baseline)
        except baseline_filter.BaselineError as exc:
            raise FilterError(str(exc)) from None
        counts = baseline_filter.apply(findings, loaded, files, cwd)
        outcome.findings = [f for f in findings if f.baseline_state != "unchanged"]
        outcome.baseline = BaselineSummary(str(request.baseline), counts.new, counts.unchanged, counts.fixed)
        note = (
            f"baseline {request.baseline}: {counts.new} new, {counts.unchanged} baselined finding(s) hidden"
        )
        if counts.fixed:
            note += (
                f", {counts.fixed} baselined finding(s) no longer found: tighten the baseline with "
                f"`neuronlint baseline create -o {request.baseline}`"
            )
        outcome.notes.append(note)

    base = request.diff_base
    prioritise_only = False
    if base is None and "github" in request.formats:
        base, prioritise_only = github_pr_base(), True
    if base is not None:
        from neuronlint.filters import changed_lines
        from neuronlint.filters.changed_lines import DiffSummary

        try:
            changed = changed_lines.compute(base, cwd)
        except changed_lines.ChangedLinesError as exc:
            if not prioritise_only:
                raise FilterError(str(exc)) from None
            outcome.notes.append(f"annotations not ordered by changed lines: {exc}")
        else:
            outcome.changed_lines = changed
            if not prioritise_only:
                before = sum(1 for f in outcome.findings if f.suppressed is None)
                outcome.findings = changed.filter(outcome.findings, cwd)
                after = sum(1 for f in outcome.findings if f.suppressed is None)
                outcome.diff_base = DiffSummary(base, changed.merge_base, before - after)
                outcome.notes.append(
                    f"--diff-base {base}: {after} finding(s) on lines changed since {changed.merge_base[:12]}, "
                    f"{before - after} elsewhere not reported"
                )

    hidden: dict[str, int] = {}
    for f in outcome.findings:
        if f.severity.rank < request.min_severity.rank and f.suppressed is None:
            hidden[f.severity.value] = hidden.get(f.severity.value, 0) + 1
    outcome.hidden_by_severity = hidden
    outcome.min_severity = request.min_severity.value
    outcome.findings = [f for f in outcome.findings if f.severity.rank >= request.min_severity.rank]
    if request.scopes is not None:
        outcome.findings = scope_filter.select(outcome.findings, request.scopes)
    return outcome
