"""Shared helpers: run real scans on real files (no mocks)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from neuronlint.pipeline import ScanOptions, run_scan

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"


def scan_paths(paths, *, cwd: Path | None = None, **kwargs):
    """Run the real scan pipeline (no cache, in-process) and return the ScanResult.

    Rule tests read what the detectors report: the triage filters (first-party, notes, one finding
    per line and category, the test-scope cap) are off unless `triage=True`; tests/test_groups.py,
    tests/test_first_party_and_dependencies.py and tests/test_triage.py test them.
    """
    kwargs.setdefault("jobs", 1)
    kwargs.setdefault("triage", False)
    base = cwd or Path.cwd()
    options = ScanOptions(paths=[Path(p) for p in paths], base=base, **kwargs)
    return run_scan(options)


def scan_source(tmp_path: Path, source: str, name: str = "snippet.py", **kwargs):
    """Write `source` to a file in tmp_path and scan it; returns active findings."""
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(source, encoding="utf-8")
    kwargs.setdefault("select", ["ALL"])
    result = scan_paths([path], cwd=tmp_path, **kwargs)
    return result.active


def rules_at(findings, line: int | None = None) -> list[str]:
    return sorted(f.rule for f in findings if line is None or f.line == line)


@pytest.fixture
def unprivileged():
    """A directory every user can traverse and a runner that cannot read its mode-000 files, also
    as root (tests/unprivileged.py); skips with the reason only when no way to drop privileges works."""
    from tests import unprivileged as module

    env = module.make()
    try:
        yield env
    finally:
        module.remove(env)


@pytest.fixture(autouse=True)
def _no_user_cache(monkeypatch):
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    yield


__all__ = ["ROOT", "FIXTURES", "scan_paths", "scan_source", "rules_at", "os"]
