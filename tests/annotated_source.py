"""Scan a source snippet whose lines say what must fire (`# expect: NL701, NL603`), checked both ways.

The same annotation as the fixture harness (tests/test_fixtures.py), for snippets written inline in
rule tests: every annotated rule must be reported on its line, and nothing else may be reported.
"""

from __future__ import annotations

import itertools
import textwrap
from collections import Counter
from pathlib import Path

from neuronlint.findings import Finding
from tests.annotations import compare, parse, show
from tests.conftest import scan_paths

_CASES = itertools.count()


def expected_rules(source: str) -> Counter:
    """(line, rule) pairs the `# expect:` comments of a source announce."""
    return parse(source).expected


def check(tmp_path: Path, source: str, name: str = "snippet.py", **scan: object) -> list[Finding]:
    """Scan `source` (dedented) with every rule selected and compare with its annotations.

    The file is written at `name` inside a fresh directory that is the scan root, so a `name` with
    directories (`pkg/data/utils.py`) gives the module path the checkers see.
    """
    source = textwrap.dedent(source).lstrip("\n")
    root = tmp_path / f"case{next(_CASES)}"
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(source, encoding="utf-8")
    scan.setdefault("select", ["ALL"])
    findings = scan_paths([root], cwd=root, **scan).active
    actual = Counter((f.line, f.rule) for f in findings)
    lines = source.splitlines()
    missing, unexpected = compare(parse(source), actual)
    assert not missing and not unexpected, (
        f"expected but not reported:{show(missing, lines) or ' none'}\n"
        f"  reported but not expected:{show(unexpected, lines) or ' none'}"
    )
    return findings


def only(findings: list[Finding], rule: str) -> Finding:
    """The single finding of `rule` (fails if there is not exactly one)."""
    matching = [f for f in findings if f.rule == rule]
    assert len(matching) == 1, f"expected one {rule}, got {[(f.line, f.rule) for f in findings]}"
    return matching[0]
