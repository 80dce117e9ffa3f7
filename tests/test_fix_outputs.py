"""Fixes in the outputs: SARIF `fixes` with the exact `artifactChanges` (valid SARIF 2.1.0 that
replays to the fixed file), JSON's fix fields round-trip."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema

from neuronlint.findings import Finding
from neuronlint.fix import flavour_for
from neuronlint.fix.model import LineIndex
from neuronlint.fix.run import attach, fix_files
from neuronlint.formats.sarif import fix_object
from neuronlint.pipeline import ScanOptions, run_scan

SCHEMA = (
    json.loads(Path("/work/shared/schemas/sarif-2.1.0.json").read_text())
    if Path("/work/shared/schemas/sarif-2.1.0.json").exists()
    else None
)
CODE = '"""Train."""\nimport torch\n\n\ndef step(model):\n    torch.cuda.synchronize()\n    return model.cuda()\n'


def _scan(tmp_path: Path, code: str = CODE):
    path = tmp_path / "train.py"
    path.write_text(code)
    options = ScanOptions(paths=[path], base=tmp_path, jobs=1)
    result = run_scan(options)
    attach(result, flavour_for("portable", result.context, result.db), tmp_path)
    return result, options


def _replay(text: str, replacements: list[dict]) -> str:
    index = LineIndex(text)
    spans = []
    for r in replacements:
        region = r["deletedRegion"]
        start = index.offset(region["startLine"], region["startColumn"])
        end = index.offset(region["endLine"], region["endColumn"])
        spans.append((start, end, r["insertedContent"]["text"]))
    out, cursor = [], 0
    for start, end, content in sorted(spans, key=lambda s: (s[0], s[1])):
        out += [text[cursor:start], content]
        cursor = end
    return "".join(out) + text[cursor:]


def test_sarif_fixes_are_valid_and_replay_to_the_fixed_file(tmp_path):
    result, options = _scan(tmp_path)
    fixes = [fix_object(f, "train.py") for f in result.active]
    assert all(f["description"]["text"].endswith("[safe fix (neuronlint fix)]") for f in fixes)
    if SCHEMA is not None:
        log = {
            "version": "2.1.0",
            "runs": [
                {
                    "tool": {"driver": {"name": "neuronlint"}},
                    "results": [{"message": {"text": "m"}, "fixes": [fix]} for fix in fixes],
                }
            ],
        }
        jsonschema.validate(log, SCHEMA)
    replacements = {
        json.dumps(r, sort_keys=True): r
        for fix in fixes
        for change in fix["artifactChanges"]
        for r in change["replacements"]
    }  # the shared device-variable insertion counts once
    replayed = _replay(CODE, list(replacements.values()))
    report = fix_files(
        result, options, flavour_for("portable", result.context, result.db), False, True, tmp_path
    )
    assert replayed == report.files[0].after == (tmp_path / "train.py").read_text()


def test_json_fix_round_trips_with_its_edits(tmp_path):
    result, _ = _scan(tmp_path)
    for finding in result.active:
        data = json.loads(json.dumps(finding.to_dict()))
        assert data["fix"]["applicability"] == "safe" and data["fix"]["edits"]
        assert Finding.from_dict(data).fix == finding.fix
