"""A file's analysis leaves no reference cycles, so reference counting frees its garbage: the scan
holds the cycle collector off its loop over files (pipeline._PausedCollector) and collects only
every COLLECT_EVERY files, as a safety net. Checked on real files: the fixtures (every rule fires
there), the project's own sources, and a public repository's files when a local mirror exists
(read here, never committed)."""

from __future__ import annotations

import gc
from collections import Counter
from pathlib import Path

from neuronlint import pipeline
from neuronlint.ruledb import load_ruledb
from neuronlint.static.data import build_static_data
from tests import mirrors

ROOT = Path(__file__).resolve().parent.parent


def _cycles_left(files: list[tuple[str, str]]) -> dict[str, Counter]:
    """For each file (path, module path) whose analysis, the second time, left objects only the
    cycle collector can free: how many of each type."""
    db = load_ruledb()
    root = Path(files[0][0]).parent
    checkers, fingerprint = pipeline._selected_checkers(db, pipeline.ScanOptions(paths=[root], base=root))
    pipeline._init_worker(build_static_data(db), None, fingerprint, checkers)
    left: dict[str, Counter] = {}
    enabled = gc.isenabled()
    gc.collect()
    gc.disable()
    try:
        for task in files:  # a first pass fills caches and imports lazily imported modules (the
            pipeline._analyze(task)  # import of datetime drops its pure-Python classes: garbage once)
        gc.collect()
        gc.freeze()  # each collection below then examines only what one file's analysis made
        for task in files:
            pipeline._analyze(task)
            gc.set_debug(gc.DEBUG_SAVEALL)
            try:
                gc.collect()
                if gc.garbage:
                    left[task[1]] = Counter(type(o).__qualname__ for o in gc.garbage)
            finally:
                gc.set_debug(0)
                gc.garbage.clear()
                gc.collect()
    finally:
        gc.unfreeze()
        if enabled:
            gc.enable()
    return left


def test_analysing_the_fixtures_and_the_static_package_leaves_no_cycles() -> None:
    paths = sorted(p for p in (ROOT / "fixtures").rglob("*") if p.is_file())
    paths += sorted((ROOT / "neuronlint" / "static").rglob("*.py"))
    assert len(paths) > 60
    assert _cycles_left([(str(p), str(p.relative_to(ROOT))) for p in paths]) == {}


def test_analysing_a_public_repositorys_files_leaves_no_cycles(tmp_path: Path) -> None:
    repo = "huggingface/peft"
    files = []
    for name in [n for n in mirrors.names(repo) if n.endswith(".py") and n.startswith("src/")][:30]:
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(mirrors.show(repo, "HEAD", name))
        files.append((str(path), name))
    assert files
    assert _cycles_left(files) == {}


def test_the_scan_loop_pauses_the_collector_and_restores_it(tmp_path: Path, monkeypatch) -> None:
    """Serially, the collector is off (and what existed before is frozen) while files are analysed,
    one collection runs every COLLECT_EVERY files, and afterwards it is on and nothing is frozen."""
    for index in range(5):
        (tmp_path / f"m{index}.py").write_text("import torch\nx = torch.zeros(1).cuda()\n")
    seen: list[tuple[bool, int]] = []
    collections: list[int] = []
    analyze = pipeline._analyze_file

    def spy(task):
        seen.append((gc.isenabled(), gc.get_freeze_count()))
        return analyze(task)

    monkeypatch.setattr(pipeline, "_analyze_file", spy)
    monkeypatch.setattr(pipeline, "COLLECT_EVERY", 2)
    gc.callbacks.append(
        lambda phase, info: collections.append(info["generation"]) if phase == "start" else None
    )
    assert gc.isenabled()
    try:
        results = pipeline.analyse_files(
            sorted(tmp_path.glob("*.py")), [tmp_path], build_static_data(load_ruledb()), "", 1, None
        )
    finally:
        gc.callbacks.pop()
    assert len(results) == 5 and all(r["detections"] for r in results)
    assert all(not enabled and frozen > 0 for enabled, frozen in seen)
    assert collections.count(2) == 2  # after the second and the fourth file
    assert gc.isenabled() and gc.get_freeze_count() == 0
