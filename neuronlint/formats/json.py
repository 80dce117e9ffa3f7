"""JSON report: a stable, documented schema (docs/output.md)."""

from __future__ import annotations

from neuronlint import __version__
from neuronlint.formats import Report, summary
from neuronlint.formats.triage import root_causes
from neuronlint.safe_text import json_text

SCHEMA_VERSION = 1


def as_dict(report: Report) -> dict:
    ctx = report.context
    causes = root_causes(report)  # sets every finding's `group`
    data = {
        "version": __version__,
        "schema_version": SCHEMA_VERSION,
        "target": ctx.target,
        "sdk": ctx.sdk,
        "backend": ctx.backend,
        "files_scanned": len(report.files),
        "lines_scanned": report.lines,
        "summary": summary(report.findings),
        "groups": [cause.to_dict() for cause in causes],
        "findings": [f.to_dict() for f in report.findings],
    }
    options = report.options
    if options.left_out:
        data["summary"]["left_out"] = dict(sorted(options.left_out.items()))
    if options.baseline is not None:
        data["baseline"] = options.baseline.to_dict()
    if options.diff_base is not None:
        data["diff_base"] = options.diff_base.to_dict()
    if options.traces is not None:
        data["trace"] = options.traces
    return data


def render(report: Report) -> str:
    return json_text(as_dict(report), indent=2) + "\n"
