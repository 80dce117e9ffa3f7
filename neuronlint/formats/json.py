"""JSON report: a stable, documented schema (docs/output.md)."""

from __future__ import annotations

import secrets
from collections.abc import Iterator

from neuronlint import __version__
from neuronlint.formats import Report, summary
from neuronlint.formats.triage import root_causes
from neuronlint.safe_text import json_text

SCHEMA_VERSION = 1


def as_dict(report: Report, findings: bool = True) -> dict:
    """The report as JSON-ready data; with `findings=False` the findings array is left empty."""
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
        "findings": [f.to_dict() for f in report.findings] if findings else [],
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
    return "".join(chunks(report))


def chunks(report: Report) -> Iterator[str]:
    """The text of `render`, in pieces: the findings are encoded one at a time, so that writing the
    report of a large scan never holds all of it (or a dict per finding) in memory at once.

    The envelope is encoded with a unique placeholder in the findings array; each finding, encoded
    alone, is indented to its place (JSON strings hold no raw newline, so that is a plain replace).
    """
    data = as_dict(report, findings=False)
    if not report.findings:
        yield json_text(data, indent=2) + "\n"
        return
    mark = f"\0neuronlint-findings-{secrets.token_hex(16)}\0"
    data["findings"] = [mark]
    head, tail = json_text(data, indent=2).split(json_text(mark), 1)
    yield head
    for index, finding in enumerate(report.findings):
        if index:
            yield ",\n    "
        yield json_text(finding.to_dict(), indent=2).replace("\n", "\n    ")
    yield tail + "\n"
