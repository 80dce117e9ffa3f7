"""Models that raise, crash, hang or allocate too much while being built are findings, never fatal.

All of them go through one `capture` call: the child that crashes or hangs is replaced by a fresh
one and the models after it are still traced.
"""

from __future__ import annotations

import math
import subprocess
import sys
import time

import pytest

from neuronlint.graph.analysis import TraceTarget, capture, judge_all
from neuronlint.pipeline import ScanOptions
from neuronlint.ruledb import load_ruledb
from tests.conftest import FIXTURES, ROOT

pytestmark = pytest.mark.slow
pytest.importorskip("torch")

FAULTY = "fixtures/models/faulty.py"
NAMES = [
    "raises",
    "not_a_module",
    "allocates",
    "crashes",
    "hangs",
    "after_the_hang",
    "no_module",
    "no_attribute",
    "bad_shape",
]
TARGETS = [
    TraceTarget(f"{FAULTY}:RaisesInInit"),
    TraceTarget(f"{FAULTY}:NotAModule"),
    TraceTarget(f"{FAULTY}:AllocatesInInit"),
    TraceTarget(f"{FAULTY}:CrashesInInit"),
    TraceTarget(f"{FAULTY}:HangsInInit"),
    TraceTarget("fixtures/models/masking.py:TokenPruner", ["float32[4,32]"]),
    TraceTarget("no_such_package.model:build"),
    TraceTarget("fixtures/models/gpt_block.py:no_such_factory"),
    TraceTarget("fixtures/models/gpt_block.py:build", ["long[2,80]"]),  # longer than the causal mask
]


def line_of(file: str, text: str) -> int:
    lines = [
        n
        for n, line in enumerate((FIXTURES / "models" / file).read_text().splitlines(), start=1)
        if text in line
    ]
    assert len(lines) == 1
    return lines[0]


# Address space for tracing beyond what importing torch maps (threads' malloc arenas grow it under
# load); less than the 3 GiB AllocatesInInit asks for, so that one still hits the cap.
HEADROOM = 5 * 1024**3 // 2


def torch_address_space() -> int:
    """Bytes of address space a fresh interpreter maps once torch (and torch.export) is imported.

    A CPU build of torch 2.13 maps about 0.5 GiB, a CUDA build of 2.14 about 3 GiB (its CUDA
    libraries are mapped even on a machine without a GPU): a fixed cap that fits one build fails
    the other's import, and every target would be "out of memory at start-up".
    """
    script = (
        "import re, torch, torch.export\n"
        "print(re.search(r'VmPeak:\\s+(\\d+) kB', open('/proc/self/status').read()).group(1))"
    )
    completed = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=600
    )
    return int(completed.stdout.split()[-1]) * 1024


@pytest.fixture(scope="module")
def memory_limit() -> int:
    """The child's address-space cap: what this torch maps at import plus a headroom smaller than
    the allocating model's 3 GiB (3 GiB in all on the CPU build of 2.13, 5.5 GiB on 2.14's CUDA build)."""
    return torch_address_space() + HEADROOM


@pytest.fixture(scope="module")
def timeout(memory_limit: int) -> float:
    """The per-target (and per start-up) timeout, from how long this machine takes right now.

    A fresh child starts (imports torch) and traces a small model under a generous limit; the
    timeout is four times that, and never under 8 s. On an idle machine that is about 8 to 15 s;
    on a loaded one the models that must finish still do, and the hang still times out: only how
    long the hang takes changes, never what is checked.
    """
    started = time.monotonic()
    [baseline] = capture([TARGETS[5]], ROOT, timeout=600, memory_limit=memory_limit)
    assert baseline.status == "ok", baseline.reason
    # The baseline must have traced: a child that cannot start under the cap also writes a result.
    assert baseline.result and baseline.result["ok"], baseline.result
    return float(max(8, math.ceil(4 * (time.monotonic() - started))))


@pytest.fixture(scope="module")
def results(timeout: float, memory_limit: int):
    outcomes = capture(TARGETS, ROOT, timeout=timeout, memory_limit=memory_limit)
    db = load_ruledb()
    ctx = db.context("2.29", "trn2")
    judged = judge_all(TARGETS, outcomes, db, ctx, ScanOptions(paths=[ROOT], base=ROOT), ROOT)
    return dict(zip(NAMES, judged, strict=True))


def only(result):
    assert len(result.findings) == 1, [(f.rule, f.message) for f in result.findings]
    finding = result.findings[0]
    return finding.rule, finding.path, finding.line, finding.message


def test_constructor_exception_points_at_the_raise(results):
    rule, path, line, message = only(results["raises"])
    assert (rule, path, line) == ("NL015", FAULTY, line_of("faulty.py", 'raise RuntimeError("checkpoint'))
    assert "RuntimeError: checkpoint directory /data/ckpt not found" in message
    assert results["raises"].status == "failed"


def test_entrypoint_that_is_not_a_module(results):
    rule, path, line, message = only(results["not_a_module"])
    assert (rule, line) == ("NL015", line_of("faulty.py", "class NotAModule:"))
    assert "not a torch.nn.Module subclass" in message


def test_allocation_over_the_memory_cap(results):
    rule, path, line, message = only(results["allocates"])
    assert (rule, line) == ("NL014", line_of("faulty.py", "torch.zeros(768 * 1024**2"))
    assert "ran out of memory" in message and results["allocates"].status == "aborted"


def test_crash_is_reported_at_the_crashing_line(results):
    rule, path, line, message = only(results["crashes"])
    assert (rule, line) == ("NL014", line_of("faulty.py", "ctypes.string_at(0)"))
    assert "killed by SIGSEGV while building the model" in message


def test_hang_times_out_at_the_looping_line(results, timeout):
    rule, path, line, message = only(results["hangs"])
    assert (rule, line) == ("NL014", line_of("faulty.py", "time.sleep(0.05)"))
    assert f"timed out after {timeout:g} s while building the model" in message


def test_models_after_a_crash_and_a_hang_are_still_traced(results):
    result = results["after_the_hang"]
    assert result.status == "traced" and result.summary["total_ops"] > 0
    assert {f.rule for f in result.findings} == {"NL601", "NL010"}


def test_import_errors(results):
    rule, path, line, message = only(results["no_module"])
    assert rule == "NL015" and "No module named 'no_such_package'" in message
    rule, path, line, message = only(results["no_attribute"])
    assert (rule, path) == ("NL015", "fixtures/models/gpt_block.py")
    assert "has no attribute 'no_such_factory'" in message


def test_forward_that_fails_for_the_given_inputs(results):
    result = results["bad_shape"]
    rule, path, line, message = only(result)
    assert (rule, path, line) == (
        "NL013",
        "fixtures/models/gpt_block.py",
        line_of("gpt_block.py", "scores.masked_fill("),
    )
    assert "forward raised an exception" in message
    # Ops before the failing line were still recorded and judged.
    assert result.status == "partial" and result.summary["counts"]["lowered"] > 10


def test_a_memory_limit_below_what_torch_needs_to_start_says_so():
    """A cap below torch's own footprint fails the child's `import torch`, before any user code."""
    target = TARGETS[5]
    [outcome] = capture([target], ROOT, timeout=600, memory_limit=256 * 1024**2)
    db = load_ruledb()
    [result] = judge_all(
        [target], [outcome], db, db.context("2.29", "trn2"), ScanOptions(paths=[ROOT], base=ROOT), ROOT
    )
    rule, path, line, message = only(result)
    assert rule == "NL014" and result.status == "aborted"
    assert "the memory limit leaves too little address space to import torch" in message
    assert "`--memory-limit`" in message  # the rule's advice
