"""The noise filters that run inside the scan, on judged findings, in this order:

1. first-party library imports and a Neuron package's uses of itself are dropped (filters/first_party.py),
2. notes about supported, device-generic code are dropped unless --show-ok (filters/notes.py),
3. one finding per line and category, multi-line notes folded into what they cover (filters/dedup.py),
4. every finding gets its scope; test findings are capped at warning (filters/scope.py),
5. code that runs only where CUDA exists: guards folded into what they guard, test and benchmark
   code of CUDA-only paths left out unless --show-ok, CUDA-only branches elsewhere capped at
   warning (filters/cuda_paths.py),
6. host syncs and data-dependent shapes in test code are left out unless --show-ok: a test's own
   value checks are not porting work; so are the findings of test files that import no tensor
   library, whose device names are test data (filters/test_checks.py).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping

from neuronlint.filters import cuda_paths, dedup, first_party, notes, test_checks
from neuronlint.filters import scope as scope_filter
from neuronlint.findings import Finding, Severity
from neuronlint.scope import ScopeRules


def prepare(
    findings: list[Finding],
    *,
    scope_rules: ScopeRules,
    within_root: Mapping[str, str] | None = None,
    test_cap: Severity | None = scope_filter.DEFAULT_TEST_CAP,
    first_party_names: set[str] | None = None,
    show_ok: bool = False,
    enabled: bool = True,
    left_out: Counter | None = None,
    folded: list[Finding] | None = None,
) -> list[Finding]:
    """The findings the scan reports; `left_out` counts what steps 5 and 6 left out (by scope, "guard", "test-checks", "test-data")."""
    if not enabled:  # the detectors' own output: scopes only (rule tests read it)
        scope_filter.assign(findings, scope_rules, within_root, None)
        return findings
    if first_party_names:
        findings = first_party.drop_first_party(findings, first_party_names)
    if show_ok:
        notes.mark_notes(findings)
    else:
        findings = notes.drop_notes(findings)
    findings = dedup.one_per_line_and_category(findings)
    scope_filter.assign(findings, scope_rules, within_root, test_cap)
    findings = cuda_paths.apply(findings, show_ok=show_ok, left_out=left_out, folded=folded)
    return test_checks.apply(findings, show_ok=show_ok, left_out=left_out)
