"""SARIF reporter: snapshot, validation against the official OASIS schema, GitHub code scanning
requirements, fingerprint stability, fixes, suppressions and baseline state.

Update the snapshot after an intended change: NEURONLINT_UPDATE_SNAPSHOTS=1 (see reporting_support).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import jsonschema
import pytest

from neuronlint.filters import baseline as baseline_filter
from neuronlint.filters.chain import FilterRequest
from neuronlint.formats import render, sarif
from tests.conftest import FIXTURES, ROOT
from tests.reporting_support import (
    GITHUB_ENV,
    SAMPLE,
    assert_snapshot,
    init_repo,
    neuronlint,
    pin_prose,
    scan_report,
    write_files,
)

SCHEMA_PATH = ROOT.parent / "shared" / "schemas" / "sarif-2.1.0.json"
LINE_HASH = re.compile(r"^[0-9a-f]{16}:[1-9][0-9]*$")


@pytest.fixture(autouse=True)
def _no_github_env(monkeypatch):
    for name in GITHUB_ENV:
        monkeypatch.delenv(name, raising=False)


@pytest.fixture(scope="module")
def validator() -> jsonschema.Draft4Validator:
    assert SCHEMA_PATH.is_file(), f"the official SARIF schema is expected at {SCHEMA_PATH} (shared/schemas)"
    schema = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    jsonschema.Draft4Validator.check_schema(schema)
    return jsonschema.Draft4Validator(schema, format_checker=jsonschema.Draft4Validator.FORMAT_CHECKER)


def _validate(validator: jsonschema.Draft4Validator, log: dict) -> None:
    errors = sorted(validator.iter_errors(log), key=lambda e: list(e.absolute_path))
    assert not errors, "\n".join(f"{list(e.absolute_path)}: {e.message}" for e in errors[:10])


def _sample_log(tmp_path: Path, request: FilterRequest | None = None) -> dict:
    write_files(tmp_path, SAMPLE)
    return json.loads(render("sarif", scan_report(tmp_path, request=request)))


def _without_version(log: dict) -> dict:
    driver = log["runs"][0]["tool"]["driver"]
    assert driver["version"] and driver["semanticVersion"] == driver["version"]
    driver["version"] = driver["semanticVersion"] = "<version>"
    return log


def test_sarif_snapshot(tmp_path: Path) -> None:
    write_files(tmp_path, SAMPLE)
    log = _without_version(json.loads(render("sarif", pin_prose(scan_report(tmp_path)))))
    text = json.dumps(log, indent=2, ensure_ascii=False) + "\n"
    assert str(tmp_path) not in text
    assert_snapshot("sample.sarif", text)


def test_sample_validates_against_the_official_schema(tmp_path: Path, validator) -> None:
    _validate(validator, _sample_log(tmp_path))


def test_fixtures_sarif_validates_against_the_official_schema(validator, monkeypatch) -> None:
    monkeypatch.chdir(ROOT)
    report = scan_report(ROOT, paths=[FIXTURES], sdk=None)
    log = json.loads(render("sarif", report))
    _validate(validator, log)
    run = log["runs"][0]
    assert len(run["results"]) == len(report.findings)
    assert {r["id"] for r in run["tool"]["driver"]["rules"]} == {f.rule for f in report.findings}


def test_github_code_scanning_fields(tmp_path: Path) -> None:
    log = _sample_log(tmp_path)
    assert log["version"] == "2.1.0" and len(log["runs"]) == 1
    run = log["runs"][0]
    driver = run["tool"]["driver"]
    assert driver["name"] == "neuronlint" and driver["informationUri"].startswith("https://")
    rules = driver["rules"]
    for rule in rules:
        assert rule["shortDescription"]["text"] and rule["fullDescription"]["text"]
        assert len(rule["fullDescription"]["text"]) <= 1024
        assert rule["help"]["text"] and rule["help"]["markdown"]
        assert rule["helpUri"].endswith(f"docs/rules/{rule['id']}.md")
        assert rule["defaultConfiguration"]["level"] in ("error", "warning", "note")
        assert rule["properties"]["tags"]
    nl101 = next(r for r in rules if r["id"] == "NL101")
    # The Neuron alternative (native and XLA) is in both help forms.
    for form in ("text", "markdown"):
        assert "'neuron'" in nl101["help"][form] and "torch_xla.device()" in nl101["help"][form]
    levels = {"NL101": "error", "NL201": "error", "NL105": "warning", "NL903": "note"}
    for result in run["results"]:
        assert rules[result["ruleIndex"]]["id"] == result["ruleId"]
        if result["ruleId"] in levels:
            assert result["level"] == levels[result["ruleId"]]
        location = result["locations"][0]["physicalLocation"]
        uri = location["artifactLocation"]["uri"]
        assert uri in ("train.py", "pkg/export.py")
        region = location["region"]
        assert {"startLine", "startColumn", "endLine", "endColumn"} <= set(region)
        assert LINE_HASH.match(result["partialFingerprints"]["primaryLocationLineHash"])
    hashes = [(r["ruleId"], r["partialFingerprints"]["primaryLocationLineHash"]) for r in run["results"]]
    assert len(hashes) == len(set(hashes))


def test_fix_suppression_and_region(tmp_path: Path) -> None:
    run = _sample_log(tmp_path)["runs"][0]
    cuda_call = next(
        r
        for r in run["results"]
        if r["ruleId"] == "NL101" and r["locations"][0]["physicalLocation"]["region"]["startLine"] == 13
    )
    region = cuda_call["locations"][0]["physicalLocation"]["region"]
    assert region == {"startLine": 13, "startColumn": 19, "endLine": 13, "endColumn": 25}  # `cuda()`
    (change,) = cuda_call["fixes"][0]["artifactChanges"]
    assert change["artifactLocation"]["uri"] == "train.py"
    assert change["replacements"] == [{"deletedRegion": region, "insertedContent": {"text": 'to("neuron")'}}]
    assert not [r for r in run["results"] if "suppressions" in r]  # GitHub would open alerts for them
    assert all("baselineState" not in r for r in run["results"])  # no baseline in use


def test_fingerprints_survive_unrelated_edits(tmp_path: Path) -> None:
    before = _sample_log(tmp_path / "a")["runs"][0]["results"]
    shifted = dict(SAMPLE)
    shifted["train.py"] = (
        '"""Training entry point."""\n\nimport os\n\nSEED = int(os.environ.get("SEED", "0"))\n'
        + SAMPLE["train.py"]
    )
    write_files(tmp_path / "b", shifted)
    after = json.loads(render("sarif", scan_report(tmp_path / "b")))["runs"][0]["results"]

    def keyed(results):
        return {(r["ruleId"], r["partialFingerprints"]["primaryLocationLineHash"]): r for r in results}

    old, new = keyed(before), keyed(after)
    assert old.keys() == new.keys()
    moved = [
        k
        for k in old
        if old[k]["locations"][0]["physicalLocation"]["region"]["startLine"]
        != new[k]["locations"][0]["physicalLocation"]["region"]["startLine"]
    ]
    assert len(moved) == sum(
        1 for r in before if r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "train.py"
    )
    for key in old:
        assert old[key]["partialFingerprints"] == new[key]["partialFingerprints"]


def test_identical_statements_get_distinct_occurrences_and_edits_change_the_hash(tmp_path: Path) -> None:
    source = "import torch\n\n\ndef f(a, b):\n    a = a.cuda()\n    b = b.cuda()\n    a = a.cuda()\n    return a, b\n"
    write_files(tmp_path, {"dup.py": source})
    results = json.loads(render("sarif", scan_report(tmp_path, select=["NL101"])))["runs"][0]["results"]
    hashes = [r["partialFingerprints"]["primaryLocationLineHash"] for r in results]
    assert len(hashes) == 3 and len(set(hashes)) == 3
    first, second, third = (h.split(":") for h in hashes)
    assert first[0] == third[0] and (first[1], third[1]) == ("1", "2")  # same statement, two occurrences
    assert second[0] != first[0]  # a different statement hashes differently


def test_baseline_state_when_a_baseline_is_used(tmp_path: Path) -> None:
    write_files(tmp_path, SAMPLE)
    baseline_file = tmp_path / "neuronlint-baseline.json"
    baseline_filter.write(scan_report(tmp_path).findings, baseline_file, tmp_path)
    (tmp_path / "train.py").write_text(
        SAMPLE["train.py"] + "\n\ndef more(x):\n    return x.cuda()\n", encoding="utf-8"
    )
    log = json.loads(render("sarif", scan_report(tmp_path, request=FilterRequest(baseline=baseline_file))))
    results = log["runs"][0]["results"]
    assert [(r["ruleId"], r["baselineState"]) for r in results] == [("NL101", "new")]
    assert results[0]["locations"][0]["physicalLocation"]["region"]["startLine"] == 23


def test_uris_are_repository_relative_and_percent_encoded(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    init_repo(repo, {"src/deep dir/100%.py": "import torch\nx = torch.ones(2).cuda()\n"})
    completed = neuronlint("scan", ".", "--format", "sarif", "--select", "NL101", cwd=repo / "src")
    assert completed.returncode == 1, completed.stderr
    (result,) = json.loads(completed.stdout)["runs"][0]["results"]
    location = result["locations"][0]["physicalLocation"]["artifactLocation"]
    assert location == {"uri": "src/deep%20dir/100%25.py", "uriBaseId": "%SRCROOT%"}


def test_absolute_paths_become_file_uris() -> None:
    assert sarif.artifact_location("/srv/code/a b.py") == {"uri": "file:///srv/code/a%20b.py"}
    assert sarif.artifact_location("pkg/a.py") == {"uri": "pkg/a.py", "uriBaseId": "%SRCROOT%"}


def test_suppressed_findings_only_on_request(tmp_path: Path) -> None:
    write_files(tmp_path, SAMPLE)
    report = scan_report(tmp_path)
    report.options.show_suppressed = True
    run = json.loads(render("sarif", report))["runs"][0]
    suppressed = [r for r in run["results"] if "suppressions" in r]
    assert [r["ruleId"] for r in suppressed] == ["NL701"]
    assert suppressed[0]["suppressions"] == [
        {"kind": "inSource", "status": "accepted", "justification": "logging once per step is accepted"}
    ]


def test_github_result_limit_keeps_the_most_severe(tmp_path: Path, monkeypatch) -> None:
    from neuronlint.formats import sarif

    write_files(tmp_path, SAMPLE)
    report = scan_report(tmp_path)
    active = [f for f in report.findings if f.suppressed is None]
    blockers = sum(1 for f in active if f.severity.value == "blocker")
    assert 0 < blockers < len(active)
    monkeypatch.setattr(sarif, "MAX_RESULTS", blockers)
    run = json.loads(render("sarif", report))["runs"][0]
    assert len(run["results"]) == blockers and {r["level"] for r in run["results"]} == {"error"}
    dropped = run["properties"]["resultsDropped"]
    assert dropped.pop("limit") == blockers
    assert sum(dropped.values()) == len(active) - blockers and "blocker" not in dropped
    assert {r["ruleId"] for r in run["results"]} == {d["id"] for d in run["tool"]["driver"]["rules"]}
