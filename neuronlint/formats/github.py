"""GitHub Actions workflow-command annotations (`::error file=…,line=…::message`).

GitHub keeps at most 10 annotations of each level per step (50 per job) and drops the rest
without a word, so the most important go first: findings on changed lines, then by severity,
then by place. What does not fit is listed as plain log lines and counted. `job_summary` is the
Markdown for $GITHUB_STEP_SUMMARY (the CLI appends it there: a format writes nothing itself).
"""

from __future__ import annotations

from pathlib import Path

from neuronlint import fingerprints
from neuronlint.findings import Finding, Severity
from neuronlint.formats import Report
from neuronlint.formats.triage import root_causes
from neuronlint.ruledb.pages import DOCS_URL
from neuronlint.safe_text import code_span, printable

COMMANDS = {Severity.BLOCKER: "error", Severity.WARNING: "warning", Severity.INFO: "notice"}
PER_LEVEL_LIMIT = 10  # annotations GitHub keeps per level in one step
_OWN_LINES = ("::error ", "::warning ", "::notice ", "neuronlint: ")
SUMMARY_LIMIT = 1_000_000  # bytes; GitHub accepts up to 1 MiB of step summary


def escape_data(text: str) -> str:
    """Escape a command's message (actions/toolkit `escapeData`), with no control characters and no
    `##[` (the runner's legacy command prefix) left in it."""
    text = text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    return printable(text)


def escape_property(text: str) -> str:
    """Escape a property value: the message escapes plus ':' and ',' (actions/toolkit `escapeProperty`)."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def _on_changed_line(f: Finding, report: Report) -> bool:
    changed = report.options.changed_lines
    if changed is None:
        return False
    return changed.touches(f, report.options.cwd or Path.cwd())


def ordered(report: Report) -> list[Finding]:
    """Active findings, most important first: changed lines, blockers, then path/line order."""
    active = [f for f in report.findings if f.suppressed is None]
    return sorted(active, key=lambda f: (not _on_changed_line(f, report), -f.severity.rank, f.sort_key()))


def select_annotations(findings: list[Finding]) -> tuple[list[Finding], list[Finding]]:
    """Split ordered findings into those GitHub will show (≤10 per level) and the rest."""
    used = {command: 0 for command in COMMANDS.values()}
    shown: list[Finding] = []
    rest: list[Finding] = []
    for f in findings:
        command = COMMANDS[f.severity]
        if used[command] < PER_LEVEL_LIMIT:
            used[command] += 1
            shown.append(f)
        else:
            rest.append(f)
    return shown, rest


def annotation(f: Finding, path: str) -> str:
    properties = [("file", path), ("line", str(f.line)), ("endLine", str(max(f.end_line, f.line)))]
    if f.end_line <= f.line:  # GitHub uses columns only for single-line annotations
        properties += [("col", str(f.column)), ("endColumn", str(max(f.end_column, f.column + 1)))]
    properties.append(("title", f"{f.rule} {f.name}".strip()))
    message = f.message
    if f.fix is not None:
        message += f"\nSuggested fix: {f.fix.replacement}"
    if f.group:
        message += f"\nRoot cause {f.group}" + (" (test code)" if f.scope == "test" else "")
    message += f"\nSee {DOCS_URL.format(id=f.rule)}"
    props = ",".join(f"{key}={escape_property(value)}" for key, value in properties)
    return f"::{COMMANDS[f.severity]} {props}::{escape_data(message)}"


def _plain(f: Finding, path: str) -> str:
    """A finding that did not fit as an annotation: a log line that starts with our own text (and,
    like an annotation, names its root cause)."""
    text = f"neuronlint: {path}:{f.line}:{f.column}: {f.severity.value} {f.rule} {f.message}"
    if f.group:
        text += f" (root cause {f.group}{', test code' if f.scope == 'test' else ''})"
    return escape_data(text)


def job_summary(report: Report) -> str:
    """The Markdown job summary: the markdown format, then the findings left without an annotation."""
    from neuronlint.formats import markdown

    _, not_annotated = select_annotations(ordered(report))
    text = markdown.render(report)
    if not_annotated:
        prefix = report.options.repo_prefix
        lines = [
            "",
            f"### {len(not_annotated)} finding(s) without an annotation",
            "",
            "GitHub shows at most 10 annotations of each level per step; these were left out:",
            "",
        ]
        for f in not_annotated:
            lines.append(
                f"- {code_span(f'{fingerprints.repo_path(f.path, prefix)}:{f.line}')} {f.severity.value} "
                f"[{f.rule}]({DOCS_URL.format(id=f.rule)}): {markdown.cell(f.message)}"
                + (f" (root cause `{f.group}`)" if f.group else "")
            )
        text += "\n".join(lines) + "\n"
    if len(text.encode("utf-8")) > SUMMARY_LIMIT:
        text = text.encode("utf-8")[: SUMMARY_LIMIT - 200].decode("utf-8", "ignore")
        text += "\n\n… summary truncated at GitHub's 1 MiB limit; the SARIF or JSON report has everything.\n"
    return text


def render(report: Report) -> str:
    root_causes(report)  # annotations name their root cause
    prefix = report.options.repo_prefix
    shown, rest = select_annotations(ordered(report))
    lines = [annotation(f, fingerprints.repo_path(f.path, prefix)) for f in shown]
    if rest:
        lines.append(
            f"neuronlint: {len(rest)} more finding(s) not annotated (GitHub shows at most "
            f"{PER_LEVEL_LIMIT} per level in a step); they are listed below and in the job summary:"
        )
        lines += [_plain(f, fingerprints.repo_path(f.path, prefix)) for f in rest]
    # Every line is an annotation built above (its fields escaped) or starts with "neuronlint:".
    lines = [line if line.startswith(_OWN_LINES) else "neuronlint: " + escape_data(line) for line in lines]
    return "\n".join(lines) + ("\n" if lines else "")
