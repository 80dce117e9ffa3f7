"""The effort estimate: hours per effort unit (a library, a compiled module, a kernel, a rule in a
file), the first finding of a unit at its class's `first` hours and every further one at `more`."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

from neuronlint.findings import NEURON_SIDE_CATEGORIES
from neuronlint.lockin.params import LockinParams
from neuronlint.lockin.results import Effort, EffortLine, WeightedFinding
from neuronlint.ruledb.model import RuleDB


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
        severity = item.finding.capped_from or item.finding.severity  # a test's cap is not less work
        if severity.value not in params.effort_severities.get(direction, ()):
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
    test_hours = sum(i.hours for group in per_rule.values() for i in group if i.finding.scope == "test")
    return Effort(
        direction,
        lines,
        total,
        total / params.hours_per_week,
        by_class,
        effort_assumptions(params),
        test_hours,
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
