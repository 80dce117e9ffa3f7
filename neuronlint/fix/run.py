"""Fixing files: attach fixes to a scan's findings, and apply them until nothing fixable is left.

`attach` gives every fixable finding of a scan its Fix (the exact edits, safe or unsafe), so text,
JSON and SARIF can show them. `fix_files` applies them: per file it plans, applies the edits that do
not conflict, rescans the new text and repeats (as ruff does) until no selected fix remains; a file
is written only when its new text parses. A second run therefore finds nothing to do.
"""

from __future__ import annotations

import difflib
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import libcst as cst

from neuronlint.findings import Finding, Fix
from neuronlint.fix.engine import FilePlan, choose, plan_file
from neuronlint.fix.fixers import FIXERS
from neuronlint.fix.flavours import Flavour
from neuronlint.fix.model import SAFE, apply_edits
from neuronlint.pipeline import ScanOptions, ScanResult, findings_in_frame
from neuronlint.static.data import build_static_data

MAX_ROUNDS = 10


def fixable_rules() -> frozenset[str]:
    return frozenset(FIXERS)


def _by_file(findings: list[Finding]) -> dict[str, list[Finding]]:
    out: dict[str, list[Finding]] = {}
    for finding in findings:
        out.setdefault(finding.path, []).append(finding)
    return out


def _read(base: Path, path: str) -> str | None:
    try:
        return (base / path).read_bytes().decode("utf-8")  # bytes: line endings stay as they are
    except (OSError, UnicodeDecodeError):
        return None


def attach(result: ScanResult, flavour: Flavour, base: Path) -> int:
    """Give each fixable finding its Fix; returns how many findings have an automatic fix."""
    rules = fixable_rules()
    count = 0
    for path, findings in _by_file(result.findings).items():
        if not path.endswith(".py") or not any(f.rule in rules and f.suppressed is None for f in findings):
            continue
        code = _read(base, path)
        if code is None:
            continue
        plan = plan_file(path, code, findings, flavour)
        for index, item in plan.plans.items():
            finding = findings[index]
            main = item.edits[-1]
            finding.fix = Fix(
                replacement=main.content,
                description=item.description,
                applicability=item.applicability,
                edits=item.edits,
            )
            count += 1
    return count


@dataclass
class FileFix:
    path: str
    before: str
    after: str
    fixed: Counter = field(default_factory=Counter)  # rule -> findings fixed
    error: str | None = None
    unsafe_left: int = 0  # findings whose (unsafe) fix was not applied

    @property
    def changed(self) -> bool:
        return self.before != self.after

    def diff(self) -> str:
        lines = difflib.unified_diff(
            self.before.splitlines(keepends=True),
            self.after.splitlines(keepends=True),
            fromfile=f"a/{self.path}",
            tofile=f"b/{self.path}",
        )
        # A last line without a newline gets git's marker, so that `git apply`/`patch` accept it
        # and the next line of the diff does not run on.
        return "".join(
            line if line.endswith(("\n", "\r")) else line + "\n\\ No newline at end of file\n"
            for line in lines
        )


@dataclass
class FixReport:
    files: list[FileFix]
    remaining: list[Finding]  # findings left after fixing (active ones)

    @property
    def fixed(self) -> Counter:
        total: Counter = Counter()
        for item in self.files:
            total.update(item.fixed)
        return total

    def changed(self) -> list[FileFix]:
        return [f for f in self.files if f.changed]


class Rescanner:
    """Scan one file's new text in-process, judged in the scan's frame with its rule selection."""

    def __init__(self, result: ScanResult, options: ScanOptions) -> None:
        self.result = result
        self.options = options
        self.static_data = build_static_data(result.db)
        self.module_paths = {r["path"]: r.get("module_path", r["path"]) for r in result.results}

    def findings(self, path: str, code: str) -> list[Finding]:
        from neuronlint.static.engine import analyze_python

        analysed = analyze_python(self.module_paths.get(path, path), code.encode("utf-8"), self.static_data)
        data = analysed.to_dict()
        data["path"] = path
        findings, _ = findings_in_frame([data], self.result.db, self.result.context, self.options)
        return findings


def fix_file(
    path: str, code: str, findings: list[Finding], flavour: Flavour, unsafe: bool, rescan: Rescanner
) -> tuple[FileFix, list[Finding]]:
    """Apply the selected fixes to one file's text, round after round; returns the result and the
    file's findings after the last round."""
    item = FileFix(path=path, before=code, after=code)
    text = code
    for _ in range(MAX_ROUNDS):
        plan: FilePlan = plan_file(path, text, findings, flavour)
        chosen = [plan.plans[i] for i in sorted(plan.selected(unsafe))]
        item.unsafe_left = 0 if unsafe else len(plan.plans) - len(chosen)
        if not chosen:
            break
        edits, applied = choose(chosen)
        try:
            new = apply_edits(text, edits)
            cst.parse_module(new)
        except (ValueError, cst.ParserSyntaxError) as exc:  # a fixer bug must never break a file
            item.error = f"fix abandoned: {exc}"
            break
        if new == text:
            break
        by_plan = {id(p): i for i, p in plan.plans.items()}
        for p in applied:
            item.fixed[plan.findings[by_plan[id(p)]].rule] += 1
        text = new
        findings = rescan.findings(path, text)  # a fix can uncover findings (one per line and category)
    item.after = text
    return item, findings


def fix_files(
    result: ScanResult, options: ScanOptions, flavour: Flavour, unsafe: bool, write: bool, base: Path
) -> FixReport:
    """Fix every file of a scan that has a fixable finding; write them when `write`."""
    rules = fixable_rules()
    rescan = Rescanner(result, options)
    files: list[FileFix] = []
    remaining: list[Finding] = []
    for path, findings in _by_file(result.findings).items():
        wanted = [f for f in findings if f.rule in rules and f.suppressed is None]
        code = _read(base, path) if path.endswith(".py") and wanted else None
        if code is None:
            remaining.extend(f for f in findings if f.suppressed is None)
            continue
        item, after = fix_file(path, code, findings, flavour, unsafe, rescan)
        files.append(item)
        remaining.extend(f for f in (after if item.changed else findings) if f.suppressed is None)
        if write and item.changed:
            (base / path).write_bytes(item.after.encode("utf-8"))
    return FixReport(files=files, remaining=remaining)


def safe_share(result: ScanResult) -> tuple[int, int]:
    """(findings with a safe fix, active findings): how much of a scan the safe fixes remove."""
    active = [f for f in result.findings if f.suppressed is None]
    safe = sum(1 for f in active if f.fix is not None and f.fix.automatic and f.fix.applicability == SAFE)
    return safe, len(active)
