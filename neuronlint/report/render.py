"""The formats of the migration report (`neuronlint report --format`): HTML, Markdown, JSON."""

from __future__ import annotations

from pathlib import Path

from neuronlint.safe_text import json_text

REPORT_FORMATS = ("html", "markdown", "json")
_SUFFIXES = {".html": "html", ".htm": "html", ".md": "markdown", ".markdown": "markdown", ".json": "json"}


def format_for(output: Path | None) -> str:
    """The format an output file's suffix names; Markdown when it names none."""
    return (_SUFFIXES.get(output.suffix.lower()) if output is not None else None) or "markdown"


def render(format_name: str, report: dict) -> str:
    """Render a built report (neuronlint.report.build.build_report) in one of REPORT_FORMATS."""
    if format_name == "json":
        return json_text(report, indent=2) + "\n"
    if format_name == "html":
        from neuronlint.report import html

        return html.render(report)
    from neuronlint.report import markdown

    return markdown.render(report)
