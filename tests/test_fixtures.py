"""Every fixture both ways: each `# expect: NLxxx` fires on its line, and nothing unexpected fires.

Annotations are trailing comments (`# expect: NL101, NL701`; `// expect: NL304` in .cu files).
Fixtures are scanned with every rule selected, for the newest SDK on trn2 unless the file's first
lines say otherwise with `# neuronlint-fixture: sdk=2.29 target=trn1`.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest

from tests.conftest import FIXTURES, ROOT, scan_paths

_EXPECT = re.compile(r"(?:#|//)\s*expect:\s*([A-Z0-9, ]+)")
_FRAME = re.compile(r"neuronlint-fixture:\s*(.*)")
_SCANNED = (".py", ".cu", ".cuh", ".txt", ".toml")


def _fixture_files() -> list[Path]:
    return sorted(
        p for p in FIXTURES.rglob("*")
        if p.is_file() and p.suffix in _SCANNED and not p.name.startswith("README")
    )  # fmt: skip


def _expected(path: Path) -> tuple[Counter, dict]:
    expected: Counter = Counter()
    frame: dict = {}
    for number, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), start=1):
        match = _EXPECT.search(line)
        if match:
            for rule in match.group(1).replace(" ", "").split(","):
                if rule:
                    expected[(number, rule)] += 1
        frame_match = _FRAME.search(line)
        if frame_match and number <= 3:
            frame = dict(item.split("=", 1) for item in frame_match.group(1).split())
    return expected, frame


@pytest.mark.parametrize("path", _fixture_files(), ids=lambda p: str(p.relative_to(FIXTURES)))
def test_fixture_both_ways(path: Path) -> None:
    expected, frame = _expected(path)
    result = scan_paths([path], cwd=ROOT, select=["ALL"], sdk=frame.get("sdk"), target=frame.get("target", "trn2"))
    actual = Counter((f.line, f.rule) for f in result.active)
    missing = expected - actual
    unexpected = actual - expected
    assert not missing and not unexpected, (
        f"{path.relative_to(ROOT)}\n  expected but not reported: {sorted(missing)}\n"
        f"  reported but not expected: {sorted(unexpected)}"
    )


def test_fixtures_cover_every_category() -> None:
    result = scan_paths([FIXTURES], cwd=ROOT)
    categories = {f.category for f in result.active}
    nine = {"cuda-api", "dist-backend", "custom-kernel", "cuda-only-lib", "dtype", "dynamic-shape", "host-sync",
            "compile-backend", "neuron-lockin"}  # fmt: skip
    assert nine <= categories, f"missing categories: {sorted(nine - categories)}"
