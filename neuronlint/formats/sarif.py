"""SARIF 2.1.0 for GitHub code scanning and other SARIF viewers.

One run, one tool component with a rule descriptor per rule that appears in the report. Paths
are repository-relative (uriBaseId %SRCROOT%); columns count Unicode code points like the rest
of neuronlint. `baselineState` is set when the scan used a baseline.

GitHub code scanning's rules are encoded here: suppressed findings are left out (GitHub turns
uploaded results into open alerts, inSource suppression or not) unless `--show-suppressed` asks
for them, then with an inSource suppression; a run keeps at most MAX_RESULTS results (GitHub
accepts 25,000 per run and stores the top 5,000 by severity), blockers first, and says in the
run's properties how many of each severity were dropped (`dropped()` gives the CLI the count).
Rule descriptors are those of the reported rules only, far under GitHub's 25,000 rules per run.
"""

from __future__ import annotations

from pathlib import PurePosixPath
from typing import Any
from urllib.parse import quote

from neuronlint import __version__, fingerprints
from neuronlint.findings import Edit, Finding, Severity
from neuronlint.formats import Report
from neuronlint.formats.triage import root_causes
from neuronlint.ruledb.model import Rule
from neuronlint.ruledb.pages import DOCS_URL
from neuronlint.safe_text import json_text

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
INFORMATION_URI = "https://github.com/neuronlint/neuronlint"
LEVELS = {Severity.BLOCKER: "error", Severity.WARNING: "warning", Severity.INFO: "note"}
_BACKEND_LABELS = {
    "xla": "PyTorch/XLA backend (torch-neuronx, device `xla`)",
    "native": "Native TorchNeuron (device `neuron`)",
    "any": "Any Neuron backend",
}
_TEXT_LIMIT = 1024  # GitHub truncates descriptions longer than this
MAX_RESULTS = 5000  # GitHub stores the top 5,000 results of a run (and rejects more than 25,000)


def kept(report: Report) -> tuple[list[Finding], dict[str, int]]:
    """The findings a SARIF run holds (suppressed ones only on request; at most MAX_RESULTS, by
    severity) in report order, and how many of each severity the cap dropped."""
    findings = [f for f in report.findings if f.suppressed is None or report.options.show_suppressed]
    if len(findings) <= MAX_RESULTS:
        return findings, {}
    ranked = sorted(range(len(findings)), key=lambda i: (-findings[i].severity.rank, i))
    keep = set(ranked[:MAX_RESULTS])
    dropped: dict[str, int] = {}
    for i in ranked[MAX_RESULTS:]:
        dropped[findings[i].severity.value] = dropped.get(findings[i].severity.value, 0) + 1
    return [f for i, f in enumerate(findings) if i in keep], dropped


def dropped(report: Report) -> dict[str, int]:
    """Findings of each severity over MAX_RESULTS that the SARIF log leaves out ({} = none)."""
    return kept(report)[1]


def _clip(text: str, limit: int = _TEXT_LIMIT) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def rule_help_text(rule: Rule) -> str:
    """Plain-text help: what, why, and the Neuron alternative per backend."""
    lines = [rule.summary.strip(), "", f"Why it matters on Neuron: {rule.why.strip()}"]
    alternatives = [(key, rule.instead[key]) for key in ("native", "xla", "any") if rule.instead.get(key)]
    if alternatives:
        lines += ["", "What to do instead:"]
        lines += [f"- {_BACKEND_LABELS[key]}: {text.strip()}" for key, text in alternatives]
    lines += ["", f"Documentation: {DOCS_URL.format(id=rule.id)}"]
    return "\n".join(lines)


def rule_help_markdown(rule: Rule) -> str:
    """Markdown help shown by GitHub code scanning instead of the text form."""
    lines = [
        f"**{rule.id} {rule.name}**: {rule.title}",
        "",
        rule.summary.strip(),
        "",
        "## Why it matters on Neuron",
        "",
        rule.why.strip(),
    ]
    if rule.example.strip():
        lines += ["", "## Example", "", f"```{_fence(rule, fixed=False)}", rule.example.rstrip(), "```"]
    if rule.example_fixed.strip():
        lines += [
            "",
            "Instead:",
            "",
            f"```{_fence(rule, fixed=True)}",
            rule.example_fixed.rstrip(),
            "```",
        ]
    alternatives = [(key, rule.instead[key]) for key in ("native", "xla", "any") if rule.instead.get(key)]
    if alternatives:
        lines += ["", "## The Neuron alternative", ""]
        lines += [f"- **{_BACKEND_LABELS[key]}:** {text.strip()}" for key, text in alternatives]
    lines += [
        "",
        f"[Full documentation, verdicts per Neuron SDK release and sources]({DOCS_URL.format(id=rule.id)})",
    ]
    return "\n".join(lines)


def _fence(rule: Rule, fixed: bool) -> str:
    """The code-fence language of the rule's Example (or its Instead), from its case's file."""
    from neuronlint.ruledb.cases import language, page_cases

    example, instead = page_cases(rule.cases)
    case = instead if fixed else example
    return language(case) if case is not None else "python"


def rule_descriptor(rule: Rule) -> dict[str, Any]:
    tags = [rule.category, "portability", "neuron"]
    if rule.category in ("host-sync", "dynamic-shape"):
        tags.append("performance")
    return {
        "id": rule.id,
        "name": rule.name,
        "shortDescription": {"text": _clip(rule.title)},
        "fullDescription": {"text": _clip(rule.summary)},
        "help": {"text": rule_help_text(rule), "markdown": rule_help_markdown(rule)},
        "helpUri": DOCS_URL.format(id=rule.id),
        "defaultConfiguration": {"level": LEVELS[rule.severity], "enabled": rule.default_enabled},
        "properties": {
            "tags": tags,
            "category": rule.category,
            "neuronStatus": rule.status,
            "effort": rule.effort,
            "analysis": rule.origin,
        },
    }


def artifact_location(path: str) -> dict[str, str]:
    """A repository-relative path as a SARIF artifact location (absolute paths become file: URIs)."""
    if PurePosixPath(path).is_absolute():
        return {"uri": "file://" + quote(path.encode("utf-8", "surrogateescape"), safe="/")}
    return {"uri": quote(path.encode("utf-8", "surrogateescape"), safe="/"), "uriBaseId": "%SRCROOT%"}


def region(f: Finding) -> dict[str, int]:
    end_line = max(f.end_line, f.line)
    end_column = f.end_column if f.end_column > f.column or end_line > f.line else f.column + 1
    return {"startLine": f.line, "startColumn": f.column, "endLine": end_line, "endColumn": end_column}


def edit_region(edit: Edit) -> dict[str, int]:
    """An edit's span as a SARIF region (an insertion is an empty region at its point)."""
    return {
        "startLine": edit.line,
        "startColumn": edit.column,
        "endLine": edit.end_line,
        "endColumn": edit.end_column,
    }


def fix_object(f: Finding, path: str) -> dict[str, Any]:
    """SARIF `fix`: the exact edits of an automatic fix, or the suggested replacement of the span."""
    assert f.fix is not None
    if f.fix.automatic:
        label = (
            "unsafe fix, review it (neuronlint fix --unsafe-fixes)"
            if f.fix.applicability == "unsafe"
            else "safe fix (neuronlint fix)"
        )
        replacements = [
            {"deletedRegion": edit_region(e), "insertedContent": {"text": e.content}}
            for e in sorted(f.fix.edits, key=lambda e: (e.start, e.end, e.order))
        ]
        description = f"{f.fix.description} [{label}]"
    else:
        replacements = [{"deletedRegion": region(f), "insertedContent": {"text": f.fix.replacement}}]
        description = f.fix.description
    return {
        "description": {"text": description},
        "artifactChanges": [{"artifactLocation": artifact_location(path), "replacements": replacements}],
    }


def result_object(f: Finding, rule_index: int, path: str, with_baseline: bool) -> dict[str, Any]:
    location = {"physicalLocation": {"artifactLocation": artifact_location(path), "region": region(f)}}
    result: dict[str, Any] = {
        "ruleId": f.rule,
        "ruleIndex": rule_index,
        "level": LEVELS[f.severity],
        "message": {"text": f.message},
        "locations": [location],
        "partialFingerprints": {
            "primaryLocationLineHash": f.extra[fingerprints.LINE_HASH_KEY],
            "neuronlintFingerprint/v1": f.extra[fingerprints.FINGERPRINT_KEY],
        },
    }
    if f.fix is not None:
        result["fixes"] = [fix_object(f, path)]
    if f.suppressed is not None:
        result["suppressions"] = [{"kind": "inSource", "status": "accepted", "justification": f.suppressed}]
    if with_baseline:
        result["baselineState"] = f.baseline_state or "new"
    result["properties"] = {
        "category": f.category,
        "severity": f.severity.value,
        "neuronStatus": f.status,
        "analysis": f.origin,
        "scope": f.scope,
        "group": f.group,
    }
    return result


def as_dict(report: Report) -> dict[str, Any]:
    root_causes(report)  # every result names its root cause
    prefix = report.options.repo_prefix
    fingerprints.ensure(report.findings, prefix)
    findings, left_out = kept(report)
    rule_ids = sorted({f.rule for f in findings})
    index = {rule_id: position for position, rule_id in enumerate(rule_ids)}
    with_baseline = report.options.baseline is not None
    ctx = report.context
    run = {
        "tool": {
            "driver": {
                "name": "neuronlint",
                "version": __version__,
                "semanticVersion": __version__,
                "informationUri": INFORMATION_URI,
                "rules": [rule_descriptor(report.db.rules[rule_id]) for rule_id in rule_ids],
            }
        },
        "columnKind": "unicodeCodePoints",
        "results": [
            result_object(f, index[f.rule], fingerprints.repo_path(f.path, prefix), with_baseline)
            for f in findings
        ],
        "properties": {
            "neuronSdk": ctx.sdk,
            "target": ctx.target,
            "backend": ctx.backend,
            "filesScanned": len(report.files),
            "linesScanned": report.lines,
        },
    }
    if left_out:
        run["properties"]["resultsDropped"] = {"limit": MAX_RESULTS, **left_out}
    return {"$schema": SARIF_SCHEMA, "version": "2.1.0", "runs": [run]}


def render(report: Report) -> str:
    return json_text(as_dict(report), indent=2) + "\n"
