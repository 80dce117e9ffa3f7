"""Host syncs and data-dependent shapes in test code are not porting work: left out of the default
output, counted in `summary.left_out["test-checks"]`, listed by `--show-ok`.

A test reads results on the host and checks values by design (`assert torch.allclose(out, ref)`,
`assert loss.item() < 1`, `print(x.tolist())`, a boolean-mask comparison). It runs eagerly, once per
test, and works on Neuron as written: there is nothing to change and no step time to lose. The same
constructs in source, example and benchmark code stay findings, and the other categories (a
`.cuda()` or `"nccl"` in a test, which does fail on Neuron) stay findings in tests too.

A test file that imports no tensor library (torch, transformers, ...; the list in
neuronlint/static/context.py) places no tensor on any device, nor does a test function of a file
that imports one only inside other functions: its `"cuda"` strings, device
comparisons, `load_in_4bit=True` options and `CUDA_VISIBLE_DEVICES` settings are inputs and mocked
answers for the code under test (a device label handed to a planner, a patched GPU probe). Those
findings are left out too, counted in `summary.left_out["test-data"]`. Imports of CUDA-only
libraries and custom kernels in such files stay findings.
"""

from __future__ import annotations

from collections import Counter

from neuronlint.findings import Finding
from neuronlint.scope import TEST

CATEGORIES = frozenset({"host-sync", "dynamic-shape"})
LEFT_OUT_KEY = "test-checks"
TEST_DATA_KEY = "test-data"
# Kept in tensorless test files: what the file imports or defines is still CUDA-only code.
_STILL_CODE = frozenset({"NL401"})


def is_test_check(f: Finding) -> bool:
    return f.scope == TEST and f.category in CATEGORIES and f.suppressed is None


def is_test_data(f: Finding) -> bool:
    """A finding in a test file that imports no tensor library (see the module docstring)."""
    return (
        f.scope == TEST
        and f.suppressed is None
        and bool(f.facts.get("tensorless"))
        and f.category != "custom-kernel"
        and f.rule not in _STILL_CODE
    )


def apply(findings: list[Finding], show_ok: bool = False, left_out: Counter | None = None) -> list[Finding]:
    if show_ok:
        return findings
    kept = []
    for f in findings:
        key = LEFT_OUT_KEY if is_test_check(f) else TEST_DATA_KEY if is_test_data(f) else None
        if key is not None:
            if left_out is not None:
                left_out[key] += 1
            continue
        kept.append(f)
    return kept
