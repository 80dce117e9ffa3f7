"""GitLab Code Quality report: a JSON array of issues (the Code Climate subset GitLab reads).

Publish it with `artifacts: reports: codequality: <file>`; GitLab compares the fingerprints of
the merge request's report with the target branch's to show new and resolved issues, so the
fingerprint must not depend on line numbers (see neuronlint.fingerprints).
"""

from __future__ import annotations

import hashlib
from typing import Any

from neuronlint import fingerprints
from neuronlint.findings import Finding, Severity
from neuronlint.formats import Report
from neuronlint.formats.triage import root_causes
from neuronlint.ruledb.pages import DOCS_URL
from neuronlint.safe_text import json_text

SEVERITIES = {Severity.BLOCKER: "blocker", Severity.WARNING: "major", Severity.INFO: "info"}
# Code Climate categories: portability problems are compatibility issues, stalls are performance ones.
_CATEGORIES = {
    "host-sync": "Performance",
    "dynamic-shape": "Performance",
    "parse-error": "Bug Risk",
    "suppression": "Clarity",
}


def issue(f: Finding, path: str) -> dict[str, Any]:
    # GitLab expects a hex digest; hashing our fingerprint keeps it stable and uniform in length.
    digest = hashlib.md5(
        f"neuronlint\0{f.extra[fingerprints.FINGERPRINT_KEY]}".encode(), usedforsecurity=False
    ).hexdigest()
    body = f.message + (f"\n\nSuggested fix: `{f.fix.replacement}`" if f.fix is not None else "")
    body += f"\n\n[{f.rule} documentation]({DOCS_URL.format(id=f.rule)})"
    return {
        "type": "issue",
        "engine_name": "neuronlint",
        "check_name": f"neuronlint/{f.rule}",
        "description": f"{f.rule} {f.name}: {f.message}" if f.name else f"{f.rule}: {f.message}",
        "content": {"body": body},
        "categories": [_CATEGORIES.get(f.category, "Compatibility")],
        "severity": SEVERITIES[f.severity],
        "fingerprint": digest,
        "location": {"path": path, "lines": {"begin": f.line, "end": max(f.end_line, f.line)}},
        # Not read by GitLab (it ignores unknown keys): the root cause and scope, for other tools.
        "neuronlint": {"group": f.group, "scope": f.scope, "rule": f.rule},
    }


def as_list(report: Report) -> list[dict[str, Any]]:
    root_causes(report)
    prefix = report.options.repo_prefix
    fingerprints.ensure(report.findings, prefix)
    return [issue(f, fingerprints.repo_path(f.path, prefix)) for f in report.findings if f.suppressed is None]


def render(report: Report) -> str:
    return json_text(as_list(report), indent=2) + "\n"
