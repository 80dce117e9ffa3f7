"""Fingerprints that identify a finding across runs without using line numbers.

A finding is identified by its repository path, its rule and the normalised source of the
statement it flags (`Finding.snippet`); identical statements in one file are told apart by
their order (occurrence 1, 2, …). Inserting or deleting unrelated lines moves a finding but
does not change its fingerprint; editing the flagged statement does.

Three forms, one identity:
- `content_hash(snippet)`: the statement alone (SARIF primaryLocationLineHash, with occurrence),
- `location_key(path, rule, snippet)`: what a baseline stores (matched as a multiset),
- `Finding.extra["fingerprint"]`: location key + occurrence, unique within a report (GitLab, SARIF).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable

from neuronlint.digests import sha256_hex
from neuronlint.findings import Finding

FINGERPRINT_KEY = "fingerprint"
LINE_HASH_KEY = "line_hash"
_WS = re.compile(r"\s+")


def normalise(source: str) -> str:
    """Whitespace-insensitive form of a piece of source (re-indenting must not change identity)."""
    return _WS.sub(" ", source).strip()


def identity_text(finding: Finding) -> str:
    """The text a finding is identified by: its statement, or its message when it has none."""
    return normalise(finding.snippet) or normalise(finding.message)


def _digest(*parts: str, length: int = 16) -> str:
    return sha256_hex("\0".join(parts).encode("utf-8", "surrogatepass"))[:length]


def content_hash(text: str) -> str:
    """16 hex digits identifying a normalised statement (the 'line content hash')."""
    return _digest(normalise(text))


def location_key(path: str, rule: str, text: str) -> str:
    """Path + rule + normalised statement: the occurrence-free identity a baseline stores."""
    return _digest(path, rule, normalise(text), length=20)


def assign(findings: Iterable[Finding], path_prefix: str = "") -> None:
    """Set `extra["fingerprint"]` and `extra["line_hash"]` on every finding.

    Call it once on all findings of a scan (suppressed ones included) before anything is filtered
    out, so that occurrence numbers do not depend on which findings a report happens to show.
    `path_prefix` turns report paths into repository paths ('' when the scan ran at the root).
    """
    ordered = sorted(findings, key=Finding.sort_key)
    seen_key: Counter[str] = Counter()
    seen_hash: Counter[tuple[str, str, str]] = Counter()
    for finding in ordered:
        path = repo_path(finding.path, path_prefix)
        text = identity_text(finding)
        key = location_key(path, finding.rule, text)
        seen_key[key] += 1
        finding.extra[FINGERPRINT_KEY] = f"{key}:{seen_key[key]}"
        line_hash = content_hash(text)
        seen_hash[(path, finding.rule, line_hash)] += 1
        finding.extra[LINE_HASH_KEY] = f"{line_hash}:{seen_hash[(path, finding.rule, line_hash)]}"


def ensure(findings: list[Finding], path_prefix: str = "") -> None:
    """Assign fingerprints unless every finding already has one (reports built outside the CLI)."""
    if any(FINGERPRINT_KEY not in f.extra or LINE_HASH_KEY not in f.extra for f in findings):
        assign(findings, path_prefix)


def repo_path(path: str, path_prefix: str) -> str:
    """A report path (relative to the scan's working directory) as a repository path."""
    if not path_prefix or path.startswith("/") or (len(path) > 1 and path[1] == ":"):
        return path
    return path_prefix.rstrip("/") + "/" + path
