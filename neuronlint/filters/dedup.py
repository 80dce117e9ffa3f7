"""One construct, one finding per category: the identity of a finding is (file, line, category).

`x = "cuda" if torch.cuda.is_available() else "cpu"` is one cuda-api finding, not two; a
pyproject.toml entry is one dependency finding however often it is read. The finding kept is the
most severe (then the first by column); the rules folded into it are listed in `extra["also"]`.

A Triton kernel is one construct too: `@triton.autotune(...)` and `@triton.heuristics(...)` above
its `@triton.jit` configure that kernel and are not findings of their own.
"""

from __future__ import annotations

from neuronlint.findings import Finding

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
        also = first.extra.setdefault("also", [])
        if second.rule != first.rule and second.rule not in also:
            also.append(second.rule)
        for rule in second.extra.get("also", []):
            if rule not in also and rule != first.rule:
                also.append(rule)
        if not also:
            first.extra.pop("also")
        kept[key] = first
    return [kept[key] for key in order]
