"""The same source line gets different, correct verdicts for different SDK releases, chips and flags.

Every case is a real scan of a real file (tests/conftest.py scan_source); the CLI cases run the real
command in a child process.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from scripts.generate_rule_docs import docs_dir
from tests.conftest import ROOT, scan_source

HTTPS = "https://awsdocs-neuron.readthedocs-hosted.com/en/v2.32.0/about-neuron/whats-new.html"


def _one(findings, rule: str):
    matching = [f for f in findings if f.rule == rule]
    assert len(matching) == 1, [(f.rule, f.line) for f in findings]
    return matching[0]


def _verdict(tmp_path: Path, source: str, rule: str, **frame):
    finding = _one(scan_source(tmp_path, source, **frame), rule)
    return finding.severity.value, finding.status, finding


COMPILE = "import torch\nmodel = torch.nn.Linear(4, 4)\nmodel = torch.compile(model)\n"


def test_torch_compile_xla_229_trn1_versus_native_233_trn2(tmp_path: Path) -> None:
    old = _verdict(tmp_path, COMPILE, "NL801", sdk="2.29", target="trn1")
    new = _verdict(tmp_path, COMPILE, "NL801", sdk="2.33", target="trn2")
    assert old[:2] == ("warning", "unsupported")
    assert "does not support torch.compile" in old[2].message and "torch_neuronx.trace" in old[2].message
    assert new[:2] == ("info", "supported")
    assert 'backend="neuron"' in new[2].message and "unsupported" not in new[2].message
    # The XLA backend of 2.33 still says unsupported: the verdict follows the backend, not the number.
    assert _verdict(tmp_path, COMPILE, "NL801", sdk="2.33", target="trn2", backend="xla")[:2] == (
        "warning",
        "unsupported",
    )


FP8 = "import torch\nw = torch.zeros(4)\nw8 = w.to(torch.float8_e4m3fn)\n"


def test_float8_e4m3fn_trn2_versus_trn3(tmp_path: Path) -> None:
    trn2 = _verdict(tmp_path, FP8, "NL505", sdk="2.33", target="trn2")
    trn3 = _verdict(tmp_path, FP8, "NL505", sdk="2.33", target="trn3")
    assert trn2[:2] == ("warning", "unsupported")
    assert trn3[:2] == ("info", "supported") and "natively" in trn3[2].message
    assert any("neuron-core-v4" in s for s in trn3[2].extra["sources"])


INT64 = "import torch\nids = torch.arange(10, dtype=torch.long)\n"


def test_int64_trn1_versus_trn2_with_native_int64(tmp_path: Path) -> None:
    flags = ["--native-int64=enabled"]
    trn1 = _verdict(tmp_path, INT64, "NL507", sdk="2.32", target="trn1", compiler_flags=flags)
    trn2 = _verdict(tmp_path, INT64, "NL507", sdk="2.32", target="trn2", compiler_flags=flags)
    trn2_default = _verdict(tmp_path, INT64, "NL507", sdk="2.32", target="trn2")
    trn2_old = _verdict(tmp_path, INT64, "NL507", sdk="2.29", target="trn2", compiler_flags=flags)
    assert trn1[:2] == ("info", "partial") and "always compute them as 32-bit" in trn1[2].message
    assert trn2[:2] == ("info", "supported") and "keeps them 64-bit" in trn2[2].message
    assert (
        trn2_default[:2] == ("info", "partial")
        and "unless you compile with `--native-int64=enabled`" in trn2_default[2].message
    )
    # Before 2.32 the flag does not exist, so declaring it changes nothing.
    assert (
        trn2_old[:2] == ("info", "partial") and "arrives with `--native-int64` in 2.32" in trn2_old[2].message
    )
    # 2.33 without a declared flag: the announced default change is unconfirmed, so the status is unknown.
    assert _verdict(tmp_path, INT64, "NL507", sdk="2.33", target="trn2")[1] == "unknown"


CUDA = """import torch
import torch.distributed as dist
model = torch.nn.Linear(4, 4).cuda()
torch.cuda.synchronize()
dist.init_process_group("nccl")
"""


def test_replacements_follow_the_backend(tmp_path: Path) -> None:
    xla = {f.rule: f for f in scan_source(tmp_path, CUDA, sdk="2.29", target="trn1")}
    native = {f.rule: f for f in scan_source(tmp_path, CUDA, sdk="2.33", target="trn2")}
    assert xla["NL101"].fix.replacement == "to(torch_xla.device())"
    assert native["NL101"].fix.replacement == 'to("neuron")'
    assert xla["NL102"].fix.replacement == "torch_xla.sync"
    assert native["NL102"].fix is None and "synchronises on host copies" in native["NL102"].message
    assert xla["NL201"].fix.replacement == '"xla"' and xla["NL201"].status == "unsupported"
    assert native["NL201"].fix is None and native["NL201"].status == "unknown"


def test_every_finding_cites_sources_that_its_doc_page_lists(tmp_path: Path) -> None:
    findings = []
    for frame in (
        {"sdk": "2.29", "target": "trn1"},
        {"sdk": "2.33", "target": "trn2"},
        {"sdk": "2.33", "target": "trn3"},
    ):
        findings += scan_source(tmp_path, CUDA + COMPILE + FP8 + INT64, **frame)
    assert len({f.rule for f in findings}) >= 6
    for finding in findings:
        sources = finding.extra["sources"]
        assert sources and all(s.startswith("https://") for s in sources), finding.rule
        page = (docs_dir() / f"{finding.rule}.md").read_text(encoding="utf-8")
        cited = page.split("## Sources", 1)[1]
        assert all(f"<{s}>" in cited for s in sources), (finding.rule, sources)


PACK = f'''
[[rule]]
id = "NL801"
severity = "blocker"

[[library]]
name = "teamfused"
modules = ["teamfused"]
packages = ["teamfused"]
status = "unsupported"
support = "unknown"
kind = "fused-ops"
alternative = "the NKI Library fused kernels"
source = "{HTTPS}"
'''


def test_policy_pack_overrides_a_severity_and_adds_a_library(tmp_path: Path) -> None:
    pack = tmp_path / "policy"
    pack.mkdir()
    (pack / "team.toml").write_text(PACK, encoding="utf-8")
    source = COMPILE + "import teamfused\n"
    plain = scan_source(tmp_path, source, sdk="2.33", target="trn2")
    packed = scan_source(tmp_path, source, sdk="2.33", target="trn2", rules_dirs=[pack])
    assert _one(plain, "NL801").severity.value == "info" and not [f for f in plain if f.rule == "NL401"]
    assert _one(packed, "NL801").severity.value == "blocker"
    library = _one(packed, "NL401")
    assert (
        library.line == 4
        and "teamfused" in library.message
        and "NKI Library fused kernels" in library.message
    )


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "neuronlint", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT), "NO_COLOR": "1"},
    )


def test_policy_pack_from_config_rules_dir(tmp_path: Path) -> None:
    (tmp_path / "policy").mkdir()
    (tmp_path / "policy" / "team.toml").write_text(PACK, encoding="utf-8")
    (tmp_path / "pyproject.toml").write_text(
        '[tool.neuronlint]\nrules-dir = ["policy"]\ncompiler-flags = ["--native-int64=enabled"]\nsdk = "2.32"\n',
        encoding="utf-8",
    )
    (tmp_path / "model.py").write_text(COMPILE + INT64, encoding="utf-8")
    proc = _cli(
        "scan",
        "model.py",
        "--no-cache",
        "--format",
        "json",
        "--select",
        "ALL",
        "--target",
        "trn2",
        cwd=tmp_path,
    )
    assert proc.returncode == 1, proc.stderr
    report = json.loads(proc.stdout)
    by_rule = {f["rule"]: f for f in report["findings"]}
    assert report["sdk"] == "2.32" and by_rule["NL801"]["severity"] == "blocker"
    assert by_rule["NL507"]["status"] == "supported"  # the config's compiler flag reached the verdict
    listed = json.loads(_cli("rules", "--format", "json", cwd=tmp_path).stdout)
    assert {r["id"]: r["severity"] for r in listed["rules"]}["NL801"] == "blocker"
    assert (
        listed["compiler_flags"] == ["--native-int64=enabled"]
        and listed["platform"]["int64"]["value"] == "native"
    )


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (
            ["--sdk", "2.26", "--target", "trn3"],
            "Neuron SDK 2.26 does not support trn3 with PyTorch (it supports: inf2, trn1, trn2)",
        ),
        (
            ["--sdk", "2.33", "--backend", "native", "--target", "trn1"],
            "the native backend is not available for trn1 in Neuron SDK 2.33 (it runs on trn2, trn3)",
        ),
        (
            ["--sdk", "2.29", "--backend", "native", "--target", "trn2"],
            "the native backend is not available for trn2 in Neuron SDK 2.29 (the release does not ship it)",
        ),
        (["--sdk", "2.40"], "unknown Neuron SDK release '2.40'; known releases: 2.21.0, 2.21.1, 2.22.0"),
        (["--sdk", "2.33.7"], "unknown Neuron SDK release '2.33.7'; known releases: 2.21.0"),
        (["--sdk", "two"], "not a Neuron SDK version: 'two'"),
        (["--target", "h100"], "unknown target 'h100'"),
        (["--compiler-flags", "native-int64"], "compiler flag 'native-int64': expected a neuronx-cc flag"),
    ],
    ids=[
        "sdk-without-chip",
        "native-on-trn1",
        "native-before-2.33",
        "unknown-sdk",
        "unknown-patch-release",
        "bad-sdk",
        "bad-target",
        "bad-flag",
    ],
)
def test_sdk_chip_mismatch_is_a_one_line_usage_error(tmp_path: Path, args: list[str], expected: str) -> None:
    (tmp_path / "x.py").write_text(COMPILE, encoding="utf-8")
    for command in (["scan", "x.py", "--no-cache"], ["rules"]):
        proc = _cli(*command, *args, cwd=tmp_path)
        assert proc.returncode == 2, (command, proc.stdout, proc.stderr)
        lines = proc.stderr.strip().splitlines()
        assert len(lines) == 1, proc.stderr
        assert lines[0].startswith("neuronlint: error: ") and expected in lines[0], lines[0]


def test_rules_list_follows_the_frame() -> None:
    from typer.testing import CliRunner

    from neuronlint.cli import app

    runner = CliRunner()
    old = runner.invoke(app, ["rules", "--sdk", "2.29", "--target", "trn1"])
    assert old.exit_code == 0, old.output
    assert old.output.startswith(
        "Neuron SDK 2.29 (2026-04-09) on trn1: xla backend (supported), torch-neuronx for torch 2.9"
    )
    assert "int64=int32-only" in old.output and "torch_compile=unsupported" in old.output
    data = {}
    for frame in (["--sdk", "2.29", "--target", "trn1"], ["--sdk", "2.33", "--target", "trn2"]):
        result = runner.invoke(app, ["rules", *frame, "--format", "json"])
        assert result.exit_code == 0, result.output
        listed = json.loads(result.output)
        data[listed["sdk"]] = listed
    assert data["2.29"]["backend"] == "xla" and data["2.33"]["backend"] == "native"
    assert data["2.33"]["release"]["backends_available"] == ["xla", "native"]
    rules_229 = {r["id"]: r for r in data["2.29"]["rules"]}
    rules_233 = {r["id"]: r for r in data["2.33"]["rules"]}
    assert rules_229["NL801"]["severity"] == "warning" and rules_233["NL801"]["severity"] == "info"
    assert rules_229["NL205"]["condition"] == "xla backend" and rules_233["NL205"]["condition"] == "default"
    # An unknown fact cites the page that leaves it open (the 2.32 announcement), not an unrelated one.
    assert data["2.33"]["platform"]["int64"] == {
        "value": "unknown",
        "note": "The 2.32 notes announce --native-int64=enabled as the next release's default; no source confirms that 2.33 made the change.",
        "source": "https://awsdocs-neuron.readthedocs-hosted.com/en/v2.32.0/about-neuron/whats-new.html",
        "evidence": "documented",
    }
    assert data["2.33"]["platform"]["auto_cast_default"]["source"] == ""  # nothing says: no source
    assert data["2.33"]["dtypes"]["float8_e4m3fn"]["status"] == "unsupported"
