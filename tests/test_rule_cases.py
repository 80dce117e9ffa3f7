"""Every `[[rule.case]]` of every static rule, both ways (Fixit's VALID/INVALID, Semgrep's ruleid/ok).

A firing case (one whose `# expect:` names its rule) must report the rule exactly on those lines; a
quiet case must not report it at all. Rules with `origin = "graph"` are found by tracing a model
(`neuronlint trace`), not by scanning a snippet: their cases are the pages' examples only.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from neuronlint.ruledb import load_ruledb
from tests.rule_cases import run_case

_DB = load_ruledb()
_CASES = [
    pytest.param(rule.id, index, case, id=f"{rule.id}-{index}-{'fires' if case.fires else 'quiet'}")
    for rule in sorted(_DB.rules.values(), key=lambda r: r.id)
    if rule.origin == "static"
    for index, case in enumerate(rule.cases)
]


@pytest.mark.parametrize("rule_id, index, case", _CASES)
def test_rule_case(tmp_path: Path, rule_id: str, index: int, case) -> None:
    problems = run_case(tmp_path, rule_id, case)
    assert not problems, "\n".join(problems)


def test_every_static_rule_has_a_firing_case_and_the_first_quiet_case_is_its_fix() -> None:
    """The page's Example is the first firing case; a rule that no snippet can trigger (an internal
    error, a named file of unknown type) are the only ones without."""
    without = sorted(
        r.id for r in _DB.rules.values() if r.origin == "static" and not any(c.fires for c in r.cases)
    )
    # NL002 is an internal error; NL004 fires only for a file named on the command line, and a case
    # is scanned as a directory (where unknown types are skipped silently: its quiet case).
    assert without == ["NL002", "NL004"]
