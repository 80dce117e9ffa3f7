"""What bounds a large `scan -j N` in memory (benchmarks/scale_benchmark.py measures 20,000 files),
on small real inputs: the parent holds each file's result in a compact form with the same values
(pipeline._Held), and the pool's workers take turns for their heavy moments, a large file's parse
and a disposable child (parse_guard.Gate)."""

from __future__ import annotations

import multiprocessing
import os
import pickle
import time
from pathlib import Path

import pytest

from neuronlint import pipeline
from neuronlint.ruledb import load_ruledb
from neuronlint.static import parse_guard
from neuronlint.static.data import build_static_data
from tests.conftest import FIXTURES, scan_paths

_DROPPED = (
    "imports",
    "defines_kernels",
    "extension_modules",
    "python_names",
    "kernel_entries",
    "imports_without_fallback",
)


def _analysed(paths: list[Path], root: Path) -> list[dict]:
    db = load_ruledb([])
    pipeline._init_worker(build_static_data(db), None, db.fingerprint, None, True, None)
    # as the parent receives them from a worker: unpickled, one result at a time
    return [
        pickle.loads(pickle.dumps(pipeline._analyze((str(p), p.relative_to(root).as_posix())))) for p in paths
    ]


def test_held_results_have_the_same_values_and_share_what_is_equal() -> None:
    paths = sorted(FIXTURES.rglob("*.py"))
    results = _analysed(paths, FIXTURES)
    originals = pickle.loads(pickle.dumps(results))
    keep = pipeline._Held()
    held = [keep(r) for r in results]
    assert sum(len(r["detections"]) for r in held) > 100 and any(r["import_sites"] for r in originals)
    for before, after in zip(originals, held, strict=True):
        assert list(after) == [k for k in before if k != "imports" and (k not in _DROPPED or before[k])]
        for key, value in after.items():
            if key == "import_sites":
                assert list(value) == [tuple(site) for site in before[key]] and len(value) == len(before[key])
            else:
                assert value == before[key], key
                if key == "detections":
                    assert [list(d) for d in value] == [list(d) for d in before[key]]  # key order too
    facts = [d["facts"] for r in held for d in r["detections"]]
    assert len({id(f) for f in facts}) < len(facts)  # equal facts are one dict
    snippets = [d["snippet"] for r in held for d in r["detections"]]
    assert len({id(s) for s in snippets}) == len(set(snippets))  # equal snippets are one string


def test_held_facts_keep_their_types_and_unhashable_values() -> None:
    keep = pipeline._Held()

    def one(facts: dict) -> dict:
        detection = {"rule": "NL101", "line": 3, "column": 0, "end_line": 3, "end_column": 9, "facts": facts}
        result = {"path": "a.py", "detections": [detection], "import_sites": [], "suppressions": []}
        return keep(pickle.loads(pickle.dumps(result)))["detections"][0]["facts"]

    flags = [one({"x": True}), one({"x": 1}), one({"x": 1.0}), one({"x": True})]
    assert [type(f["x"]) for f in flags] == [bool, int, float, bool]
    assert flags[0] is flags[3] and flags[0] is not flags[1] and flags[1] is not flags[2]
    listed = one({"names": ["a", "b"]})
    assert listed == {"names": ["a", "b"]} and one({"names": ["a", "b"]}) is not listed
    assert list(one({"b": 1, "a": 2})) == ["b", "a"]  # the order facts are printed in
    far = pipeline._Held().sites([["torch", 2**40, 0, 5]])  # past an int32: kept as tuples
    assert list(far) == [("torch", 2**40, 0, 5)]


def _hold(path: str, entered, release) -> None:
    with parse_guard.Gate(path):
        entered.set()
        release.wait(20)


def test_the_gate_is_one_holder_at_a_time_across_processes(tmp_path: Path, monkeypatch) -> None:
    path = tmp_path / "gate"
    path.write_bytes(b"")
    context = multiprocessing.get_context("fork")
    entered, release = context.Event(), context.Event()
    holder = context.Process(target=_hold, args=(str(path), entered, release))
    holder.start()
    try:
        assert entered.wait(20)
        gate = parse_guard.Gate(str(path))
        monkeypatch.setattr(parse_guard, "GATE_WAIT", 0.3)
        started = time.monotonic()
        with gate:  # the other process holds it: after GATE_WAIT this one goes on without it
            assert not gate.held
        assert time.monotonic() - started >= 0.3
        monkeypatch.setattr(parse_guard, "GATE_WAIT", 20.0)
        release.set()
        timer = time.monotonic()
        with gate:  # waits until the holder lets go
            assert gate.held
            with gate:  # reentrant in one process
                assert gate.held
            assert gate.held
        assert not gate.held and time.monotonic() - timer < 15
    finally:
        release.set()
        holder.join(20)


def _fork_and_hold(path: str, entered, release, child_done) -> None:
    gate = parse_guard.Gate(path)
    with gate:
        pid = os.fork()
        if pid == 0:  # a forked child (the parse guard's disposable process) does not hold it
            child_done.wait(20)
            os._exit(0)
    entered.set()  # the gate is released although the child still runs
    release.wait(20)
    os.waitpid(pid, 0)


def test_a_forked_child_does_not_keep_the_gate(tmp_path: Path, monkeypatch) -> None:
    path = tmp_path / "gate"
    path.write_bytes(b"")
    context = multiprocessing.get_context("fork")
    entered, release, child_done = context.Event(), context.Event(), context.Event()
    worker = context.Process(target=_fork_and_hold, args=(str(path), entered, release, child_done))
    worker.start()
    try:
        assert entered.wait(20)
        monkeypatch.setattr(parse_guard, "GATE_WAIT", 5.0)
        gate = parse_guard.Gate(str(path))
        with gate:
            assert gate.held
    finally:
        child_done.set()
        release.set()
        worker.join(20)


_HEAVY = "import torch\n\n" + "".join(
    f"def f{i}(x):\n    y = x.cuda()\n    torch.cuda.synchronize()\n    return y + {i}\n\n" for i in range(60)
)
# deep enough for the parse guard's disposable process (RISKY_BRACKETS), not too deep to analyse
_RISKY = "import torch\nx = torch.zeros(1).cuda()\ny = " + "[" * 45 + "1" + "]" * 45 + "\n"


def _recording(real, log: str, kind: str, heavy: bool):
    def record(*args, **kwargs):
        gated = not heavy or len(args[3]) > pipeline.HEAVY_BYTES
        started = time.monotonic()
        if gated:
            time.sleep(0.2)  # long enough that two workers' moments would overlap without the gate
        try:
            return real(*args, **kwargs)
        finally:
            if gated:
                with open(log, "a") as handle:
                    handle.write(f"{os.getpid()} {kind} {started} {time.monotonic()}\n")

    return record


@pytest.mark.skipif(not hasattr(os, "fork"), reason="the pool forks its workers")
def test_the_pools_workers_take_turns_for_large_files_and_disposable_parses(
    tmp_path: Path, monkeypatch
) -> None:
    tree = tmp_path / "tree"
    tree.mkdir()
    for index in range(30):
        (tree / f"small{index}.py").write_text(f"import torch\nx{index} = torch.zeros(1).cuda()\n")
    for index in range(6):
        (tree / f"large{index}.py").write_text(_HEAVY + f"# {index}\n")
        (tree / f"deep{index}.py").write_text(_RISKY + f"# {index}\n")
    alone = scan_paths([tree], cwd=tree, jobs=1)
    log = tmp_path / "moments.txt"
    monkeypatch.setattr(pipeline, "HEAVY_BYTES", len(_HEAVY) - 100)
    monkeypatch.setattr(pipeline, "_analysed", _recording(pipeline._analysed, str(log), "large", True))
    monkeypatch.setattr(parse_guard, "_isolated", _recording(parse_guard._isolated, str(log), "child", False))
    pooled = scan_paths([tree], cwd=tree, jobs=2)

    def seen(result) -> list[tuple]:
        return [(f.path, f.rule, f.line, f.column, f.message) for f in result.findings]

    assert seen(pooled) == seen(alone) and any(f.path.startswith("deep") for f in pooled.findings)
    moments = [line.split() for line in log.read_text().splitlines()]
    kinds = [kind for _, kind, _, _ in moments]
    assert kinds.count("large") == 6 and kinds.count("child") >= 6, moments
    assert len({pid for pid, _, _, _ in moments}) == 2  # both workers had some
    spans = [(pid, float(a), float(b)) for pid, _, a, b in moments]
    for pid, start, end in spans:  # no two workers' heavy moments at once
        for other, start2, end2 in spans:
            if other != pid:
                assert end <= start2 or end2 <= start, (pid, start, end, other, start2, end2)


def _gated_worker_init(path: str, barrier) -> None:
    from neuronlint import workers

    parse_guard.gate = parse_guard.Gate(path, on_wait=workers.waiting)
    _GATED["barrier"] = barrier


_GATED: dict = {}


def _gated_task(seconds: float) -> tuple[bool, float]:
    """Meet the other worker, then hold the pool's gate for `seconds` (a heavy moment, as
    pipeline._analyze_file holds it): whether it held the gate, and how long it waited for it.
    Waiting at the meeting point is the test's own synchronisation, not the scan's: the worker says
    it waits there too, so that only the gate's wait and hold are timed against the task's timeout
    (a worker that finished its first task early waits there for the other one's heavy moment)."""
    import threading

    from neuronlint import workers

    met = threading.Event()

    def beat() -> None:
        while not met.wait(0.25):
            workers.waiting()

    beater = threading.Thread(target=beat, daemon=True)
    beater.start()
    try:
        _GATED["barrier"].wait(60)
    finally:
        met.set()
        beater.join()
    started = time.monotonic()
    with parse_guard.gate:
        waited = time.monotonic() - started
        held = parse_guard.gate.held
        time.sleep(seconds)
    return held, waited


def test_a_worker_waiting_for_the_gate_is_not_timed_out(tmp_path: Path, monkeypatch) -> None:
    """Two workers' heavy moments of 2.5 s at once, in a pool whose task timeout is 4 s: one worker
    waits about 2.5 s for the gate, then holds it 2.5 s, about 5 s after its file was sent. It tells
    the parent that it waits (workers.waiting, every WAIT_BEAT seconds), so no file is lost and it
    never goes on without the gate. Before, a worker waited at most GATE_WAIT (30 s), and the wait
    counted towards the file's timeout: at load, two heavy moments coincided (benchmarks/README.md)."""
    from neuronlint import workers

    path = tmp_path / "gate"
    path.write_bytes(b"")
    monkeypatch.setattr(parse_guard, "GATE_WAIT", 0.5)  # a wait the pool is not told of: 0.5 s at most
    barrier = multiprocessing.get_context("fork").Barrier(2)
    lost = []
    values = workers.run(
        _gated_task,
        [2.5] * 4,  # two to each worker (a batch is sent two at a time), met in pairs at the barrier
        2,
        lambda task, why: lost.append(why) or (False, 0.0),
        initializer=_gated_worker_init,
        initargs=(str(path), barrier),
        batch=1,
        task_timeout=4.0,
    )
    assert not lost
    assert all(held for held, _ in values)
    waits = sorted(waited for _, waited in values)
    assert waits[0] < 1.0 and waits[-1] > 2.0  # one of each pair waited for the other's moment
