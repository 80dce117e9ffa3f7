"""Detections and small text helpers shared by the file-type scanners."""

from __future__ import annotations

import re
from typing import Any


def detection(
    rule: str, line: int, column: int, end_column: int, snippet: str, **facts: Any
) -> dict[str, Any]:
    """One detection on one line (1-based line and column, end column exclusive)."""
    return {
        "rule": rule,
        "line": line,
        "column": column,
        "end_line": line,
        "end_column": max(end_column, column + 1),
        "facts": {"in_loop": False, **facts},
        "snippet": snippet.strip()[:200],
    }


_PER_PACKAGE = frozenset({"NL404", "NL050", "NL051", "NL052", "NL080"})
_COMMENT = re.compile(r"(?:^|\s)#")


def strip_comment(line: str) -> str:
    """A shell/YAML/requirements line without its trailing `# comment` (a `#` after whitespace).

    `#` inside a word (`pkg#egg=name`, `${#array[@]}`) is kept; a `#` inside quotes after a space is
    cut too, which can only lose a detection, never invent one.
    """
    match = _COMMENT.search(line)
    return line if match is None else line[: match.start()]


def dedupe(detections: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Several occurrences of one rule on one line count once (finding conventions), except that
    each package or index on a line is its own dependency finding (`pip install flash-attn xformers`)."""
    seen: set[tuple[str, int, str]] = set()
    out = []
    for det in detections:
        facts = det.get("facts", {})
        own = det["rule"] in _PER_PACKAGE
        key = (det["rule"], det["line"], str(facts.get("package") or facts.get("url") or "") if own else "")
        if key not in seen:
            seen.add(key)
            out.append(det)
    return out


def hash_suppressions(text: str) -> list[dict[str, Any]]:
    """`# neuronlint: ignore[NL060] -- reason` in shell/YAML/TOML/requirements/Dockerfiles.

    At the end of a line it covers that line; on a line of its own, the next non-comment line;
    `# neuronlint: ignore-file[...]` covers the file (same syntax as in Python, docs/config.md).
    """
    from neuronlint.filters.suppressions import _DIRECTIVE

    if "neuronlint:" not in text:
        return []
    out: list[dict[str, Any]] = []
    pending: list[dict[str, Any]] = []
    for number, raw in enumerate(text.splitlines(), start=1):
        stripped = raw.strip()
        hash_at = raw.find("#")
        match = _DIRECTIVE.search(raw[hash_at:]) if hash_at >= 0 else None
        own_line = stripped.startswith("#")
        if not own_line and stripped:
            for entry in pending:
                entry["applies_to"] = number
                out.append(entry)
            pending = []
        if match is None:
            continue
        entry = {
            "line": number,
            "column": hash_at + 1,
            "rules": [r.strip().upper() for r in (match.group("rules") or "").split(",") if r.strip()],
            "reason": (match.group("reason") or "").strip(),
            "file": match.group("kind").lower() == "ignore-file",
        }
        if own_line and not entry["file"]:
            pending.append(entry)
        else:
            entry["applies_to"] = number
            out.append(entry)
    for entry in pending:
        entry["applies_to"] = entry["line"]
        out.append(entry)
    return out
