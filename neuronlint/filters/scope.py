"""Scopes on findings: each finding gets the scope of its file (neuronlint.scope), or `test` inside a
`def test_*()` at the top of a source module (a test kept beside the code it checks); test code is
capped at `warning` (porting tests is work, but a test does not stop the model from running on
Neuron), and `--scope` keeps the scopes asked for."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from neuronlint.findings import Finding, Severity
from neuronlint.scope import SCOPES, SOURCE, TEST, ScopeRules

# The `site` fact static analysis gives detections inside test code (neuronlint.static.context.SITE_TEST).
SITE_TEST_FUNCTION = "test"

DEFAULT_TEST_CAP = Severity.WARNING


def assign(
    findings: Iterable[Finding],
    rules: ScopeRules,
    within_root: Mapping[str, str] | None = None,
    test_cap: Severity | None = DEFAULT_TEST_CAP,
) -> None:
    """Set `scope` on every finding; cap test findings at `test_cap` (None: no cap).

    `within_root` maps a reported path to its path inside the scanned directory.
    """
    cache: dict[str, str] = {}
    for f in findings:
        scope = cache.get(f.path)
        if scope is None:
            scope = cache[f.path] = rules.classify(f.path, (within_root or {}).get(f.path))
        if scope == SOURCE and f.facts.get("site") == SITE_TEST_FUNCTION:
            f.scope = TEST  # `def test_*():` at the top of a source module: test code
        else:
            f.scope = scope
        if f.scope == TEST and test_cap is not None and f.severity.rank > test_cap.rank:
            f.capped_from = f.severity
            f.severity = test_cap


def parse_scopes(values: Iterable[str]) -> frozenset[str]:
    """`--scope source,example --scope test` -> the set; `all` -> every scope. Raises ValueError."""
    chosen: set[str] = set()
    for value in values:
        for name in (v.strip().lower() for v in value.split(",")):
            if not name:
                continue
            if name == "all":
                chosen.update(SCOPES)
            elif name in SCOPES:
                chosen.add(name)
            else:
                raise ValueError(f"unknown scope {name!r} (expected one of: {', '.join(SCOPES)}, all)")
    return frozenset(chosen or SCOPES)


def select(findings: list[Finding], scopes: frozenset[str]) -> list[Finding]:
    """The findings in the chosen scopes."""
    if scopes >= set(SCOPES):
        return findings
    return [f for f in findings if f.scope in scopes]
