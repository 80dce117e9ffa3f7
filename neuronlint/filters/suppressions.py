"""`# neuronlint: ignore[NL101, NL701] -- reason` comments, on a line or for a whole file.

Forms:
    x.cuda()  # neuronlint: ignore[NL101] -- CPU fallback is tested separately
    # neuronlint: ignore[NL701]            (own line: applies to the next code line)
    # neuronlint: ignore-file[NL5]         (anywhere: whole file; IDs, prefixes, categories; empty = all)
"""

from __future__ import annotations

import io
import re
import tokenize
from collections import defaultdict
from pathlib import Path
from typing import Any

from neuronlint.filters.selection import normalise_selector

_DIRECTIVE = re.compile(
    r"#\s*neuronlint:\s*(?P<kind>ignore-file|ignore)(?![\w-])(?:\[(?P<rules>[^\]]*)\])?(?:\s*--\s*(?P<reason>.*))?",
    re.IGNORECASE,
)
# `# neuronlint: <anything else>`: a misspelt keyword (`ingore[NL101]`), reported by NL003, never
# a suppression.
_MISSPELT = re.compile(r"#\s*neuronlint:\s*(?P<keyword>[\w-]*)", re.IGNORECASE)


def parse_suppressions(data: bytes) -> list[dict[str, Any]]:
    """Find suppression comments. Uses the tokenizer so that strings mentioning the syntax don't count."""
    out: list[dict[str, Any]] = []
    pending: list[dict[str, Any]] = []  # own-line comments waiting for the next code line
    try:
        tokens = list(tokenize.tokenize(io.BytesIO(data).readline))
    except (tokenize.TokenError, SyntaxError, UnicodeDecodeError, LookupError):
        return out
    code_lines: set[int] = set()
    for tok in tokens:
        if tok.type not in (
            tokenize.COMMENT,
            tokenize.NL,
            tokenize.NEWLINE,
            tokenize.INDENT,
            tokenize.DEDENT,
            tokenize.ENCODING,
            tokenize.ENDMARKER,
        ):
            code_lines.update(range(tok.start[0], tok.end[0] + 1))
    for tok in tokens:
        if tok.type == tokenize.COMMENT:
            match = _DIRECTIVE.search(tok.string)
            if not match:
                misspelt = _MISSPELT.search(tok.string)
                if misspelt:
                    out.append(
                        {
                            "line": tok.start[0],
                            "column": tok.start[1] + 1,
                            "rules": [],
                            "reason": "",
                            "file": False,
                            "invalid": misspelt.group("keyword"),
                        }
                    )
                continue
            rules = [normalise_selector(r) for r in (match.group("rules") or "").split(",") if r.strip()]
            entry = {
                "line": tok.start[0],
                "column": tok.start[1] + 1,
                "rules": rules,
                "reason": (match.group("reason") or "").strip(),
                "file": match.group("kind").lower() == "ignore-file",
            }
            if not entry["file"] and tok.start[0] not in code_lines:
                pending.append(entry)
            else:
                out.append(entry)
    for entry in pending:
        following = [line for line in code_lines if line > entry["line"]]
        entry["applies_to"] = min(following) if following else entry["line"]
        out.append(entry)
    for entry in out:
        entry.setdefault("applies_to", entry["line"])
    return out


def matches(entry: dict[str, Any], rule: str, category: str = "") -> bool:
    """Whether a comment silences `rule`: its IDs, ID prefixes or categories (none = every rule)."""
    if entry.get("invalid") is not None:
        return False  # a misspelt keyword suppresses nothing
    return not entry["rules"] or any(rule.startswith(s) or s == category for s in entry["rules"])


def apply(findings: list, suppressions: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Mark findings covered by a suppression; returns the suppressions that silenced nothing."""
    used: set[int] = set()
    for finding in findings:
        for index, entry in enumerate(suppressions):
            if not matches(entry, finding.rule, finding.category):
                continue
            if entry["file"] or finding.line <= entry["applies_to"] <= finding.end_line:
                finding.suppressed = entry["reason"] or "suppressed in source"
                used.add(index)
                break
    return [entry for index, entry in enumerate(suppressions) if index not in used]


def apply_in_source(findings: list, base: Path) -> None:
    """Mark findings silenced by a comment in their file, read from disk (findings not from a scan:
    traced models); paths are relative to `base` unless absolute. Unreadable files silence nothing."""
    by_path: dict[str, list] = defaultdict(list)
    for finding in findings:
        by_path[finding.path].append(finding)
    for path, group in by_path.items():
        file = Path(path) if Path(path).is_absolute() else base / path
        try:
            data = file.read_bytes()
        except OSError:
            continue
        entries = parse_suppressions(data)
        if entries:
            apply(group, entries)


def drop_used(unused: list[tuple[str, dict[str, Any]]], silenced: list) -> list[tuple[str, dict[str, Any]]]:
    """The (path, suppression) pairs of `unused` that silenced none of the `silenced` findings.

    For findings added after the scan judged its files (traced models): a comment that silences
    one of them is used.
    """

    def used(path: str, entry: dict[str, Any]) -> bool:
        return any(
            f.path == path
            and matches(entry, f.rule, f.category)
            and (entry["file"] or f.line <= entry["applies_to"] <= f.end_line)
            for f in silenced
        )

    return [(path, entry) for path, entry in unused if not used(path, entry)]
