"""Run one `[[rule.case]]` of the rule catalogue through the real pipeline and compare with its annotations."""

from __future__ import annotations

import itertools
from collections import Counter
from pathlib import Path

from neuronlint.filters.chain import FilterRequest
from neuronlint.pipeline import ScanOptions, filter_scan, run_scan
from neuronlint.ruledb.cases import RuleCase
from tests.annotations import compare, parse, show

DEFAULT_FILE = "snippet.py"
_DIRS = itertools.count()


def run_case(tmp_path: Path, rule_id: str, case: RuleCase, rules_dirs: list[Path] | None = None) -> list[str]:
    """Problems of one case (empty when it passes): its rule fires exactly on the lines its
    `# expect:` comments name (none for a quiet case), and so does every rule an annotation names."""
    root = tmp_path / f"case{next(_DIRS)}"
    path = root / (case.file or DEFAULT_FILE)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(case.code, encoding="utf-8")
    for other, code in case.files.items():
        extra = root / other
        extra.parent.mkdir(parents=True, exist_ok=True)
        extra.write_text(code, encoding="utf-8")
    options = ScanOptions(
        paths=[root],
        base=root,
        jobs=1,
        select=["ALL"],
        sdk=case.frame.get("sdk"),
        target=case.frame.get("target", "trn2"),
        backend=case.frame.get("backend"),
        rules_dirs=list(rules_dirs or []),
        triage=False,  # a case shows what the detector reports (notes included, no dedup, no cap)
    )
    result = run_scan(options)
    findings = filter_scan(result, options, FilterRequest(report_unused_suppressions=True), root).findings
    name = path.relative_to(root).as_posix()
    actual = Counter((f.line, f.rule) for f in findings if f.suppressed is None and f.path == name)
    annotations = parse(case.code)
    missing, unexpected = compare(annotations, actual, {rule_id} | annotations.rules())
    if not missing and not unexpected:
        return []
    lines = case.code.splitlines()
    return [
        f"{rule_id} case scanned as {name}:\n  expected but not reported:{show(missing, lines) or ' none'}"
        f"\n  reported but not expected:{show(unexpected, lines) or ' none'}"
    ]
