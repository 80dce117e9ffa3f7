"""`neuronlint trace` and `neuronlint scan --trace` end to end, as a user runs them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.conftest import ROOT

pytest.importorskip("torch")


def neuronlint(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    env = {**os.environ, "NO_COLOR": "1", "NEURONLINT_NO_CACHE": "1", "COLUMNS": "200"}
    return subprocess.run(
        [sys.executable, "-m", "neuronlint", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        timeout=600,
    )


@pytest.mark.slow
def test_trace_prints_op_verdicts_and_writes_json(tmp_path):
    report = tmp_path / "trace.json"
    done = neuronlint(
        "trace",
        "fixtures/models/no_lowering.py:BucketEmbedding",
        "--input",
        "float32[8]",
        "--sdk",
        "2.29",
        "--target",
        "trn2",
        "--format",
        "json",
        "-o",
        str(report),
    )
    assert done.returncode == 1, done.stderr  # an NL010 warning at the default --fail-on warning
    text = done.stdout
    source = (ROOT / "fixtures/models/no_lowering.py").read_text().splitlines()
    line = next(n for n, code in enumerate(source, start=1) if "torch.bucketize(" in code)
    assert "torch.export; Neuron SDK 2.29 on trn2, xla backend (torch-xla 2.9)" in text
    row = next(line for line in text.splitlines() if line.startswith("aten::bucketize.Tensor"))
    assert "not-lowered" in row and f"fixtures/models/no_lowering.py:{line}" in row
    assert (
        "Supported: 66.67% of the 6 op calls with a documented verdict for the xla backend lowered "
        "(4 lowered, 0 rejected, 2 not lowered); 0 of 6 op calls have no public verdict" in text
    )
    assert f"{line}:9" in text and "NL010 [op-support]" in text
    assert "value.median()" not in text  # suppressed in the source
    data = json.loads(report.read_text())
    trace = data["trace"][0]
    assert (
        trace["entrypoint"] == "fixtures/models/no_lowering.py:BucketEmbedding"
        and trace["status"] == "traced"
    )
    assert trace["supported_percentage"] == 66.67 and trace["total_ops"] == 6
    assert [u["op"] for u in trace["unsupported_operators"]] == ["aten::bucketize.Tensor", "aten::median"]
    assert trace["unsupported_operators"][0]["call_sites"] == [f"fixtures/models/no_lowering.py:{line}"]
    active = [f for f in data["findings"] if "suppressed" not in f]
    assert [(f["rule"], f["line"], f["origin"]) for f in active] == [("NL010", line, "graph")]
    assert data["summary"]["suppressed"] == 1


def test_native_headline_counts_unknown_apart_and_labels_the_xla_table(tmp_path):
    done = neuronlint(
        "trace",
        "fixtures/models/gpt_block.py:build",
        "--input",
        "long[2,8]",
        "--format",
        "json",
        "-o",
        str(tmp_path / "t.json"),
    )
    assert done.returncode == 0, done.stderr
    text = " ".join(done.stdout.split())
    assert (
        "Supported: no documented verdict for the native backend; 63 of 63 op calls have no public verdict"
        in text
    )
    assert "0.00%" not in text and "not counted as unsupported" in text
    assert (
        "the other backend's table (PyTorch/XLA, torch-xla 2.9; not the backend judged here): 63 lowered"
        in text
    )
    trace = json.loads((tmp_path / "t.json").read_text())["trace"][0]
    assert (trace["known_ops"], trace["supported_percentage"], trace["total_ops"]) == (0, None, 63)
    assert trace["other_backend"]["backend"] == "xla" and trace["other_backend"]["counts"]["lowered"] == 63


def test_entrypoint_not_found_and_missing_input_are_usage_errors(tmp_path):
    for args, expected in (
        (("nope.model:build", "--input", "long[2,3]"), "no module 'nope.model'"),
        (("missing.py:build", "--input", "long[2,3]"), "no such file 'missing.py'"),
        (("fixtures/models/gpt_block.py:build",), "needs its example inputs: one --input dtype[shape]"),
        # a typo in the name: found by parsing the file, before anything is imported (was NL015, exit 0)
        (
            ("fixtures/models/gpt_block.py:biuld", "--input", "long[2,3]"),
            "fixtures/models/gpt_block.py defines no 'biuld' at module level; did you mean 'build'?",
        ),
        (
            ("fixtures.models.gpt_block:Nope", "--input", "long[2,3]"),
            "fixtures/models/gpt_block.py defines no 'Nope' at module level",
        ),
    ):
        done = neuronlint(
            "trace",
            *args,
            "--fail-on",
            "blocker",
            cwd=tmp_path if "nope" in args[0] or "missing" in args[0] else ROOT,
        )
        assert done.returncode == 2 and done.stdout == "", (args, done.stdout)
        (line,) = done.stderr.strip().splitlines()
        assert line.startswith("neuronlint: error: ") and expected in line


def test_trace_quiet_prints_findings_only():
    args = (
        "trace",
        "fixtures/models/no_lowering.py:BucketEmbedding",
        "--input",
        "float32[8]",
        "--sdk",
        "2.29",
    )
    full = neuronlint(*args, "--exit-zero")
    quiet = neuronlint(*args, "--exit-zero", "-q")
    assert full.returncode == quiet.returncode == 0, quiet.stderr
    assert "aten::" in full.stdout and "Traced 1 model for" in full.stdout
    assert (
        "NL010" in quiet.stdout
        and "Traced" not in quiet.stdout
        and "Findings by category" not in quiet.stdout
    )
    assert all(not line.startswith("aten::") for line in quiet.stdout.splitlines())


def test_bad_arguments_are_one_line_errors(tmp_path):
    done = neuronlint("trace", "fixtures/models/gpt_block.py:build", "--input", "long(2,64)")
    assert done.returncode == 2
    assert done.stderr.strip() == (
        "neuronlint: error: input spec 'long(2,64)': expected dtype[shape], e.g. long[2,128] or float32[1,3,224,224]"
    )
    done = neuronlint("trace", "gpt_block.build", cwd=tmp_path)
    assert (
        done.returncode == 2 and done.stderr.count("\n") == 1 and "expected pkg.module:factory" in done.stderr
    )
    done = neuronlint("trace", cwd=tmp_path)
    assert (
        done.returncode == 2 and "no ENTRYPOINT given and no [[tool.neuronlint.trace]] entries" in done.stderr
    )
    done = neuronlint("trace", "m:build", "--kwargs", "{dim: 4}", cwd=tmp_path)
    assert done.returncode == 2 and "--kwargs: not valid JSON" in done.stderr
    done = neuronlint("trace", "m:build", "--memory-limit", "lots", cwd=tmp_path)
    assert done.returncode == 2 and "memory limit 'lots'" in done.stderr


def test_discover_lists_traceable_modules(tmp_path):
    (tmp_path / "nets.py").write_text(
        textwrap.dedent("""
        import torch.nn as nn

        class Tagger(nn.Module):
            def __init__(self, vocab: int = 100):
                super().__init__()
                self.embed = nn.Embedding(vocab, 8)

            def forward(self, tokens):
                return self.embed(tokens)

        class Needs(nn.Module):
            def __init__(self, dim):
                super().__init__()
    """)
    )
    done = neuronlint("trace", "--discover", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "nets.py:4: neuronlint trace nets:Tagger --input DTYPE[SHAPE]  # forward(tokens)",
        "1 model class found.",
    ]


PROJECT_MODEL = """\
import torch
import torch.nn as nn


class Selector(nn.Module):
    def __init__(self, dim: int = 8, buckets: int = 4):
        super().__init__()
        self.proj = nn.Linear(dim, dim)
        self.register_buffer("edges", torch.linspace(-1.0, 1.0, buckets - 1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        picked = torch.nonzero(x[:, 0] > 0)
        ids = torch.bucketize(self.proj(x), self.edges)
        spread = x.median()  # neuronlint: ignore[NL010] -- logged only
        return ids.sum() + picked.sum() + spread
"""


@pytest.mark.slow
def test_scan_with_trace_merges_graph_findings(tmp_path):
    (tmp_path / "proj").mkdir()
    (tmp_path / "proj" / "__init__.py").write_text("")
    (tmp_path / "proj" / "model.py").write_text(PROJECT_MODEL)
    (tmp_path / "pyproject.toml").write_text(
        textwrap.dedent("""
        [tool.neuronlint]
        sdk = "2.29"
        target = "trn2"

        [[tool.neuronlint.trace]]
        entrypoint = "proj.model:Selector"
        inputs = ["float32[4,16]"]
        kwargs = { dim = 16 }

        [[tool.neuronlint.trace]]
        entrypoint = "proj.missing:build"
    """)
    )
    static = json.loads(
        neuronlint("scan", ".", "--format", "json", "--report-unused-suppressions", cwd=tmp_path).stdout
    )
    # Without tracing, the comment for the graph-only rule looks unused.
    assert {(f["rule"], f["line"]) for f in static["findings"]} == {("NL601", 12), ("NL003", 14)}
    assert "trace" not in static  # a plain scan never imports the project
    done = neuronlint(
        "scan", ".", "--trace", "--format", "json", "--report-unused-suppressions", cwd=tmp_path
    )
    assert done.returncode == 1, done.stderr
    merged = json.loads(done.stdout)
    found = sorted(
        (f["rule"], f["path"], f["line"], f["origin"], "suppressed" in f) for f in merged["findings"]
    )
    # The graph's NL601 for nonzero duplicates the static one on line 12 and is dropped; the
    # median's NL010 is suppressed, and its comment is no longer reported as unused.
    # A configured entrypoint that cannot be imported is reported at its pyproject.toml entry.
    assert found == [
        ("NL010", "proj/model.py", 13, "graph", False),
        ("NL010", "proj/model.py", 14, "graph", True),
        ("NL015", "pyproject.toml", 12, "graph", False),
        ("NL601", "proj/model.py", 12, "static", False),
    ]
    assert (
        merged["trace"][0]["entrypoint"] == "proj.model:Selector" and merged["trace"][0]["status"] == "traced"
    )
    assert "traced proj.model:Selector: traced" in done.stderr
