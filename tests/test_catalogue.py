"""The rule catalogue and the code agree (ruff's codes table, enforced instead of maintained).

Every rule has exactly one home emitter; every rule an emitter declares exists; every placeholder
of a rule's texts and every `when.facts` key of its verdicts is a fact its emitters declare; every
firing case contains a trigger word of a checker that emits its rule (else `--select` of that
rule would not even parse the file).
"""

from __future__ import annotations

import string

import pytest

from neuronlint.filetypes.emitters import FileTypes
from neuronlint.filters.unused import UNUSED_SUPPRESSION_RULE
from neuronlint.ruledb import load_ruledb
from neuronlint.static.build_inputs import BuildInputs
from neuronlint.static.checkers import CHECKERS
from neuronlint.static.checkers.api_names import ApiNames
from neuronlint.static.data import build_static_data
from neuronlint.static.engine import TOOL_EMITS, select_checkers
from neuronlint.static.link import CrossFileLink

DB = load_ruledb()
TABLES = DB.tables
# Facts every detection may carry: set by FileContext.report (in_loop, site, the cuda_path facts of
# static/cuda_paths.py) and by judging (target).
IMPLICIT = {"in_loop", "site", "target", "cuda_path", "cuda_guard", "cuda_guard_of"}
# Emitters outside the static walk, with the rules they are the home of.
OTHERS: dict[str, dict[str, tuple[str, ...]]] = {
    "engine": TOOL_EMITS,
    "link": dict(CrossFileLink.emits),
    "build-inputs": dict(BuildInputs.emits),
    "file-types": dict(FileTypes.emits),
    "unused-suppressions": {UNUSED_SUPPRESSION_RULE: ("rules",)},
}
ALSO = {
    "link": CrossFileLink.also_emits,
    "build-inputs": BuildInputs.also_emits,
    "file-types": FileTypes.also_emits,
}


def _homes() -> dict[str, list[str]]:
    """Rule -> the emitters that declare it as their own. A rule no checker claims but [[api]] rows
    name is table-driven: its home is ApiNames."""
    homes: dict[str, list[str]] = {}
    for checker in CHECKERS:
        for rule in checker.emits:
            homes.setdefault(rule, []).append(checker.__name__)
    for name, emits in OTHERS.items():
        for rule in emits:
            homes.setdefault(rule, []).append(name)
    for rule in ApiNames.declared(TABLES):
        homes.setdefault(rule, [ApiNames.__name__])
    return homes


def _declared_facts(rule: str) -> set[str]:
    facts = set(IMPLICIT)
    for checker in CHECKERS:
        facts.update(checker.declared(TABLES).get(rule, ()))
    for emits in [*OTHERS.values(), *ALSO.values()]:
        facts.update(emits.get(rule, ()))
    return facts


def _placeholders(text: str) -> set[str]:
    return {field for _, field, _, _ in string.Formatter().parse(text) if field}


STATIC = sorted(r.id for r in DB.rules.values() if r.origin == "static")


@pytest.mark.parametrize("rule_id", STATIC)
def test_every_static_rule_has_exactly_one_home_emitter(rule_id: str) -> None:
    assert len(_homes().get(rule_id, [])) == 1, f"{rule_id}: emitters {_homes().get(rule_id, [])}"


def test_graph_rules_have_no_static_emitter() -> None:
    graph = {r.id for r in DB.rules.values() if r.origin == "graph"}
    assert graph and not graph & set(_homes())


def test_every_emitted_rule_exists() -> None:
    emitted = set(_homes()) | {rule for also in ALSO.values() for rule in also}
    assert not emitted - set(DB.rules), sorted(emitted - set(DB.rules))


def test_also_emitted_rules_have_a_home_elsewhere() -> None:
    homes = _homes()
    for name, also in ALSO.items():
        for rule in also:
            assert rule in homes and name not in homes[rule], (name, rule)


@pytest.mark.parametrize("rule_id", STATIC)
def test_texts_and_verdicts_use_declared_facts(rule_id: str) -> None:
    rule = DB.rules[rule_id]
    declared = _declared_facts(rule_id)
    texts = [rule.message, *rule.instead.values(), *rule.replacement.values()]
    used = set().union(*(_placeholders(text) for text in texts))
    used |= {key for verdict in rule.verdicts for key in verdict.when.facts}
    assert used <= declared, f"{rule_id} uses undeclared facts {sorted(used - declared)}"


# Rules found outside the walk of a Python file: no trigger word decides whether they are looked for.
_NOT_WALKED = {*TOOL_EMITS, UNUSED_SUPPRESSION_RULE, *BuildInputs.emits, *FileTypes.emits}


def _firing_python_cases() -> list:
    return list(_firing_python_cases_())


def _firing_python_cases_():
    for rule_id in STATIC:
        for index, case in enumerate(DB.rules[rule_id].cases):
            if case.fires and (case.file or "snippet.py").endswith(".py") and rule_id not in _NOT_WALKED:
                yield pytest.param(rule_id, case, id=f"{rule_id}-{index}")


@pytest.mark.parametrize("rule_id, case", _firing_python_cases())
def test_every_firing_case_contains_a_trigger_of_its_checker(rule_id: str, case) -> None:
    data = build_static_data(DB)
    checkers = [c for c in select_checkers(CHECKERS, {rule_id}, TABLES) if c.declared(TABLES)]
    words = {w for c in checkers for w in c.trigger_words(data)}
    texts = [case.code, *case.files.values()]
    assert any(w in text for w in words for text in texts), (
        f"{rule_id}: the case contains none of the trigger words of {[c.__name__ for c in checkers]}"
    )


def test_every_api_row_gives_the_facts_its_message_needs() -> None:
    """A row of the [[api]] table is reported with its own facts only (`_entry_facts`): its rule's
    message must not need a fact another emitter of the same rule gives (NL201's `{symbol}` for
    `torch.distributed.Backend.NCCL` once rendered as the literal text `{symbol}`)."""
    missing = []
    for entry in TABLES.get("api", ()):
        facts = set(IMPLICIT) | set(ApiNames.declared({"api": [entry]})[entry["rule"]])
        rule = DB.rules[entry["rule"]]
        needed = _placeholders(rule.message)
        if not needed <= facts:
            missing.append((entry["name"], entry["rule"], sorted(needed - facts)))
    assert not missing, missing
