"""What keeps a large scan's parent process small, on small real inputs (benchmarks/scale_benchmark.py
measures 20,000 files): the JSON report is written in pieces and is the same text as encoding it at
once; the per-file results the parent holds drop what nothing after the analysis reads, and
cross-file linking still sees everything it needs."""

from __future__ import annotations

import json
import mmap
import os
import subprocess
import sys
from pathlib import Path

from neuronlint import workers
from neuronlint.filters.chain import FilterRequest
from neuronlint.formats import json as json_format
from neuronlint.safe_text import json_text
from tests.conftest import FIXTURES, scan_paths
from tests.reporting_support import SAMPLE, scan_report, write_files


def _one_shot(report) -> str:
    """The JSON report as it was written before it was streamed: one json.dumps of everything."""
    return json_text(json_format.as_dict(report), indent=2) + "\n"


def test_streamed_json_is_the_one_shot_text_on_the_fixtures() -> None:
    report = scan_report(FIXTURES)
    assert len(report.findings) > 100
    pieces = list(json_format.chunks(report))
    assert len(pieces) > len(report.findings)  # one piece per finding (and separators), not one string
    assert "".join(pieces) == _one_shot(report)
    json.loads("".join(pieces))


def test_streamed_json_with_a_baseline_an_empty_report_and_a_non_utf8_name(tmp_path: Path) -> None:
    write_files(tmp_path, SAMPLE)
    (tmp_path / os.fsdecode(b"caf\xe9.py")).write_bytes(b"import torch\nx = torch.zeros(1).cuda()\n")
    report = scan_report(tmp_path)
    assert any("\udce9" in f.path for f in report.findings)
    assert "".join(json_format.chunks(report)) == _one_shot(report)
    baseline = tmp_path / "base.json"
    created = subprocess.run(
        [sys.executable, "-m", "neuronlint", "baseline", "create", ".", "-o", str(baseline), "--no-cache"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert created.returncode == 0, created.stderr
    (tmp_path / "train.py").write_text(SAMPLE["train.py"] + "y = torch.zeros(1).cuda()\n")
    report = scan_report(tmp_path, request=FilterRequest(baseline=baseline))
    assert report.options.baseline is not None and report.findings  # the new finding only
    assert "".join(json_format.chunks(report)) == _one_shot(report)  # "baseline" comes after the findings
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "ok.py").write_text("x = 1\n")
    report = scan_report(empty)
    assert not report.findings and "".join(json_format.chunks(report)) == _one_shot(report)


def test_json_to_stdout_and_to_a_file_are_the_same_bytes(tmp_path: Path) -> None:
    write_files(tmp_path, SAMPLE)
    command = [sys.executable, "-m", "neuronlint", "scan", ".", "--no-cache", "-f", "json", "--exit-zero"]
    stdout = subprocess.run(command, cwd=tmp_path, capture_output=True, timeout=120).stdout
    subprocess.run(
        [*command, "-o", "out.json", "-q"], cwd=tmp_path, capture_output=True, timeout=120, check=True
    )
    assert stdout == (tmp_path / "out.json").read_bytes() and json.loads(stdout)["findings"]


def test_held_results_drop_what_nothing_reads_and_linking_still_works(tmp_path: Path) -> None:
    (tmp_path / "kern").mkdir()
    (tmp_path / "kern" / "__init__.py").write_text("")
    (tmp_path / "kern" / "ops.py").write_text(
        "import triton\n\n\n@triton.jit\ndef add_kernel(x_ptr):\n    pass\n"
    )
    (tmp_path / "model.py").write_text(
        "import torch\nfrom kern.ops import add_kernel\nx = torch.zeros(1).cuda()\n"
    )
    for index in range(30):  # enough files for the worker pool
        (tmp_path / f"m{index}.py").write_text("import torch\nimport kern.ops\ny = torch.zeros(1).cuda()\n")
    for jobs in (1, 2):
        result = scan_paths([tmp_path], cwd=tmp_path, jobs=jobs)
        held = {key for r in result.results for key in r}
        assert held == {"path", "module_path", "lines", "parsed", "detections", "suppressions"}, held
        linked = {f.path for f in result.findings if f.rule == "NL306"}
        assert "model.py" in linked and "m0.py" in linked and "m29.py" in linked, linked


def test_a_pool_scan_holds_each_result_packed_until_the_workers_are_done(tmp_path: Path, monkeypatch) -> None:
    """While the workers run, the parent holds each file's result as compressed bytes, a fraction
    of the objects (benchmarks/README.md, the 20,000-file run); unpacked, the results are those of
    one process."""
    from neuronlint import pipeline

    arrived: list[object] = []
    real_run = workers.run

    def recording_run(*args, **kwargs):
        values = real_run(*args, **kwargs)
        arrived.extend(values)
        return values

    monkeypatch.setattr(workers, "run", recording_run)
    files = {
        f"pkg/m{i:02d}.py": f"import torch\nx{i} = torch.zeros(1).cuda()\ny = x{i}.item()\n"
        for i in range(40)
    }
    write_files(tmp_path, files)
    pooled = scan_paths([tmp_path], cwd=tmp_path, jobs=2)
    assert len(arrived) == 40 and all(type(v) is bytes for v in arrived)
    findings = sum(len(pipeline._unpack(v)["detections"]) for v in arrived)
    assert findings >= 80 and sum(len(v) for v in arrived) < findings * 200
    alone = scan_paths([tmp_path], cwd=tmp_path, jobs=1)
    assert [f.to_dict() for f in pooled.findings] == [f.to_dict() for f in alone.findings]


_HELD: list[mmap.mmap] = []


def _leak_and_square(n: int) -> tuple[int, int]:
    # 2 MiB of a fresh anonymous mapping, every page written and kept: the worker's resident size
    # grows whatever its heap holds. (A bytes object could come from free heap pages the worker
    # inherited resident from a long-running parent: writing those copies them, and the resident
    # size does not change. That made the test pass alone and fail after the rest of the suite.)
    block = mmap.mmap(-1, 2 << 20)
    for offset in range(0, len(block), mmap.PAGESIZE):
        block[offset] = 1
    _HELD.append(block)
    return n * n, os.getpid()


def test_a_worker_past_its_growth_limit_retires_and_its_tasks_run_on_a_fresh_one() -> None:
    lost: list[int] = []
    values = workers.run(
        _leak_and_square,
        list(range(20)),
        2,
        lambda task, why: lost.append(task),
        batch=3,  # each worker holds several unanswered tasks when it retires
        max_growth=1 << 20,
    )
    assert not lost
    assert [square for square, _ in values] == [n * n for n in range(20)]
    pids = {pid for _, pid in values}
    assert len(pids) > 2 and os.getpid() not in pids  # workers were replaced, none was the parent


def test_a_scan_whose_workers_retire_after_every_file_reports_what_one_process_reports(monkeypatch) -> None:
    from neuronlint import pipeline

    started: list[int] = []
    real_init = workers._Worker.__init__

    def counting_init(self, *args, **kwargs) -> None:
        real_init(self, *args, **kwargs)
        started.append(self.process.pid)

    monkeypatch.setattr(workers._Worker, "__init__", counting_init)
    alone = scan_paths([FIXTURES], cwd=FIXTURES, jobs=1, triage=True)
    monkeypatch.setattr(pipeline, "WORKER_MAX_GROWTH", -1)  # every worker retires after one file
    pooled = scan_paths([FIXTURES], cwd=FIXTURES, jobs=2, triage=True)
    assert len(pooled.files) >= pipeline._IN_PROCESS_BELOW
    assert len(started) >= len(pooled.files)  # a fresh worker for (about) every file

    def seen(result) -> list[tuple]:
        return [(f.path, f.rule, f.line, f.column, f.message, f.suppressed) for f in result.findings]

    assert pooled.files == alone.files and seen(pooled) == seen(alone) and alone.findings
    assert not any(f.rule == "NL001" and "analyser process" in f.message for f in pooled.findings)
