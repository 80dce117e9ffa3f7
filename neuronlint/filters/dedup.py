"""One construct, one finding per category: the identity of a finding is (file, line, category).

`x = "cuda" if torch.cuda.is_available() else "cpu"` is one cuda-api finding, not two; a
pyproject.toml entry is one dependency finding however often it is read. The finding kept is the
most severe (then the first by column); the rules folded into it are listed in `extra["also"]`.

A construct written over several lines is one place too, for its notes: an `info` finding whose
span covers more severe findings of its category (`torch.compile(` on one line, its
`mode="max-autotune"` on the next) is folded into the first of the most severe of them; each of
those stays a finding. A warning or blocker over several lines (a branch on a multi-line
condition) is not folded, nor are the findings inside it: they are other constructs.

A Triton kernel is one construct too: `@triton.autotune(...)` and `@triton.heuristics(...)` above
its `@triton.jit` configure that kernel and are not findings of their own.
"""

from __future__ import annotations

from neuronlint.findings import Finding, Severity

KERNEL_CONFIG_DECORATORS = frozenset({"triton.autotune", "triton.heuristics"})


def one_per_line_and_category(findings: list[Finding]) -> list[Finding]:
    findings = [
        f for f in findings if not (f.rule == "NL301" and f.facts.get("kernel") in KERNEL_CONFIG_DECORATORS)
    ]
    kept: dict[tuple[str, int, str, bool], Finding] = {}
    order: list[tuple[str, int, str, bool]] = []
    for f in findings:
        key = (f.path, f.line, f.category, f.suppressed is not None)
        other = kept.get(key)
        if other is None:
            kept[key] = f
            order.append(key)
            continue
        first, second = (f, other) if f.severity.rank > other.severity.rank else (other, f)
        _fold(first, second)
        kept[key] = first
    return _one_per_construct([kept[key] for key in order])


def _fold(first: Finding, second: Finding) -> None:
    """List `second`'s rule (and those folded into it) in `first.extra["also"]`."""
    also = first.extra.setdefault("also", [])
    for rule in (second.rule, *second.extra.get("also", [])):
        if rule != first.rule and rule not in also:
            also.append(rule)
    if not also:
        first.extra.pop("also")


def _one_per_construct(findings: list[Finding]) -> list[Finding]:
    """Fold a multi-line info finding into the most severe finding of its category it covers."""
    groups: dict[tuple[str, str, bool], list[Finding]] = {}
    for f in findings:
        groups.setdefault((f.path, f.category, f.suppressed is not None), []).append(f)
    dropped: set[int] = set()
    for group in groups.values():
        if len(group) < 2:
            continue
        for outer in group:
            if outer.end_line <= outer.line or outer.severity is not Severity.INFO:
                continue
            start, end = (outer.line, outer.column), (outer.end_line, outer.end_column)
            inner = [
                f
                for f in group
                if f is not outer
                and f.severity.rank > outer.severity.rank
                and start <= (f.line, f.column)
                and (f.end_line, f.end_column) <= end
            ]
            if not inner:
                continue
            worst = max(inner, key=lambda f: f.severity.rank)  # the first of the most severe
            _fold(worst, outer)  # `mode="max-autotune"` says more than the call's info note
            dropped.add(id(outer))
    return [f for f in findings if id(f) not in dropped]
