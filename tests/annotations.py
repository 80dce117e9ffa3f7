"""Annotations of fixtures, inline snippets and rule cases (`# expect:` / `# ok:`), checked both ways.

The parser is neuronlint.ruledb.cases (rule cases are catalogue data); this module adds the comparison
the harnesses share.
"""

from __future__ import annotations

from collections import Counter

from neuronlint.ruledb.cases import Annotations, parse, strip

__all__ = ["Annotations", "compare", "parse", "show", "strip"]


def compare(
    annotations: Annotations, actual: Counter, rules: set[str] | None = None
) -> tuple[Counter, Counter]:
    """(missing, unexpected) between the annotations and the (line, rule) counts a scan reported.

    With `rules`, only those rules are compared: a rule case is strict about its own rule and the
    rules its annotations name, not about every other rule its code happens to trigger.
    """
    expected, found = annotations.expected, actual
    if rules is not None:
        expected = Counter({k: v for k, v in expected.items() if k[1] in rules})
        found = Counter({k: v for k, v in actual.items() if k[1] in rules})
    return expected - found, found - expected


def show(pairs: Counter, lines: list[str]) -> str:
    """(line, rule) pairs with the source line each points at, one per line."""
    return "".join(
        f"\n    {line}: {rule}  | {lines[line - 1].strip() if 0 < line <= len(lines) else ''}"
        for line, rule in sorted(pairs)
    )
