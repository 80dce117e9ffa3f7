"""Every fixture both ways: each `# expect: NLxxx` fires on its line, and nothing unexpected fires.

Annotations are trailing comments (`# expect: NL101, NL701`; `// expect: NL304` in .cu files), or
`# expect-next: NL030` on a line of its own for the next line, where a format has no trailing
comments (Dockerfiles, setup.cfg values, continued shell commands). Notebooks carry them inside
their code cells (the finding's line is the notebook JSON's line). Every file kind neuronlint reads
is a fixture (neuronlint.filekinds.kind_of) except JSON, which has no comments: tests/test_filetypes.py
checks those.
Fixtures are scanned with every rule selected, for the newest SDK on trn2 unless the file's first
lines say otherwise with `# neuronlint-fixture: sdk=2.29 target=trn1`.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from neuronlint.filekinds import kind_of
from tests.annotations import parse
from tests.conftest import FIXTURES, ROOT, scan_paths


def _fixture_files() -> list[Path]:
    return sorted(
        p
        for p in FIXTURES.rglob("*")
        if p.is_file()
        and kind_of(p.relative_to(FIXTURES).as_posix()) not in (None, "json")
        and not p.name.startswith("README")
    )


def _expected(path: Path) -> tuple[Counter, dict]:
    found = parse(path.read_text(encoding="utf-8", errors="replace"))
    return found.expected, found.frame


def _groups() -> list[tuple[str, dict, list[Path]]]:
    """Fixture files scanned together: each top-level fixture directory (or file) per frame.

    Scanning a directory's files in one run lets cross-file rules (imports of in-repo kernel modules,
    extensions built by setup.py) fire as they do for users.
    """
    groups: dict[tuple[str, tuple], list[Path]] = {}
    for path in _fixture_files():
        top = path.relative_to(FIXTURES).parts[0]
        frame = _expected(path)[1]
        groups.setdefault((top, tuple(sorted(frame.items()))), []).append(path)
    return [
        (f"{top}[{','.join(f'{k}={v}' for k, v in frame) or 'default'}]", dict(frame), files)
        for (top, frame), files in sorted(groups.items())
    ]


@pytest.mark.parametrize(
    "name, frame, files", _groups(), ids=lambda value: value if isinstance(value, str) else ""
)
def test_fixture_both_ways(name: str, frame: dict, files: list[Path]) -> None:
    result = scan_paths(
        files, cwd=ROOT, select=["ALL"], sdk=frame.get("sdk"), target=frame.get("target", "trn2")
    )
    problems = []
    for path in files:
        expected, _ = _expected(path)
        rel = path.relative_to(ROOT).as_posix()
        actual = Counter((f.line, f.rule) for f in result.active if f.path == rel)
        missing, unexpected = expected - actual, actual - expected
        if missing or unexpected:
            problems.append(
                f"{rel}\n  expected but not reported: {sorted(missing)}\n  reported but not expected: {sorted(unexpected)}"
            )
    assert not problems, "\n".join(problems)


def test_fixtures_cover_every_category() -> None:
    result = scan_paths([FIXTURES], cwd=ROOT)
    categories = {f.category for f in result.active}
    nine = {
        "cuda-api",
        "dist-backend",
        "custom-kernel",
        "cuda-only-lib",
        "dtype",
        "dynamic-shape",
        "host-sync",
        "compile-backend",
        "neuron-lockin",
    }
    assert nine <= categories, f"missing categories: {sorted(nine - categories)}"
