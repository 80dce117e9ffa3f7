"""Markdown report for a pull-request comment or a GitHub job summary.

Counts by category and severity, the top blockers with links to their rule pages, and the
lock-in balance: how much the code is tied to CUDA (to remove) against how much it is tied to
Neuron (to undo if you leave), from the lock-in result the command computed (`RenderOptions.lockin`)
or, without one, finding counts. Inside GitHub Actions, locations link to the commit being checked.
"""

from __future__ import annotations

import os
from urllib.parse import quote

from neuronlint import fingerprints
from neuronlint.findings import CATEGORIES, NEURON_SIDE_CATEGORIES, Finding, Severity
from neuronlint.formats import Report, summary
from neuronlint.formats import triage as triage_view
from neuronlint.ruledb.pages import DOCS_URL
from neuronlint.safe_text import code_span, printable

TOP_BLOCKERS = 10
_SEVERITIES = ("blocker", "warning", "info")
_NOT_PORTABILITY = frozenset({"parse-error", "suppression"})  # neuronlint's own, not coupling to either side


def cell(text: str) -> str:
    """Text safe inside a Markdown table cell or list item: one line, no pipes, no raw HTML."""
    return printable(" ".join(text.split())).replace("|", "\\|").replace("<", "&lt;")


def _plural(count: int, word: str) -> str:
    return f"{count} {word}" + ("" if count == 1 else "s")


def _location(f: Finding, prefix: str) -> str:
    path = fingerprints.repo_path(f.path, prefix)
    label = code_span(f"{path}:{f.line}")
    server, repository, sha = (
        os.environ.get(k, "") for k in ("GITHUB_SERVER_URL", "GITHUB_REPOSITORY", "GITHUB_SHA")
    )
    if server and repository and sha and not path.startswith("/"):
        return f"[{label}]({server}/{repository}/blob/{sha}/{quote(path.encode('utf-8', 'surrogateescape'))}#L{f.line})"
    return label


def lockin_counts(active: list[Finding]) -> list[str]:
    """CUDA-side against Neuron-side finding counts: the fallback when no lock-in score can be computed."""
    neuron = [f for f in active if f.category in NEURON_SIDE_CATEGORIES]
    cuda = [
        f for f in active if f.category not in NEURON_SIDE_CATEGORIES and f.category not in _NOT_PORTABILITY
    ]
    cuda_blockers = sum(1 for f in cuda if f.severity is Severity.BLOCKER)
    return [
        f"- **CUDA coupling** (to remove before running on Neuron): {_plural(len(cuda), 'finding')} "
        f"in {_plural(len({f.path for f in cuda}), 'file')}, {_plural(cuda_blockers, 'blocker')}.",
        f"- **Neuron lock-in** (to undo if you leave Neuron): {_plural(len(neuron), 'finding')} "
        f"in {_plural(len({f.path for f in neuron}), 'file')}.",
    ]


def lockin_lines(report: Report) -> list[str]:
    """The lock-in section: the scores in `report.options.lockin`, or counts without them.

    The command scores every finding of the scan, also those a baseline or --diff-base left out of
    this report: lock-in is a property of the code base, not of a change.
    """
    result = report.options.lockin
    lines = ["### Lock-in", ""]
    if result is None:
        return lines + lockin_counts(report.active)
    questions = {
        "cuda": "what must change to run on Neuron",
        "neuron": "what must change to leave Neuron later",
    }
    titles = {"cuda": "CUDA coupling", "neuron": "Neuron coupling"}
    lines += [
        "| Direction | Score (0-100) | Grade | Findings | Blockers | Effort |",
        "|---|---:|---|---:|---:|---:|",
    ]
    for direction in ("cuda", "neuron"):
        value = result.repository.scores[direction]
        hours = result.effort[direction].hours
        lines.append(
            f"| **{titles[direction]}**: {questions[direction]} | {value.score} | {value.grade} "
            f"({cell(value.label)}) | {value.findings} | {value.blockers} | {hours:.0f} h |"
        )
    spots = result.hot_spots["cuda"][: result.hot_spot_count["cuda"]][:3]
    if spots:
        prefix = report.options.repo_prefix
        listed = ", ".join(
            f"{code_span(fingerprints.repo_path(h.path, prefix))} ({h.share:.0f}%)" for h in spots
        )
        lines += ["", f"CUDA coupling hot spots: {listed}."]
    return lines


def render(report: Report) -> str:
    prefix = report.options.repo_prefix
    counts = summary(report.findings)
    ctx = report.context
    sev = counts["by_severity"]
    lines = [
        "## neuronlint: Neuron portability report",
        "",
        f"Neuron SDK {ctx.sdk} on {ctx.target} ({ctx.backend} backend): "
        f"{_plural(len(report.files), 'file')}, {report.lines} lines scanned.",
        "",
    ]
    status = (
        f"**{_plural(sev['blocker'], 'blocker')}**, {_plural(sev['warning'], 'warning')}, {sev['info']} info"
    )
    if counts["suppressed"]:
        status += f", {counts['suppressed']} suppressed in source"
    lines.append(status + ".")
    baseline = report.options.baseline
    if baseline:
        text = (
            f"Baseline `{baseline.file}`: {baseline.unchanged} known finding(s) hidden, "
            f"only new ones are listed"
        )
        if baseline.fixed:
            text += f"; {baseline.fixed} baselined finding(s) are fixed, so the baseline can be tightened"
        lines += ["", text + "."]
    diff = report.options.diff_base
    if diff:
        lines += [
            "",
            f"Only findings on lines changed since `{diff.ref}` (merge base `{diff.merge_base[:12]}`); "
            f"{diff.outside_changed_lines} finding(s) elsewhere are not listed.",
        ]
    if not counts["total"]:
        lines += ["", "No findings.", ""]
        return "\n".join(lines)
    lines += [
        "",
        "### Findings by category",
        "",
        "| Category | Blocker | Warning | Info |",
        "|---|---:|---:|---:|",
    ]
    for category in CATEGORIES:
        row = counts["by_category"].get(category)
        if row:
            lines.append(f"| {category} | " + " | ".join(str(row[s]) for s in _SEVERITIES) + " |")
    lines.append("| **Total** | " + " | ".join(f"**{sev[s]}**" for s in _SEVERITIES) + " |")
    view = triage_view.triage(report)
    lines += ["", "### Root causes to fix first", "", triage_view.headline(view, ctx), ""]
    lines += ["| # | Severity | Root cause | Change | Where | Id |", "|---:|---|---|---|---|---|"]
    for number, cause in enumerate(view.causes[:TOP_BLOCKERS], start=1):
        lines.append(
            f"| {number} | {cause.severity.value} | {cell(cause.headline)} | {cell(cause.change)} | "
            f"{cell(triage_view.where(cause))} | `{cause.id}` |"
        )
    if len(view.causes) > TOP_BLOCKERS:
        lines += ["", f"… and {len(view.causes) - TOP_BLOCKERS} more root cause(s)."]
    tests = triage_view.test_summary(view)
    if tests:
        lines += ["", cell(tests.replace("`--scope test` lists them", "listed below")) + "."]
    left_out = triage_view.left_out_summary(report)
    if left_out:
        lines += ["", cell(left_out) + "."]
    active = [f for f in report.findings if f.suppressed is None]
    lines += [
        "",
        f"<details><summary>All {len(active)} findings</summary>",
        "",
        "| Severity | Rule | Where | Scope | Root cause | What |",
        "|---|---|---|---|---|---|",
    ]
    for f in sorted(active, key=lambda f: (-f.severity.rank, f.scope == "test", f.path, f.line)):
        lines.append(
            f"| {f.severity.value} | [{f.rule} {f.name}]({DOCS_URL.format(id=f.rule)}) | {_location(f, prefix)} | "
            f"{f.scope} | `{f.group}` | {cell(f.message)} |"
        )
    lines += ["", "</details>"]
    lines += [""] + lockin_lines(report) + [""]
    return "\n".join(lines)
