"""Markdown report (PR comment / job summary): snapshot, top blockers with rule links, lock-in counts.

Update the snapshot after an intended change: NEURONLINT_UPDATE_SNAPSHOTS=1 (see reporting_support).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from neuronlint.reporters import markdown, render
from tests.reporting_support import GITHUB_ENV, SAMPLE, assert_snapshot, scan_report, write_files


@pytest.fixture(autouse=True)
def _no_github_env(monkeypatch):
    for name in GITHUB_ENV:
        monkeypatch.delenv(name, raising=False)


def test_markdown_snapshot(tmp_path: Path) -> None:
    write_files(tmp_path, SAMPLE)
    assert_snapshot("sample.md", render("markdown", scan_report(tmp_path)))


def test_counts_top_blockers_and_lockin(tmp_path: Path) -> None:
    write_files(tmp_path, SAMPLE)
    text = render("markdown", scan_report(tmp_path))
    assert "**3 blockers**, 1 warning, 2 info, 1 suppressed in source." in text
    assert "| cuda-api | 2 | 1 | 0 |" in text and "| neuron-lockin | 0 | 0 | 2 |" in text
    blockers = [line for line in text.splitlines() if line.startswith("| [NL")]
    assert len(blockers) == 3
    assert blockers[0].startswith("| [NL201 nccl-backend](https://github.com/neuronlint/neuronlint/blob/main/docs/rules/NL201.md) | `train.py:6` |")
    assert "**CUDA coupling** (to remove before running on Neuron): 4 findings in 1 file, 3 blockers." in text
    assert "**Neuron lock-in** (to undo if you leave Neuron): 2 findings in 1 file." in text


def test_top_blockers_are_capped_and_link_to_the_commit_in_actions(tmp_path: Path, monkeypatch) -> None:
    lines = ["import torch", "", "", "def f(x):"] + [f"    x{i} = x.cuda()" for i in range(13)] + ["    return x", ""]
    write_files(tmp_path, {"m.py": "\n".join(lines)})
    monkeypatch.setenv("GITHUB_SERVER_URL", "https://github.com")
    monkeypatch.setenv("GITHUB_REPOSITORY", "acme/models")
    monkeypatch.setenv("GITHUB_SHA", "0123abc")
    text = render("markdown", scan_report(tmp_path, select=["NL101"]))
    rows = [line for line in text.splitlines() if line.startswith("| [NL101")]
    assert len(rows) == markdown.TOP_BLOCKERS
    assert "[`m.py:5`](https://github.com/acme/models/blob/0123abc/m.py#L5)" in rows[0]
    assert "… and 3 more blocker(s)." in text


def test_table_cells_are_escaped() -> None:
    assert markdown.cell("a | b\nc <script>") == "a \\| b c &lt;script>"


def test_clean_report(tmp_path: Path) -> None:
    write_files(tmp_path, {"clean.py": "def f(x):\n    return x + 1\n"})
    text = render("markdown", scan_report(tmp_path))
    assert text.endswith("No findings.\n") and "0 blockers" in text
