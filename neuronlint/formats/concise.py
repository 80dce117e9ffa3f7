"""One line per finding, `path:line:col: RULE [severity] message`: for grep, editors' quickfix
lists and problem matchers (ruff's `concise`). Suppressed findings only with --show-suppressed."""

from __future__ import annotations

from neuronlint.formats import Report


def render(report: Report) -> str:
    lines = []
    for f in sorted(report.findings, key=lambda f: f.sort_key()):
        if f.suppressed is not None and not report.options.show_suppressed:
            continue
        message = " ".join(f.message.split())
        note = f" (suppressed: {f.suppressed})" if f.suppressed is not None else ""
        lines.append(f"{f.path}:{f.line}:{f.column}: {f.rule} [{f.severity.value}] {message}{note}\n")
    return "".join(lines)
