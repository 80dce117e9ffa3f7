"""Which part of a project a file belongs to: source, test, example, benchmark or docs.

A finding in a test file is real porting work, but it is not what stops the model from running on
Trainium; examples, benchmarks and docs are read by people, not imported by the package. The scope
of a file is decided from path conventions (the ones pytest, ruff and the big ML repositories
follow) and can be overridden in `[tool.neuronlint]` with `test-paths`, `example-paths`,
`benchmark-paths`, `docs-paths` and `source-paths` (globs relative to the config file, matched the
way `exclude` is: the path, a parent directory, or any path component).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from neuronlint.discover import excluded, relative_posix

SOURCE, TEST, EXAMPLE, BENCHMARK, DOCS = "source", "test", "example", "benchmark", "docs"
# Scope names are part of the JSON/SARIF contract: never rename one.
SCOPES: tuple[str, ...] = (SOURCE, TEST, EXAMPLE, BENCHMARK, DOCS)

# Conventions, checked in this order (a test under examples/ is a test; docs/examples/ is docs).
# A pattern without '/' matches any path component, as in `exclude`.
CONVENTIONS: tuple[tuple[str, tuple[str, ...]], ...] = (
    (
        TEST,
        (
            "tests",
            "test",
            "testing",
            "unittests",
            "unit_tests",
            "test_utils",
            "test_*.py",
            "*_test.py",
            "*_tests.py",
            "conftest.py",
            "testing_utils.py",
            "test_utils.py",
            "testing.py",
        ),
    ),
    (DOCS, ("docs", "doc", "docs_src", "sphinx")),
    (
        BENCHMARK,
        ("benchmarks", "benchmark", "bench", "benchmarking", "perf_tests", "bench_*.py", "benchmark_*.py"),
    ),
    (
        EXAMPLE,
        (
            "examples",
            "example",
            "scripts",
            "notebooks",
            "demo",
            "demos",
            "tutorials",
            "tutorial",
            "cookbook",
            "recipes",
        ),
    ),
)

CONFIG_KEYS: dict[str, str] = {
    "test-paths": TEST,
    "example-paths": EXAMPLE,
    "benchmark-paths": BENCHMARK,
    "docs-paths": DOCS,
    "source-paths": SOURCE,
}


@dataclass(frozen=True)
class ScopeRules:
    """Path conventions plus the project's overrides (scope -> globs relative to `root`)."""

    overrides: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    root: Path | None = None  # globs of the overrides are relative to this (the config's directory)
    base: Path | None = None  # reported paths are relative to this (default: the current directory)

    @classmethod
    def from_config(
        cls, paths: Mapping[str, Iterable[str]], root: Path | None, base: Path | None = None
    ) -> ScopeRules:
        return cls({scope: tuple(globs) for scope, globs in paths.items() if globs}, root, base)

    def classify(self, path: str, within_root: str | None = None) -> str:
        """The scope of a reported path (POSIX, relative to the working directory).

        `within_root` is the path inside the scanned directory: the conventions look only at it,
        so a checkout that sits under a directory called `test/` is not all tests.
        """
        if self.overrides:
            full = self.base / path if self.base is not None else Path(path)
            local = relative_posix(full, self.root) if self.root else path
            # A configured scope wins over the conventions; source-paths last, so that
            # `test-paths = ["src/pkg/testing"]` inside `source-paths = ["src"]` still counts.
            for scope in (TEST, EXAMPLE, BENCHMARK, DOCS, SOURCE):
                globs = self.overrides.get(scope)
                if globs and excluded(local, globs):
                    return scope
        return convention_scope(within_root if within_root is not None else path)


def convention_scope(path: str) -> str:
    """The scope the path conventions give a file (no configuration)."""
    for scope, patterns in CONVENTIONS:
        if excluded(path, patterns):
            return scope
    return SOURCE
