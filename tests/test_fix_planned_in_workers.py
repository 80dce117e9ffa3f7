"""The fixes a scan shows are planned in the pool's workers, on the tree they analysed (so the parent
neither reads nor parses a fixable file again, and its memory does not grow with their number): the
same fixes, on the same findings, as planning them in the parent; files the workers did not plan
(a cached result, another flavour) are planned in the parent; a file the parse guard analyses in a
disposable child has its fixes planned in that child.
Real scans with real worker processes, on the fixtures and on real files read from local mirrors of
public repositories (skipped when a mirror is absent)."""

from __future__ import annotations

from functools import partial
from pathlib import Path

from neuronlint.fix import flavour_for
from neuronlint.fix import run as fix_run
from neuronlint.fix.run import attach, worker_planner
from neuronlint.pipeline import ScanOptions, _analyze, _init_worker, run_scan
from neuronlint.static import engine
from neuronlint.static.data import build_static_data
from tests import mirrors
from tests.conftest import FIXTURES


def _fixes(result) -> list[tuple]:
    return [
        (
            f.path,
            f.line,
            f.column,
            f.rule,
            f.suppressed,
            f.fix and (f.fix.applicability, f.fix.description, f.fix.edits),
        )
        for f in result.findings
    ]


def _scan_and_attach(paths, base: Path, flavour: str = "portable", planner: str | None = "same", **kwargs):
    """A pool scan (-j 2) with the workers planning `planner`'s fixes (None: none), then attach of
    `flavour`; returns the result and the files attach planned in this process."""
    options = ScanOptions(paths=list(paths), base=base, jobs=2, **kwargs)
    if planner is not None:
        options.fix_planner = partial(worker_planner, flavour if planner == "same" else planner)
    result = run_scan(options)
    planned_here: list[str] = []
    real = fix_run.plan_file

    def observed(path, *args):
        planned_here.append(path)
        return real(path, *args)

    fix_run.plan_file = observed
    try:
        attach(result, flavour_for(flavour, result.context, result.db), base)
    finally:
        fix_run.plan_file = real
    return result, planned_here


def test_workers_plan_the_fixes_the_parent_would_on_the_fixtures() -> None:
    worker, here = _scan_and_attach([FIXTURES], FIXTURES)
    parent, parent_here = _scan_and_attach([FIXTURES], FIXTURES, planner=None)
    assert sum(f.fix is not None and bool(f.fix.edits) for f in worker.findings) > 10
    assert _fixes(worker) == _fixes(parent)
    assert parent_here and not [p for p in here if p.endswith(".py")]  # notebooks: planned here
    assert worker.fix_plans == {}  # attach drops what no finding needed


def test_the_xla_flavour_and_a_flavour_the_workers_did_not_plan(tmp_path: Path) -> None:
    for name in ("trainer.py", *(f"m{i}.py" for i in range(30))):
        (tmp_path / name).write_text(
            "import torch\n\n\ndef step(model, x):\n    torch.cuda.synchronize()\n"
            '    return model.cuda(), x.to("cuda")\n'
        )
    xla, here = _scan_and_attach([tmp_path], tmp_path, "xla", backend="xla")
    parent, _ = _scan_and_attach([tmp_path], tmp_path, "xla", planner=None, backend="xla")
    assert not here and _fixes(xla) == _fixes(parent)
    assert any(f.fix and "torch_xla" in "".join(e.content for e in f.fix.edits) for f in xla.findings)
    # planned for portable, attached as xla: the plans are not used, the parent plans every file
    other, here = _scan_and_attach([tmp_path], tmp_path, "xla", planner="portable", backend="xla")
    assert len(here) == 31 and _fixes(other) == _fixes(parent)


def test_suppressed_lines_line_endings_and_a_cached_scan(tmp_path: Path) -> None:
    body = (
        "import torch\n\n\ndef step(model):\n"
        "    torch.cuda.synchronize()  # neuronlint: ignore[NL102] -- measured here\n"
        "    return model.cuda()\n\n\ndef other(x):\n    return x.cuda()\n"
    )
    for i in range(30):
        text = body if i % 2 else body.replace("\n", "\r\n")
        (tmp_path / f"m{i:02d}.py").write_bytes(text.encode())
    cache = tmp_path / ".cache"
    worker, here = _scan_and_attach([tmp_path], tmp_path, cache_dir=cache)
    parent, _ = _scan_and_attach([tmp_path], tmp_path, planner=None)
    assert not here and _fixes(worker) == _fixes(parent)
    assert any(f.suppressed for f in worker.findings)
    assert any(f.fix and "\r\n" in "".join(e.content for e in f.fix.edits) for f in worker.findings)
    cached, here = _scan_and_attach([tmp_path], tmp_path, cache_dir=cache)  # results from the cache
    assert cached.fix_plans_flavour is None and len(here) == 30 and _fixes(cached) == _fixes(parent)


def test_a_pool_worker_keeps_no_tree_after_planning(tmp_path: Path) -> None:
    from neuronlint.ruledb import load_ruledb

    db = load_ruledb([])
    path = tmp_path / "train.py"
    path.write_text("import torch\n\nmodel = torch.nn.Linear(2, 2).cuda()\n")
    planner = worker_planner("portable", db, db.context(None, "trn2", None, []))
    keep = engine.keep_trees
    try:
        _init_worker(build_static_data(db), None, db.fingerprint, None, True, planner)
        value = _analyze((str(path), "train.py"))
        assert not engine._TREES
        plans = value["fix_plans"]
        assert [key[0] for key, plan in plans.items() if plan is not None] == ["NL101"]
        _init_worker(build_static_data(db), None, db.fingerprint, None, True)  # no planner: no tree kept
        assert "fix_plans" not in _analyze((str(path), "train.py")) and not engine._TREES
    finally:
        engine.keep_trees = keep
        engine.isolated_planner = None
        engine.forget_trees()


def test_a_file_analysed_in_a_disposable_child_has_its_fixes_planned_there(tmp_path: Path) -> None:
    """A deeply nested file (over the parse guard's RISKY_BRACKETS) is parsed only in a forked
    child: its fixes are planned there, so the parent never parses it (it used to, keeping a large
    file's LibCST heap after the analysis); the same fixes as planned in the parent."""
    from neuronlint.static import parse_guard

    nest = "[" * (parse_guard.RISKY_BRACKETS + 5) + "1" + "]" * (parse_guard.RISKY_BRACKETS + 5)
    code = 'import torch\n\n\ndef step(model, x):\n    return model.cuda(), x.to("cuda")\n'
    (tmp_path / "deep.py").write_text(code + f"TABLE = {nest}\n")
    measured = parse_guard.measure((tmp_path / "deep.py").read_bytes())
    assert measured.risky and not measured.large_only
    for i in range(30):
        (tmp_path / f"m{i:02d}.py").write_text(code)
    worker, here = _scan_and_attach([tmp_path], tmp_path)
    parent, parent_here = _scan_and_attach([tmp_path], tmp_path, planner=None)
    assert not here and "deep.py" in parent_here
    assert _fixes(worker) == _fixes(parent)
    assert any(f.path == "deep.py" and f.fix and f.fix.edits for f in worker.findings)


def test_a_file_risky_only_for_its_size_is_analysed_and_planned_in_the_pool_worker(
    tmp_path: Path, monkeypatch
) -> None:
    """A large, shallow file (over RISKY_TOKENS) in a pool is analysed by the worker itself, which
    the pool already contains, not in a fork of it (a fork counts the worker's pages again); alone,
    outside a pool, it still goes to a disposable child. The same findings and fixes either way."""
    from neuronlint.static import parse_guard

    rows = "    1, 2, 3, 4, 5, 6, 7, 8,\n" * (parse_guard.RISKY_TOKENS // 16 + 100)
    code = 'import torch\n\n\ndef step(model, x):\n    return model.cuda(), x.to("cuda")\n'
    (tmp_path / "big.py").write_text(code + "TABLE = [\n" + rows + "]\n")
    assert parse_guard.measure((tmp_path / "big.py").read_bytes()).large_only
    for i in range(30):
        (tmp_path / f"m{i:02d}.py").write_text(code)
    forked: list[int] = []
    real = parse_guard._isolated

    def refused(fn, *args, timeout):  # workers are forked from this process: they inherit it
        forked.append(1)
        raise parse_guard.Isolated("a disposable child was started")

    monkeypatch.setattr(parse_guard, "_isolated", refused)
    worker, here = _scan_and_attach([tmp_path], tmp_path)
    assert not here and not [f for f in worker.findings if f.rule == "NL001"]
    assert any(f.path == "big.py" and f.fix and f.fix.edits for f in worker.findings)
    alone = run_scan(ScanOptions(paths=[tmp_path / "big.py"], base=tmp_path, jobs=1))
    assert forked and [f.rule for f in alone.findings if f.path == "big.py"] == ["NL001"]
    monkeypatch.setattr(parse_guard, "_isolated", real)
    parent, _ = _scan_and_attach([tmp_path], tmp_path, planner=None)
    assert _fixes(worker) == _fixes(parent)


def test_a_real_repository_gets_the_same_fixes(tmp_path: Path) -> None:
    repo = "EleutherAI+gpt-neox"
    mirrors.export(repo, "HEAD", [], tmp_path)
    worker, here = _scan_and_attach([tmp_path], tmp_path)
    parent, _ = _scan_and_attach([tmp_path], tmp_path, planner=None)
    assert sum(f.fix is not None and bool(f.fix.edits) for f in worker.findings) > 20
    assert _fixes(worker) == _fixes(parent)
    assert not [p for p in here if p.endswith(".py")]  # files analysed in a disposable child too
