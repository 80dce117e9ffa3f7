"""What the lock-in score returns: weighted findings, area and direction scores, unit scores, effort
and hot spots, each with the `to_dict` form docs/lock-in.md describes."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from neuronlint.findings import Finding
from neuronlint.lockin.params import Area, LockinParams
from neuronlint.ruledb.model import Context


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
    test_hours: float = 0.0  # the part of `hours` spent porting test code (scope "test")

    def to_dict(self) -> dict[str, Any]:
        return {
            "direction": self.direction,
            "hours": round(self.hours, 2),
            "test_hours": round(self.test_hours, 2),
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
