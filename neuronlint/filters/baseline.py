"""Baselines: accept the findings a legacy repository has today, report only new ones.

`neuronlint baseline create` writes a JSON file of fingerprints: path (relative to the baseline
file), rule, and a hash of the normalised statement that was flagged, with a count for identical
statements. No line numbers, so unrelated edits do not turn old findings into new ones.
`scan --baseline FILE` matches findings against it as a multiset: the first `count` findings with
a fingerprint are "unchanged" (hidden), further ones are "new". Entries for scanned files that no
longer match anything are "fixed": re-create the baseline to tighten it.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from neuronlint import fingerprints
from neuronlint.findings import Finding
from neuronlint.safe_text import json_text

BASELINE_FORMAT = "neuronlint-baseline"
BASELINE_VERSION = 1


class BaselineError(Exception):
    """The baseline file is missing or malformed; the message names the file and the problem."""


@dataclass(frozen=True)
class BaselineSummary:
    """What --baseline did to a run's findings, for the outputs."""

    file: str
    new: int
    unchanged: int
    fixed: int

    def to_dict(self) -> dict[str, Any]:
        return {"file": self.file, "new": self.new, "unchanged": self.unchanged, "fixed": self.fixed}


@dataclass
class BaselineEntry:
    path: str  # relative to the baseline file's directory, '/'-separated
    rule: str
    fingerprint: str
    count: int
    snippet: str  # for people reading the file; matching uses the fingerprint


@dataclass
class Baseline:
    file: Path
    entries: list[BaselineEntry]

    @property
    def directory(self) -> Path:
        return self.file.resolve().parent


@dataclass
class BaselineOutcome:
    new: int = 0
    unchanged: int = 0
    fixed: int = 0  # baselined findings in scanned files that are gone
    fixed_entries: list[BaselineEntry] = field(default_factory=list)


def baseline_path(report_path: str, cwd: Path, directory: Path) -> str:
    """A report path (relative to `cwd`) re-expressed relative to the baseline file's directory."""
    absolute = Path(os.path.abspath(os.path.join(cwd, report_path)))
    try:
        return absolute.relative_to(directory).as_posix()
    except ValueError:
        return Path(os.path.relpath(absolute, directory)).as_posix()


def build(findings: list[Finding], baseline_file: Path, cwd: Path) -> dict[str, Any]:
    """The baseline document for every finding of a scan.

    Suppressed findings are included too, so that a report with the baseline lists neither them nor
    their suppressions as new.
    """
    directory = baseline_file.resolve().parent
    counts: Counter[tuple[str, str, str]] = Counter()
    snippets: dict[tuple[str, str, str], str] = {}
    for finding in findings:
        path = baseline_path(finding.path, cwd, directory)
        text = fingerprints.identity_text(finding)
        key = (path, finding.rule, fingerprints.location_key(path, finding.rule, text))
        counts[key] += 1
        snippets.setdefault(key, text[:160])
    entries = [
        {
            "path": path,
            "rule": rule,
            "fingerprint": digest,
            "count": counts[(path, rule, digest)],
            "snippet": snippets[(path, rule, digest)],
        }
        for path, rule, digest in sorted(counts)
    ]
    return {
        "format": BASELINE_FORMAT,
        "version": BASELINE_VERSION,
        "findings": sum(counts.values()),
        "entries": entries,
    }


def write(findings: list[Finding], baseline_file: Path, cwd: Path) -> dict[str, Any]:
    """Write the baseline file (stable order, one entry per fingerprint) and return its document."""
    document = build(findings, baseline_file, cwd)
    baseline_file.parent.mkdir(parents=True, exist_ok=True)
    baseline_file.write_text(json_text(document, indent=2) + "\n", encoding="utf-8")
    return document


def load(baseline_file: Path) -> Baseline:
    """Read and validate a baseline file."""
    if not baseline_file.is_file():
        raise BaselineError(
            f"{baseline_file}: baseline file not found; create it with `neuronlint baseline create -o {baseline_file}`"
        )
    try:
        data = json.loads(baseline_file.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise BaselineError(f"{baseline_file}: cannot read the baseline: {exc}") from None
    except json.JSONDecodeError as exc:
        raise BaselineError(f"{baseline_file}: not valid JSON (line {exc.lineno}: {exc.msg})") from None
    except RecursionError:
        raise BaselineError(
            f"{baseline_file}: not a neuronlint baseline (arrays or objects nest too deeply)"
        ) from None
    if not isinstance(data, dict) or data.get("format") != BASELINE_FORMAT:
        raise BaselineError(
            f'{baseline_file}: not a neuronlint baseline (expected "format": "{BASELINE_FORMAT}")'
        )
    if data.get("version") != BASELINE_VERSION:
        raise BaselineError(
            f"{baseline_file}: baseline version {data.get('version')!r} is not supported (expected {BASELINE_VERSION}); "
            "re-create it with `neuronlint baseline create`"
        )
    raw_entries = data.get("entries")
    if not isinstance(raw_entries, list):
        raise BaselineError(f"{baseline_file}: key 'entries': expected an array")
    entries = []
    for index, raw in enumerate(raw_entries):
        where = f"{baseline_file}: entries[{index}]"
        if not isinstance(raw, dict):
            raise BaselineError(f"{where}: expected an object")
        for key in ("path", "rule", "fingerprint"):
            if not isinstance(raw.get(key), str) or not raw[key]:
                raise BaselineError(f"{where}: key '{key}': expected a non-empty string")
        count = raw.get("count", 1)
        if not isinstance(count, int) or isinstance(count, bool) or count < 1:
            raise BaselineError(f"{where}: key 'count': expected a positive integer, got {count!r}")
        entries.append(
            BaselineEntry(raw["path"], raw["rule"], raw["fingerprint"], count, str(raw.get("snippet", "")))
        )
    return Baseline(file=baseline_file, entries=entries)


def apply(
    findings: list[Finding], baseline: Baseline, scanned_files: list[str], cwd: Path
) -> BaselineOutcome:
    """Mark each finding `baseline_state` "new" or "unchanged"; count baselined findings that are gone.

    Findings are matched in source order, so when a file has more identical statements than the
    baseline counted, the later ones are the new ones.
    """
    directory = baseline.directory
    remaining: Counter[str] = Counter()
    for entry in baseline.entries:
        remaining[entry.fingerprint] += entry.count
    outcome = BaselineOutcome()
    for finding in sorted(findings, key=Finding.sort_key):
        path = baseline_path(finding.path, cwd, directory)
        digest = fingerprints.location_key(path, finding.rule, fingerprints.identity_text(finding))
        if remaining[digest] > 0:
            remaining[digest] -= 1
            finding.baseline_state = "unchanged"
        else:
            finding.baseline_state = "new"
        if finding.suppressed is None:  # counts are about what the report shows as findings
            if finding.baseline_state == "new":
                outcome.new += 1
            else:
                outcome.unchanged += 1
    scanned = {baseline_path(p, cwd, directory) for p in scanned_files}
    for entry in baseline.entries:
        left = min(remaining[entry.fingerprint], entry.count)
        if left and entry.path in scanned:
            outcome.fixed += left
            outcome.fixed_entries.append(entry)
        remaining[entry.fingerprint] -= left
    return outcome
