"""What ruff users expect of the command line: unknown selectors are usage errors, `-o` follows its
suffix, `--format concise` is one line per finding."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from neuronlint.cli import app

SOURCE = """\
import torch

model = torch.nn.Linear(4, 4).cuda()
loader = torch.utils.data.DataLoader([], pin_memory=True)
"""


def run(args: list[str], cwd: Path):
    old = os.getcwd()
    os.chdir(cwd)
    try:
        return CliRunner().invoke(app, args, catch_exceptions=False)
    finally:
        os.chdir(old)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "train.py").write_text(SOURCE)
    return tmp_path


@pytest.mark.parametrize(
    ("args", "named", "suggested"),
    [
        (["--select", "NL9999"], "'NL9999' in --select", "NL"),
        (["--select", "cuda-apis"], "'cuda-apis' in --select", "'cuda-api'"),
        (["--ignore", "NL1,nope"], "'nope' in --ignore", ""),
        (["--extend-select", "NL99"], "'NL99' in --extend-select", ""),
    ],
)
def test_unknown_selector_on_the_command_line_is_a_usage_error(project, args, named, suggested):
    result = run(["scan", ".", *args], project)
    assert result.exit_code == 2, result.output
    assert f"unknown rule selector {named}" in result.output
    assert suggested in result.output


@pytest.mark.parametrize(
    ("toml", "key"),
    [
        ('select = ["NL9999"]', "'select'"),
        ('ignore = ["NL9999"]', "'ignore'"),
        ('extend-select = ["NL9999"]', "'extend-select'"),
        ('[tool.neuronlint.per-file-ignores]\n"tests/*" = ["NL9999"]', "'per-file-ignores'"),
    ],
)
def test_unknown_selector_in_the_config_is_a_usage_error(project, toml, key):
    (project / "pyproject.toml").write_text(f"[tool.neuronlint]\n{toml}\n")
    result = run(["scan", "."], project)
    assert result.exit_code == 2, result.output
    assert "unknown rule selector 'NL9999'" in result.output
    assert f"pyproject.toml: [tool.neuronlint] key {key}" in result.output


@pytest.mark.parametrize("selector", ["nl101", "Nl1", "NL101", "CUDA-API", "cuda-api", "all"])
def test_selectors_are_case_insensitive(project, selector):
    result = run(["scan", ".", "--select", selector, "--format", "concise"], project)
    assert result.exit_code == 1, result.output
    assert "NL101" in result.output


def test_concise_is_one_line_per_finding(project):
    result = run(["scan", ".", "--format", "concise"], project)
    lines = result.output.splitlines()
    assert lines and all(line.startswith("train.py:") for line in lines)
    assert any(line.startswith("train.py:3:") and " NL101 [blocker] " in line for line in lines)


@pytest.mark.parametrize(
    ("name", "check"),
    [
        ("out.sarif", lambda text: json.loads(text)["version"] == "2.1.0"),
        ("out.sarif.json", lambda text: json.loads(text)["version"] == "2.1.0"),
        ("out.json", lambda text: "findings" in json.loads(text)),
        ("out.md", lambda text: text.lstrip().startswith("#")),
    ],
)
def test_output_format_follows_the_suffix(project, name, check):
    result = run(["scan", ".", "-o", name], project)
    assert result.exit_code == 1, result.output
    assert check((project / name).read_text())
    assert "NL101" in result.output  # the terminal still gets text


def test_output_suffix_mismatch_is_refused(project):
    result = run(["scan", ".", "-o", "out.sarif", "--format", "json"], project)
    assert result.exit_code == 2
    assert "does not match the output file" in result.output
    assert not (project / "out.sarif").exists()


def test_explicit_format_matching_the_suffix(project):
    result = run(["scan", ".", "-o", "cq.json", "--format", "gitlab"], project)
    assert result.exit_code == 1
    assert isinstance(json.loads((project / "cq.json").read_text()), list)


# ---- the terminal --------------------------------------------------------------------------------
ESC = "\x1b["


def _in_pty(args: list[str], cwd: Path, columns: int, **env: str) -> str:
    """Run neuronlint in a real pseudo-terminal (`script`) `columns` wide; its output, CRs removed."""
    import shlex
    import shutil
    import subprocess
    import sys

    if shutil.which("script") is None:
        pytest.skip("util-linux `script` is needed to run in a pseudo-terminal")
    import neuronlint

    child = {k: v for k, v in os.environ.items() if k not in {"NO_COLOR", "FORCE_COLOR", "COLUMNS"}}
    child.update(env, TERM="xterm-256color", NEURONLINT_NO_CACHE="1")
    child["PYTHONPATH"] = str(Path(neuronlint.__file__).resolve().parent.parent)
    command = f"stty cols {columns}; {shlex.quote(sys.executable)} -m neuronlint {shlex.join(args)}"
    done = subprocess.run(
        ["script", "-qec", command, os.devnull],
        cwd=cwd,
        env=child,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    return done.stdout.replace("\r", "")


def test_colour_on_a_terminal_wrapped_at_its_width(project):
    out = _in_pty(["scan", "train.py"], project, 60)
    assert ESC in out  # styles on a real terminal
    plain = __import__("re").sub(r"\x1b\[[0-9;]*m", "", out)
    assert "NL101" in plain
    assert max(len(line) for line in plain.splitlines()) <= 60  # wrapped at the real width
    assert "1 blocker," in plain and "Scanned 1 file (" in plain  # grammar


def test_no_color_on_a_terminal_and_plain_when_piped(project):
    assert ESC not in _in_pty(["scan", "train.py"], project, 80, NO_COLOR="1")
    piped = run(["scan", "train.py"], project)  # CliRunner: not a terminal (NO_COLOR unset below)
    assert ESC not in piped.output


def test_force_color_when_piped(project, monkeypatch):
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("FORCE_COLOR", "1")
    assert ESC in run(["scan", "train.py"], project).output
    monkeypatch.delenv("FORCE_COLOR")
    assert ESC not in run(["scan", "train.py"], project).output


def test_output_file_is_plain_even_on_colour(project, monkeypatch):
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("FORCE_COLOR", "1")
    run(["scan", "train.py", "-o", "out.txt"], project)
    assert ESC not in (project / "out.txt").read_text()


def test_statistics_replaces_the_findings(project):
    out = run(["scan", ".", "--statistics"], project).output
    assert "Statistics by rule" in out and "NL101" in out and "Scanned 1 file" in out
    assert "train.py" not in out and "Findings by category" not in out
    quiet = run(["scan", ".", "-q", "--statistics"], project).output
    assert "Statistics by rule" in quiet and "NL110" in quiet and "Scanned" not in quiet


def test_severity_summary_says_what_was_hidden(project):
    out = run(["scan", ".", "--severity", "blocker"], project).output
    assert "1 blocker;" in out and "1 info not shown (--severity blocker)" in out
    assert "0 warnings" not in out
    assert "glossary.md" in out


# ---- suppression comments, config keys, --help -------------------------------------------------
def test_broken_suppression_comments_are_reported(project):
    (project / "train.py").write_text(
        "import torch\n"
        "x = torch.ones(1).cuda()  # neuronlint: ingore[NL101]\n"
        "y = torch.ones(1).cuda()  # neuronlint: ignore[CUDA-API] -- a category works too\n"
        "z = 1  # neuronlint: ignore[NL9999]\n"
    )
    lines = run(["scan", "train.py", "--format", "concise"], project).output.splitlines()
    assert any(line.startswith("train.py:2:19: NL101") for line in lines)  # the typo silenced nothing
    assert any("NL003" in line and "`# neuronlint: ingore` is not a suppression" in line for line in lines)
    assert any(line.startswith("train.py:4:") and "names no rule: NL9999" in line for line in lines)
    assert not any(line.startswith("train.py:3:") for line in lines)  # ignore[cuda-api] holds


def test_unknown_config_key_suggests_the_closest(project):
    (project / "pyproject.toml").write_text('[tool.neuronlint]\nfail_on = "blocker"\n')
    result = run(["scan", "."], project)
    assert result.exit_code == 2 and "did you mean 'fail-on'?" in result.output


def test_help_shows_brackets_panels_and_value_names(project, monkeypatch):
    monkeypatch.setenv("COLUMNS", "120")
    scan_help = run(["scan", "--help"], project).output
    assert "[tool.neuronlint]" in scan_help and "[[tool.neuronlint.trace]]" in scan_help
    assert "<bool>  Print findings only" not in scan_help and "<list[str]>" not in scan_help
    assert "Rules and files" in scan_help and "Neuron frame" in scan_help
    assert "RULES" in scan_help and "LEVEL" in scan_help
    trace_help = run(["trace", "--help"], project).output
    assert "dtype[shape]" in trace_help


def test_nl115_message_does_not_repeat_itself(project):
    (project / "train.py").write_text(
        "from torch.utils.checkpoint import checkpoint\n\n\ndef f(m, x):\n    return checkpoint(m, x)\n"
    )
    out = run(["scan", "train.py", "--format", "concise", "--select", "NL115", "--show-ok"], project).output
    assert "NL115" in out and out.count("supports activation checkpointing") == 1


def test_the_readme_demo_shows_no_test_markers():
    """README's first command scans fixtures/, whose lines carry `# expect:` annotations for the
    tests: a headline shows the construct, never the comment after it."""
    from tests.conftest import ROOT

    result = run(["scan", "fixtures/", "--exit-zero"], ROOT)
    assert result.exit_code == 0
    assert "root cause" in result.output
    for marker in ("expect:", "# ok:", "// ok:", "expect-next:"):
        assert marker not in result.output


@pytest.mark.parametrize(
    ("line", "code"),
    [
        (
            "nvidia-smi --query-gpu=memory.used --format=csv  # expect: NL042",
            "nvidia-smi --query-gpu=memory.used --format=csv",
        ),
        ("#SBATCH --gres=gpu:8  # expect: NL045", "#SBATCH --gres=gpu:8"),
        ("#SBATCH --gres=gpu:8", "#SBATCH --gres=gpu:8"),
        ('x = "a # not a comment"  # real', 'x = "a # not a comment"'),
        ("url=http://host/#anchor", "url=http://host/#anchor"),
    ],
)
def test_headline_code_drops_trailing_comments(line, code):
    from neuronlint.groups import _without_comment

    assert _without_comment(line) == code
