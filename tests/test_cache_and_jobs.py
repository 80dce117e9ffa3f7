"""The analysis cache (keyed on content, database and analyser) and parallel workers give the same answers."""

from __future__ import annotations

from pathlib import Path

from neuronlint import cache as cache_module
from tests.conftest import scan_paths

CODE = "import torch\nx = torch.ones(1).cuda()\n"


def _keys(result) -> list[tuple]:
    return [(f.path, f.line, f.column, f.rule, f.severity.value, f.message) for f in result.findings]


def test_warm_scan_reads_cache_and_matches_cold(tmp_path: Path) -> None:
    src = tmp_path / "src"
    src.mkdir()
    (src / "a.py").write_text(CODE)
    cache_dir = tmp_path / "cache"
    cold = scan_paths([src], cwd=tmp_path, cache_dir=cache_dir)
    entries = list((cache_dir / cache_module.CACHE_LAYOUT).rglob("*.json"))
    assert len(entries) == 1
    assert (cache_dir / ".gitignore").read_text() == "*\n"
    # Prove the warm run reads the entry: re-sign a doctored value and see the doctored line come back.
    key = entries[0].stem
    cache = cache_module.Cache(cache_dir)
    data = cache.get(key)
    data["detections"][0]["line"] = 99
    cache.put(key, data)
    warm = scan_paths([src], cwd=tmp_path, cache_dir=cache_dir)
    assert [f.line for f in warm.findings] == [99]
    assert _keys(cold)[0][2:] == _keys(warm)[0][2:]


def test_cache_misses_on_content_change(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text(CODE)
    cache_dir = tmp_path / "cache"
    scan_paths([tmp_path / "a.py"], cwd=tmp_path, cache_dir=cache_dir)
    (tmp_path / "a.py").write_text("import torch\n\n\nx = torch.ones(1).cuda()\n")
    again = scan_paths([tmp_path / "a.py"], cwd=tmp_path, cache_dir=cache_dir)
    assert [f.line for f in again.findings] == [4]
    assert len(list((cache_dir / cache_module.CACHE_LAYOUT).rglob("*.json"))) == 2


def test_cache_key_covers_database_and_analyser(tmp_path: Path) -> None:
    key = cache_module.entry_key(CODE.encode(), "a.py", "db1")
    assert key != cache_module.entry_key(CODE.encode(), "a.py", "db2")
    assert key != cache_module.entry_key(CODE.encode(), "b.py", "db1")
    assert key == cache_module.entry_key(CODE.encode(), "a.py", "db1")
    assert len(cache_module.analyser_fingerprint()) == 16


def test_no_cache_writes_nothing(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text(CODE)
    scan_paths([tmp_path], cwd=tmp_path, cache_dir=None)
    assert not list(tmp_path.rglob("*.json"))


def test_parallel_workers_match_serial(tmp_path: Path) -> None:
    variants = [
        CODE,
        "import torch\nif x.item() > 0:\n    y = x[x > 0]\n",
        "import triton\n",
        "def f(:\n",
        "import torch\nz = torch.zeros(2, dtype=torch.float64)\n",
    ]
    for index in range(40):  # enough files that the process pool is really used
        (tmp_path / f"m{index:02d}.py").write_text(variants[index % len(variants)])
    serial = scan_paths([tmp_path], cwd=tmp_path, jobs=1, select=["ALL"])
    parallel = scan_paths([tmp_path], cwd=tmp_path, jobs=2, select=["ALL"])
    assert len(serial.findings) >= 40
    assert _keys(serial) == _keys(parallel)
