"""The lock-in model's parameters, read from the rule database tables of rules/lockin.toml.

The formula lives in neuronlint.lockin.scoring; every number it uses comes from here, so that a
policy pack (--rules-dir) can retune the score without touching code.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from neuronlint.findings import CATEGORIES, NEURON_SIDE_CATEGORIES
from neuronlint.ruledb.model import RuleDB, RuleDBError

DIRECTIONS = ("cuda", "neuron")  # the two scored directions; areas may also say "none"
DIRECTION_TITLES = {
    "cuda": "CUDA coupling",
    "neuron": "Neuron coupling",
}
DIRECTION_QUESTIONS = {
    "cuda": "what must change to run on Neuron",
    "neuron": "what must change to leave Neuron later",
}


@dataclass(frozen=True)
class Area:
    """A group of findings that saturates on its own: coupling = max * E / (E + half)."""

    name: str
    title: str
    direction: str
    categories: tuple[str, ...]
    rules: tuple[str, ...]
    max: float
    half: float
    cap: int
    weights: Mapping[str, float]
    rationale: str
    order: int  # position in the database: ties in the breakdown are broken by it

    def coupling(self, evidence: float, scale: float = 1.0) -> float:
        """The area's coupling (0..max) for a weighted evidence in a unit whose size scale is `scale`."""
        return self.max * evidence / (evidence + self.half * scale) if evidence > 0 else 0.0


@dataclass(frozen=True)
class WeightOverride:
    """A weight for one rule (optionally only when the finding has some facts)."""

    name: str
    rule: str
    facts: Mapping[str, Any]
    weight: float
    rationale: str
    effort: str | None = None  # effort class for these findings instead of the rule's

    def matches(self, rule: str, facts: Mapping[str, Any]) -> bool:
        if rule != self.rule:
            return False
        for key, expected in self.facts.items():
            actual = facts.get(key)
            if not (actual in expected if isinstance(expected, list) else actual == expected):
                return False
        return True


_SCOPE_NAMES = {"test": "tests", "example": "examples", "benchmark": "examples", "docs": "examples"}


@dataclass(frozen=True)
class Scope:
    """Files whose findings weigh `factor` times their usual weight (tests, examples)."""

    name: str
    patterns: tuple[re.Pattern[str], ...]
    factor: float
    rationale: str

    def matches(self, path: str) -> bool:
        posix = path.replace("\\", "/")
        return any(p.search(posix) for p in self.patterns)


@dataclass(frozen=True)
class EffortClass:
    effort: str
    first: float
    more: float
    rationale: str


@dataclass(frozen=True)
class Grade:
    grade: str
    below: int
    label: str
    rationale: str


@dataclass(frozen=True)
class KernelKind:
    """A kernel kind recognised by name, with the NKI Library kernels that replace it."""

    kind: str
    title: str
    patterns: tuple[re.Pattern[str], ...]
    kernels: tuple[str, ...]
    note: str
    source: str

    def matches(self, text: str) -> bool:
        return any(p.search(text) for p in self.patterns)


@dataclass(frozen=True)
class LockinParams:
    """Everything the score needs from the database, checked for consistency once."""

    areas: tuple[Area, ...]
    overrides: tuple[WeightOverride, ...]
    scopes: tuple[Scope, ...]
    efforts: Mapping[str, EffortClass]
    grades: tuple[Grade, ...]  # ordered by `below`
    effort_severities: Mapping[str, frozenset[str]]  # direction -> severities that carry effort
    hours_per_week: float
    hot_spot_share: float
    reference_lines: int
    rationale: str
    kernel_kinds: tuple[KernelKind, ...] = ()
    _by_rule: Mapping[str, Area] = field(default_factory=dict)
    _by_category: Mapping[str, Area] = field(default_factory=dict)

    def area_for(self, rule: str, category: str) -> Area:
        """The area a finding belongs to: the one listing its rule, else the one listing its category."""
        area = self._by_rule.get(rule) or self._by_category.get(category)
        if area is None:  # from_db guarantees every category has an area; a saved report may not
            raise RuleDBError(f"[[lockin_area]]: no area lists rule {rule} or category {category!r}")
        return area

    def override_for(self, rule: str, facts: Mapping[str, Any]) -> WeightOverride | None:
        return next((o for o in self.overrides if o.matches(rule, facts)), None)

    def weight(self, rule: str, severity: str, category: str, facts: Mapping[str, Any]) -> tuple[float, str]:
        """The finding's weight and where it comes from (an override's name or 'area severity')."""
        override = self.override_for(rule, facts)
        if override is not None:
            return override.weight, f"lockin_weight {override.name}"
        area = self.area_for(rule, category)
        return float(area.weights[severity]), f"{area.name} {severity}"

    def scope_for(self, path: str, finding_scope: str = "source") -> Scope | None:
        """The scope a file weighs in (None: full weight). A finding's own scope (neuronlint.scope:
        path conventions and `test-paths`, ...) decides first: `test` weighs as `tests`, `example`,
        `benchmark` and `docs` as `examples`; else the first scope whose patterns match the path."""
        named = _SCOPE_NAMES.get(finding_scope)
        if named is not None:
            found = next((s for s in self.scopes if s.name == named), None)
            if found is not None:
                return found
        return next((s for s in self.scopes if s.matches(path)), None)

    def grade(self, score: int) -> Grade:
        for band in self.grades:
            if score < band.below:
                return band
        return self.grades[-1]

    def areas_of(self, direction: str) -> list[Area]:
        return [a for a in self.areas if a.direction == direction]

    def kernel_kind(self, *texts: str) -> KernelKind | None:
        """The first kind whose patterns match the first text that matches any kind."""
        for text in texts:
            if not text:
                continue
            lowered = text.lower()
            for kind in self.kernel_kinds:
                if kind.matches(lowered):
                    return kind
        return None


def _table(db: RuleDB, name: str) -> list[dict[str, Any]]:
    entries = db.tables.get(name) or []
    if not entries:
        raise RuleDBError(
            f"the rule database has no [[{name}]] entries (rules/lockin.toml is missing or empty)"
        )
    return entries


_PARAMS_CACHE: dict[str, LockinParams] = {}


def load_params(db: RuleDB) -> LockinParams:
    """Build (and cache per database fingerprint) the lock-in parameters; RuleDBError on inconsistency."""
    cached = _PARAMS_CACHE.get(db.fingerprint)
    if cached is None:
        cached = _PARAMS_CACHE[db.fingerprint] = _build(db)
    return cached


def _build(db: RuleDB) -> LockinParams:
    areas = []
    by_rule: dict[str, Area] = {}
    by_category: dict[str, Area] = {}
    for order, raw in enumerate(_table(db, "lockin_area")):
        area = Area(
            name=raw["name"],
            title=raw["title"],
            direction=raw["direction"],
            categories=tuple(raw.get("categories", ())),
            rules=tuple(raw.get("rules", ())),
            max=float(raw["max"]),
            half=float(raw["half"]),
            cap=int(raw["cap"]),
            weights={k: float(v) for k, v in raw["weights"].items()},
            rationale=raw["rationale"],
            order=order,
        )
        where = f"[[lockin_area]] (name={area.name!r})"
        for category in area.categories:
            if category not in CATEGORIES:
                raise RuleDBError(
                    f"{where}: key 'categories': unknown category {category!r} (expected one of {', '.join(CATEGORIES)})"
                )
            if category in by_category:
                raise RuleDBError(
                    f"{where}: key 'categories': {category!r} is already in area {by_category[category].name!r}"
                )
            by_category[category] = area
        for rule in area.rules:
            if rule not in db.rules:
                raise RuleDBError(f"{where}: key 'rules': unknown rule {rule}")
            if rule in by_rule:
                raise RuleDBError(f"{where}: key 'rules': {rule} is already in area {by_rule[rule].name!r}")
            side = "neuron" if db.rules[rule].category in NEURON_SIDE_CATEGORIES else "cuda"
            if area.direction != "none" and area.direction != side:
                raise RuleDBError(
                    f"{where}: key 'rules': {rule} measures {side} coupling, not {area.direction}"
                )
            by_rule[rule] = area
        areas.append(area)
    for category in CATEGORIES:
        if category not in by_category:
            raise RuleDBError(f"[[lockin_area]]: key 'categories': category {category!r} is in no area")
    for category, area in by_category.items():
        side = "neuron" if category in NEURON_SIDE_CATEGORIES else "cuda"
        if area.direction not in (side, "none"):
            raise RuleDBError(
                f"[[lockin_area]] (name={area.name!r}): key 'direction': category {category!r} measures {side} coupling"
            )
    overrides = []
    for raw in db.tables.get("lockin_weight", []):
        if raw["rule"] not in db.rules:
            raise RuleDBError(
                f"[[lockin_weight]] (name={raw['name']!r}): key 'rule': unknown rule {raw['rule']}"
            )
        overrides.append(
            WeightOverride(
                raw["name"],
                raw["rule"],
                dict(raw.get("facts", {})),
                float(raw["weight"]),
                raw["rationale"],
                raw.get("effort"),
            )
        )
    # An override with facts is more specific than one without: try those first.
    overrides.sort(key=lambda o: -len(o.facts))
    scopes = tuple(
        Scope(
            raw["name"], tuple(re.compile(p) for p in raw["patterns"]), float(raw["factor"]), raw["rationale"]
        )
        for raw in db.tables.get("lockin_scope", [])
    )
    efforts = {
        raw["effort"]: EffortClass(raw["effort"], float(raw["first"]), float(raw["more"]), raw["rationale"])
        for raw in _table(db, "lockin_effort")
    }
    for rule in db.rules.values():
        if rule.effort not in efforts:
            raise RuleDBError(
                f"[[lockin_effort]]: key 'effort': no entry for effort class {rule.effort!r} (used by {rule.id})"
            )
    grades = tuple(
        sorted(
            (
                Grade(r["grade"], int(r["below"]), r["label"], r["rationale"])
                for r in _table(db, "lockin_grade")
            ),
            key=lambda g: g.below,
        )
    )
    if grades[-1].below <= 100:
        raise RuleDBError(
            f"[[lockin_grade]]: key 'below': no grade covers a score of 100 (the highest 'below' is {grades[-1].below}; use 101)"
        )
    if len({g.below for g in grades}) != len(grades):
        raise RuleDBError("[[lockin_grade]]: key 'below': two grades share the same upper bound")
    models = {raw["name"]: raw for raw in _table(db, "lockin_model")}
    model = models["default"]
    kinds = tuple(
        KernelKind(
            raw["kind"],
            raw["title"],
            tuple(re.compile(p, re.IGNORECASE) for p in raw["patterns"]),
            tuple(raw["kernels"]),
            raw["note"],
            raw["source"],
        )
        for raw in db.tables.get("nki_replacement", [])
    )
    return LockinParams(
        areas=tuple(areas),
        overrides=tuple(overrides),
        scopes=scopes,
        efforts=efforts,
        grades=grades,
        effort_severities={d: frozenset(v) for d, v in model["effort_severities"].items()},
        hours_per_week=float(model["hours_per_week"]),
        hot_spot_share=float(model["hot_spot_share"]),
        reference_lines=int(model["reference_lines"]),
        rationale=model["rationale"],
        kernel_kinds=kinds,
        _by_rule=by_rule,
        _by_category=by_category,
    )
