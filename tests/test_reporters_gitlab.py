"""GitLab Code Quality reporter: snapshot, required fields, severity mapping, stable unique fingerprints.

Update the snapshot after an intended change: NEURONLINT_UPDATE_SNAPSHOTS=1 (see reporting_support).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from neuronlint.formats import render
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


@pytest.fixture(autouse=True)
def _no_github_env(monkeypatch):
    for name in GITHUB_ENV:
        monkeypatch.delenv(name, raising=False)


def _issues(root: Path, files: dict[str, str], **kwargs) -> list[dict]:
    write_files(root, files)
    return json.loads(render("gitlab", scan_report(root, **kwargs)))


def test_gitlab_snapshot(tmp_path: Path) -> None:
    write_files(tmp_path, SAMPLE)
    assert_snapshot("sample.gitlab.json", render("gitlab", pin_prose(scan_report(tmp_path))))


def test_required_fields_and_severity_mapping(tmp_path: Path) -> None:
    issues = _issues(tmp_path, SAMPLE)
    assert isinstance(issues, list) and len(issues) == 6  # the suppressed NL701 is not an open issue
    for issue in issues:
        assert issue["description"] and issue["check_name"].startswith("neuronlint/NL")
        assert issue["location"]["path"] in ("train.py", "pkg/export.py")
        assert issue["location"]["lines"]["begin"] >= 1
        assert len(issue["fingerprint"]) == 32 and int(issue["fingerprint"], 16) >= 0
    severities = {(i["check_name"], i["severity"]) for i in issues}
    assert severities == {
        ("neuronlint/NL201", "blocker"),
        ("neuronlint/NL101", "blocker"),
        ("neuronlint/NL105", "major"),
        ("neuronlint/NL903", "info"),
    }
    assert len({i["fingerprint"] for i in issues}) == len(issues)


def test_fingerprints_are_unique_for_identical_statements_and_stable_under_line_shifts(
    tmp_path: Path,
) -> None:
    body = "import torch\n\n\ndef f(x):\n    x.cuda()\n    x.cuda()\n    return x\n"
    before = _issues(tmp_path / "a", {"m.py": body}, select=["NL101"])
    after = _issues(tmp_path / "b", {"m.py": "# a header comment\n\n" + body}, select=["NL101"])
    assert len(before) == 2 and before[0]["fingerprint"] != before[1]["fingerprint"]
    assert [i["fingerprint"] for i in before] == [i["fingerprint"] for i in after]
    assert [i["location"]["lines"]["begin"] for i in after] == [7, 8]


def test_paths_are_repository_relative_from_a_subdirectory(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    init_repo(repo, {"services/train/loop.py": "import torch\nmodel = torch.nn.Linear(2, 2).cuda()\n"})
    completed = neuronlint(
        "scan", "loop.py", "--format", "gitlab", "--select", "NL101", cwd=repo / "services" / "train"
    )
    (issue,) = json.loads(completed.stdout)
    assert issue["location"]["path"] == "services/train/loop.py"
    from_root = neuronlint("scan", "services", "--format", "gitlab", "--select", "NL101", cwd=repo)
    assert json.loads(from_root.stdout)[0]["fingerprint"] == issue["fingerprint"]
