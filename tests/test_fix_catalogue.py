"""Rule records and fixers agree: a rule has a fixer exactly when its [rule.fix] says it is fixable,
kernels, CUDA-only libraries and dynamic shapes say there is no automatic fix, and every rule page
has a Fix section."""

from __future__ import annotations

from neuronlint.fix.run import fixable_rules
from neuronlint.ruledb import load_ruledb
from neuronlint.ruledb.pages import rule_markdown

DB = load_ruledb([])


def test_rules_with_a_fixer_document_it_and_only_they_do():
    fixers = fixable_rules()
    documented = {rule_id for rule_id, rule in DB.rules.items() if rule.fix.get("safety", "none") != "none"}
    assert fixers == documented


def test_kernels_libraries_and_dynamic_shapes_have_no_automatic_fix_and_say_why():
    for rule in DB.rules.values():
        if rule.category in ("custom-kernel", "cuda-only-lib", "dynamic-shape"):
            assert rule.fix.get("safety", "none") == "none", rule.id
            assert "No automatic fix" in rule_markdown(DB, rule), rule.id


def test_every_page_has_a_fix_section():
    for rule in DB.rules.values():
        page = rule_markdown(DB, rule)
        assert "\n## Fix\n" in page, rule.id
        if rule.fix.get("safety") in ("safe", "unsafe", "mixed"):
            assert "Fix safety:" in page
