"""Markdown report (PR comment / job summary): snapshot, top blockers with rule links, lock-in counts.

Update the snapshot after an intended change: NEURONLINT_UPDATE_SNAPSHOTS=1 (see reporting_support).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from neuronlint.formats import markdown, render
from tests.reporting_support import (
    GITHUB_ENV,
    SAMPLE,
    assert_snapshot,
    pin_prose,
    scan_and_filter,
    scan_report,
    write_files,
)


@pytest.fixture(autouse=True)
def _no_github_env(monkeypatch):
    for name in GITHUB_ENV:
        monkeypatch.delenv(name, raising=False)


def _without_lockin_numbers(text: str) -> str:
    """The lock-in section's numbers come from the weights in rules/lockin.toml; tests below check them."""
    head, marker, _ = text.partition("### Lock-in\n")
    return (
        head
        + marker
        + "(scores from neuronlint.lockin, checked in test_lockin_section_shows_the_lockin_score)\n"
    )


def test_markdown_snapshot(tmp_path: Path) -> None:
    write_files(tmp_path, SAMPLE)
    assert_snapshot(
        "sample.md", _without_lockin_numbers(render("markdown", pin_prose(scan_report(tmp_path))))
    )


def test_counts_top_blockers_and_lockin(tmp_path: Path) -> None:
    write_files(tmp_path, SAMPLE)
    text = render("markdown", scan_report(tmp_path))
    assert "**3 blockers**, 1 warning, 2 info, 1 suppressed in source." in text
    assert "| cuda-api | 2 | 1 | 0 |" in text and "| neuron-lockin | 0 | 0 | 2 |" in text
    # Root causes first (ranked), then every finding with its root cause, blockers first.
    causes = text.partition("### Root causes to fix first")[2].partition("<details>")[0]
    assert "root causes block this code on trn2" in causes
    blockers = [line for line in text.splitlines() if line.startswith("| blocker | [NL")]
    assert len(blockers) == 3
    assert blockers[0].startswith(
        "| blocker | [NL201 nccl-backend](https://github.com/neuronlint/neuronlint/blob/main/docs/rules/NL201.md) | `train.py:6` | source | `RC"
    )


def test_lockin_section_shows_the_lockin_score(tmp_path: Path) -> None:
    from neuronlint.lockin import score

    write_files(tmp_path, SAMPLE)
    text = render("markdown", scan_report(tmp_path))
    result, outcome = scan_and_filter(tmp_path)
    expected = score(outcome.scanned, result.results, result.db, result.context)
    cuda, neuron = expected.repository.scores["cuda"], expected.repository.scores["neuron"]
    assert (
        f"| **CUDA coupling**: what must change to run on Neuron | {cuda.score} | {cuda.grade} ({cuda.label}) "
        f"| 4 | 3 | {expected.effort['cuda'].hours:.0f} h |"
    ) in text
    assert (
        f"| **Neuron coupling**: what must change to leave Neuron later | {neuron.score} | {neuron.grade}"
        in text
    )
    assert "CUDA coupling hot spots: `train.py` (100%)." in text


def test_lockin_score_covers_the_whole_scan_when_a_baseline_hides_findings(tmp_path: Path) -> None:
    from neuronlint.filters import baseline as baseline_filter
    from neuronlint.filters.chain import FilterRequest

    write_files(tmp_path, SAMPLE)
    full = render("markdown", scan_report(tmp_path))
    baseline_filter.write(scan_report(tmp_path).findings, tmp_path / "b.json", tmp_path)
    (tmp_path / "extra.py").write_text("import torch\ny = torch.ones(1).cuda()\n", encoding="utf-8")
    text = render("markdown", scan_report(tmp_path, request=FilterRequest(baseline=tmp_path / "b.json")))
    assert "**1 blocker**, 0 warnings, 0 info" in text  # only the new finding is listed …
    assert "| **CUDA coupling**: what must change to run on Neuron |" in text
    lockin = text.partition("### Lock-in")[2]
    assert (
        "| 5 | 4 |" in lockin and "| 5 | 4 |" not in full.partition("### Lock-in")[2]
    )  # … the score counts all


def test_lockin_counts_fallback() -> None:
    from neuronlint.findings import Finding, Severity
    from neuronlint.formats.markdown import lockin_counts

    def finding(category: str, severity: Severity, path: str) -> Finding:
        return Finding(
            rule="NL000",
            category=category,
            severity=severity,
            path=path,
            line=1,
            column=1,
            end_line=1,
            end_column=2,
            message="m",
        )

    lines = lockin_counts(
        [
            finding("cuda-api", Severity.BLOCKER, "a.py"),
            finding("dtype", Severity.WARNING, "b.py"),
            finding("neuron-lockin", Severity.INFO, "a.py"),
            finding("parse-error", Severity.WARNING, "c.py"),
        ]
    )
    assert lines == [
        "- **CUDA coupling** (to remove before running on Neuron): 2 findings in 2 files, 1 blocker.",
        "- **Neuron lock-in** (to undo if you leave Neuron): 1 finding in 1 file.",
    ]


def test_top_blockers_are_capped_and_link_to_the_commit_in_actions(tmp_path: Path, monkeypatch) -> None:
    lines = (
        ["import torch", "", "", "def f(x):"]
        + [f"    x{i} = x.cuda()" for i in range(13)]
        + ["    return x", ""]
    )
    write_files(tmp_path, {"m.py": "\n".join(lines)})
    monkeypatch.setenv("GITHUB_SERVER_URL", "https://github.com")
    monkeypatch.setenv("GITHUB_REPOSITORY", "acme/models")
    monkeypatch.setenv("GITHUB_SHA", "0123abc")
    text = render("markdown", scan_report(tmp_path, select=["NL101"]))
    # One root cause (`.cuda()` thirteen times); every finding is listed and links to the commit.
    assert "| 1 | blocker | `.cuda()` (NL101 cuda-device): 13 sites in m.py" in text
    rows = [line for line in text.splitlines() if line.startswith("| blocker | [NL101")]
    assert len(rows) == 13
    assert "[`m.py:5`](https://github.com/acme/models/blob/0123abc/m.py#L5)" in rows[0]


def test_table_cells_are_escaped() -> None:
    assert markdown.cell("a | b\nc <script>") == "a \\| b c &lt;script>"


def test_clean_report(tmp_path: Path) -> None:
    write_files(tmp_path, {"clean.py": "def f(x):\n    return x + 1\n"})
    text = render("markdown", scan_report(tmp_path))
    assert text.endswith("No findings.\n") and "0 blockers" in text
