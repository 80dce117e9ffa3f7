"""docs/lock-in.md carries the lock-in parameters generated from rules/lockin.toml: it must be current."""

from __future__ import annotations

from neuronlint.lockin.params import load_params
from neuronlint.ruledb import load_ruledb
from scripts.generate_lockin_tables import DOC, current_doc


def test_generated_tables_are_current() -> None:
    params = load_params(load_ruledb())
    text = DOC.read_text(encoding="utf-8")
    assert current_doc(text, params) == text, (
        "docs/lock-in.md is out of date with rules/lockin.toml: run `python scripts/generate_lockin_tables.py` and commit it"
    )


def test_every_area_weight_and_grade_is_documented() -> None:
    params = load_params(load_ruledb())
    text = DOC.read_text(encoding="utf-8")
    for area in params.areas:
        assert f"(`{area.name}`)" in text
    for override in params.overrides:
        assert f"`{override.name}`" in text
    for grade in params.grades:
        assert f"| {grade.grade} |" in text
