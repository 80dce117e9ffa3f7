"""The lock-in score: per repository, package and file, for CUDA coupling and Neuron coupling.

For one direction and one unit (a file, a package, the repository) of `lines` lines:

    weight w(f)  = the rule's [[lockin_weight]] override, else its area's weight for f's severity,
                   times the [[lockin_scope]] factor of f's file (tests, examples: 0.5)
    counted      = at most `cap` findings of one rule per file count (the heaviest ones)
    evidence E_a = sum of counted weights in area a
    scale k      = max(1, lines / reference_lines)
    coupling c_a = max_a * E_a / (E_a + half_a * k)                   (bounded by max_a < 100)
    score S      = 100 * (1 - prod_a (1 - c_a / 100))                   (bounded by 100)

The breakdown gives area a the points S * L_a / sum(L), L_a = -ln(1 - c_a / 100): the logarithms
add up exactly as the couplings combine, so the points sum to S and do not depend on the order of
the areas. Within an area each counted finding gets points in proportion to its weight, so every
point traces back to a line. At a fixed code size adding a finding never lowers a score (monotone);
no area exceeds its own ceiling however many files repeat it, and above `reference_lines` the score
measures evidence per line, so it does not climb with the number of files.

Result types are in results.py, the effort estimate (hours per unit) in effort.py.
"""

from __future__ import annotations

import math
import os
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from neuronlint.findings import Finding
from neuronlint.lockin.effort import estimate_effort
from neuronlint.lockin.params import DIRECTIONS, LockinParams, load_params
from neuronlint.lockin.results import (
    AreaScore,
    DirectionScore,
    HotSpot,
    LockinResult,
    UnitScore,
    WeightedFinding,
)
from neuronlint.ruledb.model import Context, RuleDB

ROOT_PACKAGE = "(top level)"


# ---- building blocks ------------------------------------------------------------------------------
def facts_index(
    results: Iterable[Mapping[str, Any]] | None,
) -> dict[tuple[str, int, int, str], Mapping[str, Any]]:
    """Detection facts by (path, line, column, rule), from the scan's per-file results."""
    index: dict[tuple[str, int, int, str], Mapping[str, Any]] = {}
    for result in results or ():
        for det in result.get("detections", ()):
            index[(result["path"], det["line"], det["column"], det["rule"])] = det.get("facts", {})
    return index


def weigh(
    findings: Iterable[Finding], params: LockinParams, facts: Mapping[tuple, Mapping[str, Any]] | None = None
) -> list[WeightedFinding]:
    """Weigh active findings and mark which ones count under the per-rule, per-file cap."""
    facts = facts or {}
    weighted: list[WeightedFinding] = []
    scopes: dict[str, Any] = {}
    for finding in findings:
        if finding.suppressed is not None:
            continue
        own = dict(facts.get((finding.path, finding.line, finding.column, finding.rule), {}))
        for key, value in finding.extra.items():  # graph findings carry their facts in `extra`
            if isinstance(value, (str, int, bool)) and key not in own:
                own[key] = value
        area = params.area_for(finding.rule, finding.category)
        # A test's severity cap is for the scan's triage; its weight here is the [[lockin_scope]] factor.
        severity = (finding.capped_from or finding.severity).value
        weight, source = params.weight(finding.rule, severity, finding.category, own)
        scope = scopes.get(finding.path, False)
        if scope is False:
            scope = scopes[finding.path] = params.scope_for(finding.path, finding.scope)
        if scope is not None and scope.factor != 1.0:
            weight, source = weight * scope.factor, f"{source} x {scope.factor:g} ({scope.name})"
        weighted.append(WeightedFinding(finding, own, area.direction, area.name, weight, source))
    groups: dict[tuple[str, str], list[WeightedFinding]] = defaultdict(list)
    for item in weighted:
        groups[(item.path, item.rule)].append(item)
    caps = {a.name: a.cap for a in params.areas}
    for items in groups.values():
        cap = caps[items[0].area]
        if len(items) > cap:
            ranked = sorted(items, key=lambda w: (-w.weight, w.finding.line, w.finding.column))
            for item in ranked[cap:]:
                item.counted = False
    return weighted


def size_scale(lines: int, params: LockinParams) -> float:
    """How much the half-points grow for a unit of this size: max(1, lines / reference_lines)."""
    return max(1.0, lines / params.reference_lines)


def direction_score(
    items: Sequence[WeightedFinding], direction: str, params: LockinParams, lines: int = 0
) -> tuple[DirectionScore, dict[str, float]]:
    """Score one direction for a set of weighted findings in a unit of `lines` lines.

    Returns the score and, per area, the factor that turns a counted finding's weight into its
    points (points = weight * factor), so that callers can attribute the score to lines.
    """
    evidence: dict[str, float] = defaultdict(float)
    findings: dict[str, int] = defaultdict(int)
    counted: dict[str, int] = defaultdict(int)
    blockers: dict[str, int] = defaultdict(int)
    for item in items:
        if item.direction != direction:
            continue
        findings[item.area] += 1
        if item.finding.severity.value == "blocker":
            blockers[item.area] += 1
        if item.counted:
            counted[item.area] += 1
            evidence[item.area] += item.weight
    scale = size_scale(lines, params)
    areas = [a for a in params.areas_of(direction) if findings.get(a.name)]
    couplings = {a.name: a.coupling(evidence[a.name], scale) for a in areas}
    # -ln(1 - c/100) adds up across areas exactly as the couplings combine; each area's points are
    # its share of that sum, so the attribution does not depend on the order of the areas.
    logs = {name: -math.log1p(-min(c, 99.999999) / 100.0) for name, c in couplings.items()}
    log_total = sum(logs.values())
    total = max(0.0, 100.0 * -math.expm1(-log_total))
    breakdown: list[AreaScore] = []
    factors: dict[str, float] = {}
    for area in sorted(areas, key=lambda a: (-couplings[a.name], a.order)):
        points = total * logs[area.name] / log_total if log_total > 0 else 0.0
        factors[area.name] = points / evidence[area.name] if evidence[area.name] > 0 else 0.0
        breakdown.append(
            AreaScore(
                area.name,
                area.title,
                evidence[area.name],
                couplings[area.name],
                points,
                findings[area.name],
                counted[area.name],
                blockers[area.name],
                area.max,
                area.half * scale,
            )
        )
    band = params.grade(int(math.floor(total + 0.5)))
    score = DirectionScore(
        direction,
        total,
        band.grade,
        band.label,
        breakdown,
        sum(findings.values()),
        sum(blockers.values()),
        scale,
    )
    return score, factors


def package_of(path: str, root: str, depth: int = 1) -> str:
    """The package a file belongs to: the first `depth` directories below the root."""
    relative = path
    if root:
        try:
            relative = os.path.relpath(path, root) if os.path.isabs(path) == os.path.isabs(root) else path
        except ValueError:
            relative = path
    parts = relative.replace("\\", "/").split("/")
    directories = [p for p in parts[:-1] if p not in ("", ".")]
    if not directories:
        return ROOT_PACKAGE
    return "/".join(directories[:depth])


def common_root(paths: Iterable[str]) -> str:
    """The deepest directory containing every path ('' when they share none)."""
    directories = [os.path.dirname(p) for p in paths]
    if not directories:
        return ""
    try:
        root = os.path.commonpath(directories)
    except ValueError:  # mixed absolute and relative paths
        return ""
    return "" if root in (".", "") else root


# ---- the public entry point -----------------------------------------------------------------------
def score(
    findings: Iterable[Finding],
    results: Sequence[Mapping[str, Any]] | None,
    db: RuleDB,
    ctx: Context | None = None,
    *,
    root: str | None = None,
    package_depth: int = 1,
) -> LockinResult:
    """Score CUDA coupling and Neuron coupling per repository, package and file.

    findings: the scan's findings (suppressed ones are ignored). results: the scan's per-file
    results (`ScanResult.results`), used for line counts and detection facts; may be None for a
    report rebuilt from saved findings. db: the rule database holding rules/lockin.toml. ctx: the
    frame the findings were judged in (kept for reports). root: directory that package names are
    relative to (default: the deepest directory holding every scanned file). package_depth: how
    many directory levels name a package.

    Raises RuleDBError when the lock-in tables are missing or inconsistent.
    """
    params = load_params(db)
    results = list(results or [])
    weighted = weigh(findings, params, facts_index(results))
    line_counts = {r["path"]: int(r.get("lines", 0)) for r in results}
    all_paths = list(line_counts) or [w.path for w in weighted]
    if root is None:
        root = common_root(all_paths)
        if len(all_paths) == 1:
            root = os.path.dirname(all_paths[0])

    by_file: dict[str, list[WeightedFinding]] = defaultdict(list)
    for item in weighted:
        by_file[item.path].append(item)

    effort = {d: estimate_effort(weighted, d, params, db) for d in DIRECTIONS}
    total_lines = sum(line_counts.values())
    repo_scores: dict[str, DirectionScore] = {}
    for direction in DIRECTIONS:
        repo_score, factors = direction_score(weighted, direction, params, total_lines)
        repo_scores[direction] = repo_score
        for item in weighted:
            if item.direction == direction and item.counted:
                item.points = item.weight * factors.get(item.area, 0.0)

    def unit(kind: str, name: str, items: list[WeightedFinding], files: int, lines: int) -> UnitScore:
        scores = {d: direction_score(items, d, params, lines)[0] for d in DIRECTIONS}
        hours = {d: sum(i.hours for i in items if i.direction == d) for d in DIRECTIONS}
        return UnitScore(kind, name, files, lines, scores, hours)

    repository = UnitScore(
        "repository",
        root or ".",
        len(all_paths),
        total_lines,
        repo_scores,
        {d: effort[d].hours for d in DIRECTIONS},
    )

    file_points = {
        path: {d: sum(i.points for i in items if i.direction == d) for d in DIRECTIONS}
        for path, items in by_file.items()
    }
    files = [unit("file", path, items, 1, line_counts.get(path, 0)) for path, items in by_file.items()]
    files.sort(key=lambda u: (-file_points[u.name]["cuda"], -file_points[u.name]["neuron"], u.name))

    package_files: dict[str, list[str]] = defaultdict(list)
    for path in all_paths:
        package_files[package_of(path, root, package_depth)].append(path)
    packages = []
    for name, paths in package_files.items():
        items = [i for p in paths for i in by_file.get(p, [])]
        packages.append(unit("package", name, items, len(paths), sum(line_counts.get(p, 0) for p in paths)))
    package_points = {
        p.name: sum(file_points.get(f, {}).get("cuda", 0.0) for f in package_files[p.name]) for p in packages
    }
    packages.sort(key=lambda u: (-package_points[u.name], -u.scores["neuron"].value, u.name))

    hot_spots: dict[str, list[HotSpot]] = {}
    hot_count: dict[str, int] = {}
    file_units = {u.name: u for u in files}
    for direction in DIRECTIONS:
        total = repo_scores[direction].value
        ranked = sorted(
            (p for p in by_file if file_points[p][direction] > 0),
            key=lambda p: (-file_points[p][direction], p),
        )
        spots, running = [], 0.0
        for path in ranked:
            points = file_points[path][direction]
            running += points
            items = [i for i in by_file[path] if i.direction == direction]
            area_points: dict[str, float] = defaultdict(float)
            rule_points: dict[str, float] = defaultdict(float)
            for i in items:
                area_points[i.area] += i.points
                rule_points[i.rule] += i.points
            titles = {a.name: a.title for a in params.areas}
            spots.append(
                HotSpot(
                    path,
                    points,
                    100.0 * points / total if total else 0.0,
                    100.0 * running / total if total else 0.0,
                    file_units[path].scores[direction],
                    sum(1 for i in items if i.finding.severity.value == "blocker"),
                    len(items),
                    sum(i.hours for i in items),
                    [titles[a] for a, _ in sorted(area_points.items(), key=lambda kv: -kv[1]) if _ > 0][:3],
                    [r for r, _ in sorted(rule_points.items(), key=lambda kv: -kv[1]) if _ > 0][:4],
                )
            )
        hot_spots[direction] = spots
        # The hot spots: the fewest top files that together hold hot_spot_share % of the score.
        hot_count[direction] = next(
            (n + 1 for n, s in enumerate(spots) if s.cumulative >= params.hot_spot_share - 1e-9), len(spots)
        )

    unanalysed = sorted({w.path for w in weighted if w.finding.category == "parse-error"})
    return LockinResult(
        params=params,
        root=root,
        package_depth=package_depth,
        repository=repository,
        packages=packages,
        files=files,
        findings=weighted,
        effort=effort,
        hot_spots=hot_spots,
        hot_spot_count=hot_count,
        unanalysed=unanalysed,
        context=ctx,
        file_points=file_points,
    )
