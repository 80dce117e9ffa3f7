"""What-if: the same code judged for another Neuron SDK release or chip, side by side.

The analysis of the files does not depend on the frame, only the verdicts do, so the comparison
re-judges the scan's per-file results with the rule database for the other frame and scores both.
Traced op findings belong to the frame they were traced in; both sides use static findings only.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Any

from neuronlint.findings import Finding
from neuronlint.lockin.params import DIRECTION_TITLES, DIRECTIONS
from neuronlint.lockin.scoring import score
from neuronlint.pipeline import ScanOptions, ScanResult, findings_in_frame
from neuronlint.ruledb.model import Context


def frame_dict(ctx: Context) -> dict[str, Any]:
    return {"sdk": ctx.sdk, "target": ctx.target, "backend": ctx.backend, "training": ctx.training}


def _key(f: Finding) -> tuple[str, int, int, str]:
    return (f.path, f.line, f.column, f.rule)


def _by_rule(findings: list[Finding], db: Any, limit: int = 5) -> list[dict[str, Any]]:
    groups: dict[str, list[Finding]] = defaultdict(list)
    for f in findings:
        groups[f.rule].append(f)
    rows = []
    for rule_id, items in sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        rule = db.rules.get(rule_id)
        items.sort(key=Finding.sort_key)
        rows.append(
            {
                "rule": rule_id,
                "title": rule.title if rule else rule_id,
                "category": items[0].category,
                "count": len(items),
                "examples": [{"path": f.path, "line": f.line, "message": f.message} for f in items[:limit]],
            }
        )
    return rows


def compare(scan: ScanResult, options: ScanOptions, other: Context, package_depth: int = 1) -> dict[str, Any]:
    """Scores, blockers gone and blockers new when the scanned code moves from scan.context to `other`."""
    db = scan.db
    base_findings = [f for f in scan.findings if f.origin == "static" and f.suppressed is None]
    other_findings, _ = findings_in_frame(scan.results, db, other, options)
    other_findings = [f for f in other_findings if f.suppressed is None]
    base_score = score(base_findings, scan.results, db, scan.context, package_depth=package_depth)
    other_score = score(other_findings, scan.results, db, other, package_depth=package_depth)
    base_blockers = {_key(f): f for f in base_findings if f.severity.value == "blocker"}
    other_blockers = {_key(f): f for f in other_findings if f.severity.value == "blocker"}
    gone = [f for k, f in base_blockers.items() if k not in other_blockers]
    new = [f for k, f in other_blockers.items() if k not in base_blockers]
    base_keys = {_key(f) for f in base_findings}
    other_keys = {_key(f) for f in other_findings}
    scores = {}
    for d in DIRECTIONS:
        b, o = base_score.repository.scores[d], other_score.repository.scores[d]
        scores[d] = {
            "title": DIRECTION_TITLES[d],
            "base": b.score,
            "other": o.score,
            "delta": o.score - b.score,
            "base_grade": b.grade,
            "other_grade": o.grade,
            "base_blockers": b.blockers,
            "other_blockers": o.blockers,
            "base_hours": round(base_score.effort[d].hours, 1),
            "other_hours": round(other_score.effort[d].hours, 1),
        }
    other_index = {_key(f): f for f in other_findings}
    changed_severity = Counter(
        (f.severity.value, other_index[_key(f)].severity.value)
        for f in base_findings
        if _key(f) in other_index and other_index[_key(f)].severity != f.severity
    )
    return {
        "base": frame_dict(scan.context),
        "other": frame_dict(other),
        "scores": scores,
        "blockers_gone": _by_rule(gone, db),
        "blockers_new": _by_rule(new, db),
        "counts": {
            "blockers_gone": len(gone),
            "blockers_new": len(new),
            "findings_gone": len(base_keys - other_keys),
            "findings_new": len(other_keys - base_keys),
            "severity_changes": [
                {"from": a, "to": b, "count": n} for (a, b), n in sorted(changed_severity.items())
            ],
        },
        "note": "Both sides are judged from the same static analysis; traced op verdicts belong to the base frame only.",
    }
