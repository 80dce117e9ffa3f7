"""Host syncs and data-dependent shapes in test code are not porting work: left out of the default
output, counted in `summary.left_out["test-checks"]`, listed by `--show-ok`.

A test reads results on the host and checks values by design (`assert torch.allclose(out, ref)`,
`assert loss.item() < 1`, `print(x.tolist())`, a boolean-mask comparison). It runs eagerly, once per
test, and works on Neuron as written: there is nothing to change and no step time to lose. The same
constructs in source, example and benchmark code stay findings, and the other categories (a
`.cuda()` or `"nccl"` in a test, which does fail on Neuron) stay findings in tests too.
"""

from __future__ import annotations

from collections import Counter

from neuronlint.findings import Finding
from neuronlint.scope import TEST

CATEGORIES = frozenset({"host-sync", "dynamic-shape"})
LEFT_OUT_KEY = "test-checks"


def is_test_check(f: Finding) -> bool:
    return f.scope == TEST and f.category in CATEGORIES and f.suppressed is None


def apply(findings: list[Finding], show_ok: bool = False, left_out: Counter | None = None) -> list[Finding]:
    if show_ok:
        return findings
    kept = []
    for f in findings:
        if is_test_check(f):
            if left_out is not None:
                left_out[LEFT_OUT_KEY] += 1
            continue
        kept.append(f)
    return kept
