"""`neuronlint report --trace`: a real model traced with torch in a child process adds the op support
percentage and op verdicts to the report, and its op findings to the score (slow: starts torch)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.test_report import run

MODEL = """import torch
import torch.nn as nn


class Bucket(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("edges", torch.linspace(-1.0, 1.0, 7), persistent=False)
        self.embed = nn.Embedding(8, 4)

    def forward(self, x):
        return self.embed(torch.bucketize(x, self.edges))
"""

CONFIG = """[tool.neuronlint]

[[tool.neuronlint.trace]]
entrypoint = "model.py:Bucket"
inputs = ["float32[8]"]
name = "bucket"
"""


@pytest.mark.slow
def test_traced_model_adds_op_support_and_op_verdicts(tmp_path: Path) -> None:
    (tmp_path / "model.py").write_text(MODEL, encoding="utf-8")
    (tmp_path / "pyproject.toml").write_text(CONFIG, encoding="utf-8")
    out = tmp_path / "report.json"
    # Neuron 2.29 on trn2 uses the XLA backend, where torch-xla has no lowering for bucketize
    done = run(["report", ".", "--trace", "--sdk", "2.29", "-o", str(out)], tmp_path)
    assert done.returncode == 0, done.stderr
    report = json.loads(out.read_text(encoding="utf-8"))
    trace = report["trace"]
    assert trace["models"][0]["name"] == "bucket" and trace["models"][0]["status"] == "traced"
    assert trace["total_ops"] >= 2
    assert 0 < trace["supported_percentage"] < 100
    assert report["summary"]["op_support"] == trace
    ops = {row["op"]: row for row in report["ops"]}
    assert ops["aten::bucketize.Tensor"]["rule"] == "NL010"
    areas = {a["area"] for a in report["breakdown"]["cuda"]["areas"]}
    assert "op-support" in areas
    html = run(["report", ".", "--trace", "--sdk", "2.29", "-f", "html", "-q"], tmp_path)
    assert (
        "of the op calls with a documented verdict lowered" in html.stdout
        and "aten::bucketize.Tensor" in html.stdout
    )
