"""--report-unused-suppressions: comments that silence nothing become NL003 findings."""

from __future__ import annotations

import json
from pathlib import Path

from tests.reporting_support import neuronlint

SOURCE = """\
import torch
# neuronlint: ignore-file[NL5]


def step(model, x, losses):
    model = model.cuda()  # neuronlint: ignore[NL101] -- CPU fallback tested separately
    y = x + 1  # neuronlint: ignore[NL101]
    # neuronlint: ignore[NL999] -- no such rule
    z = y * 2
    for loss in losses:
        total = loss.item()  # neuronlint: ignore[NL701] -- this one is used
    return z, total
"""


def _scan(tmp_path: Path, *args: str) -> list[tuple[str, int, int]]:
    (tmp_path / "train.py").write_text(SOURCE, encoding="utf-8")
    completed = neuronlint("scan", "train.py", "-f", "json", *args, cwd=tmp_path)
    assert completed.returncode in (0, 1), completed.stderr
    return [
        (f["rule"], f["line"], f["column"])
        for f in json.loads(completed.stdout)["findings"]
        if f["rule"] == "NL003"
    ]


def test_unused_suppressions_are_reported_only_when_asked(tmp_path: Path) -> None:
    # ...except a comment naming no rule at all (line 8): it can never silence anything.
    assert _scan(tmp_path) == [("NL003", 8, 5)]
    assert _scan(tmp_path, "--report-unused-suppressions") == [
        ("NL003", 2, 1),
        ("NL003", 7, 16),
        ("NL003", 8, 5),
    ]


def test_message_names_the_directive(tmp_path: Path) -> None:
    (tmp_path / "train.py").write_text(SOURCE, encoding="utf-8")
    completed = neuronlint("scan", "train.py", "-f", "json", "--report-unused-suppressions", cwd=tmp_path)
    messages = {
        f["line"]: f["message"] for f in json.loads(completed.stdout)["findings"] if f["rule"] == "NL003"
    }
    assert messages[2].startswith("`# neuronlint: ignore-file[NL5]` suppresses nothing")
    assert messages[7].startswith("`# neuronlint: ignore[NL101]` suppresses nothing")
    assert completed.returncode == 1  # NL003 is a warning, and warnings fail by default


def test_comments_for_rules_this_run_did_not_check_are_not_judged(tmp_path: Path) -> None:
    # With only NL1 rules selected, the NL5 file suppression cannot be judged; the NL101 one and the
    # suppression naming a rule that does not exist still can.
    assert _scan(tmp_path, "--select", "NL1", "--report-unused-suppressions") == [
        ("NL003", 7, 16),
        ("NL003", 8, 5),
    ]


def test_ignoring_nl003_turns_the_report_off(tmp_path: Path) -> None:
    assert _scan(tmp_path, "--ignore", "NL003", "--report-unused-suppressions") == []
