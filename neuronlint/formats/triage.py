"""The triage view shared by the text and Markdown formats: root causes first, ranked by severity
and reach, test code summarised apart, then the per-file detail (condensed on large scans).

What the default text output prints, top to bottom:

1. one headline: "N root causes block this code on trn2 / SDK 2.33 (native backend)",
2. the root causes to fix first (at most `MAX_CAUSES`): id, severity, headline, the change that
   removes it, where (the first locations),
3. one line for test code ("tests: 1,035 findings in 212 files, capped at warning"),
4. the per-file detail: every finding when there are at most `FULL_BELOW` outside tests or
   `--full` asks for it, else the files with the most severe findings with their counts.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass

from neuronlint.filters import cuda_paths, test_checks
from neuronlint.findings import Finding
from neuronlint.groups import RootCause, build_groups, place

MAX_CAUSES = 12  # root causes listed in the text output (the rest are counted)
MAX_FILES = 15  # files listed in the condensed per-file detail
FULL_BELOW = 40  # with at most this many findings outside tests, list them all
MAX_WHERE = 3  # locations named per root cause
_SCOPE_ORDER = {"source": 0, "example": 1, "benchmark": 2, "docs": 3, "test": 4}


@dataclass
class Triage:
    """The view the text and Markdown formats share: root causes, and the findings shown."""

    causes: list[RootCause]  # ranked
    shown: list[Finding]  # active findings outside test scope (plus tests when --scope selects only them)
    tests: list[Finding]  # active test-scope findings

    @property
    def blocking(self) -> list[RootCause]:
        return [c for c in self.causes if c.severity.value == "blocker"]


def root_causes(report) -> list[RootCause]:
    """The report's root causes (computed once; they also set `group` on every finding)."""
    cached = getattr(report, "_root_causes", None)
    if cached is None:
        cached = build_groups(report.findings, report.db, report.context)
        report._root_causes = cached
    return cached


def triage(report) -> Triage:
    causes = root_causes(report)
    active = [f for f in report.findings if f.suppressed is None]
    tests = [f for f in active if f.scope == "test"]
    rest = [f for f in active if f.scope != "test"]
    if not rest:  # `--scope test`: the tests are what was asked for
        rest, tests = tests, []
    return Triage(causes=causes, shown=rest, tests=tests)


_UNCOUNTABLE = {"info"}


def plural(count: int, word: str, many: str | None = None) -> str:
    if word in _UNCOUNTABLE:
        return f"{count:,} {word}"
    return f"{count:,} {word if count == 1 else (many or word + 's')}"


def headline(t: Triage, ctx) -> str:
    frame = f"{ctx.target} / SDK {ctx.sdk} ({ctx.backend} backend)"
    blocking = len(t.blocking)
    others = len(t.causes) - blocking
    if not t.causes:
        return f"No findings on {frame}."
    if blocking:
        more = f"; {plural(others, 'more root cause')} need changes" if others else ""
        verb = "blocks" if blocking == 1 else "block"
        return f"{plural(blocking, 'root cause')} {verb} this code on {frame}{more}:"
    return f"Nothing blocks this code on {frame}; {plural(others, 'root cause')} need changes:"


def where(cause: RootCause) -> str:
    """The first locations of a root cause, source code before tests; a notebook's as its cell and
    line (`train.ipynb:cell 3:2`), the location the per-file detail shows."""
    ordered = sorted(
        cause.findings, key=lambda f: (_SCOPE_ORDER.get(f.scope, 9), -f.severity.rank, f.path, f.line)
    )
    seen: list[str] = []
    for f in ordered:
        location = place(f)
        if location not in seen:
            seen.append(location)
        if len(seen) == MAX_WHERE:
            break
    rest = len({place(f) for f in cause.findings}) - len(seen)
    return ", ".join(seen) + (f" (+{rest:,} more)" if rest > 0 else "")


def test_summary(t: Triage) -> str | None:
    if not t.tests:
        return None
    counts = Counter(f.severity.value for f in t.tests)
    capped = sum(1 for f in t.tests if f.capped_from is not None)
    parts = ", ".join(plural(counts[s], s) for s in ("warning", "info") if counts[s])
    note = f"; {capped:,} would block outside tests" if capped else ""
    files = len({f.path for f in t.tests})
    return (
        f"tests: {plural(len(t.tests), 'finding')} in {plural(files, 'file')} ({parts}{note}); "
        "test code never blocks: `--scope test` lists them"
    )


def left_out_summary(report) -> str | None:
    """A line for the test and benchmark code the triage left out as running only with CUDA, and one
    for the host syncs and data-dependent checks it left out of test code."""
    counts = getattr(report.options, "left_out", None) or {}
    parts = [plural(counts[s], f"{s} finding") for s in ("test", "benchmark") if counts.get(s)]
    lines = []
    if parts:
        lines.append(
            f"left out: {' and '.join(parts)} in code that runs only with CUDA (tests skipped without "
            "CUDA, their skip conditions, CUDA-only branches, tests and benchmarks of GPU kernels and "
            "CUDA-only libraries); `--show-ok` lists them"
        )
    checks = counts.get(test_checks.LEFT_OUT_KEY, 0)
    if checks:
        lines.append(
            f"left out: {plural(checks, 'test finding')} on host syncs and data-dependent checks (a "
            "test's own value checks run eagerly and work on Neuron as written); `--show-ok` lists them"
        )
    extras = counts.get(cuda_paths.CUDA_EXTRA_KEY, 0)
    if extras:
        lines.append(
            f"left out: {plural(extras, 'dependency entry', 'dependency entries')} of optional extras "
            "named for CUDA or ROCm builds (a Neuron install does not select them); `--show-ok` lists them"
        )
    data = counts.get(test_checks.TEST_DATA_KEY, 0)
    if data:
        lines.append(
            f"left out: {plural(data, 'test finding')} in test files that import no tensor library (their "
            "device names are inputs and mocked answers for the code under test); `--show-ok` lists them"
        )
    return "\n".join(lines) or None


def file_counts(findings: list[Finding]) -> list[tuple[str, Counter]]:
    """(path, counts by severity), most severe files first."""
    by_file: dict[str, Counter] = defaultdict(Counter)
    for f in findings:
        by_file[f.path][f.severity.value] += 1
    return sorted(
        by_file.items(),
        key=lambda item: (-item[1]["blocker"], -item[1]["warning"], -item[1]["info"], item[0]),
    )


def count_text(counts: Counter) -> str:
    return ", ".join(plural(counts[s], s) for s in ("blocker", "warning", "info") if counts[s])
