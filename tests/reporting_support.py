"""Shared by the reporter, baseline, diff and pre-commit tests: a small sample project, real scans
through the same filter pipeline as the CLI, real git repositories, and snapshot files.

Snapshots live in tests/snapshots/<name>. They pin what the reporters decide (structure, positions,
levels, fingerprints, fixes, suppressions, ordering, escaping), not the rule prose in rules/, which
changes often: `pin_prose` replaces each finding's message and each rule's texts with fixed
placeholders before rendering. When an output changes on purpose, review the diff the failing
test prints, then accept it with

    NEURONLINT_UPDATE_SNAPSHOTS=1 .venv/bin/python -m pytest tests/test_reporters_*.py

and commit the updated files. Snapshots never contain the version string or absolute paths.
"""

from __future__ import annotations

import dataclasses
import difflib
import os
import subprocess
import sys
from pathlib import Path

from neuronlint.filters.chain import FilterOutcome, FilterRequest
from neuronlint.formats import FORMATS, Report
from neuronlint.pipeline import ScanOptions, ScanResult, filter_scan, make_report, run_scan
from neuronlint.ruledb.model import Rule

SNAPSHOTS = Path(__file__).resolve().parent / "snapshots"
UPDATE_ENV = "NEURONLINT_UPDATE_SNAPSHOTS"
SNAPSHOT_SDK = "2.33"  # pinned so that a new release in rules/ does not rewrite every snapshot
SNAPSHOT_TARGET = "trn2"

# A training script and an export module: blockers, warnings, info, a suppression with a reason,
# a finding with a fix, and a multi-line call.
SAMPLE: dict[str, str] = {
    "train.py": """\
import torch
import torch.distributed as dist


def setup(rank):
    dist.init_process_group("nccl", rank=rank)
    device = torch.device(f"cuda:{rank}")
    return device


def train(model, loader, rank):
    device = setup(rank)
    model = model.cuda()
    for batch in loader:
        loss = model(batch.to(device))
        loss.backward()
        torch.cuda.empty_cache()
        print(loss.item())  # neuronlint: ignore[NL701] -- logging once per step is accepted
    return model
""",
    "pkg/export.py": """\
import torch_neuronx


def export(model, example):
    traced = torch_neuronx.trace(
        model,
        example,
    )
    return traced
""",
}

# GitHub Actions variables that change what the github/markdown reporters do.
GITHUB_ENV = (
    "GITHUB_STEP_SUMMARY",
    "GITHUB_BASE_REF",
    "GITHUB_ACTIONS",
    "GITHUB_SERVER_URL",
    "GITHUB_REPOSITORY",
    "GITHUB_SHA",
)


def write_files(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def scan_and_filter(
    root: Path,
    *,
    select: list[str] | None = None,
    request: FilterRequest | None = None,
    sdk: str = SNAPSHOT_SDK,
    paths: list[Path] | None = None,
) -> tuple[ScanResult, FilterOutcome]:
    """Scan `root` (paths relative to it) and filter like the CLI does."""
    options = ScanOptions(
        paths=paths or [root],
        base=root,
        jobs=1,
        sdk=sdk,
        target=SNAPSHOT_TARGET,
        select=select if select is not None else ["ALL"],
    )
    result = run_scan(options)
    return result, filter_scan(result, options, request or FilterRequest(), root)


def scan_report(
    root: Path,
    *,
    select: list[str] | None = None,
    request: FilterRequest | None = None,
    sdk: str = SNAPSHOT_SDK,
    paths: list[Path] | None = None,
) -> Report:
    """Scan `root` (paths relative to it) and filter like the CLI does; returns the Report (any format)."""
    result, outcome = scan_and_filter(root, select=select, request=request, sdk=sdk, paths=paths)
    return make_report(result, outcome, formats=tuple(FORMATS))


def pin_prose(report: Report) -> Report:
    """The same report with rule prose (messages, titles, help) replaced by fixed placeholders.

    The placeholders contain ':', ',', '%', '|' and a backtick so that escaping shows in snapshots.
    """

    def rule_text(rule: Rule) -> Rule:
        label = f"{rule.id} {rule.name}"
        return dataclasses.replace(
            rule,
            title=f"Title of {label}",
            summary=f"Summary of {label}: what it detects, 100% pinned.",
            why=f"Why {label} matters on Neuron.",
            example=f"# example of {rule.id}\n",
            example_fixed=f"# fixed example of {rule.id}\n" if rule.example_fixed.strip() else "",
            instead={key: f"Use `the {key} alternative` to {rule.id}." for key in rule.instead},
        )

    db = dataclasses.replace(
        report.db, rules={rule_id: rule_text(rule) for rule_id, rule in report.db.rules.items()}
    )
    findings = []
    for finding in report.findings:
        copy = dataclasses.replace(finding, extra=dict(finding.extra))
        copy.message = f"Message of {finding.rule} ({finding.name}): 50% pinned, a | b."
        findings.append(copy)
    return dataclasses.replace(report, findings=findings, db=db)


def assert_snapshot(name: str, actual: str) -> None:
    """Compare with tests/snapshots/<name>; rewrite it instead when NEURONLINT_UPDATE_SNAPSHOTS=1."""
    path = SNAPSHOTS / name
    if os.environ.get(UPDATE_ENV) == "1":
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(actual, encoding="utf-8")
        return
    assert path.is_file(), f"missing snapshot {path}; create it with {UPDATE_ENV}=1"
    expected = path.read_text(encoding="utf-8")
    if actual != expected:
        diff = "".join(
            difflib.unified_diff(
                expected.splitlines(True), actual.splitlines(True), f"snapshots/{name}", "actual"
            )
        )
        raise AssertionError(f"output differs from snapshot {name} (accept with {UPDATE_ENV}=1):\n{diff}")


# ---- real git ---------------------------------------------------------------------------------
def git(repo: Path, *args: str) -> str:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "Test",
        "GIT_AUTHOR_EMAIL": "test@example.invalid",
        "GIT_COMMITTER_NAME": "Test",
        "GIT_COMMITTER_EMAIL": "test@example.invalid",
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
    }
    completed = subprocess.run(
        ["git", "-C", str(repo), *args], capture_output=True, text=True, env=env, check=False
    )
    assert completed.returncode == 0, f"git {' '.join(args)} failed: {completed.stderr}"
    return completed.stdout


def init_repo(repo: Path, files: dict[str, str], branch: str = "main") -> None:
    """A real repository with one commit of `files` on `branch`."""
    repo.mkdir(parents=True, exist_ok=True)
    git(repo, "init", "-q", "-b", branch)
    write_files(repo, files)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "initial")


def commit_all(repo: Path, message: str) -> None:
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)


def neuronlint(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """Run the real CLI in this process (typer's runner) from `cwd`; returns code, stdout and stderr.

    GitHub Actions variables of the surrounding environment are hidden unless `env` sets them.
    """
    from typer.testing import CliRunner

    from neuronlint.cli import app

    child_env: dict[str, str | None] = {name: None for name in GITHUB_ENV}
    child_env.update({"NO_COLOR": "1", "NEURONLINT_NO_CACHE": "1"})
    child_env.update(env or {})
    previous = os.getcwd()
    os.chdir(cwd)
    try:
        result = CliRunner().invoke(app, list(args), env=child_env, catch_exceptions=False)
    finally:
        os.chdir(previous)
    return subprocess.CompletedProcess(["neuronlint", *args], result.exit_code, result.stdout, result.stderr)


def neuronlint_process(
    *args: str, cwd: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess:
    """Run the real CLI as a child process (the same interpreter and import path as the tests)."""
    child_env = {k: v for k, v in os.environ.items() if k not in GITHUB_ENV}
    child_env.update({"NO_COLOR": "1", "NEURONLINT_NO_CACHE": "1", "PYTHONPATH": _import_root()})
    child_env.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "neuronlint", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        env=child_env,
        timeout=300,
        check=False,
    )


def _import_root() -> str:
    import neuronlint

    root = str(Path(neuronlint.__file__).resolve().parent.parent)
    existing = os.environ.get("PYTHONPATH")
    return root + (os.pathsep + existing if existing else "")
