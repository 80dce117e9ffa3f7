"""Baselines on a real temporary git repository: create, commit, edit, scan --baseline."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from neuronlint.filters import baseline as baseline_filter
from tests.reporting_support import commit_all, init_repo, neuronlint

LEGACY = {
    "src/train.py": """\
import torch
import torch.distributed as dist


def main(model, loader):
    dist.init_process_group("nccl")
    model = model.cuda()
    for batch in loader:
        batch = batch.cuda()
        model(batch).backward()
    torch.cuda.synchronize()
""",
    "src/util.py": """\
import torch


def to_gpu(x):
    return x.cuda()
""",
}


def _json(completed) -> dict:
    assert completed.returncode in (0, 1), completed.stderr
    return json.loads(completed.stdout)


@pytest.fixture
def legacy_repo(tmp_path: Path) -> Path:
    repo = tmp_path / "legacy"
    init_repo(repo, LEGACY)
    created = neuronlint("baseline", "create", ".", "-o", "neuronlint-baseline.json", cwd=repo)
    assert created.returncode == 0, created.stderr
    assert "wrote neuronlint-baseline.json: 5 finding(s) as 5 fingerprint(s) from 2 file(s)" in created.stdout
    commit_all(repo, "adopt neuronlint with a baseline")
    return repo


def test_baseline_file_has_fingerprints_not_line_numbers(legacy_repo: Path) -> None:
    data = json.loads((legacy_repo / "neuronlint-baseline.json").read_text(encoding="utf-8"))
    assert data["format"] == "neuronlint-baseline" and data["version"] == 1 and data["findings"] == 5
    for entry in data["entries"]:
        assert set(entry) == {"path", "rule", "fingerprint", "count", "snippet"}
        assert entry["path"] in ("src/train.py", "src/util.py")
    rules = sorted((e["path"], e["rule"], e["snippet"]) for e in data["entries"])
    assert ("src/util.py", "NL101", "return x.cuda()") in rules


def test_scan_with_baseline_reports_only_new_findings(legacy_repo: Path) -> None:
    clean = neuronlint("scan", ".", "--baseline", "neuronlint-baseline.json", "-f", "json", cwd=legacy_repo)
    assert clean.returncode == 0 and _json(clean)["findings"] == []
    assert "0 new, 5 baselined finding(s) hidden" in clean.stderr
    train = legacy_repo / "src" / "train.py"
    # Unrelated edits above the old findings, and one new blocker.
    train.write_text(
        '"""Training loop."""\nimport os\n\nSEED = os.environ.get("SEED")\n'
        + LEGACY["src/train.py"]
        + '\n\ndef evaluate(model):\n    return model.to("cuda:0")\n',
        encoding="utf-8",
    )
    commit_all(legacy_repo, "add evaluate")
    scanned = neuronlint("scan", ".", "--baseline", "neuronlint-baseline.json", "-f", "json", cwd=legacy_repo)
    assert scanned.returncode == 1
    report = _json(scanned)
    assert [(f["rule"], f["path"], f["line"], f["baseline_state"]) for f in report["findings"]] == [
        ("NL101", "src/train.py", 19, "new")
    ]
    assert report["baseline"] == {"file": "neuronlint-baseline.json", "new": 1, "unchanged": 5, "fixed": 0}


def test_fixed_findings_are_counted_so_the_baseline_can_be_tightened(legacy_repo: Path) -> None:
    (legacy_repo / "src" / "util.py").write_text(
        "import torch\n\n\ndef to_device(x, device):\n    return x.to(device)\n", encoding="utf-8"
    )
    scanned = neuronlint("scan", ".", "--baseline", "neuronlint-baseline.json", cwd=legacy_repo)
    assert scanned.returncode == 0
    assert (
        "1 baselined finding(s) no longer found: tighten the baseline with `neuronlint baseline create -o neuronlint-baseline.json`"
        in scanned.stderr
    )
    # Scanning only one file does not count the other file's entries as fixed.
    partial = neuronlint("scan", "src/train.py", "--baseline", "neuronlint-baseline.json", cwd=legacy_repo)
    assert partial.returncode == 0 and "no longer found" not in partial.stderr
    tightened = neuronlint("baseline", "create", ".", cwd=legacy_repo)
    assert "4 finding(s) as 4 fingerprint(s)" in tightened.stdout


def test_a_second_copy_of_a_baselined_statement_is_new(legacy_repo: Path) -> None:
    util = legacy_repo / "src" / "util.py"
    util.write_text(
        LEGACY["src/util.py"] + "\n\ndef also_to_gpu(x):\n    return x.cuda()\n", encoding="utf-8"
    )
    report = _json(
        neuronlint("scan", ".", "--baseline", "neuronlint-baseline.json", "-f", "json", cwd=legacy_repo)
    )
    assert [(f["path"], f["line"]) for f in report["findings"]] == [("src/util.py", 9)]


def test_baseline_paths_are_relative_to_the_baseline_file(legacy_repo: Path) -> None:
    scanned = neuronlint(
        "scan", ".", "--baseline", "../neuronlint-baseline.json", "-f", "json", cwd=legacy_repo / "src"
    )
    report = _json(scanned)
    assert report["findings"] == [] and report["baseline"]["unchanged"] == 5


def test_editing_the_flagged_statement_makes_it_new(legacy_repo: Path) -> None:
    util = legacy_repo / "src" / "util.py"
    util.write_text(
        LEGACY["src/util.py"].replace("return x.cuda()", "return x.cuda(non_blocking=True)"), encoding="utf-8"
    )
    report = _json(
        neuronlint("scan", ".", "--baseline", "neuronlint-baseline.json", "-f", "json", cwd=legacy_repo)
    )
    assert [(f["path"], f["line"], f["baseline_state"]) for f in report["findings"]] == [
        ("src/util.py", 5, "new")
    ]
    assert report["baseline"]["fixed"] == 1  # the old form of the statement is gone


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "baseline file not found; create it with `neuronlint baseline create -o"),
        ("{not json", "not valid JSON (line 1"),
        ('{"format": "something-else"}', "not a neuronlint baseline"),
        (
            '{"format": "neuronlint-baseline", "version": 99, "entries": []}',
            "baseline version 99 is not supported",
        ),
        (
            '{"format": "neuronlint-baseline", "version": 1, "entries": [{"path": "a.py"}]}',
            "entries[0]: key 'rule'",
        ),
    ],
)
def test_bad_baseline_files_give_one_line_errors(tmp_path: Path, content: str | None, message: str) -> None:
    (tmp_path / "a.py").write_text("x = 1\n", encoding="utf-8")
    if content is not None:
        (tmp_path / "base.json").write_text(content, encoding="utf-8")
    completed = neuronlint("scan", ".", "--baseline", "base.json", cwd=tmp_path)
    assert completed.returncode == 2
    assert message in completed.stderr and "Traceback" not in completed.stderr
    assert len(completed.stderr.strip().splitlines()) == 1


def test_load_rejects_non_positive_counts(tmp_path: Path) -> None:
    path = tmp_path / "b.json"
    path.write_text(
        json.dumps(
            {
                "format": "neuronlint-baseline",
                "version": 1,
                "entries": [{"path": "a.py", "rule": "NL101", "fingerprint": "abc", "count": 0}],
            }
        ),
        encoding="utf-8",
    )
    with pytest.raises(baseline_filter.BaselineError, match="key 'count': expected a positive integer"):
        baseline_filter.load(path)
