"""The migration report as one JSON-ready dict, rendered by html.py, markdown.py or as JSON.

Schema (docs/lock-in.md, "Report JSON"): meta, frame, summary, breakdown, blockers, categories,
hot_spots, packages, libraries, serving, kernels, dtypes, ops, trace, effort, comparison, trend, findings,
rules, unanalysed. Numbers come from neuronlint.lockin.scoring; nothing here re-scores.
"""

from __future__ import annotations

import datetime
import os
from collections import defaultdict
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import quote

from neuronlint import __version__
from neuronlint.findings import CATEGORIES
from neuronlint.groups import build_groups
from neuronlint.lockin.effort import effort_assumptions
from neuronlint.lockin.params import DIRECTION_QUESTIONS, DIRECTION_TITLES, DIRECTIONS
from neuronlint.lockin.results import LockinResult, WeightedFinding
from neuronlint.report.inventory import (
    dtype_rows,
    kernel_rows,
    library_rows,
    op_rows,
    serving_rows,
    trace_summary,
)
from neuronlint.ruledb.model import Context, RuleDB
from neuronlint.ruledb.pages import DOCS_URL
from neuronlint.safe_text import url_path

SCHEMA_VERSION = 1
FORMULA = [
    "weight w = the rule's [[lockin_weight]] override, else its area's weight for the finding's severity, "
    "times the [[lockin_scope]] factor of its file (tests, examples)",
    "at most `cap` findings of one rule count per file (the heaviest)",
    "evidence E = sum of counted weights in an area; scale k = max(1, lines / reference_lines)",
    "coupling c = max * E / (E + half * k) for each area",
    "score S = 100 * (1 - product of (1 - c/100)) over the areas of a direction",
    "area points = S * ln(1 - c/100) / sum of ln(1 - c'/100): the points add up to S",
    "finding points = its area's points * w / E",
]


class SourceLinker:
    """Turns a finding's path and line into a link: a URL template, or a path relative to the report."""

    def __init__(self, template: str | None, report_dir: Path | None, base: Path):
        self.template = template
        self.report_dir = report_dir
        self.base = base

    def __call__(self, path: str, line: int) -> str:
        if self.template:
            encoded = quote(path.encode("utf-8", "surrogateescape"), safe="/")
            return self.template.replace("{path}", encoded).replace("{line}", str(line))
        absolute = Path(path) if os.path.isabs(path) else self.base / path
        if self.report_dir is None:
            target = os.path.relpath(absolute, self.base)
        else:
            try:
                target = os.path.relpath(absolute, self.report_dir)
            except ValueError:  # another drive on Windows
                return absolute.as_uri() + f"#L{line}"
        # Percent-encoded and starting with ./ or ../: a file name never becomes a scheme (javascript:).
        return url_path(target.replace(os.sep, "/")) + f"#L{line}"


def _round(value: float, digits: int = 2) -> float:
    return round(value, digits)


def _finding_row(item: WeightedFinding, link: Callable[[str, int], str]) -> dict[str, Any]:
    f = item.finding
    return {
        "rule": f.rule,
        "name": f.name,
        "category": f.category,
        "severity": f.severity.value,
        "status": f.status,
        "path": f.path,
        "line": f.line,
        "column": f.column,
        "message": f.message,
        "snippet": f.snippet,
        "origin": f.origin,
        "direction": item.direction,
        "area": item.area,
        "weight": _round(item.weight, 3),
        "weight_source": item.weight_source,
        "counted": item.counted,
        "points": _round(item.points, 4),
        "effort": item.effort,
        "hours": _round(item.hours, 2),
        "link": link(f.path, f.line),
    }


def _largest_remainder(values: Sequence[float], total: float, digits: int = 1) -> list[float]:
    """Round values to `digits` decimals so that they add up to `total` rounded the same way."""
    scale = 10**digits
    target = round(total * scale)
    floors = [int(v * scale) for v in values]
    remainders = sorted(range(len(values)), key=lambda i: -(values[i] * scale - floors[i]))
    for i in remainders[: max(0, target - sum(floors))]:
        floors[i] += 1
    return [f / scale for f in floors]


def _breakdown(lockin: LockinResult, direction: str) -> dict[str, Any]:
    repo = lockin.repository.scores[direction]
    shown = _largest_remainder([a.points for a in repo.breakdown], repo.value)
    areas = {a.name: a for a in lockin.params.areas}
    return {
        "score": repo.score,
        "value": _round(repo.value, 4),
        "size_scale": _round(repo.scale, 4),
        "areas": [
            {
                **a.to_dict(),
                "points_shown": s,
                "rationale": areas[a.name].rationale,
                "cap": areas[a.name].cap,
                "base_half": areas[a.name].half,
            }
            for a, s in zip(repo.breakdown, shown, strict=True)
        ],
    }


def _blockers(lockin: LockinResult, link: Callable[[str, int], str], per_area: int) -> list[dict[str, Any]]:
    """Blockers grouped by area, the areas that weigh most first (they gate everything else)."""
    titles = {a.name: a.title for a in lockin.params.areas}
    order = {}
    for direction in DIRECTIONS:
        for rank, area in enumerate(lockin.repository.scores[direction].breakdown):
            order[area.name] = (DIRECTIONS.index(direction), rank)
    groups: dict[str, list[WeightedFinding]] = defaultdict(list)
    for item in lockin.findings:
        if item.finding.severity.value == "blocker" and item.direction in DIRECTIONS:
            groups[item.area].append(item)
    out = []
    for area, items in sorted(groups.items(), key=lambda kv: order.get(kv[0], (9, 99))):
        items.sort(key=lambda i: (-i.points, i.finding.sort_key()))
        rules: dict[str, int] = defaultdict(int)
        for i in items:
            rules[i.rule] += 1
        out.append(
            {
                "area": area,
                "title": titles.get(area, area),
                "direction": items[0].direction,
                "count": len(items),
                "files": len({i.path for i in items}),
                "rules": [
                    {"rule": r, "count": n} for r, n in sorted(rules.items(), key=lambda kv: (-kv[1], kv[0]))
                ],
                "findings": [_finding_row(i, link) for i in items[:per_area]],
            }
        )
    return out


def _categories(lockin: LockinResult) -> list[dict[str, Any]]:
    counts: dict[str, dict[str, int]] = {c: {"blocker": 0, "warning": 0, "info": 0} for c in CATEGORIES}
    for item in lockin.findings:
        counts[item.finding.category][item.finding.severity.value] += 1
    return [{"category": c, **n, "total": sum(n.values())} for c, n in counts.items() if sum(n.values())]


def _hours(hours: float) -> str:
    """Hours as the headline prints them: whole hours from 10 h, else one decimal (1.1 h, of which
    0.6 h porting tests, not "1 h, of which 1 h")."""
    return f"{hours:,.0f}" if hours >= 10 else f"{hours:.1f}"


def _headline(lockin: LockinResult, ctx: Context | None, kernels: int, libraries: int) -> str:
    cuda = lockin.repository.scores["cuda"]
    neuron = lockin.repository.scores["neuron"]
    effort = lockin.effort["cuda"]
    frame = f"Neuron SDK {ctx.sdk} on {ctx.target}" if ctx else "Neuron"
    top = [a.title for a in cuda.breakdown[:2] if a.points >= 0.5]
    driver = f", mostly from {' and '.join(top)}" if top else ""
    text = (
        f"Moving this code to {frame}: CUDA coupling {cuda.score}/100 (grade {cuda.grade}, {cuda.label.lower()}){driver}. "
        f"{cuda.blockers} blocker{'s' if cuda.blockers != 1 else ''} to clear"
    )
    extras = []
    if kernels:
        extras.append(f"{kernels} custom kernel{'s' if kernels != 1 else ''} to port")
    if libraries:
        extras.append(f"{libraries} CUDA-only librar{'ies' if libraries != 1 else 'y'} to replace")
    text += (" (" + ", ".join(extras) + ")" if extras else "") + "; "
    text += f"estimated effort {_hours(effort.hours)} h ({effort.weeks:.1f} weeks"
    text += (
        f", of which {_hours(effort.test_hours)} h porting tests). " if effort.test_hours >= 0.05 else "). "
    )
    count = lockin.hot_spot_count["cuda"]
    if count:
        text += f"{count} file{'s' if count != 1 else ''} hold{'s' if count == 1 else ''} {lockin.params.hot_spot_share:g}% of the CUDA coupling. "
    text += f"Neuron coupling (the cost of leaving later) is {neuron.score}/100 (grade {neuron.grade})."
    fixes = fix_summary(lockin)
    if fixes["safe_findings"]:
        text += (
            f" Safe automatic fixes (`neuronlint fix`) remove {fixes['safe_findings']} of the "
            f"{fixes['findings']} CUDA findings, {fixes['safe_hours']:,.0f} h ({fixes['safe_share']:.0f}%) of the effort estimate."
        )
    return text


def fix_summary(lockin: LockinResult) -> dict[str, Any]:
    """How much of the CUDA-side effort estimate the automatic fixes remove (findings carry their
    Fix when the command attached them: neuronlint.fix.run.attach; `neuronlint report` also runs the
    safe fixes in memory and rescans, neuronlint.fix.run.check_safe_fixes, so a safe fix that would
    leave its finding on the line is not counted)."""
    cuda = [item for item in lockin.findings if item.direction == "cuda"]
    total = sum(item.hours for item in cuda)
    out: dict[str, Any] = {"findings": len(cuda), "hours": _round(total, 1)}
    for safety in ("safe", "unsafe"):
        fixed = [
            item
            for item in cuda
            if item.finding.fix is not None
            and item.finding.fix.automatic
            and item.finding.fix.applicability == safety
            and item.finding.extra.get("fix_removed", True)  # False: the rescan still shows it
        ]
        hours = sum(item.hours for item in fixed)
        out[f"{safety}_findings"] = len(fixed)
        out[f"{safety}_hours"] = _round(hours, 1)
        out[f"{safety}_share"] = _round(100 * hours / total, 1) if total else 0.0
    return out


def _rules(db: RuleDB, ids: set[str], ctx: Context | None) -> dict[str, Any]:
    out = {}
    for rule_id in sorted(ids):
        rule = db.rules.get(rule_id)
        if rule is None:
            continue
        instead = (
            (rule.instead.get(ctx.backend) if ctx else None)
            or rule.instead.get("any", "")
            or next(iter(rule.instead.values()), "")
        )
        out[rule_id] = {
            "name": rule.name,
            "title": rule.title,
            "category": rule.category,
            "summary": rule.summary,
            "why": rule.why,
            "instead": instead,
            "effort": rule.effort,
            "sources": list(rule.sources),
            "doc_url": DOCS_URL.format(id=rule_id),
        }
    return out


def build_report(
    lockin: LockinResult,
    db: RuleDB,
    ctx: Context | None,
    *,
    paths: Sequence[str],
    link: Callable[[str, int], str],
    traces: Sequence[dict[str, Any]] | None = None,
    comparison: dict[str, Any] | None = None,
    trend: dict[str, Any] | None = None,
    title: str | None = None,
    top: int = 20,
    blockers_per_area: int = 25,
    base: Path | None = None,
) -> dict[str, Any]:
    """Everything a migration report shows, as a JSON-ready dict (see the module docstring)."""
    kernels = kernel_rows(lockin, base)
    for row in kernels:
        row["link"] = link(row["first"]["path"], row["first"]["line"])
    libraries = library_rows(lockin, db)
    chip = db.chips.get(ctx.target) if ctx else None
    epoch = os.environ.get("SOURCE_DATE_EPOCH")  # reproducible builds and stable snapshots
    now = (
        datetime.datetime.fromtimestamp(int(epoch), datetime.timezone.utc)
        if epoch
        else datetime.datetime.now(datetime.timezone.utc)
    )
    summary: dict[str, Any] = {}
    for d in DIRECTIONS:
        repo = lockin.repository.scores[d]
        effort = lockin.effort[d]
        summary[d] = {
            "title": DIRECTION_TITLES[d],
            "question": DIRECTION_QUESTIONS[d],
            "score": repo.score,
            "value": _round(repo.value, 4),
            "grade": repo.grade,
            "label": repo.label,
            "blockers": repo.blockers,
            "findings": repo.findings,
            "hours": _round(effort.hours, 1),
            "test_hours": _round(effort.test_hours, 1),
            "weeks": _round(effort.weeks, 2),
            "hot_spot_files": lockin.hot_spot_count[d],
            "top_areas": [a.title for a in repo.breakdown[:3]],
        }
    summary["fixes"] = fix_summary(lockin)
    op_support = trace_summary(traces)
    summary["kernels"] = sum(k["kernels"] for k in kernels)
    summary["kernel_units"] = len(kernels)
    summary["libraries"] = len(libraries)
    summary["op_support"] = op_support
    summary["headline"] = _headline(lockin, ctx, summary["kernels"], len(libraries))
    findings = sorted(
        lockin.findings, key=lambda w: (-w.points, w.finding.severity.rank * -1, w.finding.sort_key())
    )
    return {
        "schema_version": SCHEMA_VERSION,
        "meta": {
            "tool": "neuronlint",
            "version": __version__,
            "generated": now.strftime("%Y-%m-%d %H:%M UTC"),
            "title": title or f"Neuron migration report: {_name(paths)}",
        },
        "frame": (
            {
                "sdk": ctx.sdk,
                "target": ctx.target,
                "backend": ctx.backend,
                "training": ctx.training,
                "chip": chip.title if chip else ctx.target,
                "neuroncore": chip.neuroncore if chip else "",
                "hbm_gib": chip.hbm_gib if chip else None,
            }
            if ctx
            else None
        ),
        "scope": {
            "paths": list(paths),
            "root": lockin.root,
            "files": lockin.repository.files,
            "lines": lockin.repository.lines,
            "package_depth": lockin.package_depth,
        },
        "summary": summary,
        "formula": FORMULA,
        "breakdown": {d: _breakdown(lockin, d) for d in DIRECTIONS},
        "grades": [
            {"grade": g.grade, "below": g.below, "label": g.label, "rationale": g.rationale}
            for g in lockin.params.grades
        ],
        "root_causes": _root_causes(lockin, db, ctx, link, top),
        "blockers": _blockers(lockin, link, blockers_per_area),
        "categories": _categories(lockin),
        "hot_spots": {
            d: [{**h.to_dict(), "link": link(h.path, 1)} for h in lockin.hot_spots[d][: max(top, 0)]]
            for d in DIRECTIONS
        },
        "hot_spot_count": dict(lockin.hot_spot_count),
        "hot_spot_share": lockin.params.hot_spot_share,
        "packages": [p.to_dict() for p in lockin.packages],
        "libraries": libraries,
        "serving": serving_rows(lockin, db),
        "kernels": kernels,
        "dtypes": dtype_rows(lockin, db, ctx) if ctx else [],
        "ops": op_rows(lockin, db),
        "trace": op_support,
        "effort": {
            d: {**lockin.effort[d].to_dict(), "assumptions": effort_assumptions(lockin.params)}
            for d in DIRECTIONS
        },
        "comparison": comparison,
        "trend": trend,
        "findings": [_finding_row(w, link) for w in findings],
        "rules": _rules(db, {w.rule for w in lockin.findings}, ctx),
        "unanalysed": lockin.unanalysed,
    }


def _root_causes(
    lockin: LockinResult, db: RuleDB, ctx: Context | None, link: Callable[[str, int], str], top: int
) -> list[dict[str, Any]]:
    """The scan's root causes (neuronlint.groups, the same groups as `scan`), ranked."""
    if ctx is None:
        return []
    causes = build_groups([w.finding for w in lockin.findings], db, ctx)
    rows = []
    for cause in causes[: max(top, 0)]:
        first = min(cause.findings, key=lambda f: (f.scope == "test", f.path, f.line))
        rows.append(
            {**cause.to_dict(), "link": link(first.path, first.line), "first": f"{first.path}:{first.line}"}
        )
    return rows


def _name(paths: Sequence[str]) -> str:
    if not paths:
        return Path.cwd().name
    names = [Path(os.path.abspath(p)).name or str(p) for p in paths]
    return ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
