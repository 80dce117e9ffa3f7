"""GitHub annotations: snapshot, escaping, the 10-per-level cap with changed lines first, job summary.

Update the snapshot after an intended change: NEURONLINT_UPDATE_SNAPSHOTS=1 (see reporting_support).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from neuronlint.findings import Finding, Severity
from neuronlint.formats import github, render
from tests.reporting_support import (
    GITHUB_ENV,
    SAMPLE,
    assert_snapshot,
    commit_all,
    git,
    init_repo,
    neuronlint,
    pin_prose,
    scan_report,
    write_files,
)

_COMMAND = re.compile(r"^::(error|warning|notice) ([^:]*)::(.*)$")


@pytest.fixture(autouse=True)
def _no_github_env(monkeypatch):
    for name in GITHUB_ENV:
        monkeypatch.delenv(name, raising=False)


def unescape(text: str) -> str:
    """What the runner does to an escaped value (inverse of actions/toolkit's escaping)."""
    for escaped, raw in (("%0D", "\r"), ("%0A", "\n"), ("%3A", ":"), ("%2C", ","), ("%25", "%")):
        text = text.replace(escaped, raw)
    return text


def parse(line: str) -> tuple[str, dict[str, str], str]:
    match = _COMMAND.match(line)
    assert match, f"not a workflow command: {line!r}"
    properties = dict(item.split("=", 1) for item in match.group(2).split(","))
    return match.group(1), {k: unescape(v) for k, v in properties.items()}, unescape(match.group(3))


def test_github_snapshot(tmp_path: Path) -> None:
    write_files(tmp_path, SAMPLE)
    assert_snapshot("sample.github.txt", render("github", pin_prose(scan_report(tmp_path))))


def test_annotation_fields_and_suppressed_findings_left_out(tmp_path: Path) -> None:
    write_files(tmp_path, SAMPLE)
    lines = render("github", scan_report(tmp_path)).splitlines()
    commands = [parse(line) for line in lines]
    assert [c[0] for c in commands] == ["error", "error", "error", "warning", "notice", "notice"]
    level, props, message = commands[2]
    assert props == {
        "file": "train.py",
        "line": "13",
        "endLine": "13",
        "col": "19",
        "endColumn": "25",
        "title": "NL101 cuda-device",
    }
    assert 'Suggested fix: to("neuron")' in message and message.endswith("docs/rules/NL101.md")
    assert not any(p["title"].startswith("NL701") for _, p, _ in commands)  # suppressed in source


def test_escaping_of_properties_and_messages() -> None:
    assert github.escape_data("100% done\r\nnext: a, b") == "100%25 done%0D%0Anext: a, b"
    assert github.escape_property("dir,x:y/100%\n") == "dir%2Cx%3Ay/100%25%0A"
    finding = Finding(
        rule="NL101",
        category="cuda-api",
        severity=Severity.WARNING,
        path="a,b:c/50%.py",
        line=3,
        column=2,
        end_line=3,
        end_column=9,
        message="first: line, with 10%\nsecond line",
        name="cuda-device",
    )
    line = github.annotation(finding, finding.path)
    assert "\n" not in line and line.count("::") == 2
    level, props, message = parse(line)
    assert level == "warning" and props["file"] == "a,b:c/50%.py" and props["title"] == "NL101 cuda-device"
    assert message.startswith("first: line, with 10%\nsecond line\n")


def test_escaping_in_a_real_scan_of_an_awkward_path(tmp_path: Path) -> None:
    write_files(tmp_path, {"odd,dir:v2/100% done.py": "import torch\nx = torch.zeros(1).cuda()\n"})
    out = render("github", scan_report(tmp_path, select=["NL101"]))
    (line,) = out.splitlines()
    assert "file=odd%2Cdir%3Av2/100%25 done.py," in line
    assert parse(line)[1]["file"] == "odd,dir:v2/100% done.py"


def _many_findings_repo(tmp_path: Path) -> Path:
    """origin/main has 12 blockers, 12 warnings, 13 notices; the branch adds 3 blockers (lines 46, 47, 49)
    and 1 warning (line 48)."""
    upstream = tmp_path / "upstream"
    old = ["import torch", "import torch_neuronx", "", "", "def f(x):"]
    old += [f"    x{i} = x.cuda()" for i in range(12)]
    old += ["    torch.cuda.empty_cache()" for _ in range(12)]
    old += [f"    y{i} = torch_neuronx.trace(x, x)" for i in range(12)]
    old += ["    return x", ""]
    init_repo(upstream, {"model.py": "\n".join(old)})
    work = tmp_path / "work"
    git(tmp_path, "clone", "-q", str(upstream), str(work))
    git(work, "checkout", "-q", "-b", "feature")
    new_code = [
        "def g(x):",
        "    a = x.cuda()",
        "    b = x.cuda()",
        "    torch.cuda.empty_cache()",
        "    c = x.cuda()",
        "    return a, b, c",
        "",
    ]
    (work / "model.py").write_text("\n".join(old) + "\n\n" + "\n".join(new_code), encoding="utf-8")
    commit_all(work, "add g")
    return work


def test_annotation_cap_puts_changed_lines_and_blockers_first(tmp_path: Path) -> None:
    work = _many_findings_repo(tmp_path)
    env = {"GITHUB_ACTIONS": "true", "GITHUB_BASE_REF": "main"}
    completed = neuronlint(
        "scan", "model.py", "--format", "github", "--select", "NL101,NL105,NL903", cwd=work, env=env
    )
    assert completed.returncode == 1, completed.stderr
    lines = completed.stdout.splitlines()
    commands = [parse(line) for line in lines if line.startswith("::")]
    by_level = {
        level: [int(p["line"]) for lv, p, _ in commands if lv == level]
        for level in ("error", "warning", "notice")
    }
    assert {level: len(found) for level, found in by_level.items()} == {
        "error": 10,
        "warning": 10,
        "notice": 10,
    }
    # The three blockers and the warning the branch added come first, then the rest in line order.
    new_blockers = [int(p["line"]) for lv, p, _ in commands[:3]]
    assert new_blockers == [46, 47, 49] and all(lv == "error" for lv, _, _ in commands[:3])
    assert by_level["error"] == [46, 47, 49, 6, 7, 8, 9, 10, 11, 12]
    assert by_level["warning"][0] == 48
    # Changed-line blockers, then other blockers, then warnings, then notices.
    order = [lv for lv, _, _ in commands]
    assert order == ["error"] * 3 + ["warning"] + ["error"] * 7 + ["warning"] * 9 + ["notice"] * 10
    total = 15 + 13 + 13
    assert f"neuronlint: {total - 30} more finding(s) not annotated" in completed.stdout
    # The findings left over are log lines that start with neuronlint's own text, never a path.
    plain = [line.removeprefix("neuronlint: ") for line in lines if line.startswith("neuronlint: model.py:")]
    assert len(plain) == total - 30 and plain[0].startswith("model.py:")
    assert all(line.startswith(("::", "neuronlint: ")) for line in lines)
    again = neuronlint(
        "scan", "model.py", "--format", "github", "--select", "NL101,NL105,NL903", cwd=work, env=env
    )
    assert again.stdout == completed.stdout  # deterministic


def test_step_summary_is_written_when_github_sets_it(tmp_path: Path) -> None:
    work = _many_findings_repo(tmp_path)
    summary = tmp_path / "summary.md"
    summary.write_text("earlier step\n", encoding="utf-8")
    completed = neuronlint(
        "scan",
        "model.py",
        "--format",
        "github",
        "--select",
        "NL101,NL105,NL903",
        cwd=work,
        env={"GITHUB_STEP_SUMMARY": str(summary)},
    )
    assert completed.returncode == 1
    text = summary.read_text(encoding="utf-8")
    assert text.startswith("earlier step\n## neuronlint: Neuron portability report")  # appended, not replaced
    assert "**15 blockers**, 13 warnings, 13 info" in text
    assert "### 11 finding(s) without an annotation" in text
    assert text.count("\n- `model.py:") == 11


def test_clean_scan_prints_nothing(tmp_path: Path) -> None:
    write_files(tmp_path, {"clean.py": "import torch\n\n\ndef f(x):\n    return torch.relu(x)\n"})
    assert render("github", scan_report(tmp_path)) == ""
