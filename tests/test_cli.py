"""The command line as users run it: exit codes, formats, selection, thresholds, outputs."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from neuronlint import __version__
from neuronlint.cli import app

runner = CliRunner()

BLOCKER_AND_INFO = """\
import torch

model = torch.nn.Linear(4, 4).cuda()
loader = torch.utils.data.DataLoader([], pin_memory=True)
"""


def run(args: list[str], cwd: Path):
    import os

    old = os.getcwd()
    os.chdir(cwd)
    try:
        return runner.invoke(app, args, catch_exceptions=False)
    finally:
        os.chdir(old)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "train.py").write_text(BLOCKER_AND_INFO)
    (tmp_path / "clean.py").write_text("import torch\n\ny = torch.ones(3) + 1\n")
    return tmp_path


def test_version() -> None:
    result = runner.invoke(app, ["--version"])
    assert result.exit_code == 0
    assert result.output.strip() == f"neuronlint {__version__}"


def test_findings_exit_1_and_text_shows_source(project: Path) -> None:
    result = run(["scan", ".", "--no-cache"], project)
    assert result.exit_code == 1
    assert "train.py" in result.output
    assert "NL101" in result.output and "blocker" in result.output
    assert "model = torch.nn.Linear(4, 4).cuda()" in result.output
    assert "^" in result.output  # the span is underlined
    assert "Scanned 2 files" in result.output


def test_clean_tree_exits_0(project: Path) -> None:
    result = run(["scan", "clean.py", "--no-cache"], project)
    assert result.exit_code == 0, result.output
    assert "0 blockers, 0 warnings, 0 info" in result.output


def test_fail_on_threshold_and_exit_zero(project: Path) -> None:
    assert run(["scan", ".", "--no-cache", "--select", "NL110"], project).exit_code == 0  # info only
    assert run(["scan", ".", "--no-cache", "--select", "NL110", "--fail-on", "info"], project).exit_code == 1
    assert run(["scan", ".", "--no-cache", "--fail-on", "never"], project).exit_code == 0
    assert run(["scan", ".", "--no-cache", "--exit-zero"], project).exit_code == 0


def test_select_ignore_prefix_and_category(project: Path) -> None:
    def rules(args: list[str]) -> set[str]:
        out = run(["scan", ".", "--no-cache", "--format", "json", *args], project)
        return {f["rule"] for f in json.loads(out.output)["findings"]}

    assert rules([]) == {"NL101", "NL110"}
    assert rules(["--select", "NL1"]) == {"NL101", "NL110"}
    assert rules(["--ignore", "NL110"]) == {"NL101"}
    assert rules(["--select", "cuda-api", "--ignore", "NL101"]) == {"NL110"}
    # names are not selectors: a usage error that names the rule's ID
    named = run(["scan", ".", "--no-cache", "--select", "NL101,NL110", "--ignore", "pin-memory"], project)
    assert named.exit_code == 2
    assert "unknown rule selector 'pin-memory' in --ignore" in named.output
    assert "the name of NL110" in named.output


def test_severity_filters_report(project: Path) -> None:
    out = run(["scan", ".", "--no-cache", "--format", "json", "--severity", "blocker"], project)
    data = json.loads(out.output)
    assert [f["rule"] for f in data["findings"]] == ["NL101"]


def test_json_schema_fields(project: Path) -> None:
    out = run(["scan", ".", "--no-cache", "--format", "json", "--sdk", "2.29", "--target", "trn1"], project)
    data = json.loads(out.output)
    assert data["version"] == __version__
    assert (data["sdk"], data["target"], data["backend"]) == ("2.29", "trn1", "xla")
    assert data["summary"]["by_severity"] == {"blocker": 1, "warning": 0, "info": 1}
    finding = next(f for f in data["findings"] if f["rule"] == "NL101")
    assert finding["path"] == "train.py"  # relative to the current directory
    assert (finding["line"], finding["column"]) == (3, 31)  # the `cuda` token
    assert (finding["end_line"], finding["end_column"]) == (3, 37)  # through its closing parenthesis
    assert finding["category"] == "cuda-api" and finding["severity"] == "blocker"
    assert "torch_xla" in finding["message"]  # what to do instead on this backend


def test_output_file_keeps_text_on_terminal(project: Path) -> None:
    out = run(["scan", ".", "--no-cache", "--format", "json", "--output", "report.json"], project)
    assert "NL101" in out.output and not out.output.lstrip().startswith("{")
    data = json.loads((project / "report.json").read_text())
    assert {f["rule"] for f in data["findings"]} == {"NL101", "NL110"}


def test_quiet_and_statistics(project: Path) -> None:
    quiet = run(["scan", ".", "--no-cache", "--quiet"], project)
    assert "NL101" in quiet.output and "Scanned" not in quiet.output
    stats = run(["scan", ".", "--no-cache", "--statistics"], project)
    assert "Statistics by rule" in stats.output and "cuda-device" in stats.output


@pytest.mark.parametrize(
    "args, message",
    [
        (["scan", "missing_dir"], "missing_dir: no such file or directory"),
        (["scan", ".", "--format", "xml"], "unknown format 'xml'"),
        (["scan", ".", "--sdk", "1.0"], "unknown Neuron SDK release '1.0'"),
        (["scan", ".", "--sdk", "banana"], "not a Neuron SDK version"),
        (["scan", ".", "--target", "h100"], "unknown target 'h100'"),
        (["scan", ".", "--fail-on", "fatal"], "unknown severity 'fatal'"),
        (["explain", "NL999"], "unknown rule 'NL999'"),
    ],
)
def test_usage_errors_exit_2_with_one_line(project: Path, args: list[str], message: str) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "neuronlint", *args, "--no-cache"]
        if args[0] == "scan"
        else [sys.executable, "-m", "neuronlint", *args],
        cwd=project,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 2, result.stderr
    assert message in result.stderr
    assert "Traceback" not in result.stderr and len(result.stderr.strip().splitlines()) == 1


def test_explain_prints_rule_doc() -> None:
    result = runner.invoke(app, ["explain", "NL101"])
    assert result.exit_code == 0
    assert result.output.startswith("# NL101 cuda-device")
    assert "## Sources" in result.output and "https://awsdocs-neuron.readthedocs-hosted.com" in result.output
    by_name = runner.invoke(app, ["explain", "cuda-device"])
    assert by_name.output == result.output


def test_console_script_installed() -> None:
    script = Path(sys.executable).parent / "neuronlint"
    result = subprocess.run([str(script), "--version"], capture_output=True, text=True)
    assert result.returncode == 0 and result.stdout.strip() == f"neuronlint {__version__}"


def _options(*path: str) -> set[str]:
    import typer

    command = typer.main.get_command(app)
    for name in path:
        command = command.commands[name]
    return {opt for param in command.params for opt in param.opts}


def test_every_command_takes_the_shared_options_where_they_make_sense() -> None:
    frame = {"--target", "--sdk", "--backend", "--compiler-flags", "--config", "--rules-dir"}
    selection = {"--select", "--extend-select", "--ignore", "--exclude"}
    run_options = {"--jobs", "--no-cache", "--cache-dir"}
    for command in (("scan",), ("report",), ("baseline", "create")):
        assert frame | selection | run_options <= _options(*command), command
    assert {"--severity", "--fail-on", "--exit-zero"} <= _options("scan")
    assert frame | selection | {"--fail-on", "--exit-zero"} <= _options("trace")
    assert frame <= _options("rules") and frame <= _options("explain")
    assert frame - {"--sdk"} <= _options("rules", "diff")  # its releases are the arguments


@pytest.mark.parametrize(
    "command", [["scan", "."], ["rules"], ["explain", "NL101"], ["baseline", "create", "."]]
)
def test_a_missing_rules_dir_is_one_error_for_every_command(tmp_path: Path, command: list[str]) -> None:
    result = run([*command, "--rules-dir", "no-such-dir"], tmp_path)
    assert result.exit_code == 2
    assert result.stderr.strip() == "neuronlint: error: --rules-dir: no-such-dir is not a directory"


def test_baseline_create_takes_the_compiler_flags_scan_runs_with(project: Path) -> None:
    flags = ["--compiler-flags", "--native-int64=enabled", "--sdk", "2.32", "--extend-select", "NL507"]
    (project / "ids.py").write_text("import torch\nids = torch.arange(10, dtype=torch.long)\n")
    created = run(["baseline", "create", ".", "-o", "base.json", *flags], project)
    assert created.exit_code == 0, created.stderr
    entries = json.loads((project / "base.json").read_text())["entries"]
    assert any(e["rule"] == "NL507" and e["path"] == "ids.py" for e in entries)
    scanned = run(["scan", ".", "--baseline", "base.json", "-f", "json", *flags], project)
    assert json.loads(scanned.stdout)["baseline"]["new"] == 0


def test_help_keeps_the_brackets_of_config_tables() -> None:
    # rich reads `[tool.neuronlint]` as markup unless it is escaped
    for command, text in (("scan", "[[tool.neuronlint.trace]]"), ("trace", "[tool.neuronlint]")):
        result = runner.invoke(app, [command, "--help"], env={"COLUMNS": "250", "NO_COLOR": "1"})
        assert result.exit_code == 0 and text in result.stdout, command
