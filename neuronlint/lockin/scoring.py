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
"""

from __future__ import annotations

import math
import os
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from neuronlint.findings import NEURON_SIDE_CATEGORIES, Finding
from neuronlint.lockin.params import DIRECTIONS, Area, LockinParams, load_params
from neuronlint.ruledb.model import Context, RuleDB

ROOT_PACKAGE = "(top level)"


@dataclass
class WeightedFinding:
    """One active finding with what the model made of it."""

    finding: Finding
    facts: Mapping[str, Any]
    direction: str  # cuda | neuron | none
    area: str
    weight: float
    weight_source: str  # "lockin_weight <name>" or "<area> <severity>", then "x <factor> (<scope>)"
    counted: bool = True  # False when its rule already counted `cap` heavier findings in this file
    points: float = 0.0  # its share of the repository score of its direction
    effort: str = "none"
    unit: str = ""  # the effort unit it belongs to
    unit_kind: str = ""  # its rule's `unit` (triton-kernel, compiled-module, cuda-source) or ""
    hours: float = 0.0  # its share of the effort estimate

    @property
    def rule(self) -> str:
        return self.finding.rule

    @property
    def path(self) -> str:
        return self.finding.path

    def to_dict(self) -> dict[str, Any]:
        f = self.finding
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
            "direction": self.direction,
            "area": self.area,
            "weight": self.weight,
            "weight_source": self.weight_source,
            "counted": self.counted,
            "points": round(self.points, 4),
            "effort": self.effort,
            "effort_unit": self.unit,
            "hours": round(self.hours, 3),
        }


@dataclass
class AreaScore:
    """One line of a breakdown."""

    name: str
    title: str
    evidence: float  # sum of counted weights
    coupling: float  # max * E / (E + half), 0..max
    points: float  # what the area adds to the score (headroom share); the points sum to the score
    findings: int
    counted: int
    blockers: int
    max: float
    half: float  # the half-point used (the area's half times the unit's size scale)

    def to_dict(self) -> dict[str, Any]:
        return {
            "area": self.name,
            "title": self.title,
            "evidence": round(self.evidence, 4),
            "coupling": round(self.coupling, 4),
            "points": round(self.points, 4),
            "findings": self.findings,
            "counted": self.counted,
            "blockers": self.blockers,
            "max": self.max,
            "half": self.half,
        }


@dataclass
class DirectionScore:
    """A 0-100 score with its grade and the breakdown that produced it."""

    direction: str
    value: float  # unrounded score
    grade: str
    label: str
    breakdown: list[AreaScore]  # areas with findings, in breakdown order (largest coupling first)
    findings: int
    blockers: int
    scale: float = 1.0  # the size factor applied to every area's half-point

    @property
    def score(self) -> int:
        """The score as shown: rounded half up (the grade is taken from this number)."""
        return int(math.floor(self.value + 0.5))

    def to_dict(self) -> dict[str, Any]:
        return {
            "direction": self.direction,
            "score": self.score,
            "value": round(self.value, 4),
            "grade": self.grade,
            "label": self.label,
            "findings": self.findings,
            "blockers": self.blockers,
            "size_scale": round(self.scale, 4),
            "breakdown": [a.to_dict() for a in self.breakdown],
        }


@dataclass
class UnitScore:
    """Scores of one file, one package or the whole repository."""

    kind: str  # file | package | repository
    name: str
    files: int
    lines: int
    scores: dict[str, DirectionScore]
    hours: dict[str, float]  # effort per direction for the findings in this unit

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "name": self.name,
            "files": self.files,
            "lines": self.lines,
            **{d: {**s.to_dict(), "hours": round(self.hours.get(d, 0.0), 2)} for d, s in self.scores.items()},
        }


@dataclass
class EffortLine:
    effort: str
    rule: str
    title: str
    units: int
    findings: int
    hours: float

    def to_dict(self) -> dict[str, Any]:
        return {
            "effort": self.effort,
            "rule": self.rule,
            "title": self.title,
            "units": self.units,
            "findings": self.findings,
            "hours": round(self.hours, 2),
        }


@dataclass
class Effort:
    """Estimated hours per effort class and rule, with the assumptions that produced them."""

    direction: str
    lines: list[EffortLine]
    hours: float
    weeks: float
    by_class: dict[str, float]
    assumptions: list[str]

    def to_dict(self) -> dict[str, Any]:
        return {
            "direction": self.direction,
            "hours": round(self.hours, 2),
            "weeks": round(self.weeks, 2),
            "by_class": {k: round(v, 2) for k, v in self.by_class.items()},
            "lines": [line.to_dict() for line in self.lines],
            "assumptions": self.assumptions,
        }


@dataclass
class HotSpot:
    """A file holding a large share of a direction's repository score."""

    path: str
    points: float  # its share of the repository score
    share: float  # points as a percentage of the repository score
    cumulative: float  # running share down the ranking
    file_score: DirectionScore
    blockers: int
    findings: int
    hours: float
    top_areas: list[str]  # area titles, heaviest first
    top_rules: list[str]  # rule IDs, heaviest first

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "points": round(self.points, 4),
            "share": round(self.share, 2),
            "cumulative": round(self.cumulative, 2),
            "score": self.file_score.score,
            "grade": self.file_score.grade,
            "blockers": self.blockers,
            "findings": self.findings,
            "hours": round(self.hours, 2),
            "areas": self.top_areas,
            "rules": self.top_rules,
        }


@dataclass
class LockinResult:
    """What `score` returns: scores at every level, effort, hot spots and the weighted findings."""

    params: LockinParams
    root: str  # the directory package names are relative to ('' = the working directory)
    package_depth: int
    repository: UnitScore
    packages: list[UnitScore]  # ordered by CUDA points, then name
    files: list[UnitScore]  # every file with findings, ordered by CUDA points, then path
    findings: list[WeightedFinding]  # active findings, in scan order
    effort: dict[str, Effort]
    hot_spots: dict[str, list[HotSpot]]  # the full ranking; hot_spot_count says where the hot spots end
    hot_spot_count: dict[str, int]
    unanalysed: list[str]  # files with parse or analysis errors (not scored)
    context: Context | None = None
    file_points: dict[str, dict[str, float]] = field(default_factory=dict)  # path -> direction -> points

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready form (docs/lock-in.md describes it)."""
        return {
            "model": {
                "areas": [_area_dict(a) for a in self.params.areas],
                "grades": [
                    {"grade": g.grade, "below": g.below, "label": g.label} for g in self.params.grades
                ],
                "effort_classes": {
                    k: {"first": e.first, "more": e.more} for k, e in self.params.efforts.items()
                },
                "effort_severities": {d: sorted(v) for d, v in self.params.effort_severities.items()},
                "hours_per_week": self.params.hours_per_week,
            },
            "root": self.root,
            "package_depth": self.package_depth,
            "repository": self.repository.to_dict(),
            "packages": [p.to_dict() for p in self.packages],
            "files": [f.to_dict() for f in self.files],
            "effort": {d: e.to_dict() for d, e in self.effort.items()},
            "hot_spots": {
                d: [h.to_dict() for h in spots[: self.hot_spot_count[d]]]
                for d, spots in self.hot_spots.items()
            },
            "unanalysed": self.unanalysed,
            "findings": [w.to_dict() for w in self.findings],
        }


def _area_dict(area: Area) -> dict[str, Any]:
    return {
        "name": area.name,
        "title": area.title,
        "direction": area.direction,
        "max": area.max,
        "half": area.half,
        "cap": area.cap,
        "weights": dict(area.weights),
    }


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
        weight, source = params.weight(finding.rule, finding.severity.value, finding.category, own)
        scope = scopes.get(finding.path, False)
        if scope is False:
            scope = scopes[finding.path] = params.scope_for(finding.path)
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


def _cuda_source_names(items: Sequence[WeightedFinding], db: RuleDB) -> set[str]:
    """File stems and directory names of the CUDA sources in the scan (findings of `unit = "cuda-source"` rules)."""
    names: set[str] = set()
    for item in items:
        rule = db.rules.get(item.rule)
        if rule is not None and rule.unit == "cuda-source":
            parts = item.path.replace("\\", "/").split("/")
            names.add(parts[-1].rsplit(".", 1)[0])
            if len(parts) > 1:
                names.add(parts[-2])
    return names


def _unit_key(item: WeightedFinding, cuda_sources: set[str]) -> tuple[str, str, int]:
    """(unit, role, size): what one effort unit is, whether this finding opens or repeats it, its size.

    One library (or, on the Neuron side, one top-level package such as `nki`) or one compiled
    module is adapted once for the repository, and a compiled module whose
    CUDA sources are in the scan is ported at those sources; one Triton kernel is one `@triton.jit`
    function (its launches and autotune decorators repeat it); a CUDA source file is as many units
    as it defines `__global__` kernels (a header without any repeats its directory's kernels);
    anything else is one rule in one file.
    """
    rule, facts, kind = item.rule, item.facts, item.unit_kind
    if kind == "compiled-module" and facts.get("module"):
        last = str(facts["module"]).rsplit(".", 1)[-1]
        if any(name == last or name.startswith(last + "_") for name in cuda_sources):
            return f"{rule}:module:{facts['module']}", "repeat", 1
    if facts.get("library"):
        return f"{rule}:library:{facts['library']}", "any", 1
    if facts.get("module"):
        module = str(facts["module"])
        if item.finding.category in NEURON_SIDE_CATEGORIES:  # nki, nki.isa, nki.language: one package
            module = module.split(".", 1)[0]
        return f"{rule}:module:{module}", "any", 1
    if kind == "triton-kernel":
        if str(facts.get("kernel", "")).endswith(".jit") or str(facts.get("api", "")).endswith(".jit"):
            return f"{rule}:{item.path}:{item.finding.line}", "any", 1
        return f"{rule}:{item.path}:extra", "repeat", 1
    if kind == "cuda-source":
        kernels = facts.get("kernels")
        if isinstance(kernels, int) and not isinstance(kernels, bool):
            directory = item.path.rsplit("/", 1)[0] if "/" in item.path else ""
            return (
                (f"{rule}:{item.path}", "any", kernels)
                if kernels > 0
                else (f"{rule}:{directory}:headers", "repeat", 1)
            )
    return f"{rule}:{item.path}", "any", 1


def estimate_effort(
    items: Sequence[WeightedFinding], direction: str, params: LockinParams, db: RuleDB
) -> Effort:
    """Hours per effort class and rule; also sets each finding's `effort`, `unit` and `hours`."""
    opened: set[str] = set()
    per_rule: dict[str, list[WeightedFinding]] = defaultdict(list)
    cuda_sources = _cuda_source_names(items, db)
    for item in sorted(items, key=lambda w: w.finding.sort_key()):
        if item.direction != direction:
            continue
        rule = db.rules.get(item.rule)
        item.unit_kind = rule.unit if rule else ""
        override = params.override_for(item.rule, item.facts)
        item.effort = (override.effort if override and override.effort else None) or (
            rule.effort if rule else "none"
        )
        if item.finding.severity.value not in params.effort_severities.get(direction, ()):
            item.unit, item.hours = "", 0.0
            continue
        unit, role, size = _unit_key(item, cuda_sources)
        item.unit = unit
        cls = params.efforts[item.effort]
        if role == "any" and unit not in opened:
            opened.add(unit)
            item.hours = cls.first * size
        else:
            item.hours = cls.more
        per_rule[item.rule].append(item)
    lines = []
    by_class: dict[str, float] = {k: 0.0 for k in params.efforts if k != "none"}
    for rule_id, group in per_rule.items():
        rule = db.rules.get(rule_id)
        for effort in sorted({i.effort for i in group}):
            part = [i for i in group if i.effort == effort]
            hours = sum(i.hours for i in part)
            lines.append(
                EffortLine(
                    effort,
                    rule_id,
                    rule.title if rule else rule_id,
                    len({i.unit for i in part if i.unit}),
                    len(part),
                    hours,
                )
            )
            by_class[effort] = by_class.get(effort, 0.0) + hours
    lines.sort(key=lambda line: (-line.hours, line.rule))
    total = sum(line.hours for line in lines)
    return Effort(
        direction, lines, total, total / params.hours_per_week, by_class, effort_assumptions(params)
    )


def effort_assumptions(params: LockinParams) -> list[str]:
    """The assumptions behind every effort estimate, as printed in reports."""
    cuda = params.effort_severities.get("cuda", frozenset())
    neuron = params.effort_severities.get("neuron", frozenset())
    out = [
        f"CUDA coupling: {', '.join(sorted(cuda))} findings carry effort (info findings are advice). "
        f"Neuron coupling: {', '.join(sorted(neuron))} findings do (there, severity says how healthy the code is, "
        "not whether it changes when leaving).",
        "A unit is one library or compiled module (however many files use it; a module whose CUDA sources "
        "are scanned is ported at its sources), one @triton.jit kernel, one __global__ kernel in a CUDA "
        "source, or otherwise one rule in one file.",
    ]
    for cls in params.efforts.values():
        if cls.effort == "none":
            continue
        out.append(
            f"{cls.effort}: {cls.first:g} h for the first finding of a unit, {cls.more:g} h for each further one. {cls.rationale}"
        )
    out.append(
        f"Weeks are {params.hours_per_week:g} working hours; the estimate excludes testing on hardware, performance tuning and review."
    )
    return out


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

    unanalysed = sorted({w.path for w in weighted if w.direction == "none"})
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
