"""The filters chosen on the command line, applied after analysis in a fixed order:

1. unused suppressions become NL003 findings (--report-unused-suppressions),
2. every finding gets its fingerprint (before anything is dropped, so occurrences are stable),
3. the baseline hides known findings (--baseline FILE),
4. only findings on changed lines stay (--diff-base REF).

Severity filtering (--severity) happens afterwards in the CLI, on what is left.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from neuronlint import fingerprints, gitrepo
from neuronlint.filters import baseline as baseline_filter
from neuronlint.filters import changed_lines
from neuronlint.findings import Finding
from neuronlint.pipeline import ScanOptions, ScanResult, rule_enabled

UNUSED_SUPPRESSION_RULE = "NL003"


class FilterError(Exception):
    """A filter cannot run (bad baseline file, missing diff base); one line for the user."""


@dataclass
class FilterRequest:
    baseline: Path | None = None
    diff_base: str | None = None
    report_unused_suppressions: bool = False
    formats: tuple[str, ...] = ()  # output formats of this run (GitHub annotations want changed lines first)


@dataclass
class FilterOutcome:
    findings: list[Finding]
    notes: list[str] = field(default_factory=list)  # one-line messages for stderr
    report_extra: dict[str, Any] = field(default_factory=dict)  # merged into Report.extra


def _line_text(path: Path, line: int) -> str:
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            for number, text in enumerate(handle, start=1):
                if number == line:
                    return text.rstrip("\r\n")
    except OSError:
        pass
    return ""


def _rules_all_disabled(selector: str, result: ScanResult, options: ScanOptions) -> bool:
    """True when the rules a suppression names exist but none ran: its use cannot be judged."""
    matching = [rule_id for rule_id in result.db.rules if rule_id.startswith(selector)]
    if not matching:
        return False  # names no rule at all: certainly unused
    return not any(
        rule_enabled(result.db, rule_id, options.select, options.extend_select, options.ignore)
        for rule_id in matching
    )


def unused_suppression_findings(result: ScanResult, options: ScanOptions, cwd: Path) -> list[Finding]:
    """NL003 findings for suppression comments that silenced nothing in this scan.

    A comment naming only rules that this run did not check (e.g. a narrower --select) is not
    reported: nothing says whether it would have been used.
    """
    db = result.db
    if UNUSED_SUPPRESSION_RULE not in db.rules or not rule_enabled(
        db,
        UNUSED_SUPPRESSION_RULE,
        options.select,
        options.extend_select + [UNUSED_SUPPRESSION_RULE],
        options.ignore,
    ):
        return []
    out: list[Finding] = []
    for path, entry in result.unused_suppressions:
        if any(_rules_all_disabled(selector, result, options) for selector in entry["rules"]):
            continue
        names = f"[{', '.join(entry['rules'])}]" if entry["rules"] else ""
        directive = ("-file" if entry["file"] else "") + names
        verdict = db.judge(
            UNUSED_SUPPRESSION_RULE, {"rules": directive, "target": result.context.target}, result.context
        )
        if not verdict.enabled:
            continue
        text = _line_text(cwd / path, entry["line"])
        column = entry["column"]
        end_column = max(len(text) + 1, column + 1)
        out.append(
            Finding(
                rule=UNUSED_SUPPRESSION_RULE,
                category=verdict.rule.category,
                severity=verdict.severity,
                path=path,
                line=entry["line"],
                column=column,
                end_line=entry["line"],
                end_column=end_column,
                message=verdict.message,
                name=verdict.rule.name,
                status=verdict.status,
                snippet=fingerprints.normalise(text) or f"# neuronlint: ignore{directive}",
                extra={"sources": list(verdict.sources)},
            )
        )
    return out


def github_pr_base() -> str | None:
    """The pull request's base branch inside GitHub Actions (`origin/<base>`), else None."""
    base = os.environ.get("GITHUB_BASE_REF", "").strip()
    return f"origin/{base}" if base and os.environ.get("GITHUB_ACTIONS") == "true" else None


def apply_filters(
    result: ScanResult, options: ScanOptions, request: FilterRequest, cwd: Path
) -> FilterOutcome:
    """Run the requested filters over a scan result; raises FilterError with a one-line message."""
    findings = list(result.findings)
    if request.report_unused_suppressions:
        findings.extend(unused_suppression_findings(result, options, cwd))
        findings.sort(key=Finding.sort_key)
    path_prefix = gitrepo.prefix(cwd)
    fingerprints.assign(findings, path_prefix)
    # The whole scan stays available to reports that describe the code base (the lock-in score).
    outcome = FilterOutcome(
        findings=findings,
        report_extra={"repo_prefix": path_prefix, "scan": {"findings": findings, "results": result.results}},
    )
    json_extra: dict[str, Any] = {}

    if request.baseline is not None:
        try:
            loaded = baseline_filter.load(request.baseline)
        except baseline_filter.BaselineError as exc:
            raise FilterError(str(exc)) from None
        counts = baseline_filter.apply(findings, loaded, result.files, cwd)
        outcome.findings = [f for f in findings if f.baseline_state != "unchanged"]
        info = {
            "file": str(request.baseline),
            "new": counts.new,
            "unchanged": counts.unchanged,
            "fixed": counts.fixed,
        }
        outcome.report_extra["baseline"] = info
        json_extra["baseline"] = info
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
        try:
            changed = changed_lines.compute(base, cwd)
        except changed_lines.ChangedLinesError as exc:
            if not prioritise_only:
                raise FilterError(str(exc)) from None
            outcome.notes.append(f"annotations not ordered by changed lines: {exc}")
        else:
            outcome.report_extra["changed_lines"] = changed
            outcome.report_extra["cwd"] = cwd
            if not prioritise_only:
                before = sum(1 for f in outcome.findings if f.suppressed is None)
                outcome.findings = changed.filter(outcome.findings, cwd)
                after = sum(1 for f in outcome.findings if f.suppressed is None)
                info = {
                    "ref": base,
                    "merge_base": changed.merge_base,
                    "outside_changed_lines": before - after,
                }
                outcome.report_extra["diff_base"] = info
                json_extra["diff_base"] = info
                outcome.notes.append(
                    f"--diff-base {base}: {after} finding(s) on lines changed since {changed.merge_base[:12]}, "
                    f"{before - after} elsewhere not reported"
                )
    if json_extra:
        outcome.report_extra["json"] = json_extra
    return outcome
